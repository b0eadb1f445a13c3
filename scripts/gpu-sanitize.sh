#!/usr/bin/env bash
# The GPU tier's compute-sanitizer stage: NVIDIA's compute-sanitizer over cumemctl's paths that make
# contexts, allocate, run the kernels and share memory between processes. memcheck with --leak-check full
# (what the process and its second processes, the importers, leave allocated), racecheck and initcheck
# over the kernels, every tool with --target-processes all. The pass: every run exits as cumemctl would
# (0) with zero errors and zero leaks in every process. Never creates a multicast object.
#
#   scripts/gpu-sanitize.sh [OUTPUT_DIR]      (default gpu-sanitize/)
#
# CUMEMCTL names the binary (default build/cmd/cumemctl); COMPUTE_SANITIZER the sanitizer (default
# /usr/local/cuda/bin/compute-sanitizer, else the one on PATH); SANITIZE_RUNS, names separated by commas
# (bandwidth,bandwidth-concurrent), runs only those. Writes each run's log and JSON report into
# OUTPUT_DIR (TOOL-NAME.log, TOOL-NAME.json) and prints a summary line per run and one at the end.
# Exit 0 all clean, 1 something was found or a run failed, 125 no GPU or no compute-sanitizer here.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:-gpu-sanitize}
binary=${CUMEMCTL:-build/cmd/cumemctl}
sanitizer=${COMPUTE_SANITIZER:-}
if [[ -z $sanitizer ]]; then
  if [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
    sanitizer=/usr/local/cuda/bin/compute-sanitizer
  else
    sanitizer=$(command -v compute-sanitizer || true)
  fi
fi
if [[ -z $sanitizer || ! -x $sanitizer ]]; then
  echo "gpu-sanitize: skipped: no compute-sanitizer (/usr/local/cuda/bin or PATH; COMPUTE_SANITIZER names one)"
  exit 125
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-sanitize: skipped: no GPU here (nvidia-smi -L fails)"
  exit 125
fi
[[ -x $binary ]] || { echo "gpu-sanitize: $binary is not built (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$out"
# doctor's fabric-alloc check tries a fabric-handle cuMemCreate, which the driver refuses without an IMEX
# channel node: doctor warns, and memcheck counts the refusal as an API error. That is the node's
# finding, not cumemctl's: run this on a node with its channel (cumemctl imex-setup).
if ! compgen -G '/dev/nvidia-caps-imex-channels/channel*' >/dev/null; then
  echo "gpu-sanitize: note: no IMEX channel node: doctor's fabric-alloc is refused, one API error under memcheck (cumemctl imex-setup makes one)"
fi

# NAME|cumemctl's arguments: the paths that allocate, run kernels and share memory between processes.
# doctor's copies run under the sanitizer at its pace, not the GPU's: its bandwidth thresholds are set to
# 0 here, so that the copies still run and only what the sanitizer finds decides (GPU run 33).
runs=(
  "doctor|doctor --bandwidth-warn 0 --bandwidth-fail 0"
  "memtest|memtest --size 2GiB"
  "create-vmm-ipc|create --size 64MiB --map --verify --handle-type posix-fd --export --import-check"
  "create-pool-ipc|create --pool --size 64MiB --handle-type posix-fd --ipc-check"
  "pool-stats|pool-stats --exercise 64x16MiB"
  "bandwidth|bandwidth --size 8MiB --iterations 2 --pageable"
  "bandwidth-concurrent|bandwidth --size 8MiB --iterations 2 --concurrent --no-peers"
)
# TOOL|its options: memcheck with leaks, then racecheck and initcheck over the kernels.
tools=(
  "memcheck|--tool memcheck --leak-check full"
  "racecheck|--tool racecheck"
  "initcheck|--tool initcheck"
)

# A process's closing line: memcheck and initcheck say "ERROR SUMMARY: N errors", racecheck "RACECHECK
# SUMMARY: H hazards displayed (N errors, W warnings)".
summary='ERROR SUMMARY:|RACECHECK SUMMARY:'
# The errors in a log: the sum of every process's N (a log with no closing line counts as 1: the sanitizer
# did not finish it), and the leak lines.
count_errors() {
  local log=$1 sums
  sums=$(grep -cE "$summary" "$log")
  if ((sums == 0)); then echo 1; return; fi
  grep -oE 'ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors' "$log" | tr -d '(' | awk '{n += ($1 == "ERROR" ? $3 : $1)} END {print n + 0}'
}

clean=0 found=0
for tool in "${tools[@]}"; do
  tname=${tool%%|*}
  topts=${tool#*|}
  for run in "${runs[@]}"; do
    name=${run%%|*}
    args=${run#*|}
    [[ -z ${SANITIZE_RUNS:-} || ,$SANITIZE_RUNS, == *,"$name",* ]] || continue
    log=$out/$tname-$name.log
    # shellcheck disable=SC2086 # the options and arguments are words
    "$sanitizer" $topts --target-processes all --log-file "$log.%p" "$binary" $args --json >"$out/$tname-$name.json" \
      2>"$out/$tname-$name.stderr"
    rc=$?
    cat "$log".* >"$log" 2>/dev/null
    rm -f "$log".*
    errors=$(count_errors "$log")
    leaks=$(grep -c 'Leaked [0-9]* bytes' "$log")
    processes=$(grep -cE "$summary" "$log")
    if ((rc == 0 && errors == 0 && leaks == 0)); then
      clean=$((clean + 1))
      verdict=clean
    else
      found=$((found + 1))
      verdict=FOUND
    fi
    echo "gpu-sanitize: $verdict $tname $name: exit $rc, $errors errors, $leaks leaks in $processes processes ($log)"
  done
done
echo "gpu-sanitize: $clean clean, $found with findings (logs in $out/)"
((found == 0))
