#!/usr/bin/env bash
# show.sh - `docqa show CITATION` on a copy of samples/ and the reader
# fixtures' deck and workbook: every search hit's citation, as search
# writes it, shows the lines of the hit's text (a text file's, a
# Markdown's, a PDF page's, a DOCX's paragraphs, an HTML page's, code, a
# slide's, a sheet's rows); lines cited are marked among their context; a
# citation copied whole from an answer ("[2] path p.4:3-4 (section)") or
# given in words; --json; a path alone; clear errors (exit 1) for an
# unknown document, lines a document does not have, a folder, a page of an
# unpaged document, lines of a paged one without their page; a file
# changed since ingest is warned of.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
SRC=${DQ_SOURCE_DIR:?set DQ_SOURCE_DIR}
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
cp -r "$SRC/samples" "$tmp/s"
mkdir -p "$tmp/s/office"
cp "$SRC/tests/ingest_read/fixtures/board.pptx" "$SRC/tests/ingest_read/fixtures/book.xlsx" "$tmp/s/office/"
IDX="$tmp/idx"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed -q 2>/dev/null

# Every hit of a few queries: its citation shows its text's lines, cited.
for q in "break clause notice" "governing law" "licence fee" "sub-processor" \
         "indemnity cap" "Kestrel Partners bid" "2024-03-12" "main argc" \
         "Confidential Information"; do
  "$DOCQA" search "$q" --index "$IDX" --k 5 --json >"$tmp/q.json" 2>/dev/null
  python3 - "$tmp/q.json" "$DOCQA" "$IDX" >"$tmp/rt" 2>&1 <<'EOF'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
