#!/usr/bin/env bash
# On the GPU machine, in one command: cumemctl bandwidth beside nvbandwidth (built from carry/nvbandwidth,
# scripts/gpu-bandwidth-compare.sh, 8 interleaved rounds, each tool first in four) and the doctor group
# of the benchmark (the full doctor and doctor --quick against bench_doctor_floor full and quick, the link
# checks included; targets 1.10x and 1.05x). Everything goes to OUTDIR; compare.txt and bench-doctor.md
# are what docs/benchmarks.md records.
#
#   scripts/gpu-bandwidth-session.sh BINARY OUTDIR        (BINARY's build folder has bench/bench_doctor_floor)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${1:?usage: scripts/gpu-bandwidth-session.sh BINARY OUTDIR}
out=${2:?usage: scripts/gpu-bandwidth-session.sh BINARY OUTDIR}
mkdir -p "$out"
rc=0
OUT_DIR=$out/compare timeout 420 scripts/gpu-bandwidth-compare.sh "$bin" carry/nvbandwidth 8 | tee "$out/compare.txt" || rc=1
timeout 170 bench/run.sh --only doctor "$bin" "$out/bench-doctor.json" >"$out/bench-doctor.log" 2>&1 || rc=1
[[ -f $out/bench-doctor.md ]] && cat "$out/bench-doctor.md"
exit "$rc"
