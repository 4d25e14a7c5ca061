#!/usr/bin/env bash
# make cross: builds the library for aarch64 with CROSS_CC (default
# aarch64-linux-gnu-gcc), where the C API hook engine has no trampolines,
# and checks what came out: an AArch64 shared object, built warning-free,
# with mxprof's public API, no hook trampolines, and the line that tells a
# user C API hooking is not available there. libisal is left to the loader of
# the target system, so the cross compiler is all it needs. Prints
# "N passed, N failed" like tests/run.sh (one test).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
lib=build-aarch64/libmxprof.so
fail() {
	echo "FAIL cross: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}
command -v "$CROSS_CC" >/dev/null ||
	fail "$CROSS_CC not found (Debian: apt-get install gcc-aarch64-linux-gnu)"
make --no-print-directory -s BUILD=build-aarch64 CC="$CROSS_CC" \
	LDLIBS_LIB="-ldl -lpthread" "$lib" || fail "the build failed"
machine=$(LC_ALL=C readelf -h "$lib" | sed -n 's/^ *Machine: *//p')
[ "$machine" = AArch64 ] || fail "$lib is for '$machine', not AArch64"
LC_ALL=C readelf --dyn-syms -W "$lib" | grep -q ' mxprof_dumps$' ||
	fail "$lib does not export mxprof_dumps"
if LC_ALL=C readelf -s -W "$lib" | grep -q ' hook_tramp_stubs$'; then
	fail "$lib has x86-64 hook trampolines"
fi
grep -q 'C API hooking is not available on this architecture' "$lib" ||
	fail "$lib lacks the 'hooking is not available' line"
echo "ok   cross: $lib is AArch64, exports the API, has no trampolines"
echo "1 passed, 0 failed"
