#!/usr/bin/env bash
# On a GPU machine: why `bandwidth`'s h2d leg of both ways at once and nvbandwidth's differ (GPU runs 45
# and 56, each on an H200: cumemctl 50.1 GB/s against 47.9-48.0, steady round to round). Each round runs
# nvbandwidth's two bidirectional tests, `cumemctl bandwidth` as scripts/gpu-bandwidth-compare.sh runs
# it, and bench_bidir's ways of queueing the same copies (bench/bidir.cpp: nvbandwidth's way, the other
# direction on same-size buffers, pieces with events on either stream or both, cumemctl's way, without
# the hold), each timing the h2d leg and, for nvbandwidth's and cumemctl's ways, the d2h leg too.
#
#   scripts/gpu-bidir-probe.sh CUMEMCTL BENCH_BIDIR [NVBANDWIDTH_SOURCE] [ROUNDS]
#
# Prints each figure's median over ROUNDS (default 3) rounds, its spread, and its ratio to nvbandwidth's
# own median of the same leg; the raw outputs stay in $OUT_DIR (default a temporary folder). Exit 2 on a
# setup error.
set -euo pipefail
cumemctl=${1:?usage: scripts/gpu-bidir-probe.sh CUMEMCTL BENCH_BIDIR [NVBANDWIDTH_SOURCE] [ROUNDS]}
bidir=${2:?usage: scripts/gpu-bidir-probe.sh CUMEMCTL BENCH_BIDIR [NVBANDWIDTH_SOURCE] [ROUNDS]}
src=${3:-carry/nvbandwidth}
rounds=${4:-3}
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
nvb=$("$(dirname "$0")/nvbandwidth-build.sh" "$src" "$out")
runs=(h2d:nvbandwidth d2h:nvbandwidth h2d:same-buffers h2d:pieces h2d:pieces-timed h2d:pieces-other
      h2d:cumemctl d2h:cumemctl h2d:no-hold)
for ((r = 1; r <= rounds; r++)); do
  "$nvb" -j -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
    >"$out/nvb-$r.json" 2>"$out/nvb-$r.err" || true
  "$cumemctl" bandwidth --json --size 512MiB --iterations 16 --numa none --no-peers \
    >"$out/cumemctl-$r.json" 2>"$out/cumemctl-$r.err" || true
  for run in "${runs[@]}"; do
    "$bidir" "${run%%:*}" "${run#*:}" 512 16 >>"$out/bidir-$r.jsonl" 2>>"$out/bidir-$r.err" || true
  done
done
echo "raw outputs: $out" >&2
exec python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys

out, rounds = sys.argv[1], int(sys.argv[2])
figures = {}  # (who, leg) -> GB/s of each round

def add(key, value):
    figures.setdefault(key, []).append(float(value))

for r in range(1, rounds + 1):
    try:
        doc = json.load(open(f"{out}/nvb-{r}.json"))
        for t in doc["nvbandwidth"]["testcases"]:
            leg = "h2d" if t["name"].startswith("host_to_device") else "d2h"
            add(("nvbandwidth", leg), t["bandwidth_matrix"][0][0])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        pass
    try:
        for f in json.load(open(f"{out}/cumemctl-{r}.json"))["results"]["figures"]:
            if f["path"] == "both" and f["device"] == 0:
                for c in f["copied"]:
                    add(("cumemctl bandwidth", c["direction"]), c["gbps"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        for line in open(f"{out}/bidir-{r}.jsonl"):
            try:
                row = json.loads(line)
                add((f"bench_bidir {row['way']}", row["timed"]), row["gbps"])
            except (ValueError, KeyError):
                pass
    except OSError:
        pass

print(f"{'who':32} {'leg':4} {'median':>8} {'min - max':>15} {'vs nvbandwidth':>15}")
for (who, leg), values in sorted(figures.items(), key=lambda kv: (kv[0][1], kv[0][0] != "nvbandwidth", kv[0][0])):
    m = statistics.median(values)
    base = figures.get(("nvbandwidth", leg))
    ratio = f"{m / statistics.median(base):.3f}" if base else "-"
    print(f"{who:32} {leg:4} {m:8.1f} {min(values):7.1f} - {max(values):5.1f} {ratio:>15}")
PY
