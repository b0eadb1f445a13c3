#!/usr/bin/python3
"""A model of doctor on N GPUs from the fake driver (issue 14): doctor runs against the fake driver with
1, 2, 4 and 8 devices, with the fake's start-up costs of the real driver (FAKECUDA_COST_MS): cuInit
takes BASE + PER_DEVICE ms for each device the process sees, and each primary context CONTEXT ms, one
at a time in a process (the real driver serialises context creation across a process's threads).
The defaults are the H200 figures of issue 14 (cuInit 167 ms with one of two GPUs visible and 307 ms
with both; a context about 0.2 s). It prints a Markdown table: doctor's wall time, its own per-check
times, and what is left once the parent's serial part (its cuInit and its N contexts) is taken off:
flat in N where the second processes overlap (each sees only its own device). A model, not a timed
test: the fake's costs are sleeps, the work of the checks is the fake's.

    bench/doctor_model.py BUILD [--devices 1,2,4,8] [--runs 3] [--cost init:27+140;context:200]
"""
import argparse
import copy
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def profile_with(n, base):
    """The h200 profile with `n` devices: copies of its device with their own UUIDs and PCI bus ids."""
    p = copy.deepcopy(base)
    one = base["devices"][0]
    p["devices"] = []
    for i in range(n):
        d = copy.deepcopy(one)
        d["uuid"] = f"{i:08x}" + one["uuid"][8:]
        d["pci_bus_id"] = f"00000000:{0x19 + 0x10 * i:02x}:00.0"
        d.pop("peers", None)
        p["devices"].append(d)
    return p


def parse_cost(text):
    """'init:27+140;context:200' -> (27, 140, 200)."""
    parts = dict(item.split(":", 1) for item in text.split(";") if item)
    base, per = (int(x) for x in parts.get("init", "0+0").split("+"))
    return base, per, int(parts.get("context", "0"))


def run_doctor(cumemctl, env):
    start = time.monotonic()
    out = subprocess.run([cumemctl, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=300)
    wall = time.monotonic() - start
    report = json.loads(out.stdout)
    checks = {}
    for c in report["results"]["checks"]:
        checks.setdefault(c["check"], []).append(c["seconds"])
    statuses = sorted({c["status"] for c in report["results"]["checks"]})
    return wall, checks, out.returncode, statuses


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main(argv):
    p = argparse.ArgumentParser(prog="bench/doctor_model.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", help="the build folder (cmd/cumemctl, tests/libfakecuda.so)")
    p.add_argument("--devices", default="1,2,4,8")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cost", default="init:27+140;context:200", help="FAKECUDA_COST_MS")
    args = p.parse_args(argv)
    cumemctl = os.path.join(args.build, "cmd", "cumemctl")
    base_ms, per_ms, ctx_ms = parse_cost(args.cost)
    with open(os.path.join(REPO, "tests", "fakecuda", "profiles", "h200.json"), encoding="utf-8") as f:
        base = json.load(f)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.devices.split(",")):
            path = os.path.join(tmp, f"h200x{n}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(profile_with(n, base), f)
            env = dict(os.environ, CUMEMCTL_LIBCUDA=os.path.join(args.build, "tests", "libfakecuda.so"),
                       CUMEMCTL_LIBNVML=os.path.join(args.build, "tests", "libfakenvml.so"),
                       FAKECUDA_PROFILE=path, FAKECUDA_COST_MS=args.cost)
            env.pop("CUDA_VISIBLE_DEVICES", None)
            walls, per_check, codes, statuses = [], {}, set(), set()
            for _ in range(args.runs):
                wall, checks, code, st = run_doctor(cumemctl, env)
                walls.append(wall)
                codes.add(code)
                statuses.update(st)
                for name, secs in checks.items():
                    per_check.setdefault(name, []).append(max(secs))
            serial = (base_ms + per_ms * n + ctx_ms * n) / 1000
            wall = statistics.median(walls)
            rows.append((n, wall, serial, wall - serial,
                         {k: statistics.median(v) for k, v in per_check.items()}, codes, statuses))
            print(f"{n} device(s): doctor {wall:.3f} s", file=sys.stderr)
    print(f"Model of doctor on N GPUs, fake driver, {datetime.date.today().isoformat()}, commit {git_commit()}; "
          f"FAKECUDA_COST_MS={args.cost} (cuInit {base_ms} + {per_ms} ms per visible device, a context "
          f"{ctx_ms} ms, serialised in a process); medians of {args.runs} runs.\n")
    print("| devices | doctor wall | parent's serial part (cuInit + N contexts) | the rest | "
          "posix-fd-ipc (slowest device) | ipc-pool (slowest device) | exit codes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, wall, serial, rest, checks, codes, _ in rows:
        print(f"| {n} | {wall:.3f} s | {serial:.3f} s | {rest:.3f} s | {checks.get('posix-fd-ipc', 0):.3f} s | "
              f"{checks.get('ipc-pool', 0):.3f} s | {','.join(map(str, sorted(codes)))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
