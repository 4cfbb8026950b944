#!/usr/bin/env bash
# tests/cuda/device-check.sh - the CUDA backend's checks and benchmarks on a
# bare GPU machine with no network (issue 8). Needs only the working tree
# plus, where the machine lacks PCRE2/jansson headers, the Debian packages
# that scripts/fetch-device-deps.sh puts in .devdeps/ (carried with the
# tree). Steps, each with its own time limit so the whole run stays under
# 8 minutes on one H200:
#   1. device facts (nvidia-smi: card, driver, memory);
#   2. an engine-only build (-DDOCQA_ENGINE_ONLY=ON, CUDA ON, sm_90,
#      warnings as errors; where the machine's compilers warn where CI's
#      do not, built again without, and the summary says so);
#   3. the CUDA tests (ctest -L cuda): every kernel against the CPU backend
#      on random inputs, whole models (MoE fixtures, synthetic llama models
#      in each weight type, default models when present); then the op tests
#      again under compute-sanitizer memcheck;
#   4. benchmarks: kernels alone (the prefill attention at 4096 tokens,
#      tensor cores against CUDA cores at head sizes 64, 128 and 256; MoE
#      expert products grouped by expert against one pair a CTA), then
#      on synthetic models written on the machine by
#      dq_synth_gguf: SmolLM2-135M-shaped (Q4_1) and Llama-3-8B-shaped (Q4_K,
#      Q8_0): decode tok/s at batch 1 as a fraction of the copy-bandwidth
#      floor (with CUDA graphs; op by op beside it, and the separate ops
#      instead of the fused products), sampled decode
#      (top-k 40 selected on the device, and on the host beside it),
#      prefill tok/s at 2k and 32k with full attention, and GSM
#      prefill (rows on the device) at 2k, 32k and 128k on the 8B shape
#      with its ms/token against 2k's (goal: within 1.5x at 128k); GSM
#      decode after 8k tokens with CUDA graphs and op by op (and both
#      with the similarity strategy on the SmolLM2 shape); prefill
#      with tensor-core attention and, beside it, the CUDA-core kernel;
#      coarse recall (GSM on device rows with its statistics) at 8k and
#      32k on the SmolLM2 shape;
#   5. a short table, last.
# Usage: bash tests/cuda/device-check.sh [--quick]   (--quick: no 8B model)
# Output: also written under $OUT (or /tmp/dq-device-check) as log files.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUTD=${OUT:-/tmp/dq-device-check}
B=/tmp/dq-cuda-build
M=/tmp/dq-cuda-models
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
mkdir -p "$OUTD" "$M"
T0=$(date +%s)
since() { echo $(($(date +%s) - T0)); }
say() { echo "== [$(since) s] $*"; }
SUMMARY=()

say "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv,noheader 2>&1 | tee "$OUTD/device.txt"
nvcc --version | tail -1
NPROC=$(nproc)

