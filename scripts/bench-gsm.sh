#!/usr/bin/env bash
# bench-gsm.sh - GSM attention beside our full attention and llama.cpp, on
# one model, one thread count and one text: `docqa bench gsm --json` (our
# full and GSM paths in the same run) and tests/bench/gsm/llama_gsm.py
# (llama.cpp through llama-cpp-python), both reading the same text file,
# written once here: the regular files of /usr/share/common-licenses in name
# order, concatenated (each side repeats it as needed, the same way).
# Prints one table per length: prefill ms/token of the three, GSM's speed-up
# over llama.cpp, decode ms/token at that depth, KV bytes (GSM / full) and
# perplexity; then the issue's goals beside the measured values. With
# gnuplot installed, writes PNG and SVG plots to --out (prefill and decode
# ms/token vs length; KV bytes vs length), with the JSON of both sides.
# Goals (issue 6): GSM ms/token at 32k within 1.3x of 2k; at 32k GSM prefill
# >= 10x llama.cpp's and decode >= 5x; GSM KV <= 20% of full attention.
#
# Lengths run one at a time (docqa, then llama.cpp), each result kept in
# --out as it comes, so a run cut short (e.g. by `timeout`) can still be
# reported: --report-only prints the table and plots from what --out holds.
#
# Usage: scripts/bench-gsm.sh [--lengths 2048,4096,8192,16384] [--threads N]
#          [--model M] [--out DIR] [--decode N] [--no-ppl] [--no-llama]
#          [--full-max N] [--docqa PATH] [--report-only]
# Env: DOCQA_MODELS (model dir), DOCQA_BENCH_VENV (default .deps/rt-venv).
# Downloads nothing. --no-llama, or llama-cpp-python missing, leaves the
# llama.cpp columns empty (with a note).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${DOCQA_BENCH_VENV:-$ROOT/.deps/rt-venv}
MODELS_DIR=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
LENGTHS=2048,4096,8192,16384
THREADS=$(nproc)
MODEL=$MODELS_DIR/smollm2-135m-instruct-q4_1.gguf
OUT=bench-out
DECODE=32
PPL=1
LLAMA=1
FULL_MAX=16384
DOCQA=""
REPORT_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lengths) LENGTHS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --decode) DECODE=$2; shift 2 ;;
    --full-max) FULL_MAX=$2; shift 2 ;;
    --no-ppl) PPL=0; shift ;;
    --no-llama) LLAMA=0; shift ;;
    --docqa) DOCQA=$2; shift 2 ;;
    --report-only) REPORT_ONLY=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-gsm.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $LENGTHS =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench-gsm.sh: --lengths must be like 2048,4096" >&2; exit 2; }
