# mxprof's own work is never timed: libmxprof's GOT is left alone and the
# drain thread is quiet. The trace is gzip'ed (mxprof calls zlib) while
# every libz function and libc's write/memcpy family are hooked; hook_main
# itself calls none of them directly, so the trace has no libz slices and
# no libc slices beyond the program's own calls (printf 7 times, and the
# strcmp/strtol/malloc of its argument handling are not hooked here).
# Under ASan the program's printf is ASan's interceptor, not libc's, so
# there are no libc slices at all. The program's 10 ht_add calls are
# hooked too, in every build: hooking works, and the process recorded
# something, so it writes its files.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
"$WORK/hook_main_plain" basic 10 >"$WORK/plain.txt"
MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/self.json.gz" \
	MXPROF_HOOK='libz.so*:*,libc.so*:write*,libc.so*:mem*,libc.so*:printf,libhookt.so*:ht_add' \
	LD_PRELOAD="$PRELOAD" "$WORK/hook_main_plain" basic 10 >"$WORK/mx.txt"
diff "$WORK/plain.txt" "$WORK/mx.txt" || fail "output differs"
[ -s "$WORK/self.json.gz" ] || fail "no gzip'ed trace"
gunzip -c "$WORK/self.json.gz" >"$WORK/self.json"
tracesummary "$WORK/self.json" >"$WORK/self.sum"
expect_eq "libz slices" 0 "$(jget "$WORK/self.sum" \
	'sum(v for s, v in d["spans"].items() if s.startswith("C API (libz"))')"
n=7
[ "${SANITIZER:-}" = asan ] && n=0
expect_eq "libc slices" $n "$(jget "$WORK/self.sum" \
	'sum(v for s, v in d["spans"].items() if s.startswith("C API (libc"))')"
expect_eq "printf" $n "$(jget "$WORK/self.sum" \
	'd["spans"].get("C API (libc.so.6)/printf", 0)')"
expect_eq "ht_add" 10 "$(jget "$WORK/self.sum" \
	'sum(v for s, v in d["spans"].items() if s.endswith("/ht_add"))')"
