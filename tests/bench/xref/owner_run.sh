#!/usr/bin/env bash
# Qualified xref (`docqa xref Record.member`) against clang on three C trees
# from Debian's source packages: libyaml 0.2.5, Lua 5.4.4 and SQLite 3.40.1
# (its generated headers made by its own configure + make, which needs
# tclsh); then against jedi on three packages of Python's standard library
# (email, asyncio, logging), against go/types on three Go packages (needs
# golang-go, which it installs as root), against javac on two Java
# libraries (needs a JDK) and against tsc on TypeScript's own server
# (installs node-typescript as root). For each, tests/bench/xref/owner_cmp.py
# (owner_py.py for Python) has the reference name the record of every member
# access, then asks docqa for each member declared in two or more records;
# it prints how many of the reference's sites docqa tells (known right),
# keeps marked as not known, or leaves out, and how many it attributes to
# the wrong record. Sources are fetched with apt-get source
# through the private apt configuration of tests/bench/apt_source.sh into
# .deps/bench-sym (never committed); SQLite is configured in a copy under
# .deps/bench-xref/sqlite-gen so the ingest benchmark's tree stays as it is.
# Needs: clang, tclsh, python3, a built docqa ($DOCQA, else
# BUILD_DIR/cli/docqa). Takes about 6 minutes on 2 cores (SQLite's 79 files
# through clang's JSON AST dominate).
# Usage: tests/bench/xref/owner_run.sh [BUILD_DIR]   (default build/)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:-$ROOT/build}
DOCQA=${DOCQA:-$BUILD/cli/docqa}
GEN=$ROOT/.deps/bench-xref
CMP=$ROOT/tests/bench/xref/owner_cmp.py
for t in clang tclsh python3; do
  command -v $t >/dev/null || { echo "owner_run.sh: $t missing (apt-get install clang tcl)" >&2; exit 1; }
done
[ -x "$DOCQA" ] || { echo "owner_run.sh: no docqa at $DOCQA (build first)" >&2; exit 1; }

mkdir -p "$GEN"
. "$ROOT/tests/bench/apt_source.sh"
apt_install() { # package: installed when missing-and-root (apt-get); never fatal
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 0
  echo "== installing $1 (apt-get) for its comparison"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null ||
    echo "owner_run.sh: apt-get install $1 failed; its comparison is skipped" >&2
}
files() { # tree, grep -v pattern -> comma-separated .c files under src/
  (cd "$1" && ls src/*.c | grep -v -e "$2" | paste -sd, -)
}

yaml=$(bench_source libyaml)
echo "== libyaml ($yaml)"
python3 "$CMP" --src "$yaml" --docqa "$DOCQA" --show 0 \
  --files "$(files "$yaml" 'api\.c')" --cflags "-Iinclude -Isrc"

lua=$(bench_source lua5.4)
echo "== Lua ($lua)"
inc=$GEN/lua-inc
mkdir -p "$inc" # Debian's patch includes a header its build writes
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > "$inc/lua5.4-deb-multiarch.h"
python3 "$CMP" --src "$lua" --docqa "$DOCQA" --show 0 \
  --files "$(files "$lua" 'luac\.c\|onelua')" --cflags "-Isrc -I$inc -DLUA_USE_LINUX"

sq=$(bench_source sqlite3)
gen=$GEN/sqlite-gen
if [ ! -f "$gen/parse.h" ]; then
  rm -rf "$gen"
  cp -r "$sq" "$gen"
  (cd "$gen" && ./configure --disable-tcl >/dev/null &&
     make sqlite3.h parse.h opcodes.h keywordhash.h >/dev/null)
fi
echo "== SQLite ($gen: $sq with its generated headers)"
python3 "$CMP" --src "$gen" --docqa "$DOCQA" --show 0 \
  --files "$(files "$gen" 'src/test\|tclsqlite\|os_win\|shell')" \
  --cflags "-I. -Isrc -D_HAVE_SQLITE_CONFIG_H"

# Python: against jedi (tests/bench/xref/owner_py.py) on three packages of
# Debian's Python 3.11 standard library; jedi runs in its own virtualenv
# (pinned, .deps/jedi-venv).
py=/usr/lib/python3.11
venv=$ROOT/.deps/jedi-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q jedi==0.20.1 parso==0.8.7
fi
for pkg in email asyncio logging; do
  echo "== Python $py/$pkg"
  python3 "$ROOT/tests/bench/xref/owner_py.py" --src "$py/$pkg" \
    --docqa "$DOCQA" --jedi-python "$venv/bin/python"
done

# Go: against go/types (owner_go.go, run by owner_cmp.py --go) on three
# packages of Go's standard library source (golang-go's GOROOT), installed
# here when missing and apt-get can (root).
command -v go >/dev/null || apt_install golang-go
if command -v go >/dev/null; then
  goroot=$(go env GOROOT)
  for pkg in archive/tar go/ast net/http; do
    echo "== Go $goroot/src/$pkg"
    python3 "$CMP" --go --src "$goroot/src/$pkg" --docqa "$DOCQA" --show 0
  done
else
  echo "== Go: skipped (no go; apt-get install golang-go)"
fi

# Java: against javac's compiler API (OwnerJava.java, run by owner_cmp.py
# --java; Java 11 or later) on jsoup 1.15.3 and jackson-core 2.14.1.
if command -v java >/dev/null; then
  for pkg in jsoup jackson-core; do
    j=$(bench_source $pkg)/src/main/java
    echo "== Java $j"
    python3 "$CMP" --java --src "$j" --docqa "$DOCQA" --show 0
  done
else
  echo "== Java: skipped (no java; apt-get install default-jdk-headless)"
fi

# TypeScript: against the TypeScript compiler's checker (owner_ts.js, run by
# owner_cmp.py --ts; Debian's node-typescript 4.8, installed here when
# missing and apt-get can) on TypeScript 4.8's own src/server, whose files
# extend the namespaces of src/compiler, services and jsTyping.
[ -f /usr/share/nodejs/typescript/package.json ] || apt_install node-typescript
if command -v node >/dev/null && [ -f /usr/share/nodejs/typescript/package.json ]; then
  t=$(bench_source node-typescript)/src
  echo "== TypeScript $t/server"
  python3 "$CMP" --ts --src "$t/server" --docqa "$DOCQA" --show 0 \
    --ts-roots "$t/compiler,$t/services,$t/jsTyping,$t/server"
else
  echo "== TypeScript: skipped (no node or node-typescript)"
fi
