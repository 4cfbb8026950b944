#!/usr/bin/env bash
# basics.sh - the docqa executable's contract with users and scripts: help
# for every command, version output (text and JSON), exit codes for usage
# errors and missing inputs, that errors go to stderr naming the culprit,
# and that the libraries only some commands use are not linked.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
fail=0; n=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
  n=$((n+1)); if ! ( eval "$2" ) >/dev/null 2>&1; then echo "FAIL: $1"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$DOCQA" --help >"$tmp/help" 2>&1; rc=$?
check "docqa --help exits 0" "[ $rc -eq 0 ]"
for c in ingest search ask xref chat status forget generate embed bench version; do
  check "--help lists $c" "grep -q '^  $c ' '$tmp/help'"
  "$DOCQA" "$c" --help >"$tmp/h_$c" 2>&1; rc=$?
  check "docqa $c --help exits 0" "[ $rc -eq 0 ]"
  check "docqa $c --help shows usage" "grep -q '^Usage: docqa $c' '$tmp/h_$c'"
  check "docqa $c --help shows common options" "grep -q -- '--index DIR' '$tmp/h_$c'"
done

"$DOCQA" >/dev/null 2>&1; rc=$?
check "no command exits 2" "[ $rc -eq 2 ]"
"$DOCQA" frobnicate >"$tmp/out" 2>"$tmp/err"; rc=$?
check "unknown command exits 2" "[ $rc -eq 2 ]"
check "unknown command named on stderr" "grep -q \"unknown command 'frobnicate'\" '$tmp/err'"
"$DOCQA" search --bogus x >/dev/null 2>"$tmp/err"; rc=$?
check "unknown option exits 2" "[ $rc -eq 2 ]"
check "unknown option named" "grep -q -- \"--bogus\" '$tmp/err'"
"$DOCQA" search >/dev/null 2>&1; rc=$?
check "missing argument exits 2" "[ $rc -eq 2 ]"
"$DOCQA" search x --path --k 3 >/dev/null 2>"$tmp/err"; rc=$?
check "an option's value that is another option exits 2" "[ $rc -eq 2 ]"
check "  naming the option that needs it" "grep -q -- 'option --path needs a value' '$tmp/err'"
"$DOCQA" ask what is the notice period >/dev/null 2>"$tmp/err"; rc=$?
check "an unquoted question exits 2" "[ $rc -eq 2 ]"
check "  naming the first extra word" "grep -q \"unexpected argument 'is' (quote\" '$tmp/err'"
"$DOCQA" generate hi --temp nan >/dev/null 2>"$tmp/err"; rc=$?
check "--temp nan exits 2" "[ $rc -eq 2 ] && grep -q -- '--temp must be a number' '$tmp/err'"
"$DOCQA" xref foo --kind bogus >/dev/null 2>"$tmp/err"; rc=$?
check "xref --kind bogus exits 2" "[ $rc -eq 2 ] && grep -q 'def, ref or call' '$tmp/err'"
"$DOCQA" xref '' >/dev/null 2>"$tmp/err"; rc=$?
check "xref of an empty symbol exits 2" "[ $rc -eq 2 ]"
"$DOCQA" version --threads abc >/dev/null 2>"$tmp/err"; rc=$?
check "bad --threads exits 2" "[ $rc -eq 2 ]"
check "bad --threads explained" "grep -q 'threads must be a whole number' '$tmp/err'"
"$DOCQA" version --backend tpu >/dev/null 2>"$tmp/err"; rc=$?
check "bad --backend exits 2" "[ $rc -eq 2 ]"

"$DOCQA" version >"$tmp/v" 2>&1; rc=$?
check "version exits 0" "[ $rc -eq 0 ]"
for lib in sqlite faiss libxml2 pcre2 cpu cuda cublas device; do
  check "version names $lib" "grep -q '^  $lib ' '$tmp/v'"
done
check "version reports sqlite 3.x" "grep -Eq '^  sqlite +3\\.[0-9]+' '$tmp/v'"
"$DOCQA" version --json >"$tmp/vj" 2>/dev/null
check "version --json is one JSON object" "python3 -c 'import json,sys; d=json.load(open(\"$tmp/vj\")); assert d[\"docqa\"] and \"built\" in d[\"cuda\"]'"
DOCQA_CPU_ISA=scalar "$DOCQA" version --json >"$tmp/vs" 2>/dev/null
check "version --json names the CPU path, capped by DOCQA_CPU_ISA" "python3 -c 'import json; d=json.load(open(\"$tmp/vs\")); assert d[\"cpu\"][\"path\"] == \"scalar\", d'"

"$DOCQA" ingest /nonexistent/folder >"$tmp/out" 2>"$tmp/err"; rc=$?
check "ingest of a missing path fails" "[ $rc -ne 0 ]"
check "ingest error names the path" "grep -q '/nonexistent/folder' '$tmp/err'"
check "ingest error leaves stdout empty" "[ ! -s '$tmp/out' ]"

"$DOCQA" search "  " >/dev/null 2>"$tmp/err"; rc=$?
check "an empty query is a usage error (2)" "[ $rc -eq 2 ] && grep -q 'query is empty' '$tmp/err'"
"$DOCQA" ask "" >/dev/null 2>"$tmp/err"; rc=$?
check "an empty question is a usage error (2)" "[ $rc -eq 2 ] && grep -q 'question is empty' '$tmp/err'"

# Libraries only some commands use are opened when needed, not linked:
# poppler-glib (51 libraries) for PDFs, cuBLAS (with cuBLASLt, 540 MB) and
# the CUDA runtime (static) for --backend cuda. Linked, they cost every
# start about 6 ms and 60-90 ms.
if command -v readelf >/dev/null; then
  readelf -d "$DOCQA" | grep NEEDED >"$tmp/needed"
  check "docqa links no poppler, cuBLAS or CUDA runtime" \
    "! grep -qiE 'poppler|cublas|cudart|libcuda' '$tmp/needed'"
  check "readelf lists docqa's libraries" "grep -q libc.so '$tmp/needed'"
fi
echo "$((n-fail)) passed, $fail failed"
[ $fail -eq 0 ]
