# Call stacks of CUDA calls that only CUPTI sees (MXPROF_HOOK=none, as for
# a program with the runtime linked statically): CUPTI's runtime API
# callback captures the stack as each call begins (the fake libcupti calls
# its subscriber as CUPTI does), the call's activity record gets it by
# correlation id, and the GPU work each call launched is charged to its
# call site: main, in the tables and in `mxprof report --flame --gpu`.
. "$ROOT/tests/integration/lib.sh"
fakes=$BUILD/fakes
prog=$BUILD/programs/cuda_fake_train
[ -e "$fakes/libcupti.so.13" ] || skip "built without the CUDA toolkit headers (no fake libcupti)"
S=5
expected=$("$prog" "$fakes/libcudart.so.13" $S)
MXPROF_STACKS=8 MXPROF_HOOK=none MXPROF_AUTOSTART=1 \
	MXPROF_OUTPUT="$WORK/c.json" LD_PRELOAD="$PRELOAD" \
	"$prog" "$fakes/libcudart.so.13" $S >out.txt 2>err.txt ||
	fail "the program failed under mxprof"
expect_eq "program output" "$expected" "$(cat out.txt)"
expect_eq "stderr" "" "$(cat err.txt)"
gsite() { awk -v k="$1" '$0 == "GPU Time by Call Site" {p = 1; next}
	p && /^$/ {exit} p && index($0, k) == 1 {
	split(substr($0, length(k) + 1), f, " "); print f[1], f[2]}' c.stats.txt; }
expect_eq "GPU time of conv_fwd by call site" "$S 0.0500" "$(gsite 'conv_fwd @ main')"
expect_eq "GPU time of conv_bwd by call site" "$S 0.1000" "$(gsite 'conv_bwd @ main')"
expect_eq "GPU time of the host-to-device copies" "$S 0.5243" "$(gsite 'Memcpy HtoD @ main')"
# Every CUPTI API event has a stack, and main is in each (the program's
# only frame below the CUDA libraries).
expect_eq "CUDA calls with their stacks, the program's frames" \
	"5 cudaDeviceSynchronize <- main [cuda_fake_train]
2 cudaFree <- main [cuda_fake_train]
15 cudaLaunchKernel <- main [cuda_fake_train]
2 cudaMalloc <- main [cuda_fake_train]
10 cudaMemcpy <- main [cuda_fake_train]
5 cudaMemset <- main [cuda_fake_train]" \
	"$(python3 "$ROOT/tests/tools/stackcheck.py" c.json 0 cuda_fake_train |
		grep -v ' step <- ' | sed 's/ <- _start .*//')"
mxprof_command
"$MX" report --flame --gpu c.json >flame.txt
expect_eq "report --flame --gpu: conv_fwd under main's launch" "main 50000" \
	"$(sed -n 's/.*;\(main\);.*;cudaLaunchKernel;conv_fwd \([0-9]*\)$/\1 \2/p' flame.txt)"
expect_eq "mxprof report: GPU Time by Call Site, conv_fwd" "conv_fwd @ main 5 0.0500" \
	"$("$MX" report c.json | awk '$0 == "GPU Time by Call Site" {p = 1; next}
		p && /^$/ {exit} p && /^conv_fwd @ main / {print $1, $2, $3, $4, $5}')"
