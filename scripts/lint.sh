#!/usr/bin/env bash
# Static checks: clang-tidy over src/ and cmd/ (with the compile commands of build-lint/), and clang-format
# in dry-run mode over every C++ file. Exit non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
# Its own compile commands (configured, not built): file by file, without the precompiled headers that
# gcc's builds make and clang-tidy cannot read. About 18 minutes on 2 cores.
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake -S . -B build-lint -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DCUMEMCTL_UNITY=OFF \
  -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
files=$(git ls-files 'src/*.cpp' 'cmd/*.cpp')
run-clang-tidy -quiet -p build-lint -j "$(nproc)" $files
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
