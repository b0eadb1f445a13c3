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
# the table goes to stdout. Exit 0 when every figure is within 2%, 1 otherwise, 2 on a setup error.
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
# Odd rounds run nvbandwidth first, even rounds cumemctl first: on the H200s of GPU runs 59 and 60 a
# figure moved with its place in the sequence (nvbandwidth against itself, a process apart, by 3.5%).
run_nvb() { "$nvb" -j -t "${tests[@]}" >"$out/nvb-$1.json" 2>"$out/nvb-$1.err" || true; }
run_cumemctl() { "$cumemctl" "${cumemctl_args[@]}" >"$out/cumemctl-$1.json" 2>"$out/cumemctl-$1.err" || true; }
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then run_nvb "$r"; run_cumemctl "$r"; else run_cumemctl "$r"; run_nvb "$r"; fi
done
echo "raw outputs: $out" >&2
exec python3 - "$out" "$rounds" "$(dirname "$0")" <<'PY'
import statistics, sys

sys.path.insert(0, sys.argv[3])
from bandwidth_figures import cm_figures, load, nvb_figures

out, rounds = sys.argv[1], int(sys.argv[2])

nvb, cm = {}, {}
for r in range(1, rounds + 1):
    for k, v in nvb_figures(load(f"{out}/nvb-{r}.json")).items():
        nvb.setdefault(k, {})[r] = v
    for k, v in cm_figures(load(f"{out}/cumemctl-{r}.json")).items():
        cm.setdefault(k, {})[r] = v
# nvbandwidth's one-row matrices: the host (row 0) and each GPU (column), device_local_copy each GPU
# (column); device_to_device_*: source (row) -> destination (column); all_to_host and host_to_all: each
# GPU measured while every other copies too, summed (compared with cumemctl --concurrent's sum).
rows, bad = [], 0
for key in sorted(set(nvb) | set(cm), key=str):
    cm_rounds, nvb_rounds = cm.get(key, {}), nvb.get(key, {})
    a, b = list(cm_rounds.values()), list(nvb_rounds.values())
    ma = statistics.median(a) if a else None
    mb = statistics.median(b) if b else None
    ratio = ma / mb if ma and mb else None
    ok = ratio is not None and abs(ratio - 1) <= 0.02
    bad += 0 if ok else 1
    # How far each tool's rounds stray from its own median: where that passes 2%, so may the ratio.
    spread = max((abs(v / m - 1) for vs, m in ((a, ma), (b, mb)) if m for v in vs), default=0)
    # The median of each round's own ratio: a round's two figures are one process apart, so a drift that
    # moves both tools cancels in it.
    both = [cm_rounds[r] / nvb_rounds[r] for r in cm_rounds if nvb_rounds.get(r)]
    paired = statistics.median(both) if both else None
    rows.append((key, ma, mb, ratio, ok, spread, paired))
print(f"{'nvbandwidth test':42} {'where':>8} {'cumemctl':>10} {'nvbandwidth':>12} {'ratio':>7}  within 2%  rounds"
      "   paired")
for (name, i, j), ma, mb, ratio, ok, spread, paired in rows:
    where = "sum" if i == "sum" else f"{i}->{j}" if name.startswith("device_to_device") else f"GPU {j}"
    fmt = lambda v: f"{v:10.1f}" if v is not None else f"{'-':>10}"
    print(f"{name:42} {where:>8} {fmt(ma)} {fmt(mb):>12} {ratio if ratio else 0:7.3f}  {'yes' if ok else 'NO':9}"
          f"  +-{spread:<5.1%}  {paired if paired else 0:7.3f}")
print(f"{len(rows) - bad} of {len(rows)} figures within 2% (medians of {rounds} interleaved rounds, each"
      " tool first in turn; 'rounds': the farthest either tool's round is from its own median;"
      " 'paired': the median of the rounds' own ratios)")
sys.exit(0 if bad == 0 else 1)
PY
