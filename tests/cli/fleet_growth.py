#!/usr/bin/python3
"""fleet's work grows at most linearly with its input: each shape of input below is given at size N and
4N, and fleet's CPU time (user + system, from GNU time) and peak resident memory must grow at most 8x and
6x (linear is 4x; a search inside a loop, or a document kept whole, gives 16x). Ratios of the process's
own rusage, with generous margins, not seconds: the machine may be busy. Sizes are picked so that the
small run already takes a measurable time.
    fleet_growth.py CUMEMCTL [SHAPE...]     (shapes: empty garbage deep strings keys checks gpus nodes)
"""
import json
import os
import subprocess
import sys
import tempfile

STAMP = "2026-12-01T00:00:00Z"


def doctor(host, checks=(), gpus=()):
    return json.dumps({"schema": "cumemctl.report", "command": "doctor", "host": host, "timestamp": STAMP,
                       "ok": True, "results": {"status": "fail", "gpus": list(gpus), "checks": list(checks)}})


def shape_empty(n):
    return "{}\n" * (40 * n)


def shape_garbage(n):
    # Lines that are not JSON, each a syntax error where a document starts.
    return "{x\n" * (10 * n)


def shape_deep(n):
    # Lines nested past the limit (64), each a syntax error where it goes too deep.
    return ('{"a":' * 70 + "\n") * (n // 2)


def shape_strings(n):
    # Documents of one long string each, then one whose string never ends.
    return ('{"a": "' + "x" * 1000 + '"}\n') * (n // 20) + '{"a": "' + "x" * (100 * n)


def shape_keys(n):
    # One object of many keys, none a report's.
    return "{" + ",".join(f'"k{i}": {i}' for i in range(5 * n)) + "}\n"


def shape_checks(n):
    checks = [{"check": f"check-{i}", "status": "fail", "reason": "r" * 50, "remedy": "fix"} for i in range(n)]
    return doctor("gpu001", checks) + "\n"


def shape_gpus(n):
    gpus = [{"ordinal": i, "uuid": f"GPU-{i}", "pci_bus_id": f"0000:{i:04x}", "nvml_index": i} for i in range(n)]
    checks = [{"check": "vmm", "device": i, "status": "fail", "reason": "no", "remedy": "fix"} for i in range(n)]
    return doctor("gpu001", checks, gpus) + "\n"


def shape_nodes(n):
    check = [{"check": "memory-health", "device": 0, "status": "fail", "reason": "row remap", "remedy": "rma"}]
    return "".join(doctor(f"gpu{i:06d}", check) + "\n" for i in range(n // 4))


SHAPES = {"empty": shape_empty, "garbage": shape_garbage, "deep": shape_deep, "strings": shape_strings,
          "keys": shape_keys, "checks": shape_checks, "gpus": shape_gpus, "nodes": shape_nodes}


def run(cumemctl, path):
    """(CPU seconds, peak resident KB) of one fleet run over `path`, as GNU time measures the process
    (its own rusage: not this script's memory, which a forked child would start with)."""
    out = path + ".time"
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", out, cumemctl, "fleet", path, "--json"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    if p.returncode not in (0, 1, 2):
        raise SystemExit(f"fleet over {path} exited {p.returncode}")
    with open(out, encoding="utf-8") as f:
        user, system, kb = f.read().split()[-3:]
    return float(user) + float(system), int(kb)


def main():
    cumemctl = sys.argv[1]
    failed = False
    with tempfile.TemporaryDirectory() as d:
        for name in sys.argv[2:] or list(SHAPES):
            n = 5000
            while True:
                small, big = os.path.join(d, "small"), os.path.join(d, "big")
                with open(small, "w", encoding="utf-8") as f:
                    f.write(SHAPES[name](n))
                with open(big, "w", encoding="utf-8") as f:
                    f.write(SHAPES[name](4 * n))
                t1, m1 = run(cumemctl, small)
                if t1 >= 0.05 or n >= 320000:
                    break
                n *= 4
            t4, m4 = min(run(cumemctl, big) for _ in range(2))
            t1 = max(t1, 0.01)
            ok = t4 / t1 <= 8 and m4 / m1 <= 6
            failed |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: N={n}: {t1:.3f} s, {m1} KB; 4N: {t4:.3f} s, {m4} KB "
                  f"(x{t4 / t1:.1f} time, x{m4 / m1:.1f} memory; at most x8 and x6)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
