# Hooked calls reach the function the dynamic linker binds, and data is
# never mistaken for code (tests/programs/hooklibs/bind/bind_main.c):
#  - a lazy PLT entry for an old symbol version (bv_get@BV_1) stays on
#    that version;
#  - a library loaded with RTLD_DEEPBIND binds to its own dependency;
#  - data symbols whose names match the pattern are not hooked, neither
#    through dlsym nor through the GLOB_DAT entries of a -fno-plt library,
#    even when they share the executable segment with code;
#  - a function matched by two patterns leaves neither reported unmatched;
#  - a preloaded dlopen interposer stays in the chain, and what it loads is
#    still hooked.
. "$ROOT/tests/integration/lib.sh"
B=$ROOT/tests/programs/hooklibs/bind
cd "$WORK"
cc -O2 -shared -fPIC -o libbindv.so "$B/bindv.c" -Wl,--version-script="$B/bindv.map"
cc -O2 -shared -fPIC -o libbindg.so "$B/bindg.c"
cc -O2 -shared -fPIC -o libbindd.so "$B/bindd.c"
cc -O2 -shared -fPIC -Wl,-z,lazy -o libbinde.so "$B/binde.c" \
	-L. -lbindd -Wl,-rpath,"$WORK"
cc -O2 -shared -fPIC -Wl,-z,noseparate-code -o libbinddat.so "$B/binddat.c"
cc -O2 -shared -fPIC -fno-plt -o libbindu.so "$B/bindu.c" \
	-L. -lbinddat -Wl,-rpath,"$WORK"
cc -O2 -shared -fPIC -o libbindshim.so "$B/bindshim.c" -ldl
cc -O2 -Wl,-z,lazy -o bind_main "$B/bind_main.c" -L. -lbindv -lbindg \
	-Wl,-rpath,"$WORK" -ldl

./bind_main "$WORK" >plain.txt
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/b.json" \
	MXPROF_HOOK='libbind*.so:b*,libbindv.so:bv_get' LD_PRELOAD="$PRELOAD" \
	./bind_main "$WORK" >mxprof.txt 2>err.txt
cat err.txt >&2
expect_eq "bv_get x3 (BV_1)" "bv_get x3 = 3" "$(sed -n 1p plain.txt)"
expect_eq "be_call (DEEPBIND)" "be_call = 3" "$(grep -m1 be_call plain.txt)"
diff plain.txt mxprof.txt || fail "output differs under mxprof"
if grep -q "matched no function" err.txt; then
	fail "a pattern reported unmatched: $(cat err.txt)"
fi
tracesummary b.json >b.summary.json
spans=$(jget b.summary.json '" ".join("%s=%d" % kv for kv in sorted(d["spans"].items()) if "C API" in kv[0])')
expect_eq "C API spans" "C API (libbindd.so)/bg_val=4 C API (libbinddat.so)/bd_fn=10 C API (libbinde.so)/be_call=4 C API (libbindg.so)/bg_val=2 C API (libbindu.so)/bu_read=5 C API (libbindv.so)/bv_get=3" "$spans"
expect_eq "dropped" 0 "$(jget b.summary.json 'd["dropped"]')"

# The same under a dlopen interposer, preloaded after mxprof. Not in the
# sanitizer builds: there the sanitizer's runtime comes first in
# LD_PRELOAD with a dlopen of its own, which mxprof takes over on purpose
# (docs/hooks.md), so a shim behind it is passed by.
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then
	skip_part "the dlopen interposer (plain build only)"
	exit 0
fi
LD_PRELOAD="$WORK/libbindshim.so" ./bind_main "$WORK" >shim.plain.txt
expect_eq "shim lines" 2 "$(grep -c '^shim: dlopen(libbind[eu].so)$' shim.plain.txt)"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/s.json" MXPROF_HOOK='libbind*.so:b*' \
	LD_PRELOAD="$PRELOAD $WORK/libbindshim.so" \
	./bind_main "$WORK" >shim.mxprof.txt
diff shim.plain.txt shim.mxprof.txt || fail "output differs under mxprof and the shim"
tracesummary s.json >s.summary.json
expect_eq "C API spans under the shim" "$spans" \
	"$(jget s.summary.json '" ".join("%s=%d" % kv for kv in sorted(d["spans"].items()) if "C API" in kv[0])')"
