#!/usr/bin/python3
"""The table of scripts/gpu-bandwidth-compare.sh: cumemctl's figures beside nvbandwidth's from the raw
outputs of ROUNDS interleaved rounds (OUT/nvb-R.json and OUT/cumemctl-R.json, R from 1), each figure with
the two tools' medians, their ratio and whether it is within 2%, how far the rounds stray, and the
median of the rounds' own ratios. Exit 0 when every figure is within 2%, 1 otherwise.

    bandwidth_compare.py OUT ROUNDS
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bandwidth_figures import cm_figures, load, nvb_figures


def by_round(out, rounds):
    """(test, row, column) -> {round: GB/s} for each tool; a round whose output is missing is absent."""
    nvb, cm = {}, {}
    for r in range(1, rounds + 1):
        for k, v in nvb_figures(load(f"{out}/nvb-{r}.json")).items():
            nvb.setdefault(k, {})[r] = v
        for k, v in cm_figures(load(f"{out}/cumemctl-{r}.json")).items():
            cm.setdefault(k, {})[r] = v
    return nvb, cm


def compare(nvb, cm):
    """One row a figure either tool gave: (key, cumemctl median, nvbandwidth median, ratio, within 2%,
    spread, paired)."""
    rows = []
    for key in sorted(set(nvb) | set(cm), key=str):
        cm_rounds, nvb_rounds = cm.get(key, {}), nvb.get(key, {})
        a, b = list(cm_rounds.values()), list(nvb_rounds.values())
        ma = statistics.median(a) if a else None
        mb = statistics.median(b) if b else None
        ratio = ma / mb if ma and mb else None
        ok = ratio is not None and abs(ratio - 1) <= 0.02
        # How far each tool's rounds stray from its own median: where that passes 2%, so may the ratio.
        spread = max((abs(v / m - 1) for vs, m in ((a, ma), (b, mb)) if m for v in vs), default=0)
        # The median of each round's own ratio: a round's two figures are one process apart, so a drift
        # that moves both tools cancels in it.
        both = [cm_rounds[r] / nvb_rounds[r] for r in cm_rounds if nvb_rounds.get(r)]
        paired = statistics.median(both) if both else None
        rows.append((key, ma, mb, ratio, ok, spread, paired))
    return rows


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    # nvbandwidth's one-row matrices: the host (row 0) and each GPU (column), device_local_copy each GPU
    # (column); device_to_device_*: source (row) -> destination (column); all_to_host and host_to_all:
    # each GPU measured while every other copies too, summed (compared with cumemctl --concurrent's sum).
    rows = compare(*by_round(out, rounds))
    print(f"{'nvbandwidth test':42} {'where':>8} {'cumemctl':>10} {'nvbandwidth':>12} {'ratio':>7}  within 2%"
          "  rounds   paired")
    def fmt(v):
        return f"{v:10.1f}" if v is not None else f"{'-':>10}"

    for (name, i, j), ma, mb, ratio, ok, spread, paired in rows:
        where = "sum" if i == "sum" else f"{i}->{j}" if name.startswith("device_to_device") else f"GPU {j}"
        print(f"{name:42} {where:>8} {fmt(ma)} {fmt(mb):>12} {ratio if ratio else 0:7.3f}"
              f"  {'yes' if ok else 'NO':9}  +-{spread:<5.1%}  {paired if paired else 0:7.3f}")
    good = sum(1 for row in rows if row[4])
    print(f"{good} of {len(rows)} figures within 2% (medians of {rounds} interleaved rounds, each"
          " tool first in turn; 'rounds': the farthest either tool's round is from its own median;"
          " 'paired': the median of the rounds' own ratios)")
    return 0 if rows and good == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
