#!/usr/bin/env bash
# Configures and builds cumemctl into build/ (or the folder in $1) with the given extra CMake options;
# Release (-O2, no debug information) unless they name another CMAKE_BUILD_TYPE (RelWithDebInfo keeps
# the symbols).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir"
