#!/usr/bin/env bash
# Sets up, builds and runs every test: the release build, then a build with AddressSanitizer and
# UndefinedBehaviorSanitizer. The GPU tier (scripts/gpu-check.sh) is separate: it needs a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

echo "== release build"
scripts/build.sh build
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== sanitizer build (ASan + UBSan)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DCUMEMCTL_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
