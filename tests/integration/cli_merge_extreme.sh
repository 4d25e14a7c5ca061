# mxprof merge with numbers at the ends of the int64 range: pids of
# INT64_MAX in two files, base times as far apart as int64 allows and a ts
# near its end. Exact pids (positive, none shared), one line for the base
# time it cannot shift by, times that stop at the end instead of wrapping,
# and (in the UBSan build) no signed overflow.
. "$ROOT/tests/integration/lib.sh"
mxprof_command
max=9223372036854775807
ev() { # ev PID TS
	printf '{"ph":"X","name":"s","cat":"c","pid":%s,"tid":1,"ts":%s,"dur":1}' "$1" "$2"
}
printf '{"baseTimeNanoseconds":0,"traceEvents":[%s,%s]}\n' \
	"$(ev $max 1)" "$(ev 5 2)" >a.json
printf '{"baseTimeNanoseconds":0,"traceEvents":[%s,%s]}\n' \
	"$(ev $max 3)" "$(ev 5 4)" >b.json
"$MX" merge -o m.json a.json b.json >/dev/null 2>err.txt
expect_eq "pids: messages" "" "$(cat err.txt)"
expect_eq "pids: each event's pid" "[$max, 5, 1, 2]" \
	"$(jget m.json '[e["pid"] for e in d["traceEvents"] if e["ph"] == "X"]')"

# Base times: b is 2^63 ns after a, past what an int64 shift holds; c is
# 9e18 ns after a, with a ts that passes the end once shifted.
printf '{"baseTimeNanoseconds":-9223372036854775808,"traceEvents":[%s]}\n' \
	"$(ev 1 1)" >a.json
printf '{"baseTimeNanoseconds":1,"traceEvents":[%s]}\n' "$(ev 2 7)" >b.json
printf '{"baseTimeNanoseconds":-223372036854775808,"traceEvents":[%s]}\n' \
	"$(ev 3 9000000000000000)" >c.json
"$MX" merge -o m.json a.json b.json c.json >/dev/null 2>err.txt
expect_eq "base: message" \
	"mxprof merge: b.json: baseTimeNanoseconds is too far from the other files'; its times are not shifted" \
	"$(cat err.txt)"
expect_eq "base: ts" "['1', '7', '9223372036854775.807']" \
	"$(python3 -c 'import re,sys; print(re.findall(r"\"ts\":([0-9.-]+)", open("m.json").read()))')"
