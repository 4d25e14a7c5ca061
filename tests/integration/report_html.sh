# The HTML page of a run (mxprof run --html, mxprof report --html), of the
# PyTorch loop of torch_loop.py (12 SGD steps) recorded with
# MXPROF_STACKS=16:
#  - the program's output is unchanged and the page is one file that
#    loads nothing (no script src, link, import or url());
#  - its data: 12 steps, 0..11; the flame graph's total equals the
#    tables' self time of the same sections within the tables' rounding
#    (half of 0.0001 ms per row); report --html of the trace gives the
#    same page;
#  - in headless Chromium (Debian's chromium, driven by playwright-core
#    from $BUILD/npm, which tests/deps.sh installs; plain build only): no
#    console error and no request, 12 step bars 0..11, the longest step's bar's
#    breakdown is that step's and names its top row by self time (as
#    computed here from the trace), the flame total equals the tables'
#    as the page computes them, and a search for "forward" highlights
#    frames that all contain it; the screenshot is kept as
#    $BUILD/test-logs/report_html.png;
#  - a trace without steps or stacks (report_gen.py) gives a page whose
#    step and flame parts are one line each naming MXPROF_STEP and
#    MXPROF_STACKS.
. "$ROOT/tests/integration/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null ||
	skip "torch cannot be imported by $PY (python3-torch)"
LOOP=$ROOT/tests/programs/torch_loop.py
mxprof_command

"$PY" "$LOOP" sgd >plain.txt
"$MX" run -q --stacks 16 -o "$WORK/loop.json" --html "$WORK/loop.html" \
	"$PY" "$LOOP" sgd >run.out 2>run.err
cat run.err
diff plain.txt run.out || fail "the printed loss differs under mxprof run"
grep -qx "mxprof: page: $WORK/loop.html" run.err || fail "no line naming the page"
[ -s loop.html ] || fail "no page"
if grep -Eqi '<script[^>]* src=|<link|@import|url\(' loop.html; then
	fail "the page loads something: $(grep -Eoi '<script[^>]* src=|<link|@import|url\(' loop.html | head -1)"
fi

# data PAGE: the page's data, as facts.
data() {
	"$PY" - "$1" <<'PYEOF'
import json, re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<script id="mxdata" type="application/json">\n(.*?)</script>', s, re.S)
d = json.loads(m.group(1))
print("steps", " ".join(str(x[0]) for x in sorted(d["steps"] or [])))
if d["flame"]:
    fl = sum(r[1] for r in d["flame"]["rows"]) / 1e6
    rows = [v["Self Time"] for g, r in d["tables"]["Time"].items()
            if g in d["flameGroups"] for v in r.values()]
    print("flame_vs_tables", abs(fl - sum(rows)) <= 0.00005 * len(rows) + 1e-9,
          fl > 0, len(rows) > 0)
else:
    print("flame none")
print("command", d["meta"]["command"].endswith("torch_loop.py sgd"))
PYEOF
}
data loop.html >data.txt
cat data.txt
expect_eq "steps" "steps 0 1 2 3 4 5 6 7 8 9 10 11" "$(grep '^steps' data.txt)"
expect_eq "flame total" "flame_vs_tables True True True" "$(grep '^flame' data.txt)"
expect_eq "command line" "command True" "$(grep '^command' data.txt)"

# report --html of the same trace: the same page but for the trace's name.
"$MX" report --html "$WORK/again.html" "$WORK/loop.json" || fail "report --html failed"
cmp <(sed 's#"files":\[[^]]*\]##' loop.html) <(sed 's#"files":\[[^]]*\]##' again.html) ||
	fail "report --html and run --html give different pages"

# The rows by self time inside the slowest step, from the trace: the
# slices of the step's thread that began inside it (other steps aside); a
# slice's self time excludes its direct children, a PyTorch slice's only
# the PyTorch slices nearest inside it (nest.c's rules, without folding).
# Prints the step, then the names of its top rows as the page must show
# them: the first, with the second when the two are within 1%.
"$PY" - loop.json >expect.txt <<'PYEOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
grp = lambda e: e.get("args", {}).get("group", e.get("cat"))
s = max((e for e in ev if grp(e) == "Steps"), key=lambda e: e["dur"])
torch = {"aten", "torch annotations", "autograd"}
inside = sorted((e for e in ev if e["tid"] == s["tid"] and grp(e) != "Steps"
                 and s["ts"] <= e["ts"] < s["ts"] + s["dur"]),
                key=lambda e: (e["ts"], -e["dur"]))
