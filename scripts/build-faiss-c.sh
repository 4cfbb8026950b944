#!/usr/bin/env bash
# Builds FAISS's C API (libfaiss_c.a) against the system libfaiss.
#
# Debian 12's libfaiss-dev ships the C API headers (faiss/c_api/*.h) but not
# the library. We fetch Debian's own source package of the *installed* FAISS
# version (apt-get source, through a private apt configuration with a deb-src
# entry, so the system's apt setup is untouched), compile c_api/ against the
# installed headers and install the archive into a project-local prefix that
# CMake's FindFAISS looks in. Idempotent: a stamp records the version built.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${DOCQA_DEPS_PREFIX:-$ROOT/.deps/prefix}
WORK=$ROOT/.deps/faiss-src

binver=$(dpkg-query -W -f='${Version}' libfaiss-dev 2>/dev/null) || {
  echo "build-faiss-c: libfaiss-dev is not installed (run scripts/setup-deps.sh)" >&2; exit 1; }
srcver=${binver%+b[0-9]*}          # strip a binNMU suffix: 1.7.3-2+b1 -> 1.7.3-2
upver=${srcver%-*}                 # upstream version: 1.7.3
stamp=$PREFIX/lib/faiss_c.version
if [ -f "$PREFIX/lib/libfaiss_c.a" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$binver" ]; then
  exit 0
fi

echo "build-faiss-c: building the FAISS C API for libfaiss-dev $binver" >&2
mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial" "$WORK/apt/sources.list.d"
# deb-src entries mirroring the system's own Debian sources.
srcfile=$WORK/apt/sources.list.d/docqa-src.sources
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$srcfile"
else
  grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' > "$WORK/apt/sources.list.d/docqa-src.list"
  rm -f "$srcfile"
fi
APT_OPTS=(-o "Dir::Etc::SourceList=/dev/null"
          -o "Dir::Etc::SourceParts=$WORK/apt/sources.list.d"
          -o "Dir::State::Lists=$WORK/apt/lists"
          -o "Dir::Cache=$WORK/apt/cache"
          -o "Debug::NoLocking=1" -o "APT::Get::AllowUnauthenticated=false")
apt-get "${APT_OPTS[@]}" -qq update >/dev/null
srcdir=$WORK/faiss-$upver
if [ ! -d "$srcdir/c_api" ]; then
  (cd "$WORK" && apt-get "${APT_OPTS[@]}" -qq source --only-source "faiss=$srcver" >/dev/null 2>&1) || {
    echo "build-faiss-c: apt-get source faiss=$srcver failed" >&2; exit 1; }
fi
[ -d "$srcdir/c_api" ] || { echo "build-faiss-c: $srcdir/c_api missing after apt-get source" >&2; exit 1; }

# The source's version must be the installed library's version.
hdr_major=$(awk '/#define FAISS_VERSION_MAJOR/{print $3}' /usr/include/faiss/Index.h)
hdr_minor=$(awk '/#define FAISS_VERSION_MINOR/{print $3}' /usr/include/faiss/Index.h)
hdr_patch=$(awk '/#define FAISS_VERSION_PATCH/{print $3}' /usr/include/faiss/Index.h)
if [ "$hdr_major.$hdr_minor.$hdr_patch" != "$upver" ]; then
  echo "build-faiss-c: installed FAISS headers are $hdr_major.$hdr_minor.$hdr_patch but the source is $upver" >&2
  exit 1
fi

obj=$WORK/obj
rm -rf "$obj"; mkdir -p "$obj"
jobs=$(nproc)
# Compile against the installed headers: <faiss/...> resolves to
# /usr/include/faiss; the source tree only supplies c_api/*.cpp (CPU parts:
# c_api/gpu needs FAISS's GPU build, which Debian does not ship).
find "$srcdir/c_api" -name '*.cpp' -not -path '*/c_api/gpu/*' | sort | xargs -P "$jobs" -I{} sh -c \
  'f="$1"; o="$2/$(echo "$f" | sed "s|.*/c_api/||; s|/|_|g; s|\.cpp$|.o|")"; \
   g++ -std=c++17 -O2 -fPIC -fopenmp -c "$f" -o "$o"' _ {} "$obj"
mkdir -p "$PREFIX/lib"
rm -f "$PREFIX/lib/libfaiss_c.a"
ar rcs "$PREFIX/lib/libfaiss_c.a" "$obj"/*.o
echo "$binver" > "$stamp"
echo "build-faiss-c: installed $PREFIX/lib/libfaiss_c.a" >&2
