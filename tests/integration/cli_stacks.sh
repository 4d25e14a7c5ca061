# mxprof report and merge on traces with call stacks (stackFrames, "sf"),
# written here by hand in the library's format: the folded stacks of
# report --flame (self time; GPU time under the launch's stack), the
# Call Sites rows of the tables, the error lines, and merge renumbering
# colliding frame ids so that the merged trace folds as its parts do.
. "$ROOT/tests/integration/lib.sh"
mxprof_command

# Frames: main > run_model > deflate_helper (not user code), main >
# helper;odd, run_model > launch_conv, a stack with no user frame, and
# Python frames. compress (5 us) holds two crc32 (2 + 1 us): self 2 us.
# One crc32 and one launch have no stack; gemm's launch has none.
cat > s.json <<'JSON'
{"schemaVersion":1,"displayTimeUnit":"ns","baseTimeNanoseconds":1000000,
"stackFrames":{
"1":{"name":"main","category":"prog","user":1},
"2":{"name":"run_model","category":"prog","parent":"1","user":1},
"3":{"name":"deflate_helper","category":"libz.so.1","parent":"2"},
"4":{"name":"helper;odd","category":"prog","parent":"1","user":1},
"5":{"name":"launch_conv","category":"libtorch.so","parent":"2"},
"6":{"name":"__libc_start_main","category":"libc.so.6"},
"7":{"name":"worker_loop","category":"libfoo.so","parent":"6"},
"8":{"name":"train (train.py:12)","category":"python","parent":"1","user":1},
"9":{"name":"forward (model.py:40)","category":"python","parent":"8","user":1}},
"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"prog"}},
{"ph":"X","cat":"c_api","name":"crc32","pid":1,"tid":1,"ts":1.000,"dur":2.000,"sf":3,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"crc32","pid":1,"tid":1,"ts":3.500,"dur":1.000,"sf":3,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"compress","pid":1,"tid":1,"ts":0.500,"dur":5.000,"sf":2,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"crc32","pid":1,"tid":1,"ts":10.000,"dur":1.000,"sf":4,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"crc32","pid":1,"tid":1,"ts":20.000,"dur":4.000,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"inflate","pid":1,"tid":2,"ts":5.000,"dur":7.000,"sf":7,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"adler32","pid":1,"tid":1,"ts":50.000,"dur":1.000,"sf":"9","args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30.000,"dur":3.000,"sf":5,"args":{"group":"CUDA Runtime","correlation":77}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":40.000,"dur":1.000,"args":{"group":"CUDA Runtime","correlation":78}},
{"ph":"X","cat":"kernel","name":"conv_kernel","pid":0,"tid":7,"ts":31.000,"dur":10.000,"args":{"correlation":77,"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":42.000,"dur":6.000,"args":{"correlation":78,"device":0,"stream":7}}],
"mxprof":{"droppedRecords":0}}
JSON

# --flame: self time in ns, frames outermost first, ';' in a name made
# ':', lines sorted; the two events without a stack said on stderr.
"$MX" report --flame s.json > f.txt 2> f.err
expect_eq "flame of s.json" "__libc_start_main;worker_loop;inflate 7000
main;helper:odd;crc32 1000
main;run_model;compress 2000
main;run_model;deflate_helper;crc32 3000
main;run_model;launch_conv;cudaLaunchKernel 3000
main;train (train.py:12);forward (model.py:40);adler32 1000" "$(cat f.txt)"
expect_eq "flame stderr" "mxprof report: 2 events without a call stack (sf) left out" "$(cat f.err)"
"$MX" report --flame -o f2.txt s.json 2> /dev/null
cmp f.txt f2.txt || fail "--flame -o differs from stdout"
echo "ok: --flame -o writes the same lines"

# --flame --gpu: the kernel under its launch's stack and name; gemm's
# launch has no stack.
"$MX" report --flame --gpu s.json > g.txt 2> g.err
expect_eq "gpu flame of s.json" \
	"main;run_model;launch_conv;cudaLaunchKernel;conv_kernel 10000" "$(cat g.txt)"
expect_eq "gpu flame stderr" \
	"mxprof report: 1 GPU events whose launch has no call stack left out" "$(cat g.err)"

