#!/usr/bin/env bash
# On a GPU machine: what moves the h2d leg of both ways at once, for `bandwidth`, nvbandwidth and other
# ways of queueing the same copies. Every round runs its processes in one fixed order, nvbandwidth
# first, so a figure that moves with its place in the sequence reads apart by that place; set the two
# tools side by side with scripts/gpu-bandwidth-compare.sh, which alternates them. Each round runs:
# - nvbandwidth's two bidirectional tests as it prints them (the median of three samples), with one
#   sample (-i 1), and its h2d test's three samples one by one (-v);
# - `cumemctl bandwidth` as scripts/gpu-bandwidth-compare.sh runs it;
# - bench_bidir (bench/bidir.cpp) timing the same leg queued its ways: nvbandwidth's, the other direction
#   on same-size buffers, pieces with events on either stream or both, cumemctl's, cumemctl's without the
#   hold and with its pieced host buffers; nvbandwidth's and cumemctl's after 1 to 3 streams made first
#   (the copy engine a stream gets); the same two in three samples, each sample a row; and the same two
#   warmed up as nvbandwidth warms up, so that the timed copies start with the other direction already
#   copying. The d2h leg too for nvbandwidth's and the cumemctl ways.
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
      h2d:cumemctl d2h:cumemctl h2d:no-hold h2d:host-pieces d2h:host-pieces
      h2d:nvbandwidth:1 h2d:nvbandwidth:2 h2d:nvbandwidth:3 h2d:cumemctl:1 h2d:cumemctl:2 h2d:cumemctl:3
      h2d:nvbandwidth:0:3 h2d:cumemctl:0:3
      h2d:nvbandwidth-warm:0:3 h2d:cumemctl-warm:0:3 d2h:cumemctl-warm:0:3)
for ((r = 1; r <= rounds; r++)); do
  "$nvb" -j -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
    >"$out/nvb-$r.json" 2>"$out/nvb-$r.err" || true
  "$nvb" -j -i 1 -t host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
    >"$out/nvb1-$r.json" 2>"$out/nvb1-$r.err" || true
  "$nvb" -v -t host_to_device_bidirectional_memcpy_ce >"$out/nvbv-$r.txt" 2>&1 || true
  "$cumemctl" bandwidth --json --size 512MiB --iterations 16 --numa none --no-peers \
    >"$out/cumemctl-$r.json" 2>"$out/cumemctl-$r.err" || true
  for run in "${runs[@]}"; do
    IFS=: read -r leg way streams samples <<<"$run"
    "$bidir" "$leg" "$way" 512 16 "${streams:-0}" "${samples:-1}" >>"$out/bidir-$r.jsonl" 2>>"$out/bidir-$r.err" || true
  done
done
echo "raw outputs: $out" >&2
exec python3 - "$out" "$rounds" "$(dirname "$0")" <<'PY'
import json, re, statistics, sys

sys.path.insert(0, sys.argv[3])
from bandwidth_figures import cm_figures, load, nvb_figures

out, rounds = sys.argv[1], int(sys.argv[2])
LEGS = {"h2d": "host_to_device_bidirectional_memcpy_ce", "d2h": "device_to_host_bidirectional_memcpy_ce"}
figures = {}  # (who, leg) -> GB/s of each round, GPU 0's

for r in range(1, rounds + 1):
    nvb, cm = nvb_figures(load(f"{out}/nvb-{r}.json")), cm_figures(load(f"{out}/cumemctl-{r}.json"))
    nvb1 = nvb_figures(load(f"{out}/nvb1-{r}.json"))
    for leg, test in LEGS.items():
        for who, got in (("nvbandwidth", nvb), ("nvbandwidth -i 1", nvb1), ("cumemctl bandwidth", cm)):
            if (test, 0, 0) in got:
                figures.setdefault((who, leg), []).append(got[(test, 0, 0)])
    try:  # -v: "Sample N: Host -> Device 0: X GB/s", the h2d leg of each sample
        for n, gbps in re.findall(r"Sample (\d+): Host -> Device 0: ([0-9.]+) GB/s", open(f"{out}/nvbv-{r}.txt").read()):
            figures.setdefault((f"nvbandwidth -v, sample {int(n) + 1}", "h2d"), []).append(float(gbps))
    except OSError:
        pass
    try:
        lines = open(f"{out}/bidir-{r}.jsonl").read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            row = json.loads(line)
            who = f"bench_bidir {row['way']}" + (f" +{row['streams_first']} streams" if row.get("streams_first") else "")
            samples = row.get("samples") or []
            if len(samples) > 1:
                for n, gbps in enumerate(samples, 1):
                    figures.setdefault((f"{who}, sample {n}", row["timed"]), []).append(float(gbps))
                who += f", median of {len(samples)}"
            figures.setdefault((who, row["timed"]), []).append(float(row["gbps"]))
        except (ValueError, KeyError, TypeError):
            pass

print(f"{'who':40} {'leg':4} {'median':>8} {'min - max':>15} {'vs nvbandwidth':>15}")
for (who, leg), values in sorted(figures.items(), key=lambda kv: (kv[0][1], kv[0][0] != "nvbandwidth", kv[0][0])):
    m = statistics.median(values)
    base = figures.get(("nvbandwidth", leg))
    ratio = f"{m / statistics.median(base):.3f}" if base else "-"
    print(f"{who:40} {leg:4} {m:8.1f} {min(values):7.1f} - {max(values):5.1f} {ratio:>15}")
PY
