# Every kind of GOT entry is hooked, and the calls keep their arguments and
# results: lazy PLT calls (JUMP_SLOT), -fno-plt calls (GLOB_DAT) and a
# BIND_NOW + full RELRO binary (the GOT is read-only after start-up).
# hook_main basic prints the results of int, varargs-with-doubles, eight
# double arguments, long double, struct-in-memory, struct-in-registers and
# errno-setting calls, so any lost register shows as a diff.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
hook_build
for v in plain noplt now; do
	hook_same "$v" "$WORK/hook_main_$v" basic 1000
	s=$WORK/$v.summary.json
	expect_eq "$v ht_add" 1000 "$(span "$s" 'C API (libhookt.so)/ht_add')"
	for f in ht_fmt ht_dbl8 ht_ld ht_big ht_pair ht_errno; do
		expect_eq "$v $f" 1 "$(span "$s" "C API (libhookt.so)/$f")"
	done
	expect_eq "$v ht_call" 0 "$(span "$s" 'C API (libhookt.so)/ht_call')"
	n=$(row_count "$WORK/$v.stats.txt" 'C API (libhookt.so)' ht_add)
	expect_eq "$v table row ht_add" 1000 "$n"
done
