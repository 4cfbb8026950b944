#!/usr/bin/env bash
# forget.sh - `docqa forget` on a copy of samples/: --dry-run lists and
# changes nothing; a stored relative path, and a folder already deleted
# from disk (written with "." and ".."), each remove exactly their
# documents (status, search and xref no longer see them), as does a path
# as shown in an index of several roots ("beta/claim.c"); a path that
# matches nothing fails naming it and removes nothing, even beside one
# that matches; another writer's lock is refused; re-ingesting brings a
# forgotten file back; with the embedding model (skipped without it) the
# vectors go with the chunks.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
SRC=${DQ_SOURCE_DIR:?set DQ_SOURCE_DIR}
MODELS=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
cp -r "$SRC/samples" "$tmp/s"
IDX="$tmp/idx"
st() { "$DOCQA" status --index "$IDX" --json 2>/dev/null; }
count() { st | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['documents'], d['chunks'])"; }

"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed -q
read docs0 chunks0 <<<"$(count)"

"$DOCQA" forget "$tmp/s/contracts" --index "$IDX" --dry-run --json >"$tmp/d" 2>"$tmp/e"; rc=$?
ok $rc "forget --dry-run exits 0 ($(cat "$tmp/e"))"
json "$tmp/d" "d['dry_run'] and d['documents'] == 5 and all(x['path'].startswith('contracts/') for x in d['forgotten'])"; ok $? "the dry run lists the 5 contracts: $(head -c 300 "$tmp/d")"
[ "$(count)" = "$docs0 $chunks0" ]; ok $? "the dry run removes nothing"

"$DOCQA" forget contracts/mutual_nda.md --index "$IDX" --json >"$tmp/f1" 2>"$tmp/e"; rc=$?
ok $rc "forget a stored path exits 0 ($(cat "$tmp/e"))"
json "$tmp/f1" "d['documents'] == 1 and d['forgotten'][0]['path'] == 'contracts/mutual_nda.md'"; ok $? "one document forgotten: $(cat "$tmp/f1")"
nda_chunks=$(python3 -c "import json;print(json.load(open('$tmp/f1'))['chunks'])")
[ "$(count)" = "$((docs0 - 1)) $((chunks0 - nda_chunks))" ]; ok $? "status counts one document and its chunks fewer: $(count)"
"$DOCQA" search "Derived Materials notes analyses compilations" --index "$IDX" --k 20 --json >"$tmp/s1" 2>/dev/null
json "$tmp/s1" "all(r['path'] != 'contracts/mutual_nda.md' for r in d['results'])"; ok $? "search no longer finds the NDA"
"$DOCQA" xref "Derived Materials" --index "$IDX" --json >"$tmp/x1" 2>/dev/null
json "$tmp/x1" "all(x['path'] != 'contracts/mutual_nda.md' for x in d.get('definitions', []) + d.get('references', []))"; ok $? "nor does xref"

"$DOCQA" forget repo/src/money.c "$tmp/s/no/such/thing" --index "$IDX" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "no/such/thing: no document in the index is at or under it" "$tmp/e"; ok $? "a path matching nothing fails naming it: $(cat "$tmp/e")"
"$DOCQA" xref money_add --index "$IDX" --json >"$tmp/x2" 2>/dev/null
json "$tmp/x2" "any(x['path'] == 'repo/src/money.c' for x in d['definitions'])"; ok $? "and the path beside it was not removed"

flock "$IDX/ingest.lock" -c "\"$DOCQA\" forget repo/src/money.c --index \"$IDX\" >/dev/null 2>\"$tmp/e\""; rc=$?
[ $rc -ne 0 ] && grep -q "is writing this index" "$tmp/e"; ok $? "another writer's lock is refused: $(cat "$tmp/e")"

rm -rf "$tmp/s/repo"
"$DOCQA" forget "$tmp/s/./contracts/../repo/" --index "$IDX" --json >"$tmp/f2" 2>"$tmp/e"; rc=$?
ok $rc "forget a folder deleted from disk exits 0 ($(cat "$tmp/e"))"
json "$tmp/f2" "d['documents'] >= 15 and all(x['path'].startswith('repo/') for x in d['forgotten'])"; ok $? "every document under it went: $(head -c 200 "$tmp/f2")"
"$DOCQA" xref money_add --index "$IDX" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ]; ok $? "its symbols went with it"

"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/i" 2>/dev/null
json "$tmp/i" "d['added'] == 1"; ok $? "re-ingesting the root brings back the forgotten file still on disk: $(cat "$tmp/i")"

# several roots: a path as shown ("beta/claim.c", its root's name before
# it) names that root's document only; the name alone, the whole root
mkdir -p "$tmp/r/acme" "$tmp/r/beta/lib" "$tmp/cwd"
printf 'int claim_xyz(void) { return 1; }\n' >"$tmp/r/acme/claim.c"
printf 'int claim_xyz(void) { return 2; }\n' >"$tmp/r/beta/claim.c"
printf 'int lib_xyz(void) { return 3; }\n' >"$tmp/r/beta/lib/l.c"
R="$tmp/idx-r"
"$DOCQA" ingest "$tmp/r/acme" "$tmp/r/beta" --index "$R" --no-embed -q
(cd "$tmp/cwd" && "$DOCQA" forget beta/claim.c --index "$R" --json) >"$tmp/f3" 2>"$tmp/e"; rc=$?
ok $rc "forget a path as shown exits 0 ($(cat "$tmp/e"))"
json "$tmp/f3" "[(x['root'][-4:], x['path']) for x in d['forgotten']] == [('beta', 'claim.c')]"; ok $? "only that root's claim.c went: $(head -c 300 "$tmp/f3")"
(cd "$tmp/cwd" && "$DOCQA" forget beta --index "$R" --json) >"$tmp/f4" 2>"$tmp/e"
json "$tmp/f4" "[(x['root'][-4:], x['path']) for x in d['forgotten']] == [('beta', 'lib/l.c')]"; ok $? "the root's name alone takes what is left of it: $(head -c 300 "$tmp/f4")"
"$DOCQA" xref claim_xyz --index "$R" --json >"$tmp/x3" 2>/dev/null
json "$tmp/x3" "[x['root'][-4:] for x in d['definitions']] == ['acme']"; ok $? "acme's claim.c stays"

if [ -f "$MODELS/all-minilm-l6-v2-f32.gguf" ] && [ -z "${DQ_SANITIZE:-}" ]; then
  E="$tmp/emb"
  "$DOCQA" ingest "$tmp/s/contracts" --index "$E" -q 2>/dev/null
  "$DOCQA" forget data_processing_addendum.html --index "$E" -q; rc=$?
  ok $rc "forget in an embedded index exits 0"
  "$DOCQA" status --index "$E" --json >"$tmp/se" 2>/dev/null
  json "$tmp/se" "d['documents'] == 4 and d['embedded'] == d['chunks'] and d['vectors'] == d['chunks']"; ok $? "the vectors went with the chunks: $(cat "$tmp/se")"
  "$DOCQA" search "Personal Data Breach sub-processor" --index "$E" --k 20 --json >"$tmp/s2" 2>/dev/null
  json "$tmp/s2" "d['results'] and all(r['path'] != 'data_processing_addendum.html' for r in d['results'])"; ok $? "hybrid search no longer finds it"
else
  echo "note: embedding checks skipped (no model, or the sanitizer build)"
fi
echo "$n checks, $fail failed"
exit $((fail > 0))
