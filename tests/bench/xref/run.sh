#!/usr/bin/env bash
# xref benchmark: `docqa xref` against GNU Global (`global -x` for
# definitions, `global -rx` for references) on the C files (*.c, *.h) of
# Debian's SQLite source package, in the same run:
#   - `docqa ingest --no-embed` of the tree (wall, CPU, peak RSS) vs gtags;
#   - per-query latency p50/p90 over 50 functions sampled with a fixed seed
#     from gtags' function definitions: one process per query for both
#     tools (docqa xref --json, global -x, global -rx), plus docqa's own
#     query time (the JSON time_ms, without process start and model-free
#     index open);
#   - agreement of definitions: a function agrees when the (path, line) set
#     global -x reports for it equals ours (and, looser, is contained in ours);
#   - agreement of references: recall and precision of docqa's reference
#     lines against global -rx (different tools count differently: global
#     -rx lists every line that mentions the name outside its definitions).
# The tree is the one tests/bench/ingest/run.sh fetches (apt-get source
# through a private apt configuration, into .deps/bench-sym, never
# committed); this script fetches it the same way when it is missing. Only
# the C files are mirrored (hard links) into .deps/bench-xref/tree so both
# tools see the same files.
# Needs: global (scripts/setup-deps.sh), /usr/bin/time, python3, a built docqa
# ($DOCQA, else BUILD_DIR/cli/docqa, built when missing).
# Usage: tests/bench/xref/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:-$ROOT/build}
WORK=$ROOT/.deps/bench-xref
DOCQA=${DOCQA:-$BUILD/cli/docqa}
command -v gtags >/dev/null || { echo "run.sh: gtags missing (apt-get install global)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
[ -x "$DOCQA" ] || cmake --build "$BUILD" --target docqa -j2 >/dev/null

# 1. Debian's SQLite source (tests/bench/apt_source.sh, as tests/bench/ingest).
. "$ROOT/tests/bench/apt_source.sh"
src=$(bench_source sqlite3)

# 2. The C files only, hidden folders (.pc/ quilt backups) skipped.
rm -rf "$WORK/tree" "$WORK/index" "$WORK/gtags"
mkdir -p "$WORK/tree" "$WORK/gtags"
(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n' |
   grep -v '\(^\|/\)\.' | LC_ALL=C sort) > "$WORK/files.txt"
(cd "$src" && while IFS= read -r f; do
   mkdir -p "$WORK/tree/$(dirname "$f")"
   ln "$f" "$WORK/tree/$f" 2>/dev/null || cp -p "$f" "$WORK/tree/$f"
 done < "$WORK/files.txt")
echo "tree: $src"
echo "files: $(wc -l < "$WORK/files.txt") C files, $(cd "$WORK/tree" && cat $(cat "$WORK/files.txt") | wc -c) bytes"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

field() { awk -F': ' -v k="$2" '$1 ~ k {print $2}' "$1"; }
report() { # name timefile
  printf '%-22s: wall %s  user %s s  sys %s s  peak RSS %s KiB\n' "$1" \
    "$(field "$2" Elapsed)" "$(field "$2" "User time")" \
    "$(field "$2" "System time")" "$(field "$2" "Maximum resident")"
}

# 3. Index both ways.
/usr/bin/time -v -o "$WORK/ingest.time" "$DOCQA" ingest "$WORK/tree" \
  --index "$WORK/index" --no-embed --json > "$WORK/ingest.json" 2> "$WORK/ingest.err" || {
  echo "docqa ingest failed:"; tail -5 "$WORK/ingest.err"; exit 1; }
(cd "$WORK/tree" && /usr/bin/time -v -o "$WORK/gtags.time" gtags -q -f "$WORK/files.txt" "$WORK/gtags")
report "docqa ingest --no-embed" "$WORK/ingest.time"
report "gtags" "$WORK/gtags.time"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"docqa: {d['added']} files, {d['failed']} failed, {d['symbols']} symbols, {d['refs']} refs\")" "$WORK/ingest.json"
(cd "$WORK/tree" && GTAGSROOT="$WORK/tree" GTAGSDBPATH="$WORK/gtags" global -x -e '.*') > "$WORK/global_defs.txt"

# 4. Queries, latency and agreement.
export GTAGSROOT="$WORK/tree" GTAGSDBPATH="$WORK/gtags"
python3 - "$DOCQA" "$WORK" <<'PY'
import collections, json, os, random, re, statistics, subprocess, sys, time
docqa, work = sys.argv[1], sys.argv[2]
tree, index = os.path.join(work, "tree"), os.path.join(work, "index")

def parse_global(text):
    out = set()
    for ln in text.splitlines():
        m = re.match(r'(\S+)\s+(\d+)\s+(\S+)\s(.*)$', ln)
        if m:
            out.add((m.group(3), int(m.group(2))))
    return out

# gtags function definitions (same filter as tests/bench/ingest/run.sh)
gfun = collections.defaultdict(set)
for ln in open(os.path.join(work, "global_defs.txt"), encoding="utf-8", errors="replace"):
    m = re.match(r'(\S+)\s+(\d+)\s+(\S+)\s(.*)$', ln.rstrip('\n'))
    if not m or m.group(1) == '__declspec':
        continue
    name, img = m.group(1), m.group(4).strip()
    if (re.search(r'\b' + re.escape(name) + r'\s*\(', img) and not img.startswith('#')
            and 'typedef' not in img and not img.rstrip().endswith(';')):
        gfun[name].add((m.group(3), int(m.group(2))))
rnd = random.Random(20261129)
sample = rnd.sample(sorted(gfun), min(50, len(gfun)))

def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tree)
    return p, (time.monotonic() - t0) * 1000

