#!/usr/bin/env bash
# Every pointer into the documents, in code, docs, man pages and tests,
# leads somewhere: docs/NAME.md exists, and NAME.md, "Section" names one
# of its headings or one of its bold paragraph names (**Gathering.**).
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
if ! command -v python3 >/dev/null; then
	echo "skip: needs python3"
	exit 0
fi
git ls-files core spank tests docs etc tools debian packaging Makefile README.md >"$T/files" 2>/dev/null ||
	find core spank tests docs etc tools debian packaging Makefile README.md -type f >"$T/files"
python3 - "$T/files" >"$T/bad" <<'PY'
import os, re, sys
names = {}
def sections(doc):
    if doc not in names:
        text = open(doc, encoding="utf-8").read()
        names[doc] = [h.strip() for h in re.findall(r"^#+\s+(.*)$", text, re.M)]
        names[doc] += re.findall(r"\*\*([^*]+?)\.?\*\*", text)
    return names[doc]
for f in open(sys.argv[1]).read().split():
    if not os.path.isfile(f) or f.endswith((".png", ".svg", ".json")):
        continue
    try:
        text = open(f, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    # Comments wrap: a reference may run over lines and comment markers.
    flat = re.sub(r"\n\s*(\*|#|//|;)?\s*", " ", text).replace("\\-", "-")
    for m in re.finditer(r"\b(?:docs/)?([a-z][a-z-]*)\.md(?:'s)?,?\s+\"([A-Z][^\"$/]*)\"", flat):
        doc = "README.md" if m.group(1) == "README" else "docs/%s.md" % m.group(1)
        if not os.path.exists(doc):
            print("%s: %s (no such document)" % (f, doc))
        elif not any(m.group(2).lower() in s.lower() for s in sections(doc)):
            print('%s: %s, "%s" (no such section)' % (f, doc, m.group(2)))
    for m in re.finditer(r"\bdocs/([a-z][a-z-]*)\.md", text):
        if not os.path.exists("docs/%s.md" % m.group(1)):
            print("%s: docs/%s.md (no such document)" % (f, m.group(1)))
PY
n=$(wc -l <"$T/files")
bad=$(sort -u "$T/bad" | paste -sd';' -)
check "every document and section a file points at exists ($n files read; broken: ${bad:-none})" \
	test ! -s "$T/bad"
