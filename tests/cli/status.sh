#!/usr/bin/env bash
# status.sh - `docqa status` on a copy of samples/: its counts agree with
# what ingest reported and with the document list (--docs), kinds and
# roots add up, two roots are told apart (and what their paths are shown
# behind), the index is not written (its
# database's and vector file's bytes and times unchanged), a missing
# index exits 1 naming it, and with the embedding model (skipped without
# it) chunks that wait for embeddings are counted and the fix is named,
# and ingest (not a query) embeds with the matrices quantized at load.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
SRC=${DQ_SOURCE_DIR:?set DQ_SOURCE_DIR}
MODELS=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
cp -r "$SRC/samples" "$tmp/s"
mkdir -p "$tmp/t" && printf 'Second root.\n\nIt has one short note in it.\n' >"$tmp/t/note.md"
IDX="$tmp/idx"

"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/i1" 2>/dev/null
"$DOCQA" ingest "$tmp/t" --index "$IDX" --no-embed --json >"$tmp/i2" 2>/dev/null
# the database and the vector file (a reader in WAL mode may create the
# -wal and -shm files beside them, as search does)
sig() { (cd "$IDX" && for f in docqa.db vectors.faiss; do [ -f "$f" ] && stat -c '%n %s %Y' "$f" && sha256sum "$f"; done); }
before=$(sig)
"$DOCQA" status --index "$IDX" --docs --json >"$tmp/st" 2>"$tmp/e"; rc=$?
ok $rc "status --docs --json exits 0 ($(head -c 300 "$tmp/e"))"
after=$(sig)
[ "$before" = "$after" ]; ok $? "status does not write the index"
python3 - "$tmp/st" "$tmp/i1" "$tmp/i2" "$tmp/s" "$tmp/t" <<'PY'; ok $? "counts agree with ingest and the document list: $(head -c 600 "$tmp/st")"
import json, os, sys
d = json.load(open(sys.argv[1])); i1 = json.load(open(sys.argv[2])); i2 = json.load(open(sys.argv[3]))
s_root, t_root = sys.argv[4], sys.argv[5]
docs = d["docs"]
assert d["documents"] == i1["added"] + i2["added"] == len(docs), (d["documents"], len(docs))
assert d["chunks"] == i1["chunks"] + i2["chunks"] == sum(x["chunks"] for x in docs)
assert d["symbols"] == i1["symbols"] and d["references"] == i1["refs"]
assert d["embedded"] == 0 and d["embed_model"] is None and d["sessions"] == 0
roots = {r["root"]: r for r in d["roots"]}
assert set(roots) == {os.path.realpath(s_root), os.path.realpath(t_root)}, roots
t = roots[os.path.realpath(t_root)]
# two roots: each one's paths are shown behind its last folder's name
assert (roots[os.path.realpath(s_root)]["label"], t["label"]) == ("s", "t"), roots
assert t["documents"] == 1 and t["bytes"] == os.path.getsize(os.path.join(t_root, "note.md"))
assert sum(k["documents"] for k in d["kinds"]) == d["documents"]
assert sum(k["chunks"] for k in d["kinds"]) == d["chunks"]
counts = [k["documents"] for k in d["kinds"]]
assert counts == sorted(counts, reverse=True)
kinds = {k["kind"]: k["documents"] for k in d["kinds"]}
assert kinds.get("pdf") == 1 and kinds.get("docx") == 1 and kinds.get("markdown", 0) >= 3
for x in docs:
    p = os.path.join(x["root"], x["path"])
    assert os.path.getsize(p) == x["bytes"], p
assert d["db_bytes"] > 0
PY
"$DOCQA" status --index "$IDX" >"$tmp/txt" 2>&1; rc=$?
ok $rc "status (text) exits 0"
grep -q "^documents  $(python3 -c "import json;print(json.load(open('$tmp/st'))['documents'])") in 2 roots" "$tmp/txt"; ok $? "the text names the documents and roots: $(head -3 "$tmp/txt")"
grep -q "^vectors    none" "$tmp/txt"; ok $? "no vectors is said"
grep -q "^  $(realpath "$tmp/t") (shown as t/): 1 document, 1 chunk, " "$tmp/txt"; ok $? "the text says what each root's paths are shown behind: $(grep '^  /' "$tmp/txt")"
"$DOCQA" status --index "$tmp/none" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "no index at $tmp/none" "$tmp/e"; ok $? "a missing index exits 1 naming it: $(cat "$tmp/e")"
"$DOCQA" status extra --index "$IDX" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "an argument is a usage error"

if [ -f "$MODELS/all-minilm-l6-v2-f32.gguf" ] && [ -z "${DQ_SANITIZE:-}" ]; then
  E="$tmp/emb"
  "$DOCQA" ingest "$tmp/t" --index "$E" -v --json >/dev/null 2>"$tmp/ie"
  grep -q "36 F32 layer matrices quantized to Q8_0" "$tmp/ie"; ok $? "ingest embeds with the matrices as Q8_0: $(grep -i minilm "$tmp/ie" | head -3)"
  "$DOCQA" search "short note" --index "$E" -v >/dev/null 2>"$tmp/qe"
  ! grep -q "quantized to Q8_0" "$tmp/qe"; ok $? "a query embeds with the exact F32 matrices"
  printf 'A later note, not embedded.\n' >"$tmp/t/later.md"
  "$DOCQA" ingest "$tmp/t" --index "$E" --no-embed >/dev/null 2>&1
  "$DOCQA" status --index "$E" --json >"$tmp/se" 2>"$tmp/ee"; rc=$?
  ok $rc "status of an embedded index exits 0"
  json "$tmp/se" "d['embed_model'] == 'all-minilm-l6-v2-f32.gguf' and d['embed_dim'] == 384 and d['embedded'] == d['chunks'] - 1 and d['vectors'] == d['embedded']"; ok $? "the model and the embedded chunks: $(cat "$tmp/se")"
  grep -q "1 chunks have no embedding yet.*docqa ingest --embed-only --index $E" "$tmp/ee"; ok $? "the waiting chunk and the fix are named: $(cat "$tmp/ee")"
else
  echo "note: embedding checks skipped (no model, or the sanitizer build)"
fi
echo "$n checks, $fail failed"
exit $((fail > 0))
