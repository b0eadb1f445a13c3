"""Timing one command line: wall time and peak resident memory of each run, and their spread.

Each run is one child process; its wall time is taken around fork and wait, and its peak resident set
(ru_maxrss) comes from wait4 for that child alone, so no /usr/bin/time or hyperfine is needed."""
import os
import statistics
import subprocess
import tempfile
import threading
import time


class Run:
    """One run of a command: exit code, wall seconds, peak RSS in KiB, and what it printed."""

    def __init__(self, code, seconds, max_rss_kib, stdout, stderr):
        self.code = code
        self.seconds = seconds
        self.max_rss_kib = max_rss_kib
        self.stdout = stdout
        self.stderr = stderr


def run_once(argv, env=None, timeout=300):
    """Runs argv once (output to temporary files, so no pipe can fill) and waits for it with wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, seconds, usage.ru_maxrss, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"))


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


def measure(argv, runs, warmups, env=None, timeout=300, before_each=None, max_seconds=None):
    """Runs argv `warmups` times untimed, then up to `runs` times timed. Stops early (at least 3 timed
    runs) where the runs would exceed `max_seconds`. `before_each` (untimed) prepares each run.

    Returns a dict: seconds and max_rss_kib summaries, every run's seconds, the exit codes, the last
    run's stdout (for the numbers a command reports), and an error where a run failed."""
    result = {"argv": argv, "warmups": warmups}
    timed = []
    started = time.perf_counter()
    for i in range(warmups + runs):
        if before_each is not None:
            before_each()
        r = run_once(argv, env=env, timeout=timeout)
        if r.code != 0:
            result["error"] = f"exit {r.code}: {(r.stderr.strip() or r.stdout.strip())[-600:]}"
            result["stdout"] = r.stdout
            break
        if i >= warmups:
            timed.append(r)
        result["stdout"] = r.stdout
        spent = time.perf_counter() - started
        if max_seconds is not None and len(timed) >= 3 and spent / (i + 1) * (i + 2) > max_seconds:
            break
    result["runs"] = len(timed)
    if timed:
        result["seconds"] = summary([r.seconds for r in timed])
        result["max_rss_kib"] = summary([r.max_rss_kib for r in timed])
        result["all_seconds"] = [round(r.seconds, 6) for r in timed]
    return result
