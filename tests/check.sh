#!/usr/bin/env bash
# The whole test suite: installs what the build needs (as root; otherwise
# prints the apt-get line), then runs the unit and integration tests in the
# normal build and under ASan, UBSan and TSan, builds the library for
# aarch64 (make cross), runs cppcheck over the sources (make cppcheck), and
# ends with one line: "N passed, N failed, N skipped", the sums over the
# variants (each prints "N passed, N failed", with ", N skipped" where it
# can skip). SLOW=1 runs the long forms of the longest tests (tests/run.sh).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tests/deps.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0 skipped=0
for variant in test asan ubsan tsan cross cppcheck; do
	echo "=== make $variant"
	log=$(mktemp)
	make -j"$jobs" --no-print-directory "$variant" 2>&1 | tee "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1)
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "=== make $variant did not build or run"
		failed=$((failed + 1))
		continue
	fi
	read -r p _ f _ s _ <<<"${line//,/}"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
