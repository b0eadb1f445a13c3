"""Timing one command line: wall time and peak resident memory of each run, and their spread.

Each run goes through bench_spawn (spawn.cpp), which forks the command and reports its wall time and
ru_maxrss: a child started from Python itself would count Python's own peak RSS too (exec records the
high-water mark of the address space the child was forked from), and Python's start-up of a child
would add to its time. Without bench_spawn, wait4 from here is the fallback, and then no RSS figure
below the runner's own peak is real (RSS_METHOD says which was used)."""
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time

SPAWN = None            # bench_spawn's path, set by the runner
RSS_METHOD = "wait4 from the runner (no bench_spawn): figures below the runner's own peak RSS are that peak"


def use_spawn(path):
    """Makes every run go through bench_spawn at `path`."""
    global SPAWN, RSS_METHOD
    SPAWN = path
    RSS_METHOD = "bench_spawn: wall time around fork/wait4, ru_maxrss of the command"


class Run:
    """One run of a command: exit code, wall seconds, peak RSS in KiB, and what it printed."""

    def __init__(self, code, seconds, max_rss_kib, stdout, stderr):
        self.code = code
        self.seconds = seconds
        self.max_rss_kib = max_rss_kib
        self.stdout = stdout
        self.stderr = stderr


def run_once(argv, env=None, timeout=300):
    """Runs argv once in its own process group (killed whole after `timeout` seconds), output to
    temporary files so that no pipe can fill."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as report:
        wrapped = [SPAWN, report.name, *argv] if SPAWN else argv
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        killer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        killer.cancel()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        max_rss = usage.ru_maxrss
        fields = report.read().split()
        if SPAWN and len(fields) == 3:
            code, seconds, max_rss = int(fields[0]), float(fields[1]), int(fields[2])
        out.seek(0)
        err.seek(0)
        return Run(code, seconds, max_rss, out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def quartiles(values):
    """The first and third quartiles (inclusive method); both the value itself for one value."""
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def summary(values):
    """Median, quartiles, min and max of a list of numbers, as a dict."""
    q1, q3 = quartiles(values)
    return {"median": statistics.median(values), "q1": q1, "q3": q3, "min": min(values), "max": max(values),
            "n": len(values)}


def measure(argvs, runs, warmups, env=None, timeout=300, before_each=None, max_seconds=None, parse=None,
            ok_codes=(0,)):
    """Runs each command line of `argvs` `warmups` times untimed, then up to `runs` times timed,
    interleaved (one run of each per round, so that a drift of the machine touches all alike). Stops
    early (at least 3 timed rounds) where the rounds would exceed `max_seconds`. `before_each`
    (untimed) prepares each run; an exit code outside `ok_codes` (one tuple for all, or a list of one
    tuple per command line) stops that command with an error.

    Returns one dict per command line: seconds and max_rss_kib summaries, every run's seconds, the
    last run's stdout (for the numbers a command reports), `parse(stdout)` of every timed run where
    `parse` is given, and an error where a run failed."""
    results = [{"argv": argv, "warmups": warmups} for argv in argvs]
    timed = [[] for _ in argvs]
    codes = list(ok_codes) if ok_codes and isinstance(ok_codes[0], tuple) else [tuple(ok_codes)] * len(argvs)
    started = time.perf_counter()
    for i in range(warmups + runs):
        for result, runs_of, argv, ok in zip(results, timed, argvs, codes):
            if "error" in result:
                continue
            if before_each is not None:
                before_each()
            r = run_once(argv, env=env, timeout=timeout)
            result["stdout"] = r.stdout
            if r.code not in ok:
                result["error"] = f"exit {r.code}: {(r.stderr.strip() or r.stdout.strip())[-600:]}"
            elif i >= warmups:
                runs_of.append(r)
        spent = time.perf_counter() - started
        done = min(len(t) for t in timed)
        if max_seconds is not None and done >= 3 and spent / (i + 1) * (i + 2) > max_seconds:
            break
    for result, runs_of in zip(results, timed):
        finish(result, runs_of, parse)
    return results


def finish(result, timed, parse):
    """Adds the figures of the timed runs to a command's result."""
    result["runs"] = len(timed)
    result["exit_codes"] = sorted({r.code for r in timed})
    if parse is not None:
        result["parsed"] = [parse(r.stdout) for r in timed]
    if timed:
        result["seconds"] = summary([r.seconds for r in timed])
        result["max_rss_kib"] = summary([r.max_rss_kib for r in timed])
        result["all_seconds"] = [round(r.seconds, 6) for r in timed]
