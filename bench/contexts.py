#!/usr/bin/env python3
"""What the driver serialises between processes: bench_contexts started in the arrangements doctor could
use, side by side, and when each one's cuInit and contexts began and ended.

    bench/contexts.py BENCH_CONTEXTS [--runs N] [--out FILE]

Arrangements (GPUs named by UUID, from nvidia-smi): one process seeing every GPU (contexts one after
the other, and on one thread per GPU); one process seeing one GPU (its context released before it
exits, or left to the exit: the wall time holds the exit); one process per GPU, each seeing only
its own; two processes on one GPU; two per GPU; a process seeing every GPU beside one per GPU. Each is
run --runs times (medians printed). Also prints which virtual-memory calls answer without a context.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def uuids():
    out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                         text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def run_side_by_side(binary, procs):
    """procs: list of (label, visible or None, args). Returns (wall ms, [(label, record)])."""
    started = time.monotonic()
    running = []
    for label, visible, args in procs:
        env = dict(os.environ)
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
        running.append((label, subprocess.Popen([binary, *args], env=env, stdout=subprocess.PIPE, text=True)))
    records = []
    for label, p in running:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"{label}: exit {p.returncode}")
        records.append((label, json.loads(out)))
    return (time.monotonic() - started) * 1e3, records


def summarise(records):
    """Per process: cuInit ms, each context's retain ms, and its whole time from its own start."""
    rows = []
    for label, r in records:
        rows.append({
            "label": label,
            "init_ms": r["init_end"] - r["loaded"],
            "contexts_ms": [d["retain_end"] - d["retain_start"] for d in r["devices"]],
            "total_ms": r["done"] - r["start"],
        })
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    gpus = uuids()
    steps = ["steps"]
    arrangements = {
        "one process, every GPU, contexts in turn": [("all", None, steps)],
        "one process, every GPU, a thread per GPU": [("all", None, ["steps", "--threads"])],
        "one process, one GPU": [("gpu0", gpus[0], steps)],
        "one process, one GPU, its context left to the exit": [("gpu0", gpus[0], ["steps", "--no-release"])],
        "two processes on one GPU": [("gpu0-a", gpus[0], steps), ("gpu0-b", gpus[0], steps)],
    }
    if len(gpus) > 1:
        arrangements["one process per GPU"] = [(f"gpu{i}", u, steps) for i, u in enumerate(gpus)]
        arrangements["two processes per GPU"] = [(f"gpu{i}-{k}", u, steps) for i, u in enumerate(gpus) for k in "ab"]
        arrangements["every GPU beside one per GPU"] = [("all", None, steps)] + [
            (f"gpu{i}", u, steps) for i, u in enumerate(gpus)]
    results = {"gpus": len(gpus), "runs": args.runs, "arrangements": {}}
    for name, procs in arrangements.items():
        run_side_by_side(args.binary, procs)  # warm-up
        walls, per_label = [], {}
        for _ in range(args.runs):
            wall, records = run_side_by_side(args.binary, procs)
            walls.append(wall)
            for row in summarise(records):
                per_label.setdefault(row["label"], []).append(row)
        summary = {"wall_ms": statistics.median(walls), "processes": {}}
        for label, rows in per_label.items():
            n_ctx = len(rows[0]["contexts_ms"])
            summary["processes"][label] = {
                "init_ms": statistics.median(r["init_ms"] for r in rows),
                "contexts_ms": [statistics.median(r["contexts_ms"][i] for r in rows) for i in range(n_ctx)],
                "total_ms": statistics.median(r["total_ms"] for r in rows),
            }
        results["arrangements"][name] = summary
        print(f"{name}: wall {summary['wall_ms']:.0f} ms")
        for label, p in summary["processes"].items():
            ctx = ", ".join(f"{c:.0f}" for c in p["contexts_ms"])
            print(f"    {label}: cuInit {p['init_ms']:.0f} ms, contexts [{ctx}] ms, total {p['total_ms']:.0f} ms")
    no_ctx = subprocess.run([args.binary, "no-context"], capture_output=True, text=True, check=True).stdout
    results["no_context"] = json.loads(no_ctx)
    print("without a context:", no_ctx.strip())
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
