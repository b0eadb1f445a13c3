#!/usr/bin/env bash
# Here, before a GPU session that compares bandwidth with nvbandwidth (scripts/gpu-bandwidth-compare.sh):
# the H200 machine (Ubuntu 24.04) has Boost 1.83's headers but not the program_options library that
# nvbandwidth links, and no network. This unpacks Debian trixie's libboost-program-options 1.83 (the
# same Boost version) into carry/boost-po, which the compare script hands to nvbandwidth's cmake.
# nvbandwidth's own source goes into carry/nvbandwidth (a snapshot of github.com/NVIDIA/nvbandwidth,
# v0.8). Neither is committed: carry/ is ignored, and travels with `carry`.
#
#   scripts/nvbandwidth-deps.sh        (root, or sudo for apt-get's lists in a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=carry/boost-po
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$state/sources.list"
o=(-o "Dir::State::Lists=$state/lists" -o "Dir::Etc::SourceList=$state/sources.list"
   -o Dir::Etc::SourceParts=/dev/null -o "Dir::Cache=$state/cache")
apt-get "${o[@]}" update -qq
(cd "$state" && apt-get "${o[@]}" download libboost-program-options1.83.0 libboost-program-options1.83-dev)
rm -rf "$dest"
mkdir -p "$dest"
for deb in "$state"/*.deb; do dpkg -x "$deb" "$dest"; done
echo "nvbandwidth-deps: $(find "$dest" -name 'libboost_program_options*' | wc -l) files in $dest"
