#!/bin/bash
# bench-early-exit.sh - early exit (self-speculative decoding) against plain
# decoding in the same run: for each model and prompt, `docqa generate`
# greedy without early exit, with it (auto: switches itself off when it does
# not pay) and with it forced on (--ee-always), interleaved, REPS times each.
# Prints the median decode tok/s of each, the ratios to plain, and the
# acceptance (accepted / drafted draft tokens) and mean accepted length
# (accepted draft tokens per verify pass) of the forced runs; checks that
# every run's text is the plain run's.
#
# usage: scripts/bench-early-exit.sh [DOCQA] [THREADS] [REPS] [MAX_TOKENS]
# extra early-exit flags (e.g. --ee-fraction 0.8) in EE_FLAGS.
set -u
DOCQA=${1:-./build/cli/docqa}
THREADS=${2:-1}
REPS=${3:-3}
NTOK=${4:-128}
M=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
EE_FLAGS=${EE_FLAGS:-}
PASSAGE="The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. It was the entrance arch to the 1889 World's Fair. The tower is 330 metres tall, about the same height as an 81-storey building, and the tallest structure in Paris."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # model raw prompt tag flags...
  local model=$1 raw=$2 prompt=$3 tag=$4
  shift 4
  "$DOCQA" generate "$prompt" $raw --model "$M/$model" --threads "$THREADS" \
    --max-tokens "$NTOK" --json "$@" >>"$tmp/$tag.jsonl" 2>/dev/null
}

bench() { # model raw label prompt
  local model=$1 raw=$2 label=$3 prompt=$4
  [ -f "$M/$model" ] || { echo "skip $model (not in $M)"; return; }
  rm -f "$tmp"/*.jsonl
  for ((r = 0; r < REPS; r++)); do
    run "$model" "$raw" "$prompt" plain
    run "$model" "$raw" "$prompt" auto --early-exit $EE_FLAGS
    run "$model" "$raw" "$prompt" always --early-exit --ee-always $EE_FLAGS
  done
  python3 - "$tmp" "$model" "$label" <<'PY'
import json, statistics, sys
d, model, label = sys.argv[1:4]
runs = {t: [json.loads(l) for l in open(f"{d}/{t}.jsonl")]
        for t in ("plain", "auto", "always")}
med = {t: statistics.median(r["decode_tok_s"] for r in rs)
       for t, rs in runs.items()}
ref = runs["plain"][0]["text"]
same = all(r["text"] == ref for rs in runs.values() for r in rs)
e = [r["early_exit"] for r in runs["always"]]
drafted = sum(x["drafted"] for x in e)
acc = sum(x["accepted"] for x in e)
passes = sum(x["verify_passes"] for x in e)
off = sum(1 for r in runs["auto"] if r["early_exit"]["switched_off"])
print(f"{model:40s} {label:8s} tokens {runs['plain'][0]['tokens']:4d}  "
      f"plain {med['plain']:6.1f}  auto {med['auto']:6.1f} "
      f"(x{med['auto'] / med['plain']:.2f}, off {off}/{len(runs['auto'])})  "
      f"forced {med['always']:6.1f} (x{med['always'] / med['plain']:.2f})  "
      f"accept {acc / max(drafted, 1):.2f}  mean len "
      f"{acc / max(passes, 1):.2f}  exit layer {e[0]['exit_layer']}/"
      f"{e[0]['n_layer']}  same text: {'yes' if same else 'NO'}")
PY
}

echo "decode tok/s, median of $REPS, --threads $THREADS, $NTOK tokens, greedy"
bench smollm2-135m-instruct-q4_1.gguf "" chat \
  "Write a short paragraph about the history of the Eiffel Tower."
bench smollm2-135m-instruct-q4_1.gguf "" passage \
  "$PASSAGE Using only the passage above, when was the Eiffel Tower built and how tall is it?"
bench gemma3-270m-q4_k_m.gguf --raw text \
  "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was built"
bench gemma3-270m-q4_k_m.gguf --raw passage \
  "$PASSAGE Question: when was the Eiffel Tower built and how tall is it? Answer:"
