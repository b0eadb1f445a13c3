#!/usr/bin/env bash
# Builds the release binaries: cumemctl for x86-64 (amd64) and aarch64 (arm64), each with Debian 12's
# clang against a Debian 11 root (scripts/debian11-root.sh, cmake/toolchain-*.cmake), so that it runs on
# glibc 2.31 or newer and needs no particular libstdc++ (docs/platforms.md); then checks that
# (scripts/check-glibc.sh). Root, for debootstrap, the first time.
#   release.sh [--tests] [ARCH...]     ARCH: amd64, arm64 (default both)
# Writes build-release/ARCH/cmd/cumemctl, with its symbols (scripts/package.sh strips what it ships).
# --tests also builds, for the same architecture and root, what the tests run against it: for amd64
# every target but the unit tests (the binary, the fakes, the benchmark programs and the GPU probe: the
# release tests of scripts/test.sh run from build-release/amd64; the unit tests run in the sanitizer
# build and, optimised, in the aarch64 one), for arm64 the fakes and the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
tests=0 arches=()
for a in "$@"; do
  case $a in
    --tests) tests=1 ;;
    amd64 | arm64) arches+=("$a") ;;
    *) echo "release.sh: unknown argument $a (--tests, amd64, arm64)" >&2; exit 2 ;;
  esac
done
((${#arches[@]})) || arches=(amd64 arm64)
out=build-release
# The roots are fetched side by side (the network, not the CPU, is what they wait for).
pids=()
for a in "${arches[@]}"; do
  scripts/debian11-root.sh "$a" "$out/root-$a" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for a in "${arches[@]}"; do
  case $a in amd64) toolchain=cmake/toolchain-x86_64.cmake ;; arm64) toolchain=cmake/toolchain-aarch64.cmake ;; esac
  targets=(cumemctl)
  # The completion scripts are written by running the binary: the amd64 one, which runs here. They are
  # the same text for both (scripts/package.sh installs them into both).
  [[ $a == amd64 ]] && targets+=(completions)
  if ((tests)); then
    case $a in
      amd64) targets=(all) ;;
      arm64) targets+=(fakecuda not_a_driver fakenvml fakenvml_minimal unit_tests) ;;
    esac
  fi
  # Set with --tests only: scripts/package.sh's later run (no --tests) keeps what the tests asked for.
  unit=()
  ((tests)) && unit=(-DCUMEMCTL_UNIT_TESTS="$([[ $a == amd64 ]] && echo OFF || echo ON)")
  # Compiled once: in batches of 75 files (CMakeLists.txt says why).
  cmake -S . -B "$out/$a" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCUMEMCTL_SYSROOT="$PWD/$out/root-$a" -DCUMEMCTL_UNITY_BATCH=75 "${unit[@]}" >/dev/null
  cmake --build "$out/$a" --target "${targets[@]}"
  scripts/check-glibc.sh "$out/$a/cmd/cumemctl"
done
