#!/usr/bin/env bash
# Sets up, builds and runs every test: the folder-level include-cycle check, the release build and its
# tests, a unity-off compile of every file of src/ and cmd/, then a build with AddressSanitizer and
# UndefinedBehaviorSanitizer, then a bounded libFuzzer run over the /proc parsers (FUZZ_SECONDS, default 20
# per target), which runs beside the sanitizer build's tests, and so does the fleet stage
# (tests/slurm/run.sh: docs/fleet.md's Slurm, pdsh and Prometheus commands on a one-machine Slurm
# cluster, against the release build; root). The GPU tier (scripts/gpu-check.sh) is separate: it needs
# a GPU. The release stage (tests/release/run.sh: the release binaries for amd64 and arm64 against
# Debian 11 roots, their packages and container images, and their tests in those roots, the aarch64 ones
# under qemu-user, and the amd64 image's under runc; root) runs in the background from the start,
# beside everything else. Each stage's time is printed at
# the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# No folder of src/ or cmd/ includes one that includes it back (text only, about 0.1 s).
python3 scripts/include-cycles.py
jobs=$(nproc)
# One test per core: the tests are CPU-bound (measured: 1.9 of 2 cores busy over a whole run).
test_jobs=$jobs
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"

stages=()
stage_start=$SECONDS
# Ends the running stage: remembers its name and time.
end_stage() {
  stages+=("$(printf '%-28s %4d s' "$1" $((SECONDS - stage_start)))")
  stage_start=$SECONDS
}

# The release stage, from the start: its first minute is debootstrap fetching the Debian 11 roots (the
# network, not the CPU), and under qemu its cases wait more than they compute. Outside CI it is skipped,
# saying so, where this is not root (it needs debootstrap, chroot, binfmt_misc and dpkg -i).
mkdir -p build-release
release_stage() {
  local start=$SECONDS status=0
  if [[ $(id -u) -ne 0 && -z ${CUMEMCTL_CI:-} ]]; then
    echo "release stage: skipped (not root)"
    return 0
  fi
  tests/release/run.sh || status=$?
  echo "release stage: $((SECONDS - start)) s"
  return "$status"
}
release_stage >build-release/stage.log 2>&1 &
release_pid=$!

echo "== release build"
scripts/build.sh build
end_stage "release build"
ctest --test-dir build --output-on-failure -j "$test_jobs"
end_stage "release tests"

echo "== unity-off compile (the core's and the binary's objects, each file alone)"
# The builds above compile in unity batches with precompiled headers, where a file that does not include
# what it uses still compiles. Here every file of src/ and cmd/ is compiled on its own, without them, at -O0
# (the objects only: nothing is linked or run; the warnings that need the optimiser are the release
# build's). Measured: 147 objects, 414 s of CPU (about 3.5 min on two free cores; 12 min on the shared
# development machine).
cmake -S . -B build-nounity -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCUMEMCTL_UNITY=OFF \
  -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DCUMEMCTL_TESTS=OFF >/dev/null
# shellcheck disable=SC2046 # one argument per object
cmake --build build-nounity --target $(ninja -C build-nounity -t targets all |
  sed -n 's/^\(\(src\|cmd\)\/CMakeFiles\/[^:]*\.cpp\.o\): .*/\1/p')
end_stage "unity-off compile"

echo "== sanitizer build (ASan + UBSan, clang)"
# Only what its tests run (the benchmark programs and the GPU probe are release-only), with line tables
# (-g1) rather than full debug information: the sanitizers' reports keep file and line, the build is
# shorter. With clang, so that a second compiler's warnings (-Werror) see every file, and because it is
# the faster one here (measured on this 2-core machine: this build 204 s with gcc, 93 s with clang; its
# tests 269 s and 139 s, each cumemctl under clang's sanitizers starting in 0.10 s rather than 0.14 s).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCUMEMCTL_SANITIZE=ON \
  -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-asan --target cumemctl unit_tests fakecuda not_a_driver fakenvml fakenvml_minimal completions
