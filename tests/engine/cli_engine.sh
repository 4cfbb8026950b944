#!/usr/bin/env bash
# cli_engine.sh - `docqa generate` and `docqa embed` as users and scripts
# call them: JSON shapes of DESIGN.md, greedy output on a known prompt,
# errors for an empty prompt and a missing model. Needs the fetched models;
# exits 77 (skip) without them.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
M=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
[ -r "$M/smollm2-135m-instruct-q4_1.gguf" ] || { echo "skip: no models in $M"; exit 77; }
fail=0; n=0
check() { n=$((n+1)); if ! ( eval "$2" ) >/dev/null 2>&1; then echo "FAIL: $1"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$DOCQA" generate --json --raw --max-tokens 8 --threads 2 "The capital of France is" >"$tmp/g.json" 2>"$tmp/g.err"; rc=$?
check "generate --json exits 0" "[ $rc -eq 0 ]"
check "generate --json fields" "python3 -c 'import json; d=json.load(open(\"$tmp/g.json\")); assert isinstance(d[\"text\"], str) and d[\"tokens\"] == 8 and d[\"prefill_tok_s\"] > 0 and d[\"decode_tok_s\"] > 0'"
check "greedy SmolLM2 names Paris" "grep -q Paris '$tmp/g.json'"
"$DOCQA" generate --json --raw --max-tokens 16 --stop "." --threads 2 "The capital of France is" >"$tmp/st.json" 2>/dev/null
check "stop string ends the text before it" "python3 -c 'import json; d=json.load(open(\"$tmp/st.json\")); assert d[\"stop_reason\"] == \"stop_string\" and \".\" not in d[\"text\"] and \"Paris\" in d[\"text\"]'"
"$DOCQA" generate --json --raw --max-tokens 8 --kv-type q8_0 --threads 2 "The capital of France is" >"$tmp/q8.json" 2>/dev/null
check "q8_0 KV cache still answers Paris" "grep -q Paris '$tmp/q8.json'"
"$DOCQA" generate --raw --max-tokens 8 --ctx 4 --threads 2 "The capital of France is the city of" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "context overflow is an error" "[ $rc -ne 0 ] && grep -q 'context' '$tmp/err'"
"$DOCQA" generate --max-tokens 4 --threads 2 "Say hello." >"$tmp/c.txt" 2>/dev/null; rc=$?
check "chat generate exits 0" "[ $rc -eq 0 ] && [ -s '$tmp/c.txt' ]"
"$DOCQA" generate --json --max-tokens 4 --temp 0.8 --seed 5 --threads 2 "Tell me a story." >"$tmp/s1" 2>/dev/null
"$DOCQA" generate --json --max-tokens 4 --temp 0.8 --seed 5 --threads 2 "Tell me a story." >"$tmp/s2" 2>/dev/null
check "same seed, same text" "python3 -c 'import json; a=json.load(open(\"$tmp/s1\")); b=json.load(open(\"$tmp/s2\")); assert a[\"text\"] == b[\"text\"]'"
DOCQA_WEIGHTS=read "$DOCQA" generate --json --raw --max-tokens 8 --threads 2 -v "The capital of France is" >"$tmp/r.json" 2>"$tmp/r.err"
check "weights read into memory: the mapped run's text" "python3 -c 'import json; a=json.load(open(\"$tmp/g.json\")); b=json.load(open(\"$tmp/r.json\")); assert a[\"text\"] == b[\"text\"]' && grep -q 'weights read into memory' '$tmp/r.err'"
DOCQA_WEIGHTS=mmap "$DOCQA" generate --raw --max-tokens 2 "Hi" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a wrong DOCQA_WEIGHTS is an error naming it" "[ $rc -eq 1 ] && grep -q 'DOCQA_WEIGHTS must be map or read' '$tmp/err'"
"$DOCQA" generate "" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "empty prompt fails" "[ $rc -ne 0 ] && grep -q 'empty' '$tmp/err' && [ ! -s '$tmp/out' ]"
"$DOCQA" generate --model /nonexistent/m.gguf "hi" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "missing model fails naming it" "[ $rc -ne 0 ] && grep -q '/nonexistent/m.gguf' '$tmp/err'"
if [ -r "$M/all-minilm-l6-v2-f32.gguf" ]; then
  "$DOCQA" embed --json --threads 2 "first text" "second text" >"$tmp/e.json" 2>/dev/null; rc=$?
  check "embed --json exits 0" "[ $rc -eq 0 ]"
  check "embed --json shape and norm" "python3 -c 'import json,math; d=json.load(open(\"$tmp/e.json\")); assert d[\"dim\"] == 384 and len(d[\"embeddings\"]) == 2 and all(len(e) == 384 and abs(math.sqrt(sum(x*x for x in e)) - 1) < 1e-4 for e in d[\"embeddings\"])'"
  "$DOCQA" embed --model "$M/smollm2-135m-instruct-q4_1.gguf" "x" >/dev/null 2>"$tmp/err"; rc=$?
  check "embed refuses a decoder" "[ $rc -ne 0 ] && grep -q 'not an embedding model' '$tmp/err'"
fi
# backend choice: with no usable device, --backend cuda is an error naming
# it and auto says it runs on the CPU; with one, both answer on the device
if "$DOCQA" version 2>/dev/null | grep -q '^  device   none'; then
  "$DOCQA" generate --backend cuda --raw --max-tokens 2 "hi" >"$tmp/out" 2>"$tmp/err"; rc=$?
  check "--backend cuda without a device fails naming cuda" "[ $rc -ne 0 ] && grep -q 'cuda backend' '$tmp/err' && [ ! -s '$tmp/out' ]"
  "$DOCQA" generate -v --json --raw --max-tokens 8 --threads 2 "The capital of France is" >"$tmp/a.json" 2>"$tmp/err"
  check "--backend auto says it uses the cpu" "grep -q 'backend auto: using cpu' '$tmp/err' && python3 -c 'import json; assert json.load(open(\"$tmp/a.json\"))[\"backend\"] == \"cpu\"'"
else
  "$DOCQA" generate --backend cuda --json --raw --max-tokens 8 "The capital of France is" >"$tmp/a.json" 2>"$tmp/err"; rc=$?
  check "--backend cuda answers on the device" "[ $rc -eq 0 ] && grep -q Paris '$tmp/a.json' && python3 -c 'import json; assert json.load(open(\"$tmp/a.json\"))[\"backend\"] == \"cuda\"'"
fi
# mixture of experts: the fixture models (tests/fixtures/moe) through the CLI
FX=$(cd "$(dirname "$0")/../fixtures/moe" && pwd)
"$DOCQA" generate --json --raw --max-tokens 8 --expert-stats --threads 2 --model "$FX/deepseek2.gguf" "the quick brown fox" >"$tmp/moe.json" 2>"$tmp/moe.err"; rc=$?
check "MoE generate --expert-stats exits 0" "[ $rc -eq 0 ]"
# every evaluated token (prompt + generated but the last) is routed to 4
# experts in each of the 2 MoE layers (layer 0 is dense), under two-level
# routing (2 of 4 groups); flat top-k counts as many routings
check "expert load counts every routing" "python3 -c 'import json; d=json.load(open(\"$tmp/moe.json\")); e=d[\"experts\"]; n=d[\"prompt_tokens\"]+d[\"tokens\"]-1; assert e[\"n_expert\"]==16 and e[\"groups\"]==4 and e[\"groups_used\"]==2 and [l[\"layer\"] for l in e[\"layers\"]]==[1,2] and all(sum(l[\"routed\"])==4*n and sum(l[\"flat\"])==4*n for l in e[\"layers\"]) and isinstance(d[\"text\"], str)'"
"$DOCQA" generate --raw --max-tokens 4 --expert-stats --threads 2 --model "$FX/qwen3moe.gguf" "x" >/dev/null 2>"$tmp/moe.err"
check "--expert-stats prints the balance on stderr" "grep -q 'mean cv' '$tmp/moe.err'"
"$DOCQA" generate --raw --max-tokens 4 --expert-stats --threads 2 "x" >/dev/null 2>"$tmp/err"; rc=$?
check "--expert-stats on a dense model is a usage error" "[ $rc -eq 2 ] && grep -q 'no experts' '$tmp/err'"
# early exit on MoE models: greedy output identical to plain decoding
for f in mixtral qwen3moe deepseek2; do
  "$DOCQA" generate --json --raw --max-tokens 24 --threads 2 --model "$FX/$f.gguf" "the quick brown fox" >"$tmp/p.json" 2>/dev/null
  "$DOCQA" generate --json --raw --max-tokens 24 --threads 2 --early-exit --ee-always --ee-threshold 0.05 --model "$FX/$f.gguf" "the quick brown fox" >"$tmp/e.json" 2>/dev/null
  check "early exit on $f: same greedy text, drafts accepted" "python3 -c 'import json; a=json.load(open(\"$tmp/p.json\")); b=json.load(open(\"$tmp/e.json\")); assert a[\"text\"]==b[\"text\"] and b[\"early_exit\"][\"drafted\"] > 0'"
done
echo "$n checks, $fail failed"
[ $fail -eq 0 ]
