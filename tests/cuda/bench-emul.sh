#!/usr/bin/env bash
# tests/cuda/bench-emul.sh BENCH SYNTH - device-check.sh's benchmark runs
# in miniature on the CPU emulator (BENCH: dq_bench_cuda_emul, SYNTH:
# dq_synth_gguf): the kernels alone and every model benchmark on a tiny
# synthetic llama, each expected to finish and print its lines. The
# numbers mean nothing here; what a GPU run must not meet is a benchmark
# that fails to start, rejects its options or crashes.
set -euo pipefail
B=$1 G=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
rc=0
"$B" --attn 64,128,256 --attn-tok 80 --moe-ids 20 --moe-experts 8 --reps 1 \
  >"$T/k.txt" || rc=$?
cat "$T/k.txt"
[ $rc -eq 0 ] || { echo "FAIL: kernel benchmarks exited $rc"; exit 1; }
for want in attn-hd64 attn-hd128 attn-hd256 moe-ids20; do
  grep -q "^$want " "$T/k.txt" || { echo "FAIL: no $want line"; exit 1; }
done
"$G" --shape tiny --type q4_k "$T/tiny.gguf" >/dev/null
"$B" --model "$T/tiny.gguf" --pp 40 --tg 4 --reps 1 --gsm-pp 96 \
  --gsm-tg 16 --gsm-ctx 64 --recall 600 --attn-both >"$T/m.txt"
cat "$T/m.txt"
for want in "tg4 " "tg4-sampled" "pp40 " "gsm96 " "gsm-tg16" "recall600"; do
  grep -q "^$want" "$T/m.txt" || { echo "FAIL: no '$want' line"; exit 1; }
done
"$B" --model "$T/tiny.gguf" --pp 0 --tg 0 --reps 1 --gsm-strategy similarity \
  --gsm-pp 96 --gsm-tg 16 --gsm-ctx 64 --json >"$T/j.txt"
cat "$T/j.txt"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; assert r, "no results"' "$T/j.txt"
echo "bench-emul: all benchmark runs finished"
