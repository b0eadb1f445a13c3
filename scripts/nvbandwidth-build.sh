#!/usr/bin/env bash
# On a GPU machine: builds NVIDIA's nvbandwidth from a source folder carried along, once, and prints the
# path of its binary. The GPU machine has cmake, Boost's headers and CUDA, and no network; Boost's
# program_options library comes from carry/boost-po (scripts/nvbandwidth-deps.sh). Used by
# scripts/gpu-bandwidth-compare.sh and scripts/gpu-bidir-probe.sh.
#
#   scripts/nvbandwidth-build.sh [NVBANDWIDTH_SOURCE [LOG_DIR]]
#
# NVBANDWIDTH_SOURCE defaults to carry/nvbandwidth (a checkout of github.com/NVIDIA/nvbandwidth, v0.8);
# it is built into $NVB_BUILD (default build/nvbandwidth, kept between runs like the rest of build/).
# cmake's and the build's logs go to LOG_DIR (default the build folder). Exit 2 when it cannot be built.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-carry/nvbandwidth}
build=${NVB_BUILD:-build/nvbandwidth}
logs=${2:-$build}
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
if [[ ! -x $build/nvbandwidth ]]; then
  [[ -f $src/CMakeLists.txt ]] || { echo "no nvbandwidth source in $src (copy the snapshot into carry/nvbandwidth)" >&2; exit 2; }
  mkdir -p "$logs"
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
  # Boost's program_options from carry/boost-po, where the machine lacks it: its cmake files beside the
  # machine's own Boost 1.83 headers and cmake files.
  boost=()
  po=$top/carry/boost-po/usr/lib/x86_64-linux-gnu/cmake
  if [[ -d $po/boost_program_options-1.83.0 && -d /usr/lib/x86_64-linux-gnu/cmake/boost_headers-1.83.0 ]]; then
    ln -sfn /usr/include "$top/carry/boost-po/usr/include"
    cp -r /usr/lib/x86_64-linux-gnu/cmake/BoostDetectToolset-1.83.0.cmake \
      /usr/lib/x86_64-linux-gnu/cmake/boost_headers-1.83.0 "$po/"
    boost=(-DBoost_USE_STATIC_LIBS=ON "-Dboost_program_options_DIR=$po/boost_program_options-1.83.0")
  fi
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" "${boost[@]}" \
    >"$logs/nvb-cmake.log" 2>&1 ||
    { tail -20 "$logs/nvb-cmake.log" >&2; exit 2; }
  cmake --build "$build" -j"$(nproc)" >"$logs/nvb-build.log" 2>&1 || { tail -20 "$logs/nvb-build.log" >&2; exit 2; }
fi
echo "$build/nvbandwidth"
