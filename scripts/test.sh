#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs dependencies, builds the
# FAISS C API, fetches the default models (tests that need them skip only if
# they are absent), builds docqa with warnings as errors and runs ctest; then
# builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs
# ctest again. This is what CI runs (.ci/run).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
t0=$(date +%s)
scripts/setup-deps.sh
scripts/build-faiss-c.sh
scripts/fetch-models.sh
echo "== build (release, -Werror, CUDA when nvcc is present)"
scripts/build.sh "$ROOT/build"
echo "== tests"
ctest --test-dir "$ROOT/build" --output-on-failure -j2
echo "== build (ASan + UBSan)"
# Optimised (-O2 -g): the model tests run real inference, far too slow at -O0.
scripts/build.sh "$ROOT/build-asan" -DDOCQA_SANITIZE=address,undefined -DDOCQA_CUDA=OFF
echo "== tests under sanitizers"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$ROOT/build-asan" --output-on-failure -j2
echo "== all tests passed in $(( $(date +%s) - t0 )) s"