# --- dependencies: PCRE2 and jansson headers + static libraries -----------
EXTRA=()
if ! { command -v pkg-config >/dev/null &&
       pkg-config --exists libpcre2-8 jansson; }; then
  if ls "$SRC"/.devdeps/*.deb >/dev/null 2>&1; then
    D=/tmp/dq-devdeps
    mkdir -p "$D"
    for f in "$SRC"/.devdeps/*.deb; do dpkg -x "$f" "$D"; done
    L="$D/usr/lib/x86_64-linux-gnu"
    EXTRA=(-DPKG_CONFIG_EXECUTABLE=/nonexistent
           -DPCRE2_INC="$D/usr/include" -DPCRE2_LIB="$L/libpcre2-8.a"
           -DJANSSON_INC="$D/usr/include" -DJANSSON_LIB="$L/libjansson.a")
    say "using PCRE2/jansson from .devdeps (static)"
  else
    say "PCRE2/jansson missing and no .devdeps/ (run scripts/fetch-device-deps.sh where apt works)"
  fi
fi

# --- build -----------------------------------------------------------------
say "build"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
build() { # werror: ON | OFF
  timeout 300 cmake -S "$SRC" -B "$B" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DDOCQA_ENGINE_ONLY=ON -DDOCQA_CUDA=ON -DDOCQA_WERROR="$1" \
    -DCMAKE_CUDA_ARCHITECTURES=90 "${EXTRA[@]}" >>"$OUTD/build.log" 2>&1 &&
    timeout 300 cmake --build "$B" -j "$NPROC" >>"$OUTD/build.log" 2>&1
}
if ! build ON; then
  # CI builds with warnings as errors; a device whose compilers warn
  # where ours do not still gets its run (the warnings are in the log)
  grep -E "(error|warning):" "$OUTD/build.log" | head -20
  say "build with warnings as errors failed; again without"
  SUMMARY+=("build: failed with warnings as errors (see build.log), built without")
  if ! build OFF; then
    tail -40 "$OUTD/build.log"
    say "BUILD FAILED"
    exit 1
  fi
fi
say "built"

# --- tests -----------------------------------------------------------------
say "tests"
timeout 240 ctest --test-dir "$B" -L cuda --output-on-failure \
  >"$OUTD/tests.log" 2>&1
TRC=$?
grep -E "tests passed|Passed|Failed|Skipped|CHECK failed|cuda vs cpu|max" \
  "$OUTD/tests.log" | head -60
SUMMARY+=("tests: $(grep -E 'tests passed' "$OUTD/tests.log" || echo "ctest rc $TRC")")
# the op tests again under memcheck: out-of-bounds and misaligned accesses
# in our kernels, named with the kernel and thread
if command -v compute-sanitizer >/dev/null; then
  say "memcheck (op tests)"
  DQ_CUDA_OPS_ONLY=1 timeout 90 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$B/tests/cuda/cuda_ops" >"$OUTD/memcheck.log" 2>&1
  MRC=$?
  grep -E "ERROR SUMMARY|Invalid|Address|at 0x|checks," "$OUTD/memcheck.log" | head -20
  SUMMARY+=("memcheck: rc $MRC ($(grep -m1 'ERROR SUMMARY' "$OUTD/memcheck.log"))")
fi

# --- benchmarks ------------------------------------------------------------
bench() { # label model args...   (LIMIT=seconds, default 110)
  local label=$1 model=$2 rc lim=${LIMIT:-110}
  shift 2
  say "bench $label"
  [ "$model" = - ] && set -- "$@" || set -- --model "$model" "$@"
  timeout "$lim" "$B/tests/cuda/dq_bench_cuda" "$@" \
    >"$OUTD/bench-$label.txt" 2>&1
  rc=$?
  cat "$OUTD/bench-$label.txt"
  # finished lines count even when a later test ran out of time
  while read -r line; do SUMMARY+=("$label: $line"); done \
    < <(grep -E "^(tg|pp|gsm|recall|attn|moe)|bandwidth" "$OUTD/bench-$label.txt")
  [ $rc -eq 0 ] || SUMMARY+=("$label: stopped (rc $rc, 124 = over $lim s)")
}
# kernels alone: the prefill attention, tensor cores vs CUDA cores per
# head size (SmolLM2 64, Llama 3 128, Gemma 3 256); MoE expert products of
# a 2048-token chunk at top-6, grouped by expert vs one pair a CTA
LIMIT=60 bench kernels - --attn 64,128,256 --attn-tok 4096 \
  --moe-ids 12288 --reps 5
G="$B/tests/cuda/dq_synth_gguf"
"$G" --shape smollm2-135m --type q4_1 "$M/smollm2.gguf" >/dev/null &&
  bench smollm2-q4_1 "$M/smollm2.gguf" --pp 512,2048 --tg 128 --reps 3 \
    --gsm-pp 2048,32768 --gsm-tg 64 --recall 8192,32768 --attn-both
# the similarity strategy (its merges by kv_merge on the device) beside it
[ -f "$M/smollm2.gguf" ] && LIMIT=60 bench smollm2-q4_1-similarity \
  "$M/smollm2.gguf" --pp 0 --tg 0 --reps 1 --gsm-strategy similarity \
  --gsm-pp 2048,32768 --gsm-tg 64
rm -f "$M/smollm2.gguf"
if [ $QUICK = 0 ]; then
  "$G" --shape llama3-8b --type q4_k "$M/l8b.gguf" >/dev/null &&
    bench llama3-8b-q4_k "$M/l8b.gguf" --pp 2048,32768 --tg 64 --reps 3 \
      --attn-both
  [ -f "$M/l8b.gguf" ] && LIMIT=150 bench llama3-8b-q4_k-gsm "$M/l8b.gguf" \
    --pp 0 --tg 0 --reps 1 --gsm-tg 32 --gsm-pp 2048,32768,131072
  rm -f "$M/l8b.gguf"
  "$G" --shape llama3-8b --type q8_0 "$M/l8b.gguf" >/dev/null &&
    bench llama3-8b-q8_0 "$M/l8b.gguf" --pp 2048 --tg 64 --reps 3
  rm -f "$M/l8b.gguf"
fi

say "summary ($(cat "$OUTD/device.txt" 2>/dev/null | head -1))"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUTD/summary.txt"
exit $TRC
