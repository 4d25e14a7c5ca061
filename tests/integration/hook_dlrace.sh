# dlclose in one thread while mxprof patches a library another thread
# just loaded: the patcher keeps each new object loaded while it reads its
# tables and writes its GOT. tests/programs/hooklibs/dlrace.c: 4 threads
# each load and unload their own library 200 times; the libraries' GOTs
# hold 3000 hooked entries each, so a patch takes long enough to race.
# Before the patcher pinned objects, about one run in three crashed; the
# test runs 10.
. "$ROOT/tests/integration/lib.sh"
cd "$WORK"
N=3000
{
	for i in $(seq 0 $((N - 1))); do
		echo "int rz_$i(int x) { return x + $i; }"
	done
} >z.c
{
	for i in $(seq 0 $((N - 1))); do echo "int rz_$i(int);"; done
	echo "int ry_all(int x) { int s = 0;"
	for i in $(seq 0 $((N - 1))); do echo "s += rz_$i(x);"; done
	echo "return s; }"
} >y.c
cc -O1 -shared -fPIC -o libdlracez.so z.c
for k in 1 2 3 4; do
	cc -O1 -shared -fPIC -Wl,-z,lazy -o "libdlrace$k.so" y.c -L. -ldlracez \
		-Wl,-rpath,"$WORK"
done
cc -O2 -o dlrace "$ROOT/tests/programs/hooklibs/dlrace.c" -L. -ldlracez \
	-Wl,-rpath,"$WORK" -ldl -lpthread
for run in $(seq 10); do
	rc=0
	MXPROF_AUTOSTART=1 MXPROF_OUTPUT="$WORK/r$run.json" \
		MXPROF_HOOK='libdlracez.so:rz_*' LD_PRELOAD="$PRELOAD" \
		./dlrace "$WORK" 200 >out.txt || rc=$?
	expect_eq "run $run: exit status" 0 "$rc"
	expect_eq "run $run: output" "rz_0(1) = 1" "$(cat out.txt)"
	tracesummary "r$run.json" >s.json
	expect_eq "run $run: rz_0 calls" 1 \
		"$(jget s.json 'd["spans"].get("C API (libdlracez.so)/rz_0", 0)')"
done
