# A function whose canonical address is a non-PIE executable's PLT entry
# (the program takes strcmp's address) is hooked without calling itself:
# the stub's real function is libc's strcmp, not the program's strcmp@plt,
# which jumps through the program's patched GOT back to the stub.
#  - canon_plt, non-PIE, calls strcmp directly and through its address:
#    same output, and every call timed once;
#  - gcc compiles a file under '*:strcmp' (its driver is such a program on
#    Debian): the compiled program's output and gcc's exit status equal
#    those of a run without mxprof.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
cc -O0 -g -no-pie -fno-pie -o "$WORK/canon_plt" \
	"$ROOT/tests/programs/hooklibs/canon_plt.c"
"$WORK/canon_plt" 5000 >plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/c.json" MXPROF_HOOK='*:strcmp' \
	LD_PRELOAD="$PRELOAD" "$WORK/canon_plt" 5000 >mxprof.txt
diff plain.txt mxprof.txt || fail "canon_plt: output differs under mxprof"
tracesummary "$WORK/c.json" >s.json
expect_eq "strcmp calls" 10000 "$(span s.json 'C API (libc.so.6)/strcmp')"
expect_eq "dropped" 0 "$(jget s.json 'd["dropped"]')"

printf '#include <stdio.h>\nint main(void) { puts("compiled"); return 0; }\n' \
	>hello.c
gcc -O1 -o hello_plain hello.c
rc=0
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/gcc-%p.json" MXPROF_HOOK='*:strcmp' \
	LD_PRELOAD="$PRELOAD" gcc -O1 -o hello_mxprof hello.c || rc=$?
expect_eq "gcc exit status" 0 "$rc"
expect_eq "compiled program" "$(./hello_plain)" "$(./hello_mxprof)"
