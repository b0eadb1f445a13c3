#!/usr/bin/python3
"""doctor --format nfd --output FILE under signals: a reader of the folder (as node-feature-discovery
reads features.d: every file that is not a dot file) sees the old file or the new one, whole, never a
part, whatever kills the writer and when.
- SIGKILL while the temporary file is written and being flushed (strace holds its fsync): FILE is the
  old one, and what is left is a dot file, which NFD skips.
- SIGTERM during the checks: exit 143, FILE is the old one, nothing left.
- SIGKILL at random moments of many runs, a reader polling the folder all the while. The moments are
  drawn from how long a run takes now, learnt as the runs go (a loaded machine's runs take longer):
  at least 20 runs, until some were killed and some completed.
    atomic_output_test.py CUMEMCTL FAKECUDA FAKENVML PROFILES_DIR
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

CUMEMCTL, FAKECUDA, FAKENVML, PROFILES = sys.argv[1:5]
PREFIX = "cumemctl.feature.node.kubernetes.io/"


def env(**more):
    e = dict(os.environ, CUMEMCTL_LIBCUDA=FAKECUDA, CUMEMCTL_LIBNVML=FAKENVML,
             FAKECUDA_PROFILE=os.path.join(PROFILES, "h200.json"), ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    e.update(more)
    return e


def command(path, expiry="1h"):
    return [CUMEMCTL, "doctor", "--quick", "--format", "nfd", "--expiry", expiry, "--output", path]


def whole(text):
    """A complete feature file of doctor's: the comment, the expiry, the labels through the last one."""
    lines = text.split("\n")
    return (text.endswith("\n") and lines[0].startswith("# cumemctl doctor on ") and lines[1].startswith("# +expiry-time=")
            and any(l.startswith(PREFIX + "gpu-count=") for l in lines) and lines[-2].startswith(PREFIX))


def visible(folder):
    """What NFD reads: the files of the folder that are not dot files, {name: text}."""
    out = {}
    for name in os.listdir(folder):
        if name.startswith("."):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                out[name] = f.read()
        except FileNotFoundError:
            pass
    return out


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def baseline(folder, path):
    p = subprocess.run(command(path, "2h"), env=env(), capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or not whole(open(path).read()):
        fail(f"the first write: exit {p.returncode} {p.stderr}")
    return open(path).read()


def test_kill_in_fsync(folder, path, old):
    if shutil.which("strace") is None:
        if os.environ.get("CI"):
            fail("strace is missing (scripts/setup.sh installs it): the SIGKILL inside the write is not tried")
        print("skip: strace is missing (SIGKILL inside the write)")
        return
    # strace holds every fsync for 30 s: the temporary file is written and waits there.
    tracer = subprocess.Popen(["strace", "-f", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=30000000",
                               *command(path)], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    temp = None
    while time.monotonic() < deadline and temp is None:
        for name in os.listdir(folder):
            full = os.path.join(folder, name)
            if name.startswith(".cumemctl.") and os.path.getsize(full) > 0 and whole(open(full).read()):
                temp = full
        time.sleep(0.05)
    if temp is None:
        tracer.kill()
        fail(f"no temporary dot file was written within 60 s: {os.listdir(folder)}")
    if visible(folder) != {"cumemctl": old}:
        fail("while the new file waited in fsync, the folder did not show the old file alone")
    child = subprocess.run(["pgrep", "-P", str(tracer.pid)], capture_output=True, text=True).stdout.split()
    for pid in child:
        os.kill(int(pid), signal.SIGKILL)
    tracer.kill()
    tracer.wait()
    if visible(folder) != {"cumemctl": old}:
        fail(f"after SIGKILL in fsync the folder shows {visible(folder)}")
    os.unlink(temp)  # what a killed writer leaves: a dot file (NFD skips it)
    print("ok: SIGKILL while the new file was being flushed: the old file whole, a dot file left")


def catches_sigterm(pid):
    """Whether the process has its SIGTERM handler yet (SigCgt in /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return (int(line.split()[1], 16) >> (signal.SIGTERM - 1)) & 1 == 1
    except FileNotFoundError:
        pass
    return False


def test_term_during_checks(folder, path, old):
    p = subprocess.Popen(command(path), env=env(FAKECUDA_DELAY_MS="cuDriverGetVersion:3000"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    # Once it catches SIGTERM (a loaded machine may take longer than any fixed pause to get there), it
    # is in the checks, waiting in the 3 s call.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None and not catches_sigterm(p.pid):
        time.sleep(0.02)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    if p.returncode != 143:
        fail(f"SIGTERM during the checks: exit {p.returncode}, 143 expected: {err}")
    if visible(folder) != {"cumemctl": old} or any(n != "cumemctl" for n in os.listdir(folder)):
        fail(f"after SIGTERM the folder holds {os.listdir(folder)}")
    print("ok: SIGTERM during the checks: exit 143, the old file, nothing left")


def test_random_kills(folder, path, run_seconds):
    stop = threading.Event()
    problems, reads = [], [0]

    def reader():
        while not stop.is_set():
            files = visible(folder)
            if set(files) != {"cumemctl"} or not whole(files.get("cumemctl", "")):
                problems.append(files)
            reads[0] += 1
            time.sleep(0.0002)  # hundreds of reads a run, without a core spent on them

    t = threading.Thread(target=reader)
    t.start()
    completed = killed = runs = 0
    try:
        while runs < 20 or ((killed == 0 or completed == 0) and runs < 100):
            runs += 1
            p = subprocess.Popen(command(path, f"{runs}h"), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(random.uniform(0, 1.5 * run_seconds))  # before, during or after its write
            if p.poll() is None:
                p.kill()
                killed += 1
                run_seconds *= 1.25  # a run takes longer than thought: later kills reach further
            p.wait()
            completed += p.returncode == 0
    finally:
        stop.set()
        t.join()
    for name in os.listdir(folder):
        if name != "cumemctl" and not name.startswith(".cumemctl."):
            problems.append(f"left {name}")
    if problems:
        fail(f"the reader saw a folder without one whole file ({len(problems)} of {reads[0]} reads): {problems[0]!r}")
    if killed == 0 or completed == 0:
        fail(f"{runs} runs, {killed} killed, {completed} completed: the kills missed the write "
             f"(a run took up to {run_seconds:.3f} s)")
    print(f"ok: {runs} runs, {killed} killed at random moments, {completed} completed; {reads[0]} reads each saw one "
          "whole file")


def main():
    folder = tempfile.mkdtemp(prefix="features.d.")
    try:
        path = os.path.join(folder, "cumemctl")
        start = time.monotonic()
        old = baseline(folder, path)
        run_seconds = time.monotonic() - start
        test_kill_in_fsync(folder, path, old)
        test_term_during_checks(folder, path, old)
        test_random_kills(folder, path, run_seconds)
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
