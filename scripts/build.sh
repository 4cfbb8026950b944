#!/usr/bin/env bash
# Configures and builds docqa into build/ (or $1), after making sure the
# system dependencies and the FAISS C API are installed. Extra arguments go
# to cmake's configure step. Quiet when there is nothing to do.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
shift || true
"$ROOT/scripts/setup-deps.sh"
"$ROOT/scripts/build-faiss-c.sh"
cmake -S "$ROOT" -B "$BUILD" -DDOCQA_WERROR=ON "$@" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" -- --no-print-directory -s
