#!/usr/bin/env bash
# Sets up, builds and runs every test: the release build, then a build with AddressSanitizer and
# UndefinedBehaviorSanitizer, then a bounded libFuzzer run over the /proc parsers (FUZZ_SECONDS, default 20
# per target). The GPU tier (scripts/gpu-check.sh) is separate: it needs a GPU.
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

# libFuzzer over the /proc parsers (tests/fuzz): a bounded run of each target, from the seeds in
# tests/fuzz/corpus; a crash leaves its input in build-fuzz/ and fails the run.
fuzz_seconds=${FUZZ_SECONDS:-20}
echo "== fuzz (libFuzzer, ${fuzz_seconds} s per target)"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCUMEMCTL_FUZZ=ON -DCUMEMCTL_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz
for target in proc_devices nvidia_params; do
  mkdir -p "build-fuzz/corpus/$target"
  build-fuzz/tests/fuzz/fuzz_$target -max_total_time="$fuzz_seconds" -timeout=5 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" 2>"build-fuzz/fuzz_$target.log" ||
    { tail -30 "build-fuzz/fuzz_$target.log"; echo "fuzz_$target found a failure" >&2; exit 1; }
  grep -E '^stat::number_of_executed_units' "build-fuzz/fuzz_$target.log" | sed "s/^/fuzz_$target: /"
done
