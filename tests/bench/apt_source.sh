# tests/bench/apt_source.sh - sourced by the benchmark scripts
# (tests/bench/ingest/run.sh, tests/bench/xref/run.sh and owner_run.sh):
# Debian source packages fetched with `apt-get source` through a private
# apt configuration under .deps/bench-sym/apt (the system's apt setup is
# untouched), unpacked into .deps/bench-sym and never committed.
#
#   bench_source PKG   prints the unpacked tree of source package PKG,
#                      fetching it first when it is missing
BENCH_SRC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_SRC=${BENCH_SRC:-$BENCH_SRC_ROOT/.deps/bench-sym}

bench_source() {
  local w=$BENCH_SRC d
  d=$(ls -d "$w/$1"-*/ 2>/dev/null | head -1 || true)
  if [ -z "$d" ]; then
    mkdir -p "$w/apt/lists/partial" "$w/apt/cache/archives/partial" \
      "$w/apt/sources.list.d"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
        > "$w/apt/sources.list.d/docqa-src.sources"
    else
      grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
        > "$w/apt/sources.list.d/docqa-src.list"
    fi
    local opts=(-o "Dir::Etc::SourceList=/dev/null"
                -o "Dir::Etc::SourceParts=$w/apt/sources.list.d"
                -o "Dir::State::Lists=$w/apt/lists"
                -o "Dir::Cache=$w/apt/cache" -o "Debug::NoLocking=1")
    apt-get "${opts[@]}" -qq update >/dev/null
    (cd "$w" && apt-get "${opts[@]}" -qq source --only-source "$1" >/dev/null 2>&1)
    d=$(ls -d "$w/$1"-*/ | head -1)
  fi
  echo "${d%/}"
}
