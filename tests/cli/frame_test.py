#!/usr/bin/python3
"""The frame's contracts, for every command of the command table (cmd/command_table.cpp, read here so
that a command added there without a run below fails this test):

- each command, run on the fake driver and sent SIGTERM, then SIGINT, once under way, exits 143 or 130
  within 1 s of the signal (the quickest of three tries, where other tests load the machine); a command that does not declare works_long may instead have finished (its
  own exit code), within the same second, and so may one that ended before the signal came;
- each command that declares measures, run beside a fake holder (the fake NVML lists pid 4194242 on the
  GPU), names the holder: when it ends by itself, and when SIGTERM stops it under way (the report of
  what was done still says who shared the GPU).

    frame_test.py BINARY FAKECUDA FAKENVML PROFILES SOURCE
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

WITHIN_S = 1.0
ATTEMPTS = 3

# How each command is run: its arguments, the fake driver's profile, and the call that the fake delays
# and names on stderr once the work is under way ("call:ms"; None: the signal comes 0.2 s after the
# start). A profile override ("slow_d2h") slows the fake's copies.
RUNS = {
    "doctor": (["doctor", "--json"], "h200", "cuMemCreate:300"),
    "devices": (["devices", "--json"], "h200", None),
    "imex_setup": (["imex-setup", "--check", "--proc-devices", "{tmp}/devices", "--params", "{tmp}/params",
                    "--dev-root", "{tmp}", "--json"], "h200", None),
    "le_bind": (["le-bind", "--json"], "h200-13.4", None),
    "granularity": (["granularity", "--json"], "h200", None),
    "create": (["create", "--size", "8MiB", "--verify", "--json"], "h200", "cuEventSynchronize:300"),
    "importer": (["__importer"], "h200", None),
    "pool_stats": (["pool-stats", "--exercise", "16x2MiB", "--json"], "h200", "cuMemAllocFromPoolAsync:200"),
    "trim": (["trim", "--json"], "h200", None),
    "fleet": (["fleet", "{tmp}", "--json"], None, None),
    "fabric_matrix": (["fabric-matrix", "--local", "--json"], "h200x8", "cuMemCreate:300"),
    "matrix_rank": (["__matrix-rank"], "h200", None),
    "memtest": (["memtest", "--size", "64MiB", "--passes", "50", "--json"], "h200", "cuLaunchKernel:100"),
    "bandwidth": (["bandwidth", "--size", "16MiB", "--iterations", "50", "--json"], "slow_d2h",
                  "cuMemcpyDtoHAsync:1"),
    "completion": (["completion", "bash"], None, None),
    "imex_verify": (["__imex-verify"], "h200", None),
}

# How each measuring command is run beside the holder, and on which profile with it ("held": h200's
# device 0, "held_x8": h200x8's). Stopped under way, it runs as in RUNS, on RUNS's profile with the
# holder added, and with HOLDER_ARGS's arguments more (memtest measures a held GPU only when forced).
HOLDER_ARGS = {"memtest": ["--force"]}
BESIDE_HOLDER = {
    "bandwidth": (["bandwidth", "--size", "16MiB", "--iterations", "2", "--json"], "held"),
    "memtest": (["memtest", "--size", "64MiB", "--force", "--json"], "held"),
    "doctor": (["doctor", "--json"], "held"),
    "fabric_matrix": (["fabric-matrix", "--local", "2", "--json"], "held_x8"),
}


def command_table(source):
    """(name, does) of each row of cmd/command_table.cpp: {Command::name, register_..., a | b[, writes]}."""
    text = open(os.path.join(source, "cmd", "command_table.cpp"), encoding="utf-8").read()
    rows = re.findall(r"\{Command::(\w+),\s*register_\w+,\s*([\w |]+?)\s*(?:,[^{}]*)?\}", text)
    return [(name, {d.strip() for d in does.split("|")}) for name, does in rows]


HOLDER = 'devices[0].nvml.processes=[{"pid": 4194242, "used": 1073741824, "name": "/usr/bin/python3"}]'
# Variants of the fake's profiles made here: (the base profile, the changes).
VARIANTS = {"slow_d2h": ("h200", ['devices[0].copy.d2h_gbps=0.125']), "held": ("h200", [HOLDER]),
            "held_x8": ("h200x8", [HOLDER])}


def make_profile(source, tmp, name, beside_holder=False):
    """The profile file for `name`: one of the fake's, or a variant made here; beside_holder adds the
    holder to it."""
    base, changes = VARIANTS.get(name, (name, []))
    if beside_holder and HOLDER not in changes:
        changes = changes + [HOLDER]
    if not changes:
        return os.path.join(source, "tests", "fakecuda", "profiles", name + ".json")
    out = os.path.join(tmp, name + ("-held" if beside_holder else "") + ".json")
    subprocess.run([sys.executable, os.path.join(source, "tests", "fakecuda", "make_profile.py"), base, out]
                   + changes, check=True)
    return out


def environment(args, tmp, profile, beside_holder=False):
    env = dict(os.environ)
    env.pop("FAKECUDA_DELAY_MS", None)
    env["CUMEMCTL_LIBNVML"] = "/nonexistent/libnvidia-ml.so.1"
    if profile:
        env["FAKECUDA_PROFILE"] = make_profile(args["source"], tmp, profile, beside_holder)
        env["CUMEMCTL_LIBCUDA"] = args["fake"]
        env["CUMEMCTL_LIBNVML"] = args["fake_nvml"]
    env["FAKECUDA_IMEX_DIR"] = os.path.join(tmp, "imex-channels")
    # Hermetic, as run_cases.py: a fake system root, and the binary refuses to read the real one.
    env["CUMEMCTL_HERMETIC"] = "1"
    env["CUMEMCTL_SYSROOT"] = args["sysroot"]
    return env


def signalled_run(args, name, sig, tmp, beside_holder=False):
    """Runs the command (beside the holder, with HOLDER_ARGS, where asked), sends `sig` once under way;
    returns (exit code, seconds from the signal to the exit or None where it ended first, stderr,
    stdout)."""
    argv, profile, delay = RUNS[name]
    if beside_holder:
        argv = argv + HOLDER_ARGS.get(name, [])
    env = environment(args, tmp, profile, beside_holder)
    if delay:
        env["FAKECUDA_DELAY_MS"] = delay
    err_path, out_path = os.path.join(tmp, "err"), os.path.join(tmp, "out")
    with open(err_path, "w+", encoding="utf-8") as err, open(out_path, "w+", encoding="utf-8") as out:
        p = subprocess.Popen([args["binary"]] + [a.replace("{tmp}", tmp) for a in argv], env=env, stdout=out,
                             stderr=err, stdin=subprocess.DEVNULL)
        marker = f"fakecuda: delay {delay.split(':')[0]}" if delay else None
        deadline = time.monotonic() + 60
        start = time.monotonic()
        while p.poll() is None and time.monotonic() < deadline:
            if marker is None and time.monotonic() - start >= 0.2 and catches_signals(p.pid):
                break
            if marker is not None and marker in open(err_path, encoding="utf-8", errors="replace").read():
                break
            time.sleep(0.02)
        if p.poll() is not None:
            return p.returncode, None, read(err_path), read(out_path)
        # An answer already written (a report on stdout, an error on stderr) decided the exit code: a
        # signal then lands in the exit itself (a sanitizer build's leak scan), and counts as after the end.
        answered = bool(read(out_path)) or "cumemctl: error:" in read(err_path)
        sent = time.monotonic()
        p.send_signal(sig)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        took = None if answered else time.monotonic() - sent
        return p.returncode, took, read(err_path), read(out_path)


def catches_signals(pid):
    """Whether the process has installed its SIGINT and SIGTERM handlers (SigCgt in /proc): before
    main(), a sanitizer build on a busy machine can still be starting 0.2 s in, and a signal then kills
    it by default, which says nothing of the frame."""
    try:
        status = open(f"/proc/{pid}/status", encoding="utf-8").read()
    except OSError:
        return True  # it has ended: the caller sees that
    caught = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return all(caught & (1 << (s - 1)) for s in (signal.SIGINT, signal.SIGTERM))


def read(path):
    return open(path, encoding="utf-8", errors="replace").read()


def names_holder(stdout):
    """The warnings of a JSON report that name pid 4194242 in held_by (none where it is no JSON)."""
    try:
        warnings = json.loads(stdout).get("warnings", [])
    except ValueError:
        return []
    return [w for w in warnings if any(h.get("pid") == 4194242 for h in w.get("held_by", []))]


def main():
    binary, fake, fake_nvml, _profiles, source = sys.argv[1:6]
    sysroot = tempfile.mkdtemp(prefix="cumemctl-frame-sysroot-")
    subprocess.run(["bash", os.path.join(source, "tests", "cli", "sysroot.sh"), sysroot, "--no-driver"],
                   check=True, capture_output=True)
    args = {"binary": binary, "fake": fake, "fake_nvml": fake_nvml, "source": source, "sysroot": sysroot}
    try:
        return walk(args)
    finally:
        shutil.rmtree(sysroot, ignore_errors=True)


def walk(args):
    """Runs every row of the table as the module's docstring says; 0 when each keeps the contracts."""
    binary, source = args["binary"], args["source"]
    table = command_table(source)
    failures = []
    if len(table) < 10:
        failures.append(f"cmd/command_table.cpp: read {len(table)} rows; the pattern no longer matches")
    for name, does in table:
        if name not in RUNS:
            failures.append(f"{name}: no run in frame_test.py's RUNS: add how to run it under way")
            continue
        for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
            # A machine busy with other tests can hold a prompt exit back: an exit past the second is
            # tried again, twice at most, and the quickest counts (a command that ignores the signal
            # misses it every time).
            tries = []
            for _ in range(ATTEMPTS):
                with tempfile.TemporaryDirectory() as tmp:
                    rc, took, err, _ = signalled_run(args, name, sig, tmp)
                tries.append(took)
                if rc < 0 or took is None or took <= WITHIN_S:
                    break
            what = f"{name} under {sig.name}: exit {rc}" + (f", {took:.2f} s after the signal" if took else
                                                           ", ended before the signal")
            if len(tries) > 1:
                what += " (tries: " + ", ".join("ended before" if t is None else f"{t:.2f} s" for t in tries) + ")"
            print(what)
            if rc < 0:
                failures.append(f"{what}: killed by a signal, not an orderly exit\n{err[-1500:]}")
            elif took is not None and took > WITHIN_S:
                failures.append(f"{what}: more than {WITHIN_S} s")
            elif "a hermetic test would read this machine's" in err:
                failures.append(f"{what}: read this machine's own system\n{err[-1500:]}")
            elif took is not None and rc != code and "works_long" in does:
                failures.append(f"{what}: declares works_long, so {code} is due\n{err[-1500:]}")
        if "measures" in does:
            if name not in BESIDE_HOLDER:
                failures.append(f"{name}: declares measures, and frame_test.py's BESIDE_HOLDER has no run")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                argv, profile = BESIDE_HOLDER[name]
                env = environment(args, tmp, profile)
                r = subprocess.run([binary] + argv, env=env, capture_output=True, text=True,
                                   timeout=120, stdin=subprocess.DEVNULL)
            named = names_holder(r.stdout)
            print(f"{name} beside pid 4194242: exit {r.returncode}, {len(named)} warning(s) name it")
            if not named:
                failures.append(f"{name} beside pid 4194242 names it in no warning's held_by\n{r.stdout[-1500:]}")
            failures += stopped_beside_holder(args, name)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def stopped_beside_holder(args, name):
    """A measuring command stopped by SIGTERM under way beside the holder: exit 143, and the report of
    what was done names the holder. The failures, if any."""
    with tempfile.TemporaryDirectory() as tmp:
        rc, took, err, out = signalled_run(args, name, signal.SIGTERM, tmp, beside_holder=True)
    named = names_holder(out)
    print(f"{name} beside pid 4194242 under SIGTERM: exit {rc}, {len(named)} warning(s) name it")
    if took is None:
        return [f"{name} beside pid 4194242 ended (exit {rc}) before the signal came\n{err[-1500:]}"]
    if rc != 143:
        return [f"{name} beside pid 4194242 under SIGTERM: exit {rc}, not 143\n{err[-1500:]}"]
    if not named:
        return [f"{name} beside pid 4194242, stopped by SIGTERM, names it in no warning's held_by\n{out[-1500:]}"]
    return []


if __name__ == "__main__":
    sys.exit(main())
