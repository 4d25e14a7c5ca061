#!/usr/bin/env bash
# The whole test suite: installs what the build needs (as root; otherwise
# prints the apt-get line), then runs the unit and integration tests in the
# normal build and under ASan, UBSan and TSan, builds the library for
# aarch64 (make cross), runs cppcheck over the sources (make cppcheck), and
# ends with one line: "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tests/deps.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0
for variant in test asan ubsan tsan cross cppcheck; do
	echo "=== make $variant"
	log=$(mktemp)
	make -j"$jobs" --no-print-directory "$variant" 2>&1 | tee "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "=== make $variant did not build or run"
		failed=$((failed + 1))
		continue
	fi
	passed=$((passed + ${line%% passed*}))
	f=${line#*, }
	failed=$((failed + ${f%% failed*}))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
