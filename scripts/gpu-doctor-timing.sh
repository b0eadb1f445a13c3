#!/usr/bin/env bash
# On the GPU machine: where `cumemctl doctor --quick` and the full doctor spend the time beyond their
# floors (bench_doctor_floor, the doctor group of bench/run.sh). Runs each with CUMEMCTL_TIMING=1 (a line
# a phase: the loader, parse, dlopen, cuGetProcAddress, cuInit, each check, render) and times the floor
# programs the same way; every line goes to OUTDIR, the last run of each on stdout.
#
#   scripts/gpu-doctor-timing.sh BINARY OUTDIR     (BINARY's build folder has bench/bench_doctor_floor)
set -uo pipefail
bin=${1:?usage: scripts/gpu-doctor-timing.sh BINARY OUTDIR}
out=${2:?usage: scripts/gpu-doctor-timing.sh BINARY OUTDIR}
floor=$(dirname "$(dirname "$bin")")/bench/bench_doctor_floor
mkdir -p "$out"
wall() { # wall NAME CMD...: the command's wall time in microseconds, its stderr kept in OUTDIR/NAME
  local name=$1 s0
  shift
  s0=$(date +%s%N)
  "$@" >/dev/null 2>"$out/$name"
  echo "$name: $(( ($(date +%s%N) - s0) / 1000 )) us wall"
}
for i in 1 2 3; do wall "quick-$i.txt" env CUMEMCTL_TIMING=1 "$bin" doctor --quick --json; done
for i in 1 2 3; do wall "full-$i.txt" env CUMEMCTL_TIMING=1 "$bin" doctor --json; done
for i in 1 2 3; do wall "floor-quick-$i.txt" env CUMEMCTL_TIMING=1 "$floor" quick; done
for i in 1 2 3; do wall "floor-full-$i.txt" env CUMEMCTL_TIMING=1 "$floor" full; done
echo "== doctor --quick, the last run"
grep timing "$out/quick-3.txt"
echo "== doctor, the last run"
grep timing "$out/full-3.txt"
echo "== the floors, the last run of each"
grep timing "$out/floor-quick-3.txt"
grep timing "$out/floor-full-3.txt"