# row TABLES SECTION NAME: the cells after NAME in SECTION, single-spaced.
row() {
	awk -v sec="$2" -v name="$3" '
		$0 == sec { insec = 1; next }
		insec && /^$/ { insec = 0 }
		insec && index($0, name) == 1 {
			rest = substr($0, length(name) + 1)
			if (rest ~ /^  /) { sub(/^ +/, "", rest); gsub(/ +/, " ", rest); print rest; exit }
		}' "$1"
}
# Site: the innermost frame with "user": 1, else the stack's innermost.
"$MX" report s.json > t.txt
cs='Call Sites: C API (libz.so.1)'
# Count, time, min, max, avg, self (ms), share of the section's self time.
expect_eq "crc32 @ run_model" "2 0.0030 0.0010 0.0020 0.0015 0.0030 21.43" "$(row t.txt "$cs" 'crc32 @ run_model')"
expect_eq "compress @ run_model" "1 0.0050 0.0050 0.0050 0.0050 0.0020 14.29" "$(row t.txt "$cs" 'compress @ run_model')"
expect_eq "crc32 @ helper;odd" "1 0.0010 0.0010 0.0010 0.0010 0.0010 7.14" "$(row t.txt "$cs" 'crc32 @ helper;odd')"
expect_eq "inflate @ worker_loop" "1 0.0070 0.0070 0.0070 0.0070 0.0070 50.00" "$(row t.txt "$cs" 'inflate @ worker_loop')"
expect_eq "adler32 @ forward" "1 0.0010 0.0010 0.0010 0.0010 0.0010 7.14" "$(row t.txt "$cs" 'adler32 @ forward (model.py:40)')"
expect_eq "call sites total" "6 0.0170 0.0010 0.0070 0.0028 0.0140 100.00" "$(row t.txt "$cs" 'Total')"
expect_eq "launch site" "1 0.0030 0.0030 0.0030 0.0030 0.0030 100.00" \
	"$(row t.txt 'Call Sites: CUDA Runtime' 'cudaLaunchKernel @ run_model')"
expect_eq "GPU time by call site" "1 0.0100 0.0100 0.0100 0.0100 0.0100 100.00" \
	"$(row t.txt 'GPU Time by Call Site' 'conv_kernel @ run_model')"
expect_eq "GPU call-site rows" 1 "$(row t.txt 'GPU Time by Call Site' 'Total' | cut -d' ' -f1)"
# The plain rows are as without stacks: crc32 counts all 4, self 8 us.
expect_eq "plain crc32 row" "4 0.0080 0.0010 0.0040 0.0020 0.0080 44.44" "$(row t.txt 'C API (libz.so.1)' crc32)"
sed 's/,"sf":"\{0,1\}[0-9]*"\{0,1\}//; /stackFrames/,/^"traceEvents/{/^"traceEvents/!d}' s.json > plain.json
"$MX" report plain.json > plain.txt
expect_eq "tables without the call-site sections" "" \
	"$(diff <(sed '/^Call Sites: /,/^$/d; /^GPU Time by Call Site$/,/^$/d' t.txt) plain.txt)"