self = collections.Counter()
stack = []
for e in inside:
    while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
        stack.pop()
    e["self"] = e["dur"]
    if stack and grp(stack[-1]) not in torch:
        stack[-1]["self"] -= e["dur"]
    if grp(e) in torch:
        for p in reversed(stack):
            if grp(p) in torch:
                p["self"] -= e["dur"]
                break
    stack.append(e)
for e in inside:
    self[e["name"]] += e["self"]
(a, x), (b, y) = self.most_common(2)
print(s["name"].split("#")[1], a, b if y >= 0.99 * x else a, sep="\t")
PYEOF
IFS=$'\t' read -r slow_step slow_top slow_top2 <expect.txt
echo "slowest step $slow_step, top row $slow_top (or $slow_top2)"

# Without steps or stacks: one line each.
"$PYTHON3" "$ROOT/tests/bench/report_gen.py" "$WORK/gen.json" 200k >/dev/null
"$MX" report --html "$WORK/gen.html" "$WORK/gen.json" || fail "report --html of gen.json"
data gen.html >gen.txt
expect_eq "no steps" "steps " "$(grep '^steps' gen.txt)"
expect_eq "no stacks" "flame none" "$(grep '^flame' gen.txt)"

if [ -n "$SANITIZER" ]; then
	echo "the browser part runs in the plain build only"
	exit 0
fi
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -x "$CHROMIUM" ] || { skip_part "no chromium (Debian's chromium) for the browser part"; exit 0; }
command -v node >/dev/null || { skip_part "no node for the browser part"; exit 0; }
NODE_PATH=$BUILD/npm/node_modules
[ -f "$NODE_PATH/playwright-core/package.json" ] ||
	{ skip_part "no playwright-core in $NODE_PATH (tests/deps.sh installs it)"; exit 0; }
export CHROMIUM NODE_PATH
shot=$BUILD/test-logs/report_html.png
node "$ROOT/tests/tools/html_check.js" "$WORK/loop.html" "$shot" forward >seen.json ||
	fail "the browser could not open the page"
cat seen.json
expect_eq "errors" "[]" "$(jget seen.json 'd["errors"]')"
expect_eq "step bars" "$(seq -s ' ' 0 11)" "$(jget seen.json '" ".join(map(str, d["bars"]))')"
expect_eq "slowest marked" "True" "$(jget seen.json "$slow_step in d['slow']")"
expect_eq "breakdown step" "True" "$(jget seen.json "d['slowest'].startswith('Step $slow_step:')")"
top=$(jget seen.json 'd["top"]')
[ "$top" = "$slow_top" ] || [ "$top" = "$slow_top2" ] ||
	fail "breakdown top: expected '$slow_top', got '$top'"
echo "ok: breakdown top = $top"
expect_eq "flame = tables" "True" \
	"$(jget seen.json 'abs(d["flame_ms"] - d["tables_ms"]) <= 0.00005 * d["host_rows"] + 0.0001')"
expect_eq "search highlights" "True" "$(jget seen.json 'd["hl"] > 0 and d["hl_wrong"] == 0')"
[ -s "$shot" ] || fail "no screenshot"
echo "screenshot: $shot"

node "$ROOT/tests/tools/html_check.js" "$WORK/gen.html" "$WORK/gen.png" forward >gen_seen.json ||
	fail "the browser could not open the page without steps"
cat gen_seen.json
expect_eq "gen errors" "[]" "$(jget gen_seen.json 'd["errors"]')"
expect_eq "gen hints" "True" "$(jget gen_seen.json 'any("MXPROF_STEP=" in h for h in d["hints"]) and any("MXPROF_STACKS=" in h for h in d["hints"])')"
