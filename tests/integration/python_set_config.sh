# set_config in MXNet's style through the Python binding: a new filename
# after recording began raises nothing, says so in one line and names the
# files of the next dump; before any record it moves the trace silently.
. "$ROOT/tests/integration/lib.sh"
if [ "$PRELOAD" != "$MXPROF_LIB" ]; then export LD_PRELOAD=${PRELOAD% *}; fi
export PYTHONPATH=$ROOT/tools/python
cat > late.py <<'PYEOF'
from mxprof import profiler
profiler.set_config(filename='first.json', aggregate_stats=True)
profiler.set_state('run')
d = profiler.Domain('cfg')
t = profiler.Task(d, 'step')
for i in range(3):
    with t:
        pass
profiler.set_config(filename='second.json')
for i in range(2):
    with t:
        pass
profiler.set_state('stop')
profiler.dump()
print("done")
PYEOF
/usr/bin/python3 late.py > late.out 2> late.err
expect_eq "the script ran to its end" done "$(cat late.out)"
expect_eq "lines on stderr" 1 "$(wc -l < late.err)"
grep -q "^mxprof: set_config(filename='second.json'): the next dump writes .*second.json" late.err ||
	fail "stderr: $(cat late.err)"
[ ! -e first.json ] || fail "first.json was written"
expect_eq "steps in second.json's tables" 5 "$(row_count second.stats.txt cfg step)"
tracesummary second.json > s.json
expect_eq "steps in second.json" 5 "$(jget s.json 'd["spans"]["cfg/step"]')"
[ ! -e first.json.journal ] && [ ! -e second.json.journal ] || fail "a journal was left"
echo "ok: no journal left"

# Before any record: no line, the trace goes to the new name.
sed -e "s/profiler.set_config(filename='second.json')//" \
    -e "s/profiler.set_state('run')/profiler.set_config(filename='moved.json'); profiler.set_state('run')/" \
    late.py > early.py
/usr/bin/python3 early.py > early.out 2> early.err
expect_eq "early: lines on stderr" 0 "$(wc -l < early.err)"
expect_eq "early: steps in moved.json's tables" 5 "$(row_count moved.stats.txt cfg step)"

# MXPROF_OUTPUT set and not yet recording: one line says where the trace
# goes instead.
MXPROF_OUTPUT=env.json /usr/bin/python3 early.py > env.out 2> env.err
expect_eq "MXPROF_OUTPUT: lines on stderr (first.json, moved.json)" 2 "$(wc -l < env.err)"
grep -q "^mxprof: set_config(filename='moved.json'): the trace and tables go to .*moved.json, not to MXPROF_OUTPUT's env.json$" env.err ||
	fail "MXPROF_OUTPUT: $(cat env.err)"
[ ! -e env.json ] || fail "env.json was written"

# Under mxprof run (recording from the start): the library's line names
# the new file, and the summary follows the program there: its tables and
# the files it wrote.
rm -f moved.json moved.stats.txt
"$BUILD/mxprof" run -o run.json -- /usr/bin/python3 early.py > run.out 2> run.err
cat run.err
grep -q "^mxprof: set_config(filename='moved.json'): the next dump writes .*moved.json" run.err ||
	fail "run: $(cat run.err)"
grep -q "^mxprof: trace  .*moved.json$" run.err || fail "run: the summary does not name moved.json"
grep -q "^mxprof: tables .*moved.stats.txt$" run.err || fail "run: the summary does not name moved.stats.txt"
grep -q "^step  *5 " run.err || fail "run: the summary lacks the tables"
if grep -q "no trace at" run.err; then fail "run: 'no trace' said"; fi
echo "ok: the summary follows set_config(filename=...)"

# The same through a shell wrapper that runs helpers and then execs
# Python (as pyenv's python3 is a bash script): the summary still follows
# the program to moved.json, and the helpers leave no file.
rm -f moved.json moved.stats.txt
cat > py3 <<'SH'
#!/bin/bash
v=$(uname -s); d=$(dirname "$0"); b=$(basename "$0")
for i in 1 2 3; do h=$(printf '%s' "$i" | tr 0-9 a-j); done
exec /usr/bin/python3 "$@"
SH
chmod +x py3
"$BUILD/mxprof" run -o wrun.json -- ./py3 early.py > w.out 2> w.err
cat w.err
grep -q "^mxprof: trace  .*moved.json$" w.err || fail "wrapper: the summary does not name moved.json"
grep -q "^mxprof: tables .*moved.stats.txt$" w.err || fail "wrapper: the summary does not name moved.stats.txt"
grep -q "^step  *5 " w.err || fail "wrapper: the summary lacks the tables"
if grep -q "no trace at\|^mxprof: child " w.err; then fail "wrapper: $(cat w.err)"; fi
expect_eq "wrapper: no file of the helpers" "" "$(ls wrun.* 2>/dev/null || true)"
echo "ok: the summary follows set_config(filename=...) through a wrapper"
