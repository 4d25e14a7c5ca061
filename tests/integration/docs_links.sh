# The documents hang together: every relative link (and image) in
# README.md and docs/*.md points to a file that exists, and a link with a
# #fragment into a Markdown file to one of its headings (named as GitHub
# names them: lower case, punctuation dropped, blanks as '-'); and the
# README's map of the documents (its "Documents" section) links every
# docs/*.md, so a new document cannot be left out of it.
. "$ROOT/tests/integration/lib.sh"
cd "$ROOT"
python3 - README.md docs/*.md <<'PYEOF'
import os, re, sys

def headings(path):
    out, fence = set(), False
    for line in open(path):
        if line.startswith("```"):
            fence = not fence
            continue
        m = re.match(r"#+ (.*)", line)
        if m and not fence:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(slug.replace(" ", "-"))
    return out

bad, links = [], 0
for doc in sys.argv[1:]:
    text = open(doc).read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        links += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(full):
            bad.append("%s: %s: no such file" % (doc, target))
        elif frag and full.endswith(".md") and frag not in headings(full):
            bad.append("%s: %s: no such heading" % (doc, target))
readme = open("README.md").read()
m = re.search(r"^## Documents\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
mapped = set(re.findall(r"\]\((docs/[^)#\s]+\.md)\)", m.group(1) if m else ""))
docs = {d for d in sys.argv[1:] if d.startswith("docs/")}
for d in sorted(docs - mapped):
    bad.append("README.md: the map of the documents does not link %s" % d)
for d in sorted(mapped - docs):
    bad.append("README.md: the map links %s, which is not a document" % d)
for b in bad:
    print(b)
print("links checked: %d; documents in the map: %d of %d" % (links, len(mapped & docs), len(docs)))
sys.exit(1 if bad else 0)
PYEOF
echo "ok: links and the map of the documents"
