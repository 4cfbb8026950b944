#!/usr/bin/env bash
# scripts/fetch-device-deps.sh - puts the Debian packages of PCRE2 and
# jansson (headers + static libraries) in .devdeps/ (git-ignored), so that
# tests/cuda/device-check.sh can build the engine on a GPU machine that has
# no network and lacks them. Run where apt works; carry .devdeps with the
# tree. The packages are unpacked there into /tmp, never into /.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devdeps
cd .devdeps
apt-get download libpcre2-dev libpcre2-8-0 libjansson-dev libjansson4
ls -l
