#!/usr/bin/env bash
# The main job on the samples, from a fresh clone: installs dependencies,
# fetches the default models, builds docqa, ingests samples/ into a fresh
# index and asks one of the sample questions, printing the cited answer.
# Usage: scripts/demo.sh ["question"]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
Q=${1:-"Within how many hours must the Processor notify the Controller of a Personal Data Breach?"}
scripts/setup-deps.sh
scripts/build-faiss-c.sh
scripts/fetch-models.sh
scripts/build.sh "$ROOT/build"
IDX="$ROOT/build/samples-index"
rm -rf "$IDX"
echo "== docqa ingest samples/" >&2
"$ROOT/build/cli/docqa" ingest samples --index "$IDX"
echo "== docqa ask \"$Q\"" >&2
"$ROOT/build/cli/docqa" ask "$Q" --index "$IDX"
