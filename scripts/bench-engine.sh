#!/usr/bin/env bash
# bench-engine.sh - our engine beside llama.cpp, in one run, on the same GGUF
# files and thread count: `docqa bench engine --json` and
# tests/bench/engine/llama_bench.py (llama.cpp through llama-cpp-python's
# low-level API, timed like llama-bench), alternated A/B/A/B for --rounds
# rounds so a busy machine hurts both alike. Prints per model and test the
# median tokens/s of each side over all timed runs, and ours / llama.cpp.
# Goals (issue 5): generation >= 1.0x, prompt processing >= 0.8x.
#
# Usage: scripts/bench-engine.sh [--threads N] [--pp 512,2048] [--tg 128]
#          [--reps N] [--rounds N] [--models "a.gguf b.gguf"] [--docqa PATH]
# Env: DOCQA_MODELS (model dir), DOCQA_BENCH_VENV (default .deps/rt-venv).
# Downloads nothing. Exits non-zero when llama-cpp-python is missing.
#
# The AVX2 path (CPUs without AVX-512 VNNI) beside an AVX2-only llama.cpp:
#   python3 -m venv .deps/rt-venv-avx2
#   CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
#     -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2
#     .deps/rt-venv-avx2/bin/pip install --no-cache-dir llama-cpp-python==0.3.36
#   DOCQA_CPU_ISA=avx2 DOCQA_BENCH_VENV=.deps/rt-venv-avx2 scripts/bench-engine.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${DOCQA_BENCH_VENV:-$ROOT/.deps/rt-venv}
MODELS_DIR=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
THREADS=$(nproc)
PP=512
TG=128
REPS=3
ROUNDS=2
MODELS="smollm2-135m-instruct-q4_1.gguf gemma3-270m-q4_k_m.gguf"
DOCQA=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --pp) PP=$2; shift 2 ;;
    --tg) TG=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --docqa) DOCQA=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-engine.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

if ! "$VENV/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  cat >&2 <<EOF
bench-engine.sh: llama-cpp-python is not installed in $VENV.
Install it (builds llama.cpp from source; takes a while on 2 cores):
  python3 -m venv $VENV
  CMAKE_BUILD_PARALLEL_LEVEL=2 $VENV/bin/pip install llama-cpp-python==0.3.36
On CPUs whose CPUID reports AMX but faults on it (SIGILL in
ggml_backend_amx_mul_mat), rebuild libggml-cpu with AMX off and copy it over
the wheel's libggml-cpu.so* (exact commands: scripts/make-engine-fixtures.py).
EOF
  exit 1
fi

if [ -z "$DOCQA" ]; then
  for b in "$ROOT/build/cli/docqa" "$ROOT"/build-*/cli/docqa; do
    [ -x "$b" ] && { DOCQA=$b; break; }
  done
fi
[ -x "$DOCQA" ] || { echo "bench-engine.sh: no docqa binary; build first or pass --docqa" >&2; exit 1; }

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "docqa: $DOCQA (CPU path: ${DOCQA_CPU_ISA:-the best this CPU runs})   llama.cpp: llama-cpp-python $("$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')"
echo "threads $THREADS, pp $PP, tg $TG, $REPS reps x $ROUNDS rounds (A/B alternated); $(uptime | sed 's/.*load/load/')"
for m in $MODELS; do
  path=$MODELS_DIR/$m
  [ -f "$path" ] || { echo "bench-engine.sh: $path missing (scripts/fetch-models.sh)" >&2; exit 1; }
  for r in $(seq 1 "$ROUNDS"); do
    "$DOCQA" bench engine --backend cpu --model "$path" --threads "$THREADS" \
      --pp "$PP" --tg "$TG" --reps "$REPS" --json -q > "$OUT/$m.ours.$r.json"
    "$VENV/bin/python" "$ROOT/tests/bench/engine/llama_bench.py" "$path" \
      --threads "$THREADS" --pp "$PP" --tg "$TG" --reps "$REPS" > "$OUT/$m.llama.$r.json"
  done
done
echo "after: $(uptime | sed 's/.*load/load/')"

python3 - "$OUT" $MODELS <<'EOF'
import glob, json, os, statistics, sys
out, models = sys.argv[1], sys.argv[2:]
goal = {"pp": 0.8, "tg": 1.0}
print("%-33s %-7s %11s %11s %7s %5s | %9s %9s %7s | %7s" % (
    "model", "test", "docqa tok/s", "llama tok/s", "ratio", "goal",
    "docqa/cpu", "llama/cpu", "ratio", "rss MiB"))
for m in models:
    runs, cpu, rss = {}, {}, []
    for side in ("ours", "llama"):
        for f in sorted(glob.glob(os.path.join(out, "%s.%s.*.json" % (m, side)))):
            j = json.load(open(f))
            if side == "ours":
                rss.append(j["peak_rss_mib"])
            for t in j["tests"]:
                k = (t["test"], t["kind"])
                runs.setdefault(k, {}).setdefault(side, []).extend(
                    t["n_tokens"] / (ms / 1e3) for ms in t["runs_ms"])
                cpu.setdefault(k, {}).setdefault(side, []).extend(
                    t["n_tokens"] / (ms / 1e3) for ms in t["cpu_ms"])
    for (test, kind), v in runs.items():
        a, b = statistics.median(v["ours"]), statistics.median(v["llama"])
        c = cpu[(test, kind)]
        ca, cb = statistics.median(c["ours"]), statistics.median(c["llama"])
        print("%-33s %-7s %11.1f %11.1f %6.2fx %4.1fx | %9.1f %9.1f %6.2fx | %7.0f" % (
            m, test, a, b, a / b, goal[kind], ca, cb, ca / cb, max(rss)))
print("tok/s: median over all timed runs (wall clock); /cpu: tokens per second of"
      " process CPU time (all threads; llama.cpp's includes OpenMP spinning).")
EOF