[[ $THREADS =~ ^[0-9]+$ && $DECODE =~ ^[0-9]+$ ]] || { echo "bench-gsm.sh: --threads and --decode take numbers" >&2; exit 2; }
mkdir -p "$OUT"
if [ "$REPORT_ONLY" = 0 ]; then
  [ -f "$MODEL" ] || { echo "bench-gsm.sh: $MODEL missing (scripts/fetch-models.sh)" >&2; exit 1; }
  if [ -z "$DOCQA" ]; then
    for b in "$ROOT/build/cli/docqa" "$ROOT"/build-*/cli/docqa; do
      [ -x "$b" ] && { DOCQA=$b; break; }
    done
  fi
  [ -x "$DOCQA" ] || { echo "bench-gsm.sh: no docqa binary; build first or pass --docqa" >&2; exit 1; }
  if [ "$LLAMA" = 1 ] && ! "$VENV/bin/python" -c 'import llama_cpp, numpy' 2>/dev/null; then
    echo "bench-gsm.sh: llama-cpp-python (with numpy) is not in $VENV; llama.cpp columns left empty" >&2
    echo "  (install: see scripts/bench-engine.sh)" >&2
    LLAMA=0
  fi
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  TEXT=$TMP/text.txt
  : > "$TEXT"
  for f in $(LC_ALL=C ls /usr/share/common-licenses); do
    p=/usr/share/common-licenses/$f
    if [ -f "$p" ] && [ ! -L "$p" ]; then cat "$p" >> "$TEXT"; fi
  done
  [ -s "$TEXT" ] || { echo "bench-gsm.sh: /usr/share/common-licenses is empty" >&2; exit 1; }
  ppl_flag=()
  [ "$PPL" = 0 ] && ppl_flag=(--no-ppl)
  rm -f "$OUT"/docqa-gsm-*.json "$OUT"/llama-gsm-*.json
  echo "docqa: $DOCQA; model $(basename "$MODEL"); threads $THREADS; lengths $LENGTHS; $(uptime | sed 's/.*load/load/')"
  # one length at a time, both sides: a run cut short keeps what it measured
  for n in ${LENGTHS//,/ }; do
    "$DOCQA" bench gsm --model "$MODEL" --threads "$THREADS" --lengths "$n" \
      --decode "$DECODE" --full-max "$FULL_MAX" --text "$TEXT" "${ppl_flag[@]}" \
      --json -v > "$OUT/docqa-gsm-$n.json.part"
    mv "$OUT/docqa-gsm-$n.json.part" "$OUT/docqa-gsm-$n.json"
    if [ "$LLAMA" = 1 ]; then
      "$VENV/bin/python" "$ROOT/tests/bench/gsm/llama_gsm.py" "$MODEL" --text "$TEXT" \
        --lengths "$n" --threads "$THREADS" --decode "$DECODE" "${ppl_flag[@]}" \
        > "$OUT/llama-gsm-$n.json.part"
      mv "$OUT/llama-gsm-$n.json.part" "$OUT/llama-gsm-$n.json"
    fi
  done
  echo "after: $(uptime | sed 's/.*load/load/')"
fi

python3 - "$OUT" "$LENGTHS" <<'EOF'
import json, os, sys
out, want = sys.argv[1], [int(n) for n in sys.argv[2].split(",")]
def load(side):
    runs = {}
    for n in want:
        p = os.path.join(out, "%s-gsm-%d.json" % (side, n))
        if os.path.exists(p):
            runs[n] = json.load(open(p))
    return runs
ours_runs, llama_runs = load("docqa"), load("llama")
if not ours_runs:
    sys.exit("bench-gsm.sh: no docqa results in %s for lengths %s" % (out, sys.argv[2]))
ours = dict(next(iter(ours_runs.values())))
ours["lengths"] = [r["lengths"][0] for n, r in sorted(ours_runs.items())]
llama = None
if llama_runs:
    llama = dict(next(iter(llama_runs.values())))
    llama["lengths"] = [r["lengths"][0] for n, r in sorted(llama_runs.items())]
lrow = {r["length"]: r for r in llama["lengths"]} if llama else {}

def g(d, *keys):
    for k in keys:
        if d is None:
            return None
        d = d.get(k)
    return d

def f(v, fmt, width):
    return (fmt % v).rjust(width) if v is not None else "-".rjust(width)

def ratio(a, b):
    return a / b if a is not None and b else None

print("model %s, %d threads; text %d tokens (docqa) / %s (llama.cpp)" % (
    os.path.basename(ours["model"]), ours["threads"], ours["text"]["tokens"],
    llama["text"]["tokens"] if llama else "-"))
hdr = ("%7s | %8s %8s %8s %8s | %8s %8s %8s %8s | %8s %8s %6s | %7s %7s %7s" % (
    "tokens", "full", "gsm", "llama", "gsm/lcpp", "full", "gsm", "llama",
    "gsm/lcpp", "full KV", "gsm KV", "gsm/f", "full", "gsm", "llama"))
print("%7s | %-35s | %-35s | %-24s | %s" % ("", "prefill ms/token (gsm/lcpp: speed-up)",
      "decode ms/token at depth", "KV MiB after prefill", "perplexity"))
print(hdr)
rows = []
for r in ours["lengths"]:
    n = r["length"]
    fu, gs, ll = r["full"], r["gsm"], lrow.get(n)
    row = {
        "n": n,
        "full_pf": g(fu, "prefill_ms_per_token"), "gsm_pf": g(gs, "prefill_ms_per_token"),
        "llama_pf": g(ll, "prefill_ms_per_token"),
        "full_dec": g(fu, "decode_ms_per_token"), "gsm_dec": g(gs, "decode_ms_per_token"),
        "llama_dec": g(ll, "decode_ms_per_token"),
        "full_kv": r.get("full_kv_bytes") or g(fu, "kv_bytes"),
        "gsm_kv": g(gs, "kv_bytes_alloc"),
        "full_ppl": g(fu, "ppl"), "gsm_ppl": g(gs, "ppl"), "llama_ppl": g(ll, "ppl"),
    }
    row["pf_x"] = ratio(row["llama_pf"], row["gsm_pf"])
    row["dec_x"] = ratio(row["llama_dec"], row["gsm_dec"])
    row["kv_r"] = ratio(row["gsm_kv"], row["full_kv"])
    rows.append(row)
    mib = lambda b: b / 2**20 if b is not None else None
    print("%7d | %s %s %s %s | %s %s %s %s | %s %s %s | %s %s %s" % (
        n, f(row["full_pf"], "%.3f", 8), f(row["gsm_pf"], "%.3f", 8),
        f(row["llama_pf"], "%.3f", 8), f(row["pf_x"], "%.2fx", 8),
        f(row["full_dec"], "%.2f", 8), f(row["gsm_dec"], "%.2f", 8),
        f(row["llama_dec"], "%.2f", 8), f(row["dec_x"], "%.2fx", 8),
        f(mib(row["full_kv"]), "%.1f", 8), f(mib(row["gsm_kv"]), "%.1f", 8),
        f(row["kv_r"] * 100 if row["kv_r"] is not None else None, "%.0f%%", 6),
        f(row["full_ppl"], "%.2f", 7), f(row["gsm_ppl"], "%.2f", 7),
        f(row["llama_ppl"], "%.2f", 7)))

# goals, stated at 32k (against 2k); measured at the longest length run
short = min(rows, key=lambda r: r["n"])
long_ = max(rows, key=lambda r: r["n"])
at = "" if long_["n"] == 32768 else " (measured at %d; the goal is stated at 32768)" % long_["n"]
print("goals%s:" % at)
def goal(name, v, fmt, target, ok):
    print("  %-48s %12s   goal %s%s" % (name, fmt % v if v is not None else "-", target,
          "" if v is None else ("  met" if ok(v) else "  NOT met")))
goal("GSM ms/token at %d / at %d" % (long_["n"], short["n"]),
     ratio(long_["gsm_pf"], short["gsm_pf"]), "%.2fx", "<= 1.3x", lambda v: v <= 1.3)
goal("GSM prefill speed / llama.cpp's at %d" % long_["n"], long_["pf_x"], "%.2fx",
     ">= 10x", lambda v: v >= 10)
goal("GSM decode speed / llama.cpp's at %d" % long_["n"], long_["dec_x"], "%.2fx",
     ">= 5x", lambda v: v >= 5)
goal("GSM KV bytes / full attention's at %d" % long_["n"],
     long_["kv_r"] * 100 if long_["kv_r"] is not None else None, "%.0f%%",
     "<= 20%", lambda v: v <= 20)
print("ms/token: wall time per token (prefill: all L tokens; decode: single-token steps"
      " after it); KV: full = layers x L x K+V F16 rows (from the shape, run or not), gsm = rows allocated;"
      " llama.cpp: F16 KV, no flash attention, n_batch 2048 / n_ubatch 512.")
if llama is None:
    print("llama.cpp: not run (--no-llama or llama-cpp-python missing)")
missing = [n for n in want if n not in ours_runs or (llama is not None and n not in llama_runs)]
if missing:
    print("not measured (run cut short?): %s" % ", ".join(map(str, missing)))

with open(os.path.join(out, "gsm.meta"), "w") as fh:
    fh.write("%s, %d threads\n" % (os.path.basename(ours["model"]), ours["threads"]))
with open(os.path.join(out, "gsm.dat"), "w") as fh:
    fh.write("# tokens full_pf gsm_pf llama_pf full_dec gsm_dec llama_dec full_kv_mib gsm_kv_mib\n")
    for r in sorted(rows, key=lambda r: r["n"]):
        vals = [r["full_pf"], r["gsm_pf"], r["llama_pf"], r["full_dec"], r["gsm_dec"],
                r["llama_dec"], r["full_kv"] and r["full_kv"] / 2**20,
                r["gsm_kv"] and r["gsm_kv"] / 2**20]
        fh.write("%d %s\n" % (r["n"], " ".join("NaN" if v is None else "%.6g" % v for v in vals)))
EOF

if command -v gnuplot >/dev/null; then
  META=$(cat "$OUT/gsm.meta")
  for term in "pngcairo size 900,560" "svg size 900,560"; do
    ext=${term%% *}; ext=${ext%cairo}
    gnuplot <<EOF
set terminal $term noenhanced
set datafile missing "NaN"
set logscale x 2
set logscale y
set grid
set key top left
set xlabel "input length (tokens)"
set output "$OUT/gsm-prefill.$ext"
set title "Prefill time per token ($META)"
set ylabel "ms / token"
plot "$OUT/gsm.dat" using 1:2 with linespoints title "docqa full attention", \
     "" using 1:3 with linespoints title "docqa GSM", \
     "" using 1:4 with linespoints title "llama.cpp"
set output "$OUT/gsm-decode.$ext"
set title "Decode time per token at depth ($META)"
plot "$OUT/gsm.dat" using 1:5 with linespoints title "docqa full attention", \
     "" using 1:6 with linespoints title "docqa GSM", \
     "" using 1:7 with linespoints title "llama.cpp"
set output "$OUT/gsm-kv.$ext"
set title "KV cache after prefill ($META)"
set ylabel "MiB"
plot "$OUT/gsm.dat" using 1:8 with linespoints title "full attention (F16)", \
     "" using 1:9 with linespoints title "GSM (allocated)"
EOF
  done
  echo "plots: $OUT/gsm-{prefill,decode,kv}.{png,svg}; data: $OUT/gsm.dat, $OUT/*.json"
else
  echo "gnuplot not installed (scripts/setup-deps.sh installs it): no plots; data: $OUT/gsm.dat"
fi
