#!/usr/bin/env bash
# The whole test suite: installs what the build needs (as root; otherwise
# prints the apt-get line), then runs the unit and integration tests in the
# normal build and under ASan, UBSan and TSan, builds the library for
# aarch64 (make cross), runs cppcheck over the sources (make cppcheck), and
# ends with the failed tests' names, a line per variant ("failed in make
# asan: NAME ..."), and one line: "N passed, N failed, N skipped", the
# sums over the variants (each prints "N passed, N failed", with ", N
# skipped" where it can skip). SLOW=1 runs the long forms of the longest
# tests (tests/run.sh).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tests/deps.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0 skipped=0 failures=()
for variant in test asan ubsan tsan cross cppcheck; do
	echo "=== make $variant"
	log=$(mktemp)
	make -j"$jobs" --no-print-directory "$variant" 2>&1 | tee "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1)
	names=$(sed -n 's/^failed: //p' "$log" | tail -1)
	[ -n "$names" ] && failures+=("make $variant: $names")
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "=== make $variant did not build or run"
		failed=$((failed + 1)) failures+=("make $variant: did not build or run")
		continue
	fi
	read -r p _ f _ s _ <<<"${line//,/}"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
done
# The failures again, where the last lines of a long log show them.
for f in "${failures[@]}"; do echo "failed in $f"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
