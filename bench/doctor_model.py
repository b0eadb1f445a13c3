#!/usr/bin/python3
"""A model of doctor on N GPUs from the fake driver: doctor runs against the fake driver with
1, 2, 4 and 8 devices, with the fake's costs of the real driver (FAKECUDA_COST_MS): cuInit takes BASE +
PER_DEVICE ms for each device the process sees; making a primary context CONTEXT ms and releasing it
RELEASE ms, one at a time on the node (a lock file that every process of the run takes), as the real
driver does (bench/contexts.py: it makes and releases the contexts of all processes on a node largely
one at a time, on different GPUs too). The defaults are GPU run 11's H200 figures (cuInit 100-114 ms
with one GPU visible, 220 ms with two; a context about 100 ms alone; two released in 120 ms).
--per-process drops the lock (contexts one at a time within a process only: a driver that made
different processes' contexts at once). --nvml-ms gives nvmlInit its cost too (FAKENVML_COST_MS);
--kernel-list runs doctor under a fake system root whose /proc/driver/nvidia/gpus lists the GPUs, as a
node's does (doctor starts its importers from it; without it, from NVML's list). It prints a Markdown table: doctor's wall time, the work the
driver serialises on the node (the N contexts of doctor and the N of its importers, made and
released), what is left, and the IPC checks' own times. A model, not a timed test: the
fake's costs are sleeps, the work of the checks is the fake's.

    bench/doctor_model.py BUILD [--devices 1,2,4,8] [--runs 3] [--cost init:5+105;context:100;release:60]
                                [--per-process] [--nvml-ms MS] [--kernel-list]
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
    """'init:5+105;context:100;release:60' -> (5, 105, 100, 60)."""
    parts = dict(item.split(":", 1) for item in text.split(";") if item)
    base, per = (int(x) for x in parts.get("init", "0+0").split("+"))
    return base, per, int(parts.get("context", "0")), int(parts.get("release", "0"))


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


def binary_commit(cumemctl):
    """The commit the measured binary was built from, as its --version says it ("git 7b500412d5b0")."""
    try:
        out = subprocess.run([cumemctl, "--version"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return "unknown"
    words = out.split()
    return words[words.index("(git") + 1].rstrip(")") if "(git" in words else "unknown"


def main(argv):
    p = argparse.ArgumentParser(prog="bench/doctor_model.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", help="the build folder (cmd/cumemctl, tests/libfakecuda.so)")
    p.add_argument("--devices", default="1,2,4,8")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cost", default="init:5+105;context:100;release:60", help="FAKECUDA_COST_MS (without lock:)")
    p.add_argument("--per-process", action="store_true",
                   help="contexts one at a time within a process only, not on the node")
    p.add_argument("--nvml-ms", type=int, default=0, help="nvmlInit's cost (FAKENVML_COST_MS=init:MS)")
    p.add_argument("--kernel-list", action="store_true",
                   help="a fake system root whose /proc/driver/nvidia/gpus lists the GPUs")
    args = p.parse_args(argv)
    cumemctl = os.path.join(args.build, "cmd", "cumemctl")
    base_ms, per_ms, ctx_ms, release_ms = parse_cost(args.cost)
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
                       FAKECUDA_PROFILE=path,
                       FAKECUDA_COST_MS=args.cost if args.per_process else f"{args.cost};lock:{tmp}/node.lock")
            env.pop("CUDA_VISIBLE_DEVICES", None)
            if args.nvml_ms:
                env["FAKENVML_COST_MS"] = f"init:{args.nvml_ms}"
            if args.kernel_list:
                root = os.path.join(tmp, f"root{n}")
                gpus = []
                for d in profile_with(n, base)["devices"]:
                    u = d["uuid"]
                    gpus += ["--gpu", f"{d['pci_bus_id'][4:]}:GPU-{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"]
                subprocess.run(["bash", os.path.join(REPO, "tests", "cli", "sysroot.sh"), root] + gpus, check=True)
                env["CUMEMCTL_SYSROOT"] = root
            walls, per_check, codes, statuses = [], {}, set(), set()
            for _ in range(args.runs):
                wall, checks, code, st = run_doctor(cumemctl, env)
                walls.append(wall)
                codes.add(code)
                statuses.update(st)
                for name, secs in checks.items():
                    per_check.setdefault(name, []).append(max(secs))
            # What the lock serialises: two contexts per device (doctor's and its importer's), each made
            # and released (cuInit is not under it: the importers' contexts overlap doctor's cuInit).
            serial = 2 * n * (ctx_ms + release_ms) / 1000
            wall = statistics.median(walls)
            rows.append((n, wall, serial, wall - serial,
                         {k: statistics.median(v) for k, v in per_check.items()}, codes, statuses))
            print(f"{n} device(s): doctor {wall:.3f} s", file=sys.stderr)
    scope = "one at a time within a process" if args.per_process else "one at a time on the node"
    print(f"Model of doctor on N GPUs, fake driver, {datetime.date.today().isoformat()}, commit {binary_commit(cumemctl)}; "
          f"FAKECUDA_COST_MS={args.cost} (cuInit {base_ms} + {per_ms} ms per visible device, a context "
          f"{ctx_ms} ms to make and {release_ms} ms to release, {scope})"
          f"{f'; nvmlInit {args.nvml_ms} ms' if args.nvml_ms else ''}"
          f"{'; the GPUs listed under /proc/driver/nvidia/gpus' if args.kernel_list else ''}; "
          f"medians of {args.runs} runs.\n")
    print("| devices | doctor wall | 2N contexts made and released | the rest | "
          "posix-fd-ipc (slowest device) | ipc-pool (slowest device) | exit codes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, wall, serial, rest, checks, codes, _ in rows:
        print(f"| {n} | {wall:.3f} s | {serial:.3f} s | {rest:.3f} s | {checks.get('posix-fd-ipc', 0):.3f} s | "
              f"{checks.get('ipc-pool', 0):.3f} s | {','.join(map(str, sorted(codes)))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
