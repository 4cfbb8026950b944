#!/usr/bin/env bash
# tests/cuda/twin-cmp.sh TWIN SYNTH TEXT - dq_twin_cmp on tiny synthetic
# llamas (dq_synth_gguf) on the CPU: its JSON complete and sane, a Q8_0
# model close to its exact twin but not equal to it (the CPU rounds its
# activations to 8 bits: were the twin the model itself, the difference
# would be 0), and a missing model a clear error with exit 1.
set -euo pipefail
TW=$1 G=$2 TEXT=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$G" --shape tiny --type q8_0 "$T/q8.gguf" >/dev/null
TMPDIR=$T "$TW" --json --tokens 64 "$T/q8.gguf" "$TEXT" >"$T/q8.json"
cat "$T/q8.json"
python3 - "$T/q8.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["tokens"] == 64, r
for k in ("max_abs_diff", "mean_kl", "top1_agree", "ppl", "ppl_twin"):
    assert math.isfinite(r[k]), (k, r)
assert 0 < r["max_abs_diff"] < 0.5, r      # 8-bit activations, not 0
assert 0 <= r["mean_kl"] < 1e-3, r
assert r["top1_agree"] >= 0.9, r
assert abs(r["ppl"] / r["ppl_twin"] - 1) < 0.01, r
PY
# the twin is removed afterwards
[ -z "$(ls "$T" | grep dq_twin_ || true)" ] || { echo "FAIL: twin left"; exit 1; }
rc=0
"$TW" "$T/none.gguf" "$TEXT" 2>"$T/err.txt" || rc=$?
cat "$T/err.txt"
[ $rc -eq 1 ] && grep -q "none.gguf" "$T/err.txt" ||
  { echo "FAIL: missing model: rc $rc"; exit 1; }
echo "twin-cmp: passed"
