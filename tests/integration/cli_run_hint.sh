# The line at exit when nothing was recorded gives right advice or none:
# a program that loaded PyTorch's libtorch_cpu (as one interrupted during
# `import torch` has) but made no call while recording is told that @torch
# applied to it, not to try MXPROF_HOOK='libtorch_cpu.so.1.13:*' (which
# would hook every function of the library @torch already covers). A
# library no preset covers keeps its pattern to try (hook_hints).
. "$ROOT/tests/integration/lib.sh"
mxprof_command
lib=$(/sbin/ldconfig -p | awk '/libtorch_cpu\.so/ && !n++ { print $1 }')
if [ -z "$lib" ]; then
	echo "skip: no libtorch_cpu on this machine"
	exit 77
fi
"$MX" run -q -o t.json -- /usr/bin/python3 -c \
	"import ctypes; ctypes.CDLL('$lib')" 2>err.txt
cat err.txt
line=$(grep '^mxprof: nothing was recorded; ' err.txt) ||
	fail "no line saying nothing was recorded"
case "$line" in
*"$lib (timed by @torch)"*) echo "ok: $lib named with @torch" ;;
*) fail "$lib not named with @torch" ;;
esac
case "$line" in
*try*) fail "advice to try a pattern where a preset applied: $line" ;;
esac
echo "ok: no pattern to try"
