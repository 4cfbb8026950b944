#!/usr/bin/env bash
# Symbol-pass benchmark: docqa's code symbol extraction (dq_bench_sym, the
# reader-less path: read file -> dq_text with one mark per line ->
# dq_chunk_document) against GNU Global's gtags on the C files (*.c, *.h) of
# Debian's SQLite source package, in the same run:
#   - wall time and peak RSS of both (/usr/bin/time -v);
#   - agreement of function definitions with `global -x` for 50 functions
#     sampled (fixed seed) from gtags' definitions: a function agrees when
#     every (path, line) global reports for it is among ours (goal >= 95%);
#     and the reverse, for 50 functions sampled from ours;
#   - variables, struct/union members and enumerators against
#     universal-ctags (its kinds v, m, e; externs are off there too): the
#     share of ctags' (name, path, line) that docqa has, and of docqa's
#     "variable", "field" and "enumerator" symbols that ctags has.
# The source is fetched with apt-get source through a private apt
# configuration (the system's apt setup is untouched) into .deps/, never
# committed. Needs: global and universal-ctags (scripts/setup-deps.sh), a
# built dq_bench_sym.
# Usage: tests/bench/ingest/run.sh [BUILD_DIR]   (default build/)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:-$ROOT/build}
WORK=$ROOT/.deps/bench-sym
BIN=$BUILD/tests/bench/ingest/dq_bench_sym
command -v gtags >/dev/null || { echo "run.sh: gtags missing (apt-get install global)" >&2; exit 1; }
command -v ctags >/dev/null || { echo "run.sh: ctags missing (apt-get install universal-ctags)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
cmake --build "$BUILD" --target dq_bench_sym -j2 >/dev/null

# 1. Debian's SQLite source.
. "$ROOT/tests/bench/apt_source.sh"
src=$(bench_source sqlite3)
echo "tree: $src"
# Hidden directories (.pc/ holds quilt backups) are skipped, as dq_bench_sym does.
find "$src" -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n' | grep -v '\(^\|/\)\.' | LC_ALL=C sort > "$WORK/files.txt"
echo "files: $(wc -l < "$WORK/files.txt") C files, $(cd "$src" && cat $(cat "$WORK/files.txt") | wc -c) bytes"

# 2. docqa.
/usr/bin/time -v -o "$WORK/ours.time" "$BIN" defs "$src" c,h > "$WORK/ours.tsv" 2> "$WORK/ours.err"
cat "$WORK/ours.err"

# 3. GNU Global on the same files.
rm -rf "$WORK/gtags"; mkdir -p "$WORK/gtags"
(cd "$src" && /usr/bin/time -v -o "$WORK/gtags.time" gtags -q -f "$WORK/files.txt" "$WORK/gtags")
(cd "$src" && GTAGSROOT="$src" GTAGSDBPATH="$WORK/gtags" global -x -e '.*' > "$WORK/global.txt")

field() { awk -F': ' -v k="$2" '$1 ~ k {print $2}' "$1"; }
report() { # name timefile
  local wall cpu_u cpu_s kb
  wall=$(field "$2" "Elapsed"); cpu_u=$(field "$2" "User time"); cpu_s=$(field "$2" "System time")
  kb=$(field "$2" "Maximum resident")
  printf '%-14s: wall %s  cpu %.2f s (user %s + sys %s)  peak RSS %s KiB\n' \
    "$1" "$wall" "$(echo "$cpu_u + $cpu_s" | bc -l)" "$cpu_u" "$cpu_s" "$kb"
}
report "docqa symbols" "$WORK/ours.time"
report "gtags" "$WORK/gtags.time"
echo "(wall times depend on machine load; cpu time is the fairer comparison)"

# 4. Agreement of function definitions.
python3 - "$WORK/ours.tsv" "$WORK/global.txt" <<'PY'
import random, re, sys, collections
ours = collections.defaultdict(set)      # name -> {(path, line)} functions
ours_any = collections.defaultdict(set)  # name -> {(path, line)} any kind
for ln in open(sys.argv[1], encoding='utf-8', errors='replace'):
    name, line, path, kind = ln.rstrip('\n').split('\t')
    ours_any[name].add((path, int(line)))
    if kind in ('function', 'method'):
        ours[name].add((path, int(line)))
gfun = collections.defaultdict(set)
gany = collections.defaultdict(set)
for ln in open(sys.argv[2], encoding='utf-8', errors='replace'):
    m = re.match(r'(\S+)\s+(\d+)\s+(\S+)\s(.*)$', ln.rstrip('\n'))
    if not m:
        continue
    name, line, path, image = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    if name == '__declspec':
        continue  # gtags reports "__declspec(dllexport)" lines as functions
    gany[name].add((path, line))
    img = image.strip()
    # function definitions: the name followed by '(' on a line that is not a
    # macro, typedef or declaration ending in ';'
    if (re.search(r'\b' + re.escape(name) + r'\s*\(', img) and not img.startswith('#')
            and 'typedef' not in img and not img.rstrip().endswith(';')):
        gfun[name].add((path, line))
rnd = random.Random(20261129)
names = sorted(gfun)
sample = rnd.sample(names, min(50, len(names)))
agree = [n for n in sample if gfun[n] <= ours_any[n]]
print(f"global -x -> docqa: {len(agree)}/{len(sample)} sampled functions agree "
      f"({100.0 * len(agree) / max(1, len(sample)):.0f}%)")
for n in sample:
    if n not in agree:
        print(f"  differs: {n}: global {sorted(gfun[n])[:3]} docqa {sorted(ours_any[n])[:3]}")
onames = sorted(ours)
osample = rnd.sample(onames, min(50, len(onames)))
oagree = [n for n in osample if ours[n] <= gany[n]]
print(f"docqa -> global -x: {len(oagree)}/{len(osample)} sampled functions agree "
      f"({100.0 * len(oagree) / max(1, len(osample)):.0f}%)")
for n in osample:
    if n not in oagree:
        print(f"  differs: {n}: docqa {sorted(ours[n])[:3]} global {sorted(gany[n])[:3]}")
tot_g = sum(len(v) for v in gfun.values())
hit = sum(len(v & ours_any[k]) for k, v in gfun.items())
print(f"all gtags function definitions found by docqa: {hit}/{tot_g} ({100.0 * hit / max(1, tot_g):.2f}%)")
PY

# 5. Variables, members and enumerators against universal-ctags (.h as C).
(cd "$src" && ctags -x --_xformat="%N	%K	%n	%F" --languages=C --langmap=C:.c.h \
  --kinds-C=vme -L "$WORK/files.txt" -f - 2>/dev/null) > "$WORK/ctags.tsv"
python3 - "$WORK/ours.tsv" "$WORK/ctags.tsv" <<'PY'
import collections, sys
ours = collections.defaultdict(set)
for ln in open(sys.argv[1], encoding='utf-8', errors='replace'):
    name, line, path, kind = ln.rstrip('\n').split('\t')
    ours[kind].add((name, path, int(line)))
anyours = set().union(*ours.values())
ct = collections.defaultdict(set)
for ln in open(sys.argv[2], encoding='utf-8', errors='replace'):
    name, kind, line, path = ln.rstrip('\n').split('\t')
    ct[{'member': 'field'}.get(kind, kind)].add((name, path, int(line)))
anyct = set().union(*ct.values())
for k in ('variable', 'field', 'enumerator'):
    c, o = ct[k], ours[k]
    print(f"{k + 's':12}: ctags {len(c):5}, docqa {len(o):5}; ctags' found by docqa "
          f"{len(c & anyours)}/{len(c)} ({100.0 * len(c & anyours) / max(1, len(c)):.1f}%), "
          f"docqa's in ctags {len(o & anyct)}/{len(o)} ({100.0 * len(o & anyct) / max(1, len(o)):.1f}%)")
PY