# stackFrames after traceEvents (sf as a string, parent as a number,
# "user": true): a second pass gives the same kind of rows.
cat > b.json <<'JSON'
{"schemaVersion":1,"baseTimeNanoseconds":2000000,"traceEvents":[
{"ph":"X","cat":"c_api","name":"crc32","pid":1,"tid":1,"ts":1.000,"dur":4.000,"sf":"3","args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"c_api","name":"compress","pid":1,"tid":1,"ts":0.000,"dur":6.000,"sf":2,"args":{"group":"C API (libz.so.1)"}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":7.000,"dur":1.000,"sf":2,"args":{"group":"CUDA Runtime","correlation":77}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":8.000,"dur":2.500,"args":{"correlation":77}}],
"stackFrames":{"1":{"name":"main","category":"prog","user":1},"2":{"name":"run_model","category":"prog","parent":1,"user":true},"3":{"name":"deflate_helper","category":"libz.so.1","parent":"2"}}}
JSON
"$MX" report b.json > tb.txt
expect_eq "late frames: compress @ run_model" "1 0.0060 0.0060 0.0060 0.0060 0.0020 33.33" "$(row tb.txt "$cs" 'compress @ run_model')"
expect_eq "late frames: crc32 @ run_model" "1 0.0040 0.0040 0.0040 0.0040 0.0040 66.67" "$(row tb.txt "$cs" 'crc32 @ run_model')"
expect_eq "late frames: GPU site" "1 0.0025 0.0025 0.0025 0.0025 0.0025 100.00" \
	"$(row tb.txt 'GPU Time by Call Site' 'Memcpy HtoD @ run_model')"
expect_eq "late frames: flame" "main;run_model;compress 2000
main;run_model;cudaMemcpyAsync 1000
main;run_model;deflate_helper;crc32 4000" "$("$MX" report --flame b.json)"

# Errors: no stacks at all; sf without stackFrames; bad options.
set +e
"$MX" report --flame plain.json > /dev/null 2> e.txt; rc=$?
set -e
expect_eq "no stacks: exit" 1 "$rc"
expect_eq "no stacks: line" "mxprof report: plain.json has no call stacks (record with MXPROF_STACKS=N or mxprof run --stacks N)" "$(cat e.txt)"
sed '/stackFrames/,/^"traceEvents/{/^"traceEvents/!d}' s.json > nof.json
set +e
"$MX" report --flame nof.json > /dev/null 2> e.txt; rc=$?
set -e
expect_eq "sf without stackFrames: exit" 1 "$rc"
expect_eq "sf without stackFrames: line" "mxprof report: nof.json: its events carry call stacks (sf) but it has no stackFrames" "$(cat e.txt)"
set +e
"$MX" report --gpu s.json > /dev/null 2> e.txt; rc=$?
set -e
expect_eq "--gpu without --flame: exit" 2 "$rc"
expect_eq "--gpu without --flame: line" "mxprof report: --gpu needs --flame" "$(head -1 e.txt)"
grep -q '^usage: mxprof report' e.txt || fail "no usage after a bad option"
set +e
"$MX" report --flame --sort count s.json > /dev/null 2> e.txt; rc=$?
set -e
expect_eq "--flame --sort: exit" 2 "$rc"
"$MX" report --help | grep -q -- '--flame' || fail "--flame not in the help"
echo "ok: usage errors"

# merge: b's frame ids 1..3 collide with s's; they move by s's largest
# id + 1 (10, room for an id 0) to 11..13, in the keys, the parents and the events' sf; the
# frames come after traceEvents, as the library writes them.
"$MX" merge -o m.json s.json b.json > /dev/null
tracesummary m.json > /dev/null
python3 - <<'PY'
import json
d = json.load(open("m.json"))
keys = list(d)
assert keys.index("stackFrames") > keys.index("traceEvents"), keys
sf = d["stackFrames"]
assert sorted(sf, key=int) == [str(i) for i in range(1, 14) if i != 10], sorted(sf, key=int)
assert sf["11"] == {"name": "main", "category": "prog", "user": 1}, sf["11"]
assert sf["12"] == {"name": "run_model", "category": "prog", "parent": 11, "user": True}, sf["12"]
assert sf["13"] == {"name": "deflate_helper", "category": "libz.so.1", "parent": "12"}, sf["13"]
assert sf["3"]["parent"] == "2", sf["3"]
got = [(e["name"], e["sf"]) for e in d["traceEvents"] if "sf" in e]
want = [("crc32", 3), ("crc32", 3), ("compress", 2), ("crc32", 4), ("inflate", 7),
        ("adler32", "9"), ("cudaLaunchKernel", 5), ("crc32", "13"), ("compress", 12),
        ("cudaMemcpyAsync", 12)]
assert got == want, got
print("ok: merged stackFrames and sf renumbered")
PY
"$MX" report --flame m.json > mf.txt 2> /dev/null
"$MX" report --flame s.json b.json > sb.txt 2> /dev/null
cmp mf.txt sb.txt || fail "the merged trace folds differently from its parts"
expect_eq "flame of the merge" "__libc_start_main;worker_loop;inflate 7000
main;helper:odd;crc32 1000
main;run_model;compress 4000
main;run_model;cudaMemcpyAsync 1000
main;run_model;deflate_helper;crc32 7000
main;run_model;launch_conv;cudaLaunchKernel 3000
main;train (train.py:12);forward (model.py:40);adler32 1000" "$(cat mf.txt)"
# Both files use correlation 77: each GPU event keeps its own launch.
expect_eq "gpu flame of the merge" "main;run_model;cudaMemcpyAsync;Memcpy HtoD 2500
main;run_model;launch_conv;cudaLaunchKernel;conv_kernel 10000" "$("$MX" report --flame --gpu m.json 2> /dev/null)"
"$MX" report m.json > tm.txt
expect_eq "merged crc32 @ run_model" "3 0.0070 0.0010 0.0040 0.0023 0.0070 35.00" "$(row tm.txt "$cs" 'crc32 @ run_model')"
