# The documents' C and Python examples, run as written: every ```c block
# of README.md and docs/*.md is compiled as the body of main() (with
# stdio.h and mxprof.h, linked with -lmxprof) and run recording from the
# start, and every ```python block is run with tools/python on
# PYTHONPATH, each in a folder of its own; how many blocks each document
# has is checked, so that moved text cannot drop one unnoticed. (The
# documents' `mxprof` lines are run by cli_readme; the stack example of
# docs/stacks.md is stack_torch's program.)
. "$ROOT/tests/integration/lib.sh"
(cd "$ROOT" && python3 - README.md docs/*.md) > counts.txt <<'PYEOF'
import os, sys
for doc in sys.argv[1:]:
    lang, body, n = None, [], {}
    for line in open(doc):
        if line.startswith("```"):
            if lang:
                n[lang] = n.get(lang, 0) + 1
                name = "%s.%s.%d" % (doc.replace("/", "_"), lang, n[lang])
                open(os.path.join(os.environ["WORK"], name), "w").write("".join(body))
                lang, body = None, []
            elif line.strip() in ("```c", "```python"):
                lang = line.strip()[3:]
            continue
        if lang:
            body.append(line)
    for k in sorted(n):
        print("%s:%s=%d" % (doc, k, n[k]))
PYEOF
expect_eq "c and python blocks per document" \
	"README.md:c=1 docs/api.md:c=1 docs/api.md:python=2" "$(echo $(cat counts.txt))"

for src in *.c.[0-9]*; do
	dir=$WORK/run.$src
	mkdir "$dir"
	{
		printf '#include <stdio.h>\n#include "mxprof.h"\nint main(void)\n{\n'
		cat "$src"
		printf 'return 0;\n}\n'
	} > "$dir/main.c"
	cc -O2 -Wall -Werror -I"$ROOT/include" -o "$dir/main" "$dir/main.c" \
		-L"$BUILD" -lmxprof -Wl,-rpath,"$BUILD"
	(cd "$dir" && MXPROF_AUTOSTART=1 LD_PRELOAD="$PRELOAD" ./main > out.txt)
	echo "ok: $src compiled and ran"
done
for src in *.python.[0-9]*; do
	dir=$WORK/run.$src
	mkdir "$dir"
	(cd "$dir" && PYTHONPATH="$ROOT/tools/python" LD_PRELOAD="$PRELOAD" \
		python3 "$WORK/$src" > out.txt)
	echo "ok: $src ran"
done

# What each example records.
d=run.README.md.c.1
expect_eq "README's C: forward" 1 "$(row_count $d/profile.stats.txt train forward)"
expect_eq "README's C: samples" 1 "$(row_count $d/profile.stats.txt 'train (counters)' samples)"
d=run.docs_api.md.c.1
expect_eq "api.md's C: dumps() has step" 1 "$(row_count $d/out.txt train step)"
expect_eq "api.md's C: step" 1 "$(row_count $d/profile.stats.txt train step)"
expect_eq "api.md's C: samples" 1 "$(row_count $d/profile.stats.txt 'train (counters)' samples)"
expect_eq "api.md's C: checkpoint" 1 "$(row_count $d/profile.stats.txt 'train (markers)' checkpoint)"
d=run.docs_api.md.python.1
expect_eq "api.md's Python: dumps() has step" 1 "$(row_count $d/out.txt train step)"
expect_eq "api.md's Python: step" 1 "$(row_count $d/trace.stats.txt train step)"
d=run.docs_api.md.python.2
expect_eq "api.md's MindSpore Python: JSON metadata" "[4, 8]" "$(jget $d/data/profile.json 'd["run"]["layers"]')"
