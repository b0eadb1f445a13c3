#!/usr/bin/python3
"""scripts/bandwidth_compare.py, the table of scripts/gpu-bandwidth-compare.sh, on raw outputs written
here in both tools' JSON: equal figures pass; a figure 3% apart in every round fails, alone; the rounds'
own ratio pairs each round with itself where a tool's round is missing, so a drift that moves both tools
cancels; no figure at all fails.

    bandwidth_compare_test.py BANDWIDTH_COMPARE_PY
"""
import json
import os
import subprocess
import sys
import tempfile

LEGS = ("host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "host_to_device_bidirectional_memcpy_ce",
        "device_to_host_bidirectional_memcpy_ce", "device_local_copy")


def nvb_doc(f):
    return {"nvbandwidth": {"testcases": [{"name": n, "bandwidth_matrix": [[f[n]]]} for n in LEGS]}}


def cm_doc(f):
    def fig(path, memory, **by):
        return {"device": 0, "path": path, "memory": memory,
                "copied": [{"direction": d, "gbps": v} for d, v in by.items()]}
    return {"results": {"figures": [
        fig("h2d", "pinned", h2d=f[LEGS[0]]), fig("d2h", "pinned", d2h=f[LEGS[1]]),
        fig("both", "pinned", h2d=f[LEGS[2]], d2h=f[LEGS[3]]), fig("d2d", "device", d2d=f[LEGS[4]])]}}


def run(script, rounds):
    """rounds: [(nvbandwidth's figures or None, cumemctl's or None)]; returns the exit code,
    {test: (ratio, within, paired)} and what the script printed."""
    with tempfile.TemporaryDirectory() as out:
        for r, (nvb, cm) in enumerate(rounds, 1):
            for name, doc in (("nvb", nvb and nvb_doc(nvb)), ("cumemctl", cm and cm_doc(cm))):
                if doc:
                    with open(os.path.join(out, f"{name}-{r}.json"), "w") as fh:
                        json.dump(doc, fh)
        p = subprocess.run([sys.executable, script, out, str(len(rounds))], capture_output=True, text=True,
                           timeout=30)
    rows = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if w and w[0] in LEGS:
            rows[w[0]] = (float(w[5]), w[6], float(w[8]))
    return p.returncode, rows, p.stdout


def figures(**change):
    f = {LEGS[0]: 55.4, LEGS[1]: 55.3, LEGS[2]: 48.0, LEGS[3]: 51.0, LEGS[4]: 2070.0}
    f.update(change)
    return f


def main():
    script, failures = sys.argv[1], []

    def expect(what, ok, out):
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            failures.append(what)
            print(out)

    rc, rows, out = run(script, [(figures(), figures())] * 4)
    expect("equal figures: exit 0, every figure within 2%, paired 1.000",
           rc == 0 and len(rows) == 5 and all(w == "yes" and p == 1.0 for _, w, p in rows.values()), out)

    d2h = LEGS[1]
    rc, rows, out = run(script, [(figures(), figures(**{d2h: 55.3 * 1.03}))] * 4)
    expect("d2h 3% apart: exit 1, that figure alone not within 2%",
           rc == 1 and rows.get(d2h, (0, "", 0))[:2] == (1.03, "NO")
           and all(w == "yes" for k, (_, w, _) in rows.items() if k != d2h) and len(rows) == 5, out)

    # The h2d leg of both drifts 40 -> 52 GB/s for both tools, cumemctl 1% above in every round, and
    # nvbandwidth's second round is lost: paired by position the rounds would give 0.93.
    leg = LEGS[2]
    drift = [(figures(**{leg: v}), figures(**{leg: v * 1.01})) for v in (40.0, 44.0, 48.0, 52.0)]
    drift[1] = (None, drift[1][1])
    rc, rows, out = run(script, drift)
    expect("drift with a round missing: paired 1.010, each round with itself",
           rows.get(leg, (0, "", 0))[2] == 1.01, out)

    rc, rows, out = run(script, [(None, None)] * 3)
    expect("no figure at all: exit 1", rc == 1 and not rows, out)

    if failures:
        print(f"{len(failures)} failed: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
