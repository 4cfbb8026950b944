#!/usr/bin/env bash
# bench_gsm.sh - `docqa bench gsm` and `docqa bench needle` as scripts use
# them: usage errors exit 2 naming the option, and tiny runs on the default
# model print one valid JSON object whose values hold what the method says,
# worked out without docqa:
#   - bench gsm at 64 tokens (below GSM's min_tokens of 1024, so the "GSM"
#     sequence runs full attention): both paths report the same perplexity,
#     which lies in (1, vocabulary size); full KV bytes are layers x 64 x
#     K+V x n_head_kv x head_dim x 2 (F16), with the shape read from the
#     GGUF header here, and the length's full_kv_bytes (given whether or
#     not full attention ran) says the same;
#   - bench needle at 256 tokens, 2 depths: the needle's span is the only one
#     holding "passkey" and "vault", so BM25 must rank it first; every rank
#     lies in 1..n_spans; the needle lies at the first span at depth 0% and
#     at the last at 100%.
# bench gsm --backend cuda is accepted (needle's is refused, exit 2).
# --model takes a file name of the models directory too (and a name found
# nowhere fails naming it). GSM options come from the configuration (--config, --set), so a bad --set
# is a usage error too. No timings are checked. SKIPs (exit 0) when the default model is missing
# or under the sanitizers (real inference is many times slower there).
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
MODELS=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
MODEL=$MODELS/smollm2-135m-instruct-q4_1.gguf
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# usage errors: exit 2 and a message naming the option (no model needed)
usage() { # usage PATTERN ARGS...: must exit 2 with PATTERN on stderr
  local pat=$1; shift
  "$DOCQA" bench "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/err" && [ ! -s "$tmp/out" ]
  ok $? "bench $* exits 2 naming '$pat' (rc $rc: $(head -c 200 "$tmp/err"))"
}
usage "--lengths" gsm --lengths 2048,x
usage "--lengths" gsm --lengths 8
usage "--decode" gsm --decode -1
usage "--depths" needle --depths 0
usage "--heads" needle --heads 1,a
usage "--pp is an option of bench engine" gsm --pp 512
usage "--sweep is an option of bench needle" gsm --sweep
usage "--lengths is an option of bench gsm, needle" engine --lengths 512
usage "unknown benchmark" nope
usage "CPU backend only" needle --backend cuda
usage "sparse_attention.mode" gsm --set sparse_attention.mode=bogus
"$DOCQA" bench --help >"$tmp/help" 2>&1
grep -q "bench needle" "$tmp/help" && grep -q "BM25" "$tmp/help" && grep -q -- "--ppl-chunk" "$tmp/help"
ok $? "bench --help teaches gsm and needle"

if [ ! -f "$MODEL" ]; then
  echo "SKIP: default model missing ($MODEL); run scripts/fetch-models.sh"
  echo "$((n-fail)) passed, $fail failed"; [ $fail -eq 0 ]; exit
fi
if [ -n "${DQ_SANITIZE:-}" ]; then
  echo "SKIP: model-driven benchmark runs not run in the sanitizer build"
  echo "$((n-fail)) passed, $fail failed"; [ $fail -eq 0 ]; exit
fi
usage "--layers must be A:B" needle --model "$MODEL" --layers 9:3 --lengths 256
# bench gsm takes --backend cuda (GSM's rows on the device): where no GPU
# answers, it fails naming the cuda backend, not "CPU only"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  "$DOCQA" bench gsm --model "$MODEL" --lengths 64 --decode 2 --backend cuda \
    >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] && grep -q "cuda backend" "$tmp/err" && ! grep -q "CPU backend only" "$tmp/err"
  ok $? "bench gsm --backend cuda without a GPU exits 1 naming the cuda backend (rc $rc: $(head -c 200 "$tmp/err"))"
fi

# --model by file name alone: found in the models directory
(cd "$tmp" && DOCQA_MODELS=$(dirname "$MODEL") "$DOCQA" bench gsm \
  --model "$(basename "$MODEL")" --lengths 64 --decode 2 --threads 2 --json) \
  >"$tmp/g.json" 2>"$tmp/g.err"; rc=$?
ok $rc "bench gsm --lengths 64 exits 0 ($(tail -c 300 "$tmp/g.err"))"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["model"] != sys.argv[2])' \
  "$tmp/g.json" "$MODEL"
ok $? "--model $(basename "$MODEL") names the file of the models directory"
(cd "$tmp" && DOCQA_MODELS=$(dirname "$MODEL") "$DOCQA" bench gsm \
  --model nosuch-model.gguf --lengths 64) >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "nosuch-model.gguf" "$tmp/err"
