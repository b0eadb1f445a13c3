#!/usr/bin/env bash
# Static checks: clang-tidy over src/ and cmd/ (with the compile commands of build/), and clang-format
# in dry-run mode over every C++ file. Exit non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f build/compile_commands.json ]] || scripts/build.sh build
files=$(git ls-files 'src/*.cpp' 'cmd/*.cpp')
clang-tidy -p build --quiet $files
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