end_stage "sanitizer build"

# libFuzzer over the /proc parsers (tests/fuzz): a bounded run of each target, from the seeds in
# tests/fuzz/corpus; a crash leaves its input in build-fuzz/ and fails the run. It runs in the background,
# beside the sanitizer tests, and its log is shown when it is done.
fuzz_seconds=${FUZZ_SECONDS:-20}
fuzz() {
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCUMEMCTL_FUZZ=ON -DCUMEMCTL_TESTS=OFF >/dev/null
  cmake --build build-fuzz --target fuzz
  for target in proc_devices nvidia_params; do
    mkdir -p "build-fuzz/corpus/$target"
    build-fuzz/tests/fuzz/fuzz_$target -max_total_time="$fuzz_seconds" -timeout=5 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" 2>"build-fuzz/fuzz_$target.log" ||
      { tail -30 "build-fuzz/fuzz_$target.log"; echo "fuzz_$target found a failure" >&2; return 1; }
    grep -E '^stat::number_of_executed_units' "build-fuzz/fuzz_$target.log" | sed "s/^/fuzz_$target: /"
  done
}
mkdir -p build-fuzz
fuzz >build-fuzz/stage.log 2>&1 &
fuzz_pid=$!

# The fleet stage: Slurm, pdsh, node_exporter and promtool for real, against the release build. It
# skips (saying so) only where the packages are missing outside CI.
fleet() {
  local start=$SECONDS status=0
  tests/slurm/run.sh build || status=$?
  echo "fleet stage: $((SECONDS - start)) s"
  return "$status"
}
fleet >build/fleet-stage.log 2>&1 &
fleet_pid=$!

echo "== sanitizer tests, fuzz (libFuzzer, ${fuzz_seconds} s per target) and the fleet stage beside them"
sanitizer_status=0
# compat13030 (a compile test), man, install, k8s-manifests and html-pages (headless chromium) ran in the
# release stage, and so did the
# completion cases, which test the shell scripts (about 100 s under the sanitizers): the sanitizers add
# nothing there.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$test_jobs" -E '^(compat13030|man|install|k8s-manifests|html-pages|cli:completion)$' || sanitizer_status=$?
end_stage "sanitizer tests"
fuzz_status=0
wait "$fuzz_pid" || fuzz_status=$?
end_stage "fuzz (after the tests)"
echo "== fuzz log"
cat build-fuzz/stage.log
fleet_status=0
wait "$fleet_pid" || fleet_status=$?
end_stage "fleet (after the fuzz)"
echo "== fleet log"
cat build/fleet-stage.log
fleet_seconds=$(sed -n 's/^fleet stage: \([0-9]*\) s$/\1/p' build/fleet-stage.log)
stages+=("$(printf '%-28s %4d s' "fleet, on its own" "${fleet_seconds:-0}")")

release_status=0
wait "$release_pid" || release_status=$?
end_stage "release (after the fleet)"
echo "== release stage log"
cat build-release/stage.log
while IFS= read -r line; do
  stages+=("$(printf '%-28s %4d s' "${line%%: [0-9]* s (exit*}" "$(sed 's/.*: \([0-9]*\) s (exit.*/\1/' <<<"$line")")")
done < <(sed -n 's/^release stage: \(.*: [0-9]* s (exit [0-9]*)\)$/\1/p' build-release/stage.log)
release_seconds=$(sed -n 's/^release stage: \([0-9]*\) s$/\1/p' build-release/stage.log)
stages+=("$(printf '%-28s %4d s' "release, on its own" "${release_seconds:-0}")")

echo "== stage times"
printf '%s\n' "${stages[@]}"
if ((sanitizer_status != 0 || fuzz_status != 0 || fleet_status != 0 || release_status != 0)); then
  echo "failed: sanitizer tests exit $sanitizer_status, fuzz exit $fuzz_status, fleet exit $fleet_status, release exit $release_status" >&2
  exit 1
fi
