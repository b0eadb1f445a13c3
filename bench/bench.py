"""The benchmark runner behind bench/run.sh: measures cumemctl against the floor, writes the results
as JSON (OUTPUT) and as Markdown ready for docs/benchmarks.md (OUTPUT with .md), and prints progress.
What is measured and why: docs/benchmarks.md."""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import measure
import results_md
import suites

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GIB = 1 << 30


def parse_size(text):
    """'64MiB', '16GiB' or a byte count."""
    for unit, factor in (("GiB", GIB), ("MiB", 1 << 20)):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


class Context:
    """What every benchmark needs: the programs, repetitions, environment, time budget, progress."""

    def __init__(self, args):
        self.cumemctl = os.path.abspath(args.cumemctl)
        build = os.path.dirname(os.path.dirname(self.cumemctl))
        self.build = build
        self.floor = os.path.abspath(args.floor or os.path.join(build, "bench", "bench_floor"))
        self.copy = os.path.abspath(args.copy or os.path.join(build, "bench", "bench_copy_bandwidth"))
        self.spawn = os.path.join(os.path.dirname(self.floor), "bench_spawn")
        self.python = sys.executable
        self.smoke = args.smoke
        self.runs = args.runs or (3 if args.smoke else 15)
        self.warmups = args.warmups if args.warmups is not None else (1 if args.smoke else 2)
        self.heavy_runs = max(3, self.runs // 3)
        sizes = args.sizes or ("64MiB,256MiB" if args.smoke else "1GiB,16GiB,64GiB")
        self.sizes = [(s, parse_size(s)) for s in sizes.split(",")]
        self.budget = args.budget
        self.started = time.perf_counter()
        self.env = dict(os.environ)
        if args.smoke:
            self.env.setdefault("CUMEMCTL_LIBCUDA", os.path.join(build, "tests", "libfakecuda.so"))
            self.env.setdefault("FAKECUDA_PROFILE", os.path.join(REPO, "tests", "fakecuda", "profiles", "h200.json"))
            self.env.setdefault("CUMEMCTL_LIBNVML", os.path.join(build, "tests", "libfakenvml.so"))
        self.tmp = tempfile.mkdtemp(prefix="cumemctl-bench-")
        self.python_skip = self._python_skip()

    def _python_skip(self):
        """Why floor.py cannot run here (None where it can)."""
        if self.smoke:
            return "smoke mode: cuda.bindings would load the real driver, not the fake one"
        r = subprocess.run([self.python, "-c", "import cuda.bindings.driver"], capture_output=True)
        return None if r.returncode == 0 else f"{self.python} has no cuda.bindings"

    def elapsed(self):
        """Seconds since the runner started."""
        return time.perf_counter() - self.started

    def log(self, text):
        """One progress line, with the time elapsed."""
        print(f"[{self.elapsed():6.1f} s] {text}", flush=True)

    def summary(self, values):
        """Median, quartiles, min and max of a list of numbers."""
        return measure.summary(values)

    def available(self, sub, needle=None):
        """Whether the binary has this subcommand (and option): CLI11 prints the main help, exit 0,
        for an unknown subcommand too, so the usage line is what tells."""
        r = subprocess.run([self.cumemctl, sub, "--help"], capture_output=True, text=True, env=self.env)
        text = r.stdout + r.stderr
        return r.returncode == 0 and f"cumemctl {sub}" in text and (needle is None or needle in text)

    def missing(self, what):
        """The note for a command that this binary does not have."""
        return f"not measured: `{what}` does not exist in this binary ({self.cumemctl})"

    def skipped(self, label, why):
        """An item that was not measured, and why."""
        return {"label": label, "skipped": why}

    def timed(self, label, argv, heavy=False, **kwargs):
        """Measures one command line (see timed_together)."""
        return self.timed_together([label], [argv], heavy, **kwargs)[0]

    def timed_together(self, labels, argvs, heavy=False, **kwargs):
        """Measures command lines, interleaved, with the run counts (fewer for heavy commands) within
        the time budget."""
        left = self.budget - self.elapsed()
        if left < 5:
            self.log(f"{', '.join(labels)}: skipped, time budget spent")
            return [self.skipped(label, f"time budget of {self.budget:.0f} s spent") for label in labels]
        runs = self.heavy_runs if heavy else self.runs
        warmups = min(1, self.warmups) if heavy else self.warmups
        cap = min(left - 2, (60 if heavy else 30) * len(argvs))
        self.log(f"{' | '.join(labels)}: {warmups} warm-up + up to {runs} runs" +
                 (" each, interleaved" if len(argvs) > 1 else ""))
        results = measure.measure(argvs, runs, warmups, env=self.env, max_seconds=cap, **kwargs)
        for label, r in zip(labels, results):
            r["label"] = label
            if "error" in r:
                self.log(f"  {label}: FAILED: {r['error'][:300]}")
            if "seconds" in r:
                s = r["seconds"]
                self.log(f"  {label}: median {s['median']:.4f} s (min {s['min']:.4f}, max {s['max']:.4f}, "
                         f"{s['n']} runs), peak RSS {r['max_rss_kib']['max'] / 1024:.1f} MiB")
        return results

    def once(self, label, argv, env=None):
        """Runs argv once (a helper step or a program that repeats internally), with `env` added to
        the environment."""
        self.log(f"{label}")
        run = measure.run_once(argv, env={**self.env, **(env or {})})
        r = {"label": label, "argv": argv, "stdout": run.stdout, "seconds": {"median": run.seconds},
             "max_rss_kib": {"max": run.max_rss_kib}}
        if run.code != 0:
            r["error"] = f"exit {run.code}: {(run.stderr.strip() or run.stdout.strip())[-600:]}"
            self.log(f"  FAILED: {r['error'][:300]}")
        return r

    def imex_sources(self):
        """--proc-devices/--params: the node's own files (read only), fabricated ones where the node
        lacks the IMEX major (smoke mode, a machine without the driver)."""
        proc_devices, params = "/proc/devices", "/proc/driver/nvidia/params"
        real = os.path.exists(params) and "nvidia-caps-imex-channels" in open(proc_devices).read()
        if real and not self.smoke:
            return ["--proc-devices", proc_devices, "--params", params]
        proc_devices, params = os.path.join(self.tmp, "devices"), os.path.join(self.tmp, "params")
        with open(proc_devices, "w") as f:
            f.write("Character devices:\n  1 mem\n195 nvidia\n242 nvidia-caps-imex-channels\n\nBlock devices:\n")
        with open(params, "w") as f:
            f.write("DeviceFileMode: 438\nImexChannelCount: 2048\nCreateImexChannel0: 0\n")
        return ["--proc-devices", proc_devices, "--params", params]


def command_output(argv, env=None):
    """What argv printed (stripped), or None where it failed or could not run."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def environment(ctx):
    """Date, machine, GPU, driver, commit: what the results file names."""
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "host": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
           "python": f"{ctx.python} ({platform.python_version()})",
           "cumemctl": command_output([ctx.cumemctl, "--version"], ctx.env),
           "git": command_output(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"])}
    bindings = command_output([ctx.python, "-c", "import cuda.bindings; print(cuda.bindings.__version__)"])
    env["cuda_bindings"] = bindings
    smi = shutil.which("nvidia-smi") and not ctx.smoke and command_output(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,persistence_mode", "--format=csv,noheader"])
    env["nvidia_smi"] = smi.splitlines() if smi else None
    doc = suites.parse_json(command_output([ctx.cumemctl, "devices", "--no-free", "--json"], ctx.env))
    if doc:
        env["driver_version"] = doc.get("driver", {}).get("version_string") or doc.get("driver", {}).get("version")
        env["gpus"] = [f"{d['name']} ({d['total_bytes'] / GIB:.1f} GiB)" for d in doc["results"]["devices"]]
    return env


def main(argv):
    """Parses the options, runs the chosen benchmark groups, writes the JSON and the Markdown."""
    p = argparse.ArgumentParser(prog="bench/run.sh", description=__doc__)
    p.add_argument("cumemctl", help="the cumemctl binary to measure, e.g. build-rel/cmd/cumemctl")
    p.add_argument("output", help="the results file (JSON); the Markdown goes beside it as .md")
    p.add_argument("--smoke", action="store_true", help="a quick check of the runner against the fake driver")
    p.add_argument("--floor", help="bench_floor (default: BUILD/bench/bench_floor beside the binary's build); "
                                   "bench_spawn is taken from the same folder")
    p.add_argument("--copy", help="bench_copy_bandwidth (default: BUILD/bench/bench_copy_bandwidth)")
    p.add_argument("--runs", type=int, help="timed runs of each quick command (default 15; heavy ones a third)")
    p.add_argument("--warmups", type=int, help="untimed runs first (default 2; heavy commands 1)")
    p.add_argument("--sizes", help="create --verify sizes (default 1GiB,16GiB,64GiB)")
    p.add_argument("--budget", type=float, default=360, help="seconds after which the rest is skipped")
    p.add_argument("--only", help="comma list of: " + ",".join(suites.ALL))
    args = p.parse_args(argv)
    ctx = Context(args)
    if not os.access(ctx.cumemctl, os.X_OK):
        p.error(f"{ctx.cumemctl} is not an executable")
    for path in (ctx.floor, ctx.copy, ctx.spawn):
        if not os.access(path, os.X_OK):
            p.error(f"{path} is missing: build the bench targets "
                    "(cmake --build BUILD --target bench_floor bench_copy_bandwidth bench_spawn)")
    measure.use_spawn(ctx.spawn)
    ctx.log(f"cumemctl benchmark{' (SMOKE: fake driver, not results)' if ctx.smoke else ''}: "
            f"{ctx.cumemctl}, budget {ctx.budget:.0f} s")
    results = {"schema": "cumemctl-bench/1", "smoke": ctx.smoke, "environment": environment(ctx),
               "settings": {"runs": ctx.runs, "heavy_runs": ctx.heavy_runs, "warmups": ctx.warmups,
                            "sizes": [s for s, _ in ctx.sizes], "budget_seconds": ctx.budget,
                            "timing": measure.RSS_METHOD},
               "groups": []}
    wanted = args.only.split(",") if args.only else list(suites.ALL)
    try:
        for name in wanted:
            ctx.log(f"== {name}")
            results["groups"] += suites.ALL[name](ctx)
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    results["total_seconds"] = ctx.elapsed()
    for g in results["groups"]:
        for item in g.get("items", []) + [r.get(k) for r in g.get("rows", []) for k in ("create", "copy")]:
            if isinstance(item, dict) and "stdout" in item and "error" not in item:
                del item["stdout"]  # kept only where it explains a failure
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1)
    md_path = (args.output[:-5] if args.output.endswith(".json") else args.output) + ".md"
    text = results_md.render(results)
    with open(md_path, "w") as f:
        f.write(text)
    print(text)
    ctx.log(f"done in {results['total_seconds']:.0f} s: wrote {args.output} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
