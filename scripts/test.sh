#!/usr/bin/env bash
# Sets up, builds and runs every test, in two phases, so that nothing that judges time runs beside a
# compiler:
#   builds  the release build (gcc), the sanitizer build (ASan + UBSan, clang), the libFuzzer targets,
#           the include check (every file of src/ and cmd/ compiles alone: scripts/check-includes.py),
#           and the release stage's binaries, fakes, packages and container images for amd64 and arm64
#           against Debian 11 roots (tests/release/run.sh build; root). Each build has every core; only the roots'
#           debootstrap, which waits on the network, runs beside them, from the start.
#   tests   one stage after another, each with every core: the release build's tests, the sanitizer
#           build's tests, a bounded libFuzzer run over the /proc parsers (FUZZ_SECONDS, default 20 per
#           target), the fleet stage (tests/slurm/run.sh: docs/fleet.md's Slurm, pdsh and Prometheus
#           commands on a one-machine Slurm cluster; root), and the release stage's tests (the packaged
#           binaries in their Debian 11 roots, the aarch64 ones under qemu-user, the packages, and the
#           amd64 image under runc).
# The GPU tier (scripts/gpu-check.sh) is separate: it needs a GPU. Each stage's time and the whole are
# printed at the end. Outside CI, the stages that need root say they are skipped where this is not root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# No folder of src/ or cmd/ includes one that includes it back (text only, about 0.1 s).
python3 scripts/include-cycles.py
jobs=$(nproc)
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
is_root() { [[ $(id -u) -eq 0 || -n ${CUMEMCTL_CI:-} ]]; }

stages=()
failed=()
total_start=$SECONDS
# stage NAME COMMAND...: runs one stage, says how long it took, and remembers a failure (the tests go on).
stage() {
  local start=$SECONDS status=0
  echo "== $1"
  "${@:2}" || status=$?
  stages+=("$(printf '%-34s %5d s%s' "$1" $((SECONDS - start)) "$( ((status == 0)) || echo "  (exit $status)")")")
  ((status == 0)) || failed+=("$1")
  return 0
}
# A build that fails ends the run: nothing after it can be tested.
build_stage() {
  stage "$@"
  [[ ${failed[*]:-} != *"$1"* ]] || { echo "build failed: $1" >&2; exit 1; }
}

# The Debian 11 roots, from the start: debootstrap waits on the network, not the CPU. The release
# stage's build waits for them (two debootstraps into one root would clash).
mkdir -p build-release
roots_pid=
if is_root; then
  (for a in amd64 arm64; do scripts/debian11-root.sh "$a" "build-release/root-$a" & done; wait) \
    >build-release/roots.log 2>&1 &
  roots_pid=$!
fi

build_stage "release build" scripts/build.sh build
build_stage "sanitizer build" bash -c '
  # Only what its tests run (the benchmark programs and the GPU probe are release-only), with line
  # tables (-g1): the reports keep file and line. With clang, so that a second compiler (-Werror) sees
  # every file.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCUMEMCTL_SANITIZE=ON \
    -DCMAKE_CXX_COMPILER=clang++ >/dev/null
  cmake --build build-asan --target cumemctl unit_tests fakecuda not_a_driver fakenvml fakenvml_minimal completions'
build_stage "fuzz build" bash -c '
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCUMEMCTL_FUZZ=ON -DCUMEMCTL_TESTS=OFF >/dev/null
  cmake --build build-fuzz --target fuzz'
build_stage "include check (each file alone)" bash -c '
  cmake -S . -B build-nounity -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCUMEMCTL_UNITY=OFF \
    -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DCUMEMCTL_TESTS=OFF >/dev/null
  python3 scripts/check-includes.py build-nounity'
if is_root; then
  roots_start=$SECONDS
  wait "$roots_pid" || { cat build-release/roots.log; echo "the Debian 11 roots could not be made" >&2; exit 1; }
  echo "(the Debian 11 roots were ready $((SECONDS - roots_start)) s after the builds above)"
  build_stage "release binaries, packages, images" \
    bash -c 'set -o pipefail; tests/release/run.sh build | tee build-release/build.log'
else
  echo "release stage: skipped (not root)"
fi

# libFuzzer over the /proc parsers (tests/fuzz): a bounded run of each target, side by side, from the seeds
# in tests/fuzz/corpus; a crash leaves its input in build-fuzz/ and fails the run.
fuzz() {
  local seconds=${FUZZ_SECONDS:-20} target status=0
  local -A pids=()
  for target in proc_devices nvidia_params; do
    mkdir -p "build-fuzz/corpus/$target"
    build-fuzz/tests/fuzz/fuzz_$target -max_total_time="$seconds" -timeout=5 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" \
      2>"build-fuzz/fuzz_$target.log" &
    pids[$target]=$!
  done
  for target in "${!pids[@]}"; do
    if wait "${pids[$target]}"; then
      grep -E '^stat::number_of_executed_units' "build-fuzz/fuzz_$target.log" | sed "s/^/fuzz_$target: /"
    else
      tail -30 "build-fuzz/fuzz_$target.log"
      echo "fuzz_$target found a failure" >&2
      status=1
    fi
  done
  return "$status"
}

stage "release tests" ctest --test-dir build --output-on-failure -j "$jobs"
# compat13030 (a compile test), man, install, k8s-manifests and html-pages (headless chromium) ran in the
# release tests, and so did the completion cases, which test the shell scripts: the sanitizers add nothing
# there.
stage "sanitizer tests" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" \
  -E '^(compat13030|man|install|k8s-manifests|html-pages|cli:completion)$'
stage "fuzz (${FUZZ_SECONDS:-20} s a target)" fuzz
# Slurm, pdsh, node_exporter and promtool for real, against the release build. It skips (saying so) only
# where the packages are missing outside CI.
stage "fleet" tests/slurm/run.sh build
if is_root; then
  stage "release stage tests" \
    bash -c 'set -o pipefail; tests/release/run.sh amd64 arm64 packages image | tee build-release/tests.log'
fi

echo "== stage times"
printf '%s\n' "${stages[@]}"
# The release stage's steps, each alone (tests/release/run.sh says "release stage: STEP: N s (exit S)").
cat build-release/build.log build-release/tests.log 2>/dev/null |
  sed -n 's/^release stage: \(.*\): \([0-9]*\) s (exit \([0-9]*\))$/  \1|\2|\3/p' |
  while IFS='|' read -r name seconds status; do
    printf '%-34s %5d s%s\n' "$name" "$seconds" "$( ((status == 0)) || echo "  (exit $status)")"
  done
printf '%-34s %5d s\n' "whole run" $((SECONDS - total_start))
if ((${#failed[@]})); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
