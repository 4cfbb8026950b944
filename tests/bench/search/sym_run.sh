#!/usr/bin/env bash
# Symbol-aware retrieval benchmark: `docqa search` with its symbol signal
# against the same search without it (`--no-symbols`: BM25 + vectors only),
# in the same run, on the C files of Debian's Lua 5.4 source, with GNU
# Global as the independent reference for where each function is defined
# (`global -x`) and where it is called (`global -rx`, the lines that call
# it: the name followed by '(').
#
# For 60 functions sampled with a fixed seed (each called at least once
# outside its own definition), four questions each:
#   def:     "Where is F defined?"          gold: F's definition lines
#   what:    "What does F do?"              gold: F's definition lines
#   callers: "Which functions call F?"      gold: F's call lines
#   comment: "Which function <the first sentence of F's leading comment>?"
#            (no identifier in it; only for functions with such a comment)
#                                           gold: F's definition lines
# A result hits when its path is the gold's and its line range holds a
# gold line; hit@1/3/5 of `docqa search --k 5` both ways, and the query
# time inside docqa (JSON time_ms, embedding included).
# The tree comes from tests/bench/apt_source.sh (apt-get source, into
# .deps/bench-sym, never committed); the index (with embeddings) and gtags'
# database go to .deps/bench-search.
# Needs: global (scripts/setup-deps.sh), python3, the models
# (scripts/fetch-models.sh), a built docqa ($DOCQA, else BUILD_DIR/cli/docqa).
# Usage: tests/bench/search/sym_run.sh [BUILD_DIR]   (default build/; about
# 5 minutes on 2 cores, most of it embedding the tree once)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:-$ROOT/build}
WORK=$ROOT/.deps/bench-search
DOCQA=${DOCQA:-$BUILD/cli/docqa}
command -v gtags >/dev/null || { echo "sym_run.sh: gtags missing (apt-get install global)" >&2; exit 1; }
[ -x "$DOCQA" ] || cmake --build "$BUILD" --target docqa -j2 >/dev/null

. "$ROOT/tests/bench/apt_source.sh"
src=$(bench_source lua5.4)

rm -rf "$WORK/tree" "$WORK/gtags"
mkdir -p "$WORK/tree" "$WORK/gtags"
(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n' |
   grep -v '\(^\|/\)\.' | LC_ALL=C sort) > "$WORK/files.txt"
(cd "$src" && while IFS= read -r f; do
   mkdir -p "$WORK/tree/$(dirname "$f")"
   cp -p "$f" "$WORK/tree/$f"
 done < "$WORK/files.txt")
echo "tree: $src, $(wc -l < "$WORK/files.txt") C files"
# incremental: a rerun re-embeds nothing (same files, same times)
"$DOCQA" ingest "$WORK/tree" --index "$WORK/index" --json -q > "$WORK/ingest.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('docqa ingest:', {k: d.get(k) for k in ('added', 'unchanged', 'chunks', 'symbols', 'refs', 'embedded') if k in d})" "$WORK/ingest.json"
(cd "$WORK/tree" && gtags -q -f "$WORK/files.txt" "$WORK/gtags")
(cd "$WORK/tree" && GTAGSROOT="$WORK/tree" GTAGSDBPATH="$WORK/gtags" global -x -e '.*') > "$WORK/global_defs.txt"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
GTAGSROOT="$WORK/tree" GTAGSDBPATH="$WORK/gtags" \
  python3 "$ROOT/tests/bench/search/sym_eval.py" "$DOCQA" "$WORK"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
