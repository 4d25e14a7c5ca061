#!/usr/bin/env bash
# make cppcheck: cppcheck over collector/, preload/, cupti/, tools/ and
# include/, once as the x86-64 build sees the sources and once as the
# aarch64 build does (their #if __x86_64__ parts differ). A finding of
# severity warning, performance or portability, or an error, fails it.
# Prints "N passed, N failed" like tests/run.sh (one test).
#
# Suppressions, each for a finding that is wrong about this code:
#   readdirCalled   readdir() is safe on a stream of its own (POSIX 2008,
#                   glibc); readdir_r(), which cppcheck suggests, is
#                   deprecated in glibc.
#   identicalInnerCondition in cupti/activity.c
#                   "if (*slot) return *slot;" returns the cached string
#                   id, a uint32_t, not a truth value: the check is meant
#                   for functions that return the condition.
# Findings in one place are suppressed there instead, with
# "// cppcheck-suppress ID" and a reason (--inline-suppr).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fail() {
	echo "FAIL cppcheck: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}
command -v cppcheck >/dev/null ||
	fail "cppcheck not found (Debian: apt-get install cppcheck)"
jobs=$(nproc 2>/dev/null || echo 2)
for arch in __x86_64__ __aarch64__; do
	cppcheck --quiet -j"$jobs" --error-exitcode=1 --inline-suppr \
		--enable=warning,performance,portability \
		--std=c11 --platform=unix64 -D_GNU_SOURCE -D__GNUC__ -D"$arch" \
		--library=posix --library=gnu --library=zlib \
		--library=tests/cppcheck.cfg \
		--suppress=readdirCalled \
		--suppress=identicalInnerCondition:cupti/activity.c \
		-Iinclude -Icollector -Ipreload -Icupti -Itools/cli \
		collector preload cupti tools include ||
		fail "findings above (configuration $arch)"
done
echo "ok   cppcheck: $(cppcheck --version), x86-64 and aarch64"
echo "1 passed, 0 failed"
