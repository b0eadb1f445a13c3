#!/usr/bin/env bash
# Sets up, builds, and runs cumemctl's main job on this node (or the subcommand given as arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
if (($# == 0)); then set -- doctor; fi
exec build/cmd/cumemctl "$@"
