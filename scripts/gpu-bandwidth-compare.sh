#!/usr/bin/env bash
# On a GPU machine: cumemctl bandwidth beside NVIDIA's nvbandwidth, run interleaved in the same session,
# each figure side by side, counted the same way (bytes copied, per direction: the "copied" of
# cumemctl's JSON), with the ratio and whether it is within 2%. nvbandwidth is built here from a source
# folder carried along (scripts/nvbandwidth-build.sh):
#
#   scripts/gpu-bandwidth-compare.sh CUMEMCTL [NVBANDWIDTH_SOURCE] [ROUNDS]
#
# NVBANDWIDTH_SOURCE defaults to carry/nvbandwidth (a checkout of github.com/NVIDIA/nvbandwidth, v0.8;
# git's snapshot copied into the repository's ignored carry/ folder); it is built once into
# $NVB_BUILD (default build/nvbandwidth, kept between runs like the rest of build/). ROUNDS (default 8)
# alternates which tool goes first; an even count puts each first equally often.
# Both copy 512 MiB buffers (nvbandwidth's default; cumemctl --size 512MiB --iterations 16, as
# nvbandwidth's 16 copies a sample). The raw outputs stay in $OUT_DIR (default a temporary folder);
# the table (scripts/bandwidth_compare.py) goes to stdout. Exit 0 when every figure is within 2%, 1
# otherwise or where neither tool gave a figure, 2 on a setup error.
set -euo pipefail
cumemctl=${1:?usage: scripts/gpu-bandwidth-compare.sh CUMEMCTL [NVBANDWIDTH_SOURCE] [ROUNDS]}
src=${2:-carry/nvbandwidth}
rounds=${3:-8}
build=${NVB_BUILD:-build/nvbandwidth}
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"

nvb=$(NVB_BUILD=$build "$(dirname "$0")/nvbandwidth-build.sh" "$src" "$out")
gpus=$(nvidia-smi -L | wc -l)
tests=(host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce
       device_to_host_bidirectional_memcpy_ce device_local_copy)
cumemctl_args=(bandwidth --json --size 512MiB --iterations 16 --numa none)
if ((gpus > 1)); then
  tests+=(device_to_device_memcpy_write_ce all_to_host_memcpy_ce host_to_all_memcpy_ce)
  if "$cumemctl" bandwidth --help 2>/dev/null | grep -q -- --concurrent; then cumemctl_args+=(--concurrent); fi
else
  cumemctl_args+=(--no-peers)
fi
# Odd rounds run nvbandwidth first, even rounds cumemctl first: a figure can move with its place in the
# sequence (nvbandwidth against itself, a process apart, by 3.5% on an H200).
run_nvb() { "$nvb" -j -t "${tests[@]}" >"$out/nvb-$1.json" 2>"$out/nvb-$1.err" || true; }
run_cumemctl() { "$cumemctl" "${cumemctl_args[@]}" >"$out/cumemctl-$1.json" 2>"$out/cumemctl-$1.err" || true; }
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then run_nvb "$r"; run_cumemctl "$r"; else run_cumemctl "$r"; run_nvb "$r"; fi
done
echo "raw outputs: $out" >&2
exec python3 "$(dirname "$0")/bandwidth_compare.py" "$out" "$rounds"