bad = 0
for r in d["results"]:
    if r["page"]:
        unit = r["page_unit"]
        if unit == "sheet":
            where = " sheet %d rows %d-%d" % (r["page"], r["line_start"], r["line_end"])
        else:
            where = " %s%d:%d-%d" % ("p." if unit == "page" else unit + " ",
                                       r["page"], r["line_start"], r["line_end"])
        cite = r["path"] + where
    else:
        cite = "%s:%d-%d" % (r["path"], r["line_start"], r["line_end"])
    p = subprocess.run([sys.argv[2], "show", cite, "--index", sys.argv[3],
                        "--json", "--context", "0"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print("show %r failed: %s" % (cite, p.stderr)); bad += 1; continue
    s = json.loads(p.stdout)
    shown = " ".join(l["text"] for l in s["lines"] if l["cited"])
    norm = lambda t: " ".join(t.split())
    # the hit's text (a chunk, its section's columns aside) is in those lines
    words = [w for w in norm(r["text"]).split() if w.isalnum()][:12]
    missing = [w for w in words if w not in norm(shown)]
    if not s["lines"] or not all(l["cited"] for l in s["lines"]) or missing:
        print("%s: %s not in %r" % (cite, missing, shown[:300])); bad += 1
    else:
        print("ok %s (%d lines)" % (cite, len(s["lines"])))
sys.exit(1 if bad else 0)
EOF
  ok $? "search '$q': each hit's citation shows its lines: $(cat "$tmp/rt")"
done

# lines cited among their context, marked; the section they are in
"$DOCQA" show "contracts/commercial_lease.pdf p.4:3-4" --index "$IDX" >"$tmp/o" 2>"$tmp/e"; rc=$?
ok $rc "a PDF page's lines shown: $(cat "$tmp/e")"
head -1 "$tmp/o" | grep -q '^contracts/commercial_lease.pdf p.4:3-4 (.*BREAK CLAUSE)$'; ok $? "under the citation and its section: $(head -1 "$tmp/o")"
[ "$(grep -c '^>' "$tmp/o")" = 2 ] && grep -q '^>     3  less than six (6) months' "$tmp/o" && grep -q '^      1  7\. BREAK CLAUSE' "$tmp/o"; ok $? "lines 3-4 marked, two around them each side: $(cat "$tmp/o")"
# copied whole from an answer's sources, or in words
"$DOCQA" show "[2] contracts/commercial_lease.pdf p.4:3-4 (7 BREAK CLAUSE)" --index "$IDX" >"$tmp/o2" 2>/dev/null
cmp -s "$tmp/o" "$tmp/o2"; ok $? "a citation copied from an answer shows the same"
"$DOCQA" show contracts/commercial_lease.pdf p.4:3-4 --index "$IDX" >"$tmp/o2" 2>/dev/null
cmp -s "$tmp/o" "$tmp/o2"; ok $? "as words, the same"
"$DOCQA" show "$tmp/s/contracts/commercial_lease.pdf" p.4:3-4 --index "$IDX" >"$tmp/o2" 2>/dev/null
cmp -s "$tmp/o" "$tmp/o2"; ok $? "the file's own path, the same"
# an xref site's line, pasted whole: its line, the text xref printed
"$DOCQA" xref Term --index "$IDX" >"$tmp/x" 2>/dev/null
site=$(grep -m1 '^contracts/commercial_lease.pdf p.2:' "$tmp/x")
"$DOCQA" show "$site" --context 0 --index "$IDX" --json >"$tmp/j" 2>"$tmp/e"; rc=$?
json "$tmp/j" "d['page'] == 2 and len(d['lines']) == 1 and d['lines'][0]['text'] in '''$site'''" && [ $rc = 0 ]; ok $? "an xref line shows its site: $site -> $(cat "$tmp/j" "$tmp/e")"
# a workbook's rows by sheet, a slide, JSON
"$DOCQA" show office/book.xlsx sheet 1 row 2 --context 0 --index "$IDX" --json >"$tmp/j" 2>"$tmp/e"; rc=$?
json "$tmp/j" "d['kind'] == 'xlsx' and d['page'] == 1 and d['page_unit'] == 'sheet' and d['line_start'] == 2 and [l['line'] for l in d['lines']] == [2] and d['lines'][0]['text'].startswith('2024 | 31.2 | 12.5%') and d['section'] == 'Sheet: Revenue' and not d['stale']" && [ $rc = 0 ]; ok $? "a sheet's row as JSON: $(cat "$tmp/j" "$tmp/e")"
"$DOCQA" show office/board.pptx slide 3 --index "$IDX" >"$tmp/o" 2>/dev/null
head -1 "$tmp/o" | grep -q '^office/board.pptx slide 3 (Slide 3: Deal terms)$' && grep -q '^      6  Legal has not agreed' "$tmp/o" && ! grep -q '^>' "$tmp/o"; ok $? "a whole slide, nothing marked: $(cat "$tmp/o")"
# a path alone: the whole document
"$DOCQA" show contracts/mutual_nda.md --index "$IDX" --json >"$tmp/j" 2>/dev/null
json "$tmp/j" "len(d['lines']) == len(open('$tmp/s/contracts/mutual_nda.md').read().splitlines()) and d['line_start'] is None"; ok $? "a path alone shows every line: $(head -c 200 "$tmp/j")"

# errors: exit 1, a message naming what is wrong
err() { # $1 citation words..., checks rc 1 and stderr matching $want
  "$DOCQA" show "$@" --index "$IDX" >"$tmp/o" 2>"$tmp/e"; rc=$?
  [ $rc = 1 ] && grep -q -- "$want" "$tmp/e" && [ ! -s "$tmp/o" ]
}
want="nothere.pdf: no document in the index is named so"; err nothere.pdf p.3; ok $? "an unknown document: $(cat "$tmp/e")"
want="p.4:90-95: no such lines (page 4 has lines 1-"; err contracts/commercial_lease.pdf p.4:90-95; ok $? "lines a page has not: $(cat "$tmp/e")"
want="commercial_lease.pdf has no page 40 (it has 5 pages)"; err contracts/commercial_lease.pdf p.40; ok $? "a page it has not: $(cat "$tmp/e")"
want="names 5 documents (a folder?)"; err contracts; ok $? "a folder: $(cat "$tmp/e")"
want="mutual_nda.md has no pages: cite its lines"; err contracts/mutual_nda.md p.2; ok $? "a page of a text: $(cat "$tmp/e")"
want="counts its rows in each sheet: say which, as 'office/book.xlsx sheet 1 rows 2-3'"; err office/book.xlsx:2-3; ok $? "rows without their sheet: $(cat "$tmp/e")"
want="counts its lines in each page: say which, as 'contracts/commercial_lease.pdf p.1:3'"; err contracts/commercial_lease.pdf:3; ok $? "a PDF's lines without their page: $(cat "$tmp/e")"
"$DOCQA" show "contracts/mutual_nda.md:9999" --index "$IDX" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 1 ] && grep -q "mutual_nda.md:9999: no such lines (it has lines 1-" "$tmp/e"; ok $? "a line past the end: $rc $(cat "$tmp/e")"
"$DOCQA" show "contracts/mutual_nda.md:0-2" --index "$IDX" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 1 ]; ok $? "line 0 is no line: $rc $(cat "$tmp/e")"
"$DOCQA" show "contracts/mutual_nda.md:1" --context x --index "$IDX" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q -- "--context takes 0 to 1000" "$tmp/e"; ok $? "a bad --context is a usage error: $rc $(cat "$tmp/e")"

# a file changed since ingest: shown, with a warning
printf 'A new first line.\n' | cat - "$tmp/s/contracts/mutual_nda.md" >"$tmp/nda" && mv "$tmp/nda" "$tmp/s/contracts/mutual_nda.md"
"$DOCQA" show contracts/mutual_nda.md:1 --index "$IDX" --json >"$tmp/j" 2>"$tmp/e"; rc=$?
[ $rc = 0 ] && grep -q "mutual_nda.md changed since it was ingested" "$tmp/e"; ok $? "a changed file is warned of: $rc $(cat "$tmp/e")"
json "$tmp/j" "d['stale'] and d['lines'][0]['text'] == 'A new first line.'"; ok $? "and read as it is now: $(head -c 300 "$tmp/j")"
# a file gone from disk
rm "$tmp/s/contracts/mutual_nda.md"
want="mutual_nda.md: No such file or directory; the index still holds it"; err contracts/mutual_nda.md:1; ok $? "a file gone: $(cat "$tmp/e")"

echo "$n checks, $fail failed"
exit $((fail > 0))
