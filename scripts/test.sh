#!/usr/bin/env bash
# Sets up, builds and runs every test, in three phases, so that nothing that judges time runs beside a
# compiler:
#   builds  the sanitizer build (ASan + UBSan, clang), the libFuzzer targets, and the release build: as
#           root the release stage's binaries, fakes, tests, packages and container images for amd64
#           and arm64 against Debian 11 roots (tests/release/run.sh build), elsewhere a native build in
#           build/. Each build has every core; only the roots' debootstrap, which waits on the
#           network, runs beside them, from the start.
#   tests   side by side: the sanitizer build's tests, the release build's tests, the fleet stage
#           (tests/slurm/run.sh: docs/fleet.md's Slurm, pdsh and Prometheus commands on a one-machine
#           Slurm cluster; root) and, as root, the release stage's tests (the packaged binaries in
#           their Debian 11 roots, the aarch64 ones under qemu-user, the packages, and the amd64 image
#           under runc).
#   fuzz    after the tests, alone: a bounded libFuzzer run over the /proc parsers and fleet's report
#           reader (FUZZ_SECONDS, default 20 a target).
# The GPU tier (scripts/gpu-check.sh) is separate: it needs a GPU, and so is the check that every file
# compiles alone (scripts/check-includes.py, scripts/lint.sh), at 11 CPU-minutes more than CI's budget.
# Each stage's time and CPU seconds and the whole are printed at the end. Outside CI, the stages that
# need root say they are skipped where this is not root.
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
# The CPU seconds (user and system) of this shell's finished children so far, into cpu_now: `times` runs
# in this shell itself (in a command substitution it would count the subshell's children).
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
cpu_now=0
read_cpu() {
  times >"$times_file"
  cpu_now=$(awk 'function sec(t) { split(t, p, "m"); return p[1] * 60 + p[2] }
    NR == 2 { printf "%d", sec($1) + sec($2) }' "$times_file")
}
# stage NAME COMMAND...: runs one stage, says how long it took and how many CPU seconds it used, and
# remembers a failure (the tests go on).
stage() {
  local start=$SECONDS cpu0 status=0
  read_cpu
  cpu0=$cpu_now
  echo "== $1"
  "${@:2}" || status=$?
  read_cpu
  stages+=("$(printf '%-36s %5d s %6d CPU-s%s' "$1" $((SECONDS - start)) $((cpu_now - cpu0)) \
    "$( ((status == 0)) || echo "  (exit $status)")")")
  ((status == 0)) || failed+=("$1")
  return 0
}
# side_by_side NAME COMMAND... [-- NAME COMMAND...]...: runs stages at once, each with its output in a
# file, printed in order when all have ended.
side_by_side() {
  local -a names=() pids=() logs=() args=()
  local i
  mkdir -p build-logs
  while (($#)); do
    args=()
    while (($#)) && [[ $1 != -- ]]; do args+=("$1"); shift; done
    (($#)) && shift
    local log=build-logs/${#names[@]}.log
    ( stages=() failed=() times_file=$log.times; stage "${args[@]}"; printf '%s\n' "${stages[@]}" >"$log.stage"
      ((${#failed[@]} == 0)) ) >"$log" 2>&1 &
    names+=("${args[0]}") pids+=($!) logs+=("$log")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[i]}" || failed+=("${names[i]}")
    cat "${logs[i]}"
    stages+=("$(cat "${logs[i]}.stage")")
  done
}
# A build that fails ends the run: nothing after it can be tested.
build_stage() {
  stage "$@"
  [[ ${failed[*]:-} != *"$1"* ]] || { echo "build failed: $1" >&2; exit 1; }
}

# The Debian 11 roots, from the start: debootstrap waits on the network, not the CPU. The release
# stage's build, the last build, waits for them (two debootstraps into one root would clash).
mkdir -p build-release
roots_pid=
if is_root; then
  (for a in amd64 arm64; do scripts/debian11-root.sh "$a" "build-release/root-$a" & done; wait) \
    >build-release/roots.log 2>&1 &
  roots_pid=$!
fi

build_stage "sanitizer build" bash -c '
  # Only what its tests run (the benchmark programs and the GPU probe are release-only), at -O1 (what
  # the ASan manual asks for: its tests cost 30 % less CPU than at -O0) with line tables (-g1): the
  # reports keep file and line. With clang, as the release builds; compiled once, so in batches of 75
  # files (CMakeLists.txt says why).
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DCUMEMCTL_SANITIZE=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCUMEMCTL_UNITY_BATCH=75 >/dev/null
  cmake --build build-asan --target cumemctl unit_tests fakecuda not_a_driver fakenvml fakenvml_minimal completions'
build_stage "fuzz build" bash -c '
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCUMEMCTL_FUZZ=ON -DCUMEMCTL_TESTS=OFF >/dev/null
  cmake --build build-fuzz --target fuzz'
# The release build: as root, the release stage's own amd64 build against the Debian 11 root (what
# ships, with every target: its tests below are the release tests) beside the arm64 one, the packages
# and the images; elsewhere a build of this machine's compiler in build/.
if is_root; then
  release_dir=build-release/amd64
  roots_start=$SECONDS
  wait "$roots_pid" || { cat build-release/roots.log; echo "the Debian 11 roots could not be made" >&2; exit 1; }
  echo "(the Debian 11 roots were ready $((SECONDS - roots_start)) s after the builds above)"
  build_stage "release binaries, packages, images" \
    bash -c 'set -o pipefail; tests/release/run.sh build | tee build-release/build.log'
else
  release_dir=build
  build_stage "release build" scripts/build.sh build
  echo "release stage: skipped (not root)"
fi


# libFuzzer over the /proc parsers and fleet's report reader (tests/fuzz): a bounded run of each target, side by side, from the seeds
# in tests/fuzz/corpus; a crash, a run past 5 s on one input (-timeout) or past 512 MB resident
# (-rss_limit_mb: a blow-up in time or memory) leaves its input in build-fuzz/ and fails the run. After
# the tests, with the cores to itself: beside them, even niced, a target ran 14 to 7,000 inputs in its
# 20 s, against 300,000 to 700,000 alone.
fuzz() {
  local seconds=${FUZZ_SECONDS:-20} target status=0
  local -A pids=()
  for target in proc_devices nvidia_params fleet_reader; do
    mkdir -p "build-fuzz/corpus/$target"
    build-fuzz/tests/fuzz/fuzz_$target -max_total_time="$seconds" -timeout=5 -rss_limit_mb=512 -print_final_stats=1 \
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

# The tests wait as well as compute (second processes, time limits, daemons, qemu): the test stages run
# at once, and ctest runs twice as many tests as there are cores. No test judges the machine's speed.
# The sanitizer build runs every end-to-end case file: the sanitizers find what a second run of the
# optimised binary would, and more.
test_jobs=$((2 * jobs))
# The release build's tests. As root the end-to-end case files run in the sanitizer build, and those
# that only the shipped binary can show in the release stage too, with the packaged binary of this same
# build in its Debian 11 root: here only the two the sanitizer run leaves out; the unit tests run in the
# sanitizer build and under qemu (the amd64 release build has none). Elsewhere all of them.
release_tests() {
  local status=0
  if is_root; then
    ctest --test-dir "$release_dir" --output-on-failure -j "$test_jobs" -E '^cli:' || status=$?
    ctest --test-dir "$release_dir" --output-on-failure -j "$test_jobs" -R '^cli:(completion|fleet_scale)$' ||
      status=$?
  else
    ctest --test-dir "$release_dir" --output-on-failure -j "$test_jobs" || status=$?
  fi
  return "$status"
}
# compat13030 (a compile test), man, install, k8s-manifests, html-pages (headless chromium),
# bench-doctor-floors and bench-bidir (the benchmark's own programs, which the sanitizer build does not
# make) ran in the release tests, and so did the completion cases, which test the shell scripts: the
# sanitizers add nothing there. fleet_scale is cli:fleet's code at 300 nodes: under the sanitizers (at
# -O0) its JSON alone took two minutes of a core, and its memory cases need freed memory to go (ASan
# keeps it in quarantine).
# The release stage runs signals.case against the packaged binary, held to its second to stop
# (signal_run.sh allows the sanitizer build half as long again, for LeakSanitizer's scan at exit).
# Slurm, pdsh, node_exporter and promtool for real, against the release build: the fleet stage mostly
# waits on daemons and time limits. It skips (saying so) only where the packages are missing outside CI.
release_stage=()
is_root && release_stage=(-- "release stage tests" \
  bash -c 'set -o pipefail; tests/release/run.sh amd64 arm64 packages image | tee build-release/tests.log')
side_by_side \
  "sanitizer tests" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$test_jobs" \
    -E '^(compat13030|man|install|k8s-manifests|html-pages|bench-doctor-floors|bench-bidir|cli:completion|cli:fleet_scale)$' -- \
  "release tests" release_tests -- \
  "fleet" tests/slurm/run.sh "$release_dir" "${release_stage[@]}"
stage "fuzz (${FUZZ_SECONDS:-20} s a target)" fuzz

echo "== stage times"
printf '%s\n' "${stages[@]}"
# The release stage's steps, each its own time (tests/release/run.sh says "release stage: STEP: N s (exit S)").
cat build-release/build.log build-release/tests.log 2>/dev/null |
  sed -n 's/^release stage: \(.*\): \([0-9]*\) s (exit \([0-9]*\))$/  \1|\2|\3/p' |
  while IFS='|' read -r name seconds status; do
    printf '%-36s %5d s%s\n' "$name" "$seconds" "$( ((status == 0)) || echo "  (exit $status)")"
  done
read_cpu
printf '%-36s %5d s %6d CPU-s\n' "whole run" $((SECONDS - total_start)) "$cpu_now"
if ((${#failed[@]})); then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
