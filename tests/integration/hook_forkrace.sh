# fork() while another thread patches. forkrace (tests/programs/hooklibs)
# loops dlopen/dlclose of a library whose GOT refers to 1000 hooked
# functions, so that mxprof scans most of the time, while main forks; each
# child calls two hooked functions (one through a dlsym pointer) and
# _exits, and the parent calls one after each fork. The patcher's lock is
# held across fork (hook_fork_prepare), so a fork waits for a scan to end
# and no child starts with half-updated tables; the parent side scans
# again if a dlopen finished meanwhile. FORKRACE_RUNS runs (default 10)
# of 30 forks each must all pass; the acceptance run is 100 with both
# cores loaded.
# Then the forks come from a library constructor, under the dynamic
# linker's lock, which the patching thread may wait for: those forks do
# not wait for the patcher (a child forked mid-scan says it hooks no more
# libraries), so 30 of them take well under the 20 s allowed, where
# waiting up to 2 s each for the lock would not.
# Under ASan both parts run calm (forkrace's calm mode): each fork waits
# until the churning thread is between a dlclose() and its next dlopen().
# GCC 12's ASan runtime does not lock its allocator across fork(), so a
# child forked while that thread is inside malloc() waits forever in the
# first malloc() of its final dump (seen once in about 300 forks). The
# race itself is the plain and UBSan runs' to check, whose malloc is
# glibc's.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
N=1000
{
	for i in $(seq 0 $((N - 1))); do
		echo "int rz_$i(int x) { return x + $i; }"
	done
} >z.c
{
	for i in $(seq 0 $((N - 1))); do echo "int rz_$i(int);"; done
	echo "int ry_all(int x) { int s = 0;"
	for i in $(seq 0 $((N - 1))); do echo "s += rz_$i(x);"; done
	echo "return s; }"
} >y.c
cc -O1 -shared -fPIC -o libforkracez.so z.c
cc -O1 -shared -fPIC -Wl,-z,lazy -o libforkrace1.so y.c -L. -lforkracez \
	-Wl,-rpath,"$WORK"
cc -O1 -shared -fPIC -o libforkctor.so \
	"$ROOT/tests/programs/hooklibs/forkctor.c" -L. -lforkracez \
	-Wl,-rpath,"$WORK"
cc -O2 -o forkrace \
	"$ROOT/tests/programs/hooklibs/forkrace.c" -L. -lforkracez \
	-Wl,-rpath,"$WORK" -ldl -lpthread
runs=${FORKRACE_RUNS:-10}
calm=
[ "$SANITIZER" = asan ] && calm=calm
for run in $(seq "$runs"); do
	rc=0
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/r.json" \
		MXPROF_HOOK='libforkracez.so:rz_*' LD_PRELOAD="$PRELOAD" \
		./forkrace "$WORK" 30 $calm >out.txt 2>err.txt || rc=$?
	if [ "$rc" != 0 ]; then
		cat out.txt err.txt
		fail "run $run of $runs: exit status $rc"
	fi
	rm -f "$WORK"/r.*.json* "$WORK"/r.json*
done
echo "ok: $runs runs of 30 forks"
rc=0
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/c.json" \
	MXPROF_HOOK='libforkracez.so:rz_*' LD_PRELOAD="$PRELOAD" \
	timeout 20 ./forkrace "$WORK" 30 ctor $calm >out.txt 2>err.txt || rc=$?
cat out.txt
expect_eq "constructor forks: exit status" 0 "$rc"
expect_eq "constructor forks" "constructor forks 30: every child exited 0" \
	"$(cat out.txt)"
expect_eq "other lines" 0 "$(grep -cv 'mxprof: forked while another' err.txt)"
