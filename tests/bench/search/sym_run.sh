#!/usr/bin/env bash
# Symbol-aware retrieval benchmark: `docqa search` with its symbol signal
# against the same search without it (`--no-symbols`: BM25 + vectors only),
# in the same run, on the C files of two Debian source packages, with GNU
# Global as the independent reference for where each function is defined
# (`global -x`) and where it is called (`global -rx`, the lines that call
# it: the name followed by '('), and on two Python packages with Python's
# ast module as the reference (def lines; calls f(...) and x.f(...) by
# name; a docstring's first sentence as the description):
#   - Lua 5.4 (61 files), indexed with embeddings (hybrid);
#   - SQLite 3.40.1 (405 files), indexed with --no-embed (BM25 alone; its
#     18,722 chunks would take 20 minutes to embed on 2 cores);
#   - Python 3.11's email and asyncio packages (61 files), embedded.
#
# For 60 functions of each tree, sampled with a fixed seed (each called at
# least once outside its own definition), four questions each:
#   def:     "Where is F defined?"          gold: F's definition lines
#   what:    "What does F do?"              gold: F's definition lines
#   callers: "Which functions call F?"      gold: F's call lines
#   comment: "Which function <the first sentence of F's leading comment>?"
#            (no identifier in it; only for functions with such a comment)
#                                           gold: F's definition lines
# and for Python, 60 methods C.m whose name m other functions or methods
# share (close, feed, ...), sampled with the next seed:
#   qualified: "Where is C.m defined?"      gold: C.m's def line
# A result hits when its path is the gold's and its line range holds a
# gold line; hit@1/3/5 of `docqa search --k 5` both ways, and the query
# time inside docqa (JSON time_ms, embedding included).
# The trees come from tests/bench/apt_source.sh (apt-get source, into
# .deps/bench-sym, never committed); the indexes and gtags' databases go to
# .deps/bench-search.
# Needs: global (scripts/setup-deps.sh), python3, the models
# (scripts/fetch-models.sh), a built docqa ($DOCQA, else BUILD_DIR/cli/docqa).
# Usage: tests/bench/search/sym_run.sh [BUILD_DIR [--set KEY=VALUE]...]
# (default build/; --set passes a docqa config key to every search, e.g.
# --set search.lexical_weight=0.5; about
# 9 minutes on 2 cores the first time, most of it embedding Lua and the
# Python packages once; 3 minutes after)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:-$ROOT/build}
shift $(($# ? 1 : 0))
EXTRA=("$@") # --set KEY=VALUE ... for sym_eval.py
DOCQA=${DOCQA:-$BUILD/cli/docqa}
command -v gtags >/dev/null || { echo "sym_run.sh: gtags missing (apt-get install global)" >&2; exit 1; }
[ -x "$DOCQA" ] || cmake --build "$BUILD" --target docqa -j2 >/dev/null

. "$ROOT/tests/bench/apt_source.sh"

# ingest work-folder [options]: work/tree into work/index, what it wrote.
# Incremental: a rerun re-reads and re-embeds nothing (same files, times).
ingest() {
  local work=$1
  shift
  "$DOCQA" ingest "$work/tree" --index "$work/index" --json -q "$@" > "$work/ingest.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('docqa ingest:', {k: d.get(k) for k in ('added', 'unchanged', 'chunks', 'symbols', 'refs', 'embedded') if k in d})" "$work/ingest.json"
}

run_tree() { # package work-folder [ingest options]
  local src work=$2
  src=$(bench_source "$1")
  shift 2
  rm -rf "$work/tree" "$work/gtags"
  mkdir -p "$work/tree" "$work/gtags"
  (cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) -printf '%P\n' |
     grep -v '\(^\|/\)\.' | LC_ALL=C sort) > "$work/files.txt"
  (cd "$src" && while IFS= read -r f; do
     mkdir -p "$work/tree/$(dirname "$f")"
     cp -p "$f" "$work/tree/$f"
   done < "$work/files.txt")
  echo "== $src, $(wc -l < "$work/files.txt") C files"
  ingest "$work" "$@"
  (cd "$work/tree" && gtags -q -f "$work/files.txt" "$work/gtags")
  (cd "$work/tree" && GTAGSROOT="$work/tree" GTAGSDBPATH="$work/gtags" global -x -e '.*') > "$work/global_defs.txt"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
  GTAGSROOT="$work/tree" GTAGSDBPATH="$work/gtags" \
    python3 "$ROOT/tests/bench/search/sym_eval.py" "$DOCQA" "$work" ${EXTRA[@]+"${EXTRA[@]}"}
}

# Python: the email and asyncio packages of Debian's Python 3.11 (or of the
# python3 on PATH), embedded; Python's own ast module as the reference.
run_py() { # work-folder
  local work=$1 lib=/usr/lib/python3.11
  [ -d "$lib/email" ] || lib=$(python3 -c 'import os, email; print(os.path.dirname(os.path.dirname(email.__file__)))')
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -rp "$lib/email" "$lib/asyncio" "$work/tree/"
  find "$work/tree" -name __pycache__ -prune -exec rm -rf {} +
  echo "== $lib: email and asyncio, $(find "$work/tree" -name '*.py' | wc -l) Python files"
  ingest "$work"
  python3 "$ROOT/tests/bench/search/sym_eval.py" "$DOCQA" "$work" --python ${EXTRA[@]+"${EXTRA[@]}"}
}

run_tree lua5.4 "$ROOT/.deps/bench-search"
run_tree sqlite3 "$ROOT/.deps/bench-search/sqlite" --no-embed
run_py "$ROOT/.deps/bench-search/python"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
