# Never silently empty. A run under the default @auto that recorded
# nothing says so in one line, naming the presets @auto tried and the
# loaded libraries that look like a framework's or a BLAS, each with a
# pattern to try; a pattern of the user's that matched nothing names the
# loaded libraries with similar names. The program's output and exit
# status do not change.
. "$ROOT/tests/integration/lib.sh"
. "$ROOT/tests/programs/hooklibs/common.sh"
presets="@mxnet, @torch, @blas, @cudart, @cublas, @cudnn, @nccl"

# A program that loads no known library.
cc -O2 -o "$WORK/plain" -x c - <<<'#include <stdio.h>
int main(void) { puts("hi"); return 3; }'
MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" "$WORK/plain" \
	>out.txt 2>err.txt && fail "exit status changed" || rc=$?
expect_eq "exit status" 3 "$rc"
expect_eq "output" hi "$(cat out.txt)"
expect_eq "empty-run line" "mxprof: nothing was recorded; MXPROF_HOOK=@auto tried $presets, whose libraries are not loaded, and no framework library is loaded" \
	"$(grep -v '^==' err.txt)"

# A library that looks like a framework's, loaded but never called.
cc -O2 -shared -fPIC -o "$WORK/libtorch_fake.so.2" -Wl,-soname,libtorch_fake.so.2 \
	-x c - <<<'int fake_dot(int a, int b) { return a * b; }'
cc -O2 -o "$WORK/loadblas" -x c - -Wl,--no-as-needed -L"$WORK" \
	-l:libtorch_fake.so.2 -Wl,-rpath,"$WORK" <<<'int main(void) { return 0; }'
MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" "$WORK/loadblas" 2>err2.txt
expect_eq "framework hint" "mxprof: nothing was recorded; MXPROF_HOOK=@auto tried $presets; loaded: libtorch_fake.so.2 (try MXPROF_HOOK='libtorch_fake.so.2:*')" \
	"$(grep -v '^==' err2.txt)"

# Something recorded: no line.
hook_build
MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" MXPROF_HOOK='libhookt.so:ht_add' \
	"$WORK/hook_main_plain" basic 3 >/dev/null 2>err3.txt
expect_eq "no line when something was recorded" "" "$(grep -v '^==' err3.txt || true)"

# A pattern whose LIBGLOB misses the file's version: similar names.
MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" MXPROF_HOOK='libhookt.so.1:ht_add' \
	"$WORK/hook_main_plain" basic 3 >/dev/null 2>err4.txt
expect_eq "similar names" "mxprof: MXPROF_HOOK pattern 'libhookt.so.1:ht_add' matched no function; loaded libraries with similar names: libhookt.so (try 'libhookt.so:ht_add')" \
	"$(grep -v '^==' err4.txt)"
