#!/usr/bin/env bash
# Benchmark of `cumemctl imex-setup --all` (2048 channels by default): the first run, which makes every
# node, and the rerun, which finds every node right. Each is run RUNS times (default 7) in a fresh
# temporary device root with fabricated /proc files, and the median, minimum and maximum wall-clock
# times are printed. Needs root (mknod).
#
#   bench/imex_setup.sh [BINARY] [RUNS]      (BINARY defaults to build/cmd/cumemctl)
#   COUNT=4096 BENCH_DIR=/tmp bench/imex_setup.sh
#
# The device root lives under $BENCH_DIR: by default /dev/shm, a tmpfs like the devtmpfs of a real /dev
# (/tmp where there is no /dev/shm); the file system type is printed with the times. Exit 1 when a run
# fails or either median reaches LIMIT seconds (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/cmd/cumemctl}
runs=${2:-7}
count=${COUNT:-2048}
limit=${LIMIT:-1}
if [[ $(id -u) -ne 0 ]]; then
  echo "imex_setup.sh: needs root (making device nodes needs CAP_MKNOD)" >&2
  exit 2
fi
bench_dir=${BENCH_DIR:-/dev/shm}
[[ -d $bench_dir && -w $bench_dir ]] || bench_dir=/tmp
work=$(mktemp -d "$bench_dir/cumemctl-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'Character devices:\n242 nvidia-caps-imex-channels\n' >"$work/devices"
printf 'ImexChannelCount: %d\nCreateImexChannel0: 0\nDeviceFileMode: 438\n' "$count" >"$work/params"

# Seconds that one command line takes, to the microsecond.
seconds() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null
  end=$(date +%s%N)
  echo $(((end - start) / 1000))e-6
}

first=() rerun=()
for i in $(seq 1 "$runs"); do
  root="$work/root$i"
  mkdir -p "$root/dev"
  args=(imex-setup --all --proc-devices "$work/devices" --params "$work/params" --dev-root "$root" --json)
  first+=("$(seconds "$binary" "${args[@]}")")
  rerun+=("$(seconds "$binary" "${args[@]}")")
  made=$(find "$root/dev/nvidia-caps-imex-channels" -type c | wc -l)
  if ((made != count)); then
    echo "run $i made $made nodes, expected $count" >&2
    exit 1
  fi
  rm -rf "$root"
done

fs=$(stat -f -c %T "$work")
python3 - "$limit" "$count" "$runs" "$binary" "$bench_dir ($fs)" "${first[*]}" "${rerun[*]}" <<'PY'
import statistics, sys
limit, count, runs, binary, where = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ok = True
print(f"imex-setup --all, {count} channels, {runs} runs each ({binary}, device root in {where}):")
for label, text in (("first run (creates)", sys.argv[6]), ("rerun (unchanged)", sys.argv[7])):
    t = [float(x) for x in text.split()]
    med = statistics.median(t)
    ok = ok and med < limit
    print(f"  {label:20} median {med * 1000:7.1f} ms   min {min(t) * 1000:7.1f} ms   max {max(t) * 1000:7.1f} ms")
sys.exit(0 if ok else 1)
PY