ok $? "--model with a name found nowhere fails naming it (rc $rc: $(head -c 200 "$tmp/err"))"
python3 - "$tmp/g.json" "$MODEL" <<'PY'
import json, struct, sys
d = json.load(open(sys.argv[1]))
# the model's shape from its GGUF header (v2/v3: magic, u32 version, u64
# tensor count, u64 key count, then key/value pairs)
f = open(sys.argv[2], "rb")
def rd(fmt): return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]
def rstr(): return f.read(rd("Q")).decode()
SIZES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
def rval(t):
    if t == 8: return rstr()
    if t == 9:
        et, n = rd("I"), rd("Q")
        return [rval(et) for _ in range(n)] if et in (8, 9) or n < 64 else (
            f.read(n * struct.calcsize(SIZES[et])), None)[1]
    return rd(SIZES[t])
assert f.read(4) == b"GGUF"; rd("I"); rd("Q")
kv = {}
for _ in range(rd("Q")):
    k = rstr(); kv[k] = rval(rd("I"))
arch = kv["general.architecture"]
n_layer, n_embd = kv[arch + ".block_count"], kv[arch + ".embedding_length"]
n_head = kv[arch + ".attention.head_count"]
n_head_kv = kv.get(arch + ".attention.head_count_kv", n_head)
head_dim = kv.get(arch + ".attention.key_length", n_embd // n_head)
r = d["lengths"][0]
full, gsm = r["full"], r["gsm"]
errs = []
if r["length"] != 64: errs.append("length %s" % r["length"])
if full["kv_bytes"] != n_layer * 64 * 2 * n_head_kv * head_dim * 2:
    errs.append("full kv_bytes %d, expected %d" % (full["kv_bytes"], n_layer * 64 * 2 * n_head_kv * head_dim * 2))
if r["full_kv_bytes"] != full["kv_bytes"] or abs(r["kv_ratio"] - gsm["kv_bytes_alloc"] / full["kv_bytes"]) > 1e-9:
    errs.append("full_kv_bytes %s, kv_ratio %s" % (r["full_kv_bytes"], r["kv_ratio"]))
if gsm["stats"]["path"] != "full": errs.append("64 tokens ran on %s" % gsm["stats"]["path"])
if not (1 < full["ppl"] < 49152): errs.append("full ppl %s" % full["ppl"])
if abs(full["ppl"] - gsm["ppl"]) > 1e-3 * full["ppl"]:
    errs.append("ppl full %s vs gsm %s below min_tokens" % (full["ppl"], gsm["ppl"]))
if not (full["decode_tokens"] == 2 and full["prefill_ms"] > 0): errs.append("timings missing")
if errs:
    print("; ".join(errs)); sys.exit(1)
PY
ok $? "bench gsm JSON: same ppl on both paths below min_tokens, full KV bytes from the GGUF shape"

"$DOCQA" bench needle --model "$MODEL" --lengths 256 --depths 2 --span-tokens 48 \
  --layers lower --threads 2 --json >"$tmp/n.json" 2>"$tmp/n.err"; rc=$?
ok $rc "bench needle --lengths 256 --depths 2 exits 0 ($(tail -c 300 "$tmp/n.err"))"
python3 - "$tmp/n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs, errs = d["runs"], []
if len(runs) != 2: errs.append("%d runs" % len(runs))
for r in runs:
    for k in ("gsm_rank", "toq_rank", "both_rank", "bm25_rank"):
        if not 1 <= r[k] <= r["n_spans"]: errs.append("%s %s of %d" % (k, r[k], r["n_spans"]))
    if r["bm25_rank"] != 1: errs.append("bm25 ranks the needle %d at depth %g" % (r["bm25_rank"], r["depth"]))
    if r["n_tokens"] != 256: errs.append("%d tokens" % r["n_tokens"])
    want = 0 if r["depth"] == 0 else r["n_spans"] - 1
    if r["needle_span"] != want: errs.append("needle in span %d at depth %g" % (r["needle_span"], r["depth"]))
s = d["summary"][0]
if not all(s[m]["n"] == 2 for m in ("gsm", "toq", "both", "bm25")): errs.append("summary methods %s" % s)
if s["bm25"]["hit1"] != 1.0 or d["layers"] != [0, d["n_layer"] // 2]: errs.append("summary %s layers %s" % (s, d["layers"]))
if errs:
    print("; ".join(errs)); sys.exit(1)
PY
ok $? "bench needle JSON: BM25 ranks the needle first, ranks in range, needle where the depth puts it"

echo "$((n-fail)) passed, $fail failed"
[ $fail -eq 0 ]