t_dq, t_dq_int, t_gx, t_grx = [], [], [], []
eq = sub = eq_body = 0
missed = []
ref_tp = ref_dq = ref_g = 0
diffs, extra = [], []
for name in sample:
    p, ms = timed([docqa, "xref", name, "--index", index, "--json", "-q"])
    t_dq.append(ms)
    d = json.loads(p.stdout) if p.stdout.strip() else {"definitions": [], "references": [], "time_ms": 0}
    t_dq_int.append(d.get("time_ms", 0.0))
    p, ms = timed(["global", "-x", name]); t_gx.append(ms)
    gdefs = parse_global(p.stdout)
    p, ms = timed(["global", "-rx", name]); t_grx.append(ms)
    grefs = parse_global(p.stdout)
    ddefs = {(x["path"], x["line"]) for x in d["definitions"]}
    dbody = {(x["path"], x["line"]) for x in d["definitions"]
             if x.get("kind") != "prototype"}
    if dbody == gdefs:
        eq_body += 1
    drefs = {(x["path"], x["line"]) for x in d["references"]}
    if gdefs == ddefs:
        eq += 1
    elif len(extra) < 6:
        kinds = {(x["path"], x["line"]): x["kind"] for x in d["definitions"]}
        extra.append(f"  not equal: {name}: only docqa "
                     f"{[(p_, l_, kinds[(p_, l_)]) for p_, l_ in sorted(ddefs - gdefs)[:3]]}"
                     f" only global {sorted(gdefs - ddefs)[:3]}")
    if gdefs <= ddefs:
        sub += 1
    else:
        diffs.append(f"  differs: {name}: global {sorted(gdefs)[:3]} docqa {sorted(ddefs)[:3]}")
    missed += [(name, p_, l_) for p_, l_ in sorted(grefs - drefs)]
    ref_tp += len(grefs & drefs); ref_dq += len(drefs); ref_g += len(grefs)

def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))]
n = len(sample)
print(f"\nlatency over {n} functions (one process per query, ms):")
print(f"  docqa xref (defs+refs)  p50 {statistics.median(t_dq):7.1f}  p90 {q(t_dq, .9):7.1f}"
      f"   (query inside docqa: p50 {statistics.median(t_dq_int):.2f} ms)")
print(f"  global -x  (defs)       p50 {statistics.median(t_gx):7.1f}  p90 {q(t_gx, .9):7.1f}")
print(f"  global -rx (refs)       p50 {statistics.median(t_grx):7.1f}  p90 {q(t_grx, .9):7.1f}")
print(f"  ratio docqa / (global -x + global -rx), p50: "
      f"{statistics.median(t_dq) / (statistics.median(t_gx) + statistics.median(t_grx)):.2f}")
print(f"definitions: {eq}/{n} equal to global -x, {eq_body}/{n} equal without "
      f"docqa's prototypes, {sub}/{n} contain global's")
for l in diffs + extra:
    print(l)
print(f"references: docqa {ref_dq} lines, global -rx {ref_g} lines, common {ref_tp}: "
      f"recall {100.0 * ref_tp / max(1, ref_g):.1f}%, precision {100.0 * ref_tp / max(1, ref_dq):.1f}%")
for name, path, line in missed[:8]:
    with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
        text = f.read().split("\n")[line - 1].strip()
    print(f"  only global -rx: {name}: {path}:{line}: {text[:90]}")
PY
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
