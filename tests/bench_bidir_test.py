#!/usr/bin/python3
"""bench_bidir (scripts/gpu-bidir-probe.sh) on the fake driver: every way its usage lists queues and
times both legs and prints its one JSON line, naming the way and the timed leg, with a figure the fake's
link gives; streams made first are said in the line, and SAMPLES samples are each given with their
median as the figure; an unknown way or leg, or a count of streams past 0 to 64 or of samples past 1 to
9, is refused with exit 2.

    bench_bidir_test.py BENCH_BIDIR        (CUMEMCTL_LIBCUDA and FAKECUDA_PROFILE name the fake)
"""
import json
import subprocess
import sys


def main():
    binary = sys.argv[1]
    usage = subprocess.run([binary], capture_output=True, text=True)
    ways = usage.stderr.split("WAY:")[-1].split()
    failures = []
    if usage.returncode != 2 or not ways:
        failures.append(f"no usage listing the ways (exit {usage.returncode}): {usage.stderr!r}")
    for way in ways:
        for leg in ("h2d", "d2h"):
            r = subprocess.run([binary, leg, way, "16", "2"], capture_output=True, text=True, timeout=60)
            try:
                row = json.loads(r.stdout)
            except ValueError:
                row = {}
            ok = (r.returncode == 0 and row.get("way") == way and row.get("timed") == leg
                  and row.get("gbps", 0) > 1 and row.get("other_gbps", 0) > 1)
            print(f"{'ok  ' if ok else 'FAIL'} {leg} {way}: exit {r.returncode}, {r.stdout.strip() or r.stderr.strip()}")
            if not ok:
                failures.append(f"{leg} {way}")
    way = ways[0] if ways else "nvbandwidth"
    r = subprocess.run([binary, "h2d", way, "16", "2", "3"], capture_output=True, text=True, timeout=60)
    try:
        streams = json.loads(r.stdout).get("streams_first")
    except ValueError:
        streams = None
    if r.returncode != 0 or streams != 3:
        failures.append(f"h2d {way} with 3 streams first: exit {r.returncode}, streams_first {streams!r}")
    r = subprocess.run([binary, "h2d", way, "16", "2", "0", "3"], capture_output=True, text=True, timeout=60)
    try:
        row = json.loads(r.stdout)
    except ValueError:
        row = {}
    samples = row.get("samples") or []
    if r.returncode != 0 or len(samples) != 3 or abs(sorted(samples)[1] - row.get("gbps", 0)) > 0.001:
        failures.append(f"h2d {way} in 3 samples: exit {r.returncode}, {r.stdout.strip()!r}")
    for argv in (["h2d", "none"], ["both", way], ["h2d", way, "16", "2", "-1"], ["h2d", way, "16", "2", "65"],
                 ["h2d", way, "16", "2", "0", "0"], ["h2d", way, "16", "2", "0", "10"]):
        r = subprocess.run([binary] + argv, capture_output=True, text=True)
        if r.returncode != 2:
            failures.append(f"{' '.join(argv)}: exit {r.returncode}, not 2")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
