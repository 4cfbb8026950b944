#!/usr/bin/env bash
# bench-moe.sh - mixture-of-experts speed beside llama.cpp, and the load
# balance of two-level routing against flat top-k (issue 9).
#
# 1. Writes two random models scaled to fit this machine, once, with
#    scripts/make-moe-fixtures.py --bench (no reference, not committed):
#      mixtral-s   llama arch, n_embd 1024, 8 layers, 8 experts top-2,
#                  expert width 2816, Q4_0 experts, Q8_0 attention (360 MB)
#      deepseek-s  deepseek2, n_embd 1024, 8 layers, latent attention
#                  (kv_lora 256, q_lora 384), 64 experts in 8 groups (4
#                  used) top-6, width 512, 2 shared experts, Q4_0 (457 MB)
# 2. Runs scripts/bench-engine.sh on them: `docqa bench engine` and
#    llama.cpp (llama-cpp-python) alternated A/B on the same files and
#    threads; prints medians and ratios.
# 3. Runs `docqa generate --expert-stats` on deepseek-s over a prompt of
#    real text and prints, per MoE layer, the expert load's coefficient of
#    variation with the model's two-level routing and with flat top-k on
#    the same scores (random router weights: what it shows is the
#    mechanism, not a trained model's balance).
#
# Usage: scripts/bench-moe.sh [--threads N] [--pp 512] [--tg 64] [--reps N]
#          [--rounds N] [--dir DIR]
# DIR (default ~/.cache/docqa/bench-moe) holds the generated models.
# Needs .deps/gguf-venv (gguf + numpy) for step 1 and .deps/rt-venv
# (llama-cpp-python) for step 2; downloads nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${XDG_CACHE_HOME:-$HOME/.cache}/docqa/bench-moe
THREADS=1
PP=512
TG=64
REPS=2
ROUNDS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --pp) PP=$2; shift 2 ;;
    --tg) TG=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-moe.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

GPY=$ROOT/.deps/gguf-venv/bin/python
mkdir -p "$DIR"
for m in mixtral-s deepseek-s; do
  if [ ! -s "$DIR/$m.gguf" ]; then
    if ! "$GPY" -c 'import gguf, numpy' 2>/dev/null; then
      cat >&2 <<EOF
bench-moe.sh: $DIR/$m.gguf is missing and .deps/gguf-venv lacks gguf/numpy:
  python3 -m venv $ROOT/.deps/gguf-venv
  $ROOT/.deps/gguf-venv/bin/pip install gguf==0.19.0 numpy==2.4.6
EOF
      exit 1
    fi
    echo "writing $DIR/$m.gguf ..." >&2
    "$GPY" "$ROOT/scripts/make-moe-fixtures.py" --bench "$m" "$DIR/$m.gguf" >&2
  fi
done

DOCQA_MODELS=$DIR "$ROOT/scripts/bench-engine.sh" --threads "$THREADS" \
  --pp "$PP" --tg "$TG" --reps "$REPS" --rounds "$ROUNDS" \
  --models "mixtral-s.gguf deepseek-s.gguf"

DOCQA=""
for b in "$ROOT/build/cli/docqa" "$ROOT"/build-*/cli/docqa; do
  [ -x "$b" ] && { DOCQA=$b; break; }
done
[ -x "$DOCQA" ] || { echo "bench-moe.sh: no docqa binary" >&2; exit 1; }
PROMPT=$(head -c 4000 /usr/share/common-licenses/GPL-3)
echo
echo "expert load, deepseek-s ($DIR/deepseek-s.gguf), prompt of ${#PROMPT} bytes + 64 tokens:"
"$DOCQA" generate --model "$DIR/deepseek-s.gguf" --raw --max-tokens 64 \
  --threads "$THREADS" --expert-stats --json "$PROMPT" 2>/dev/null |
  python3 -c '
import json, sys
e = json.load(sys.stdin)["experts"]
print("%d experts, %d per token, two-level: %d of %d groups" % (
    e["n_expert"], e["n_expert_used"], e["groups_used"], e["groups"]))
print("layer  routings  cv two-level  cv flat  max/mean two-level  max/mean flat")
for l in e["layers"]:
    print("%5d  %8d  %12.3f  %7.3f  %18.2f  %13.2f" % (
        l["layer"], sum(l["routed"]), l["routed_cv"], l["flat_cv"],
        l["routed_max_over_mean"], l["flat_max_over_mean"]))
print("mean cv: two-level %.3f, flat %.3f" % (e["mean_routed_cv"], e["mean_flat_cv"]))
'
