#!/usr/bin/python3
"""The Slurm health check (packaging/slurm/healthcheck) against the fake driver: its decisions by hand
(--dry-run, the node's state given), and as the HealthCheckProgram of the one-machine cluster
(tests/slurm/cluster.sh started with --conf HealthCheckProgram=DIR/scripts/healthcheck and a
HealthCheckInterval of 2 s), where each node's fake driver is switched between healthy and failing.
    healthcheck_test.py prepare DIR   copies the scripts into DIR/scripts with settings for DIR, and a
                                      cumemctl for the nodes (DIR/bin/cumemctl: the fake driver, with
                                      DIR/nodes/NODE.env read on every run)
    healthcheck_test.py [TEST...]     the tests (by-hand tests need nothing; cluster tests need the
                                      cluster, started with the scripts of $HEALTHCHECK_TEST_DIR)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from harness import CUMEMCTL, FAKECUDA, FAKENVML, PROFILES, SOURCE, check, describe, log, main, wait_for

# The scontrol the script runs: the checked path of its PATH's, never the bare name again.
SCONTROL = shutil.which("scontrol", path="/usr/sbin:/usr/bin:/sbin:/bin") or "scontrol"
TIMEOUT = 3  # doctor's budget in the tests' settings (seconds)
REMAP = {"FAKECUDA_PROFILE": "{d}/remap-failure.json"}  # the node's GPU 0 failed a row remap
HANG = {"FAKENVML_INJECT": "nvmlDeviceGetRemappedRows=hang"}  # an NVML call that never returns
REMAP_REASON = "cumemctl-hc: fail memory-health nvidia0 row remap failed"
# doctor's own line is cut there ("nvmlDeviceGetRemappe... (+4 more)": the checks not started), and the
# health check drops the "(+4 more)" to make room for its prefix.
HANG_REASON = "cumemctl-hc: timeout memory-health nvidia0 nvmlDeviceGetRema..."


def prepare(d):
    scripts = os.path.join(d, "scripts")
    os.makedirs(scripts, exist_ok=True)
    os.makedirs(os.path.join(d, "nodes"), exist_ok=True)
    os.makedirs(os.path.join(d, "bin"), exist_ok=True)
    for name in ("healthcheck", "settings.bash"):
        shutil.copy2(os.path.join(SOURCE, "packaging/slurm", name), scripts)
    with open(os.path.join(d, "bin", "cumemctl"), "w", encoding="utf-8") as f:
        f.write(f"""#!/bin/sh
# cumemctl of a test node (tests/slurm/healthcheck_test.py): the fake driver, then the node's own settings.
export CUMEMCTL_LIBCUDA={shlex.quote(FAKECUDA)} CUMEMCTL_LIBNVML={shlex.quote(FAKENVML)}
export FAKECUDA_PROFILE={shlex.quote(PROFILES)}/h200.json
env={shlex.quote(d)}/nodes/${{SLURMD_NODENAME:-none}}.env
[ -f "$env" ] && . "$env"
exec {shlex.quote(CUMEMCTL)} "$@"
""")
    os.chmod(os.path.join(d, "bin", "cumemctl"), 0o755)
    subprocess.run([sys.executable, os.path.join(PROFILES, "..", "make_profile.py"), "h200",
                    os.path.join(d, "remap-failure.json"), 'devices[0].nvml.remapped_rows={"failure": 1}'], check=True)
    write_settings(d)
    os.chmod(d, 0o755)
    return d


def write_settings(d, **more):
    # The quick checks without the IMEX ones, which warn or pass as this machine's /dev has channels.
    settings = {"CUMEMCTL": f"{d}/bin/cumemctl", "TIMEOUT": str(TIMEOUT), "LOG_FILE": f"{d}/log",
                "LOCK_FILE": f"{d}/lock.%n",
                "SLURM_CONF": os.environ.get("SLURM_CONF", ""),
                "DOCTOR_OPTIONS": "--checks driver,devices,capabilities,memory-health,fabric,inventory"}
    settings.update(more)
    with open(os.path.join(d, "scripts", "healthcheck.conf"), "w", encoding="utf-8") as f:
        f.write("# written by tests/slurm/healthcheck_test.py\n")
        f.writelines(f"{k}={v}\n" for k, v in settings.items())


def set_node(d, node, env):
    """The fake driver of `node` from now on: more environment for its cumemctl (written atomically,
    so that a health check running now reads the old or the new file)."""
    path = os.path.join(d, "nodes", node + ".env")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(f"export {k}={shlex.quote(v.format(d=d))}\n" for k, v in env.items())
    os.replace(path + ".tmp", path)


def linked_path_folders():
    """The folders of the scripts' PATH that are links here (/sbin and /bin on merged-/usr systems)."""
    return [f for f in ("/usr/sbin", "/usr/bin", "/sbin", "/bin") if os.path.islink(f)] or ["none"]


def run_by_hand(d, *args, node="n1", env=None, timeout=60):
    """Runs DIR/scripts/healthcheck as slurmd does (root, no PATH, SLURMD_NODENAME only)."""
    e = {"SLURMD_NODENAME": node}
    e.update(env or {})
    return subprocess.run([os.path.join(d, "scripts", "healthcheck"), *args], env=e, capture_output=True,
                          text=True, timeout=timeout)


def dry(d, state, reason="", node="n1"):
    p = run_by_hand(d, "--dry-run", "--node-state", state, "--node-reason", reason, node=node)
    check(p.returncode == 0, f"--dry-run on {node} ({state}, '{reason}'): {describe(p)}")
    return p.stdout


def would_run(out):
    return [line.split("would run: ", 1)[1] for line in out.splitlines() if "would run: " in line]


def test_by_hand_decisions():
    """Every decision, with the node's state given: drain, resume, leave alone, busy, no GPU."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        out = dry(d, "IDLE")
        check("doctor call: " in out and "doctor --timeout 3 --format line --checks driver,devices,capabilities,"
              "memory-health,fabric,inventory --quick" in out, out)
        check("exit 0: cumemctl: " in out and "in service" in out and not would_run(out), out)
        # A drain of its own is resumed once the node passes; someone else's is left alone.
        out = dry(d, "IDLE+DRAIN", "cumemctl-hc: fail memory-health nvidia0 row remap failed")
        check(would_run(out) == [f"{SCONTROL} update NodeName=n1 State=RESUME"], out)
        out = dry(d, "IDLE+DRAIN", "admin: fan replaced, burn-in first")
        check(not would_run(out) and "by someone else ('admin: fan replaced, burn-in first')" in out, out)
        # A failure drains, with the summary behind the prefix, at most 70 characters.
        set_node(d, "n1", REMAP)
        out = dry(d, "MIXED")
        check(would_run(out) == [f"{SCONTROL} update NodeName=n1 State=DRAIN 'Reason={REMAP_REASON}'"], out)
        out = dry(d, "ALLOCATED+DRAIN", REMAP_REASON)
        check(not would_run(out) and "still failing: stays drained" in out, out)
        out = dry(d, "IDLE+DRAIN", "maintenance window")
        check(not would_run(out) and "left as it is" in out, out)
        out = dry(d, "DOWN", "Not responding")
        check(not would_run(out) and "left as it is" in out, out)
        # No driver on a GPU node drains (exit 3); a node named in NODES_WITHOUT_GPUS is not checked.
        set_node(d, "n1", {"CUMEMCTL_LIBCUDA": "/nonexistent/libcuda.so.1"})
        out = dry(d, "IDLE")
        check(would_run(out) == [f"{SCONTROL} update NodeName=n1 State=DRAIN 'Reason=cumemctl-hc: fail driver no driver'"],
              out)
        write_settings(d, NODES_WITHOUT_GPUS="login* n1")
        out = dry(d, "IDLE")
        check("a node without GPUs (NODES_WITHOUT_GPUS matches n1): not checked" in out and not would_run(out), out)
        # The full check on an idle node (FULL_WHEN_IDLE=yes), quick beside jobs; busy never drains.
        busy = os.path.join(d, "busy.json")
        subprocess.run([sys.executable, os.path.join(PROFILES, "..", "make_profile.py"), "h200", busy,
                        "devices[0].baseline_used=150042771456", "devices[0].context_bytes=536870912",
                        'devices[0].nvml.processes=[{"pid": 4194242, "used": 149481783296, "name": "/usr/bin/python3"}]'],
                       check=True)
        write_settings(d, FULL_WHEN_IDLE="yes", DOCTOR_OPTIONS="--checks context,vmm")
        set_node(d, "n1", {"FAKECUDA_PROFILE": busy})
        out = dry(d, "IDLE")
        check("doctor --timeout 3 --format line --checks context,vmm\n" in out, f"not the full check: {out}")
        check("cumemctl: busy context nvidia0 memory held by pid 4194242" in out and "busy (other processes" in out
              and not would_run(out), out)
        out = dry(d, "IDLE+DRAIN", REMAP_REASON)
        check(not would_run(out), f"busy resumed a node: {out}")
        # Each decision went to the log file too.
        check(log(d).count("cumemctl healthcheck on n1: ") >= 20, log(d))


def test_by_hand_long_reason():
    """A summary longer than the room behind the prefix is cut to 70 characters with '...'."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        set_node(d, "n1", {"FAKECUDA_INJECT": "cuMemSetAccess=CUDA_ERROR_INVALID_VALUE"})
        write_settings(d, FULL_WHEN_IDLE="yes", DOCTOR_OPTIONS="--checks vmm,pool-trim", REASON_PREFIX="x" * 20)
        out = dry(d, "IDLE")
        cmds = would_run(out)
        check(len(cmds) == 1, out)
        reason = shlex.split(cmds[0])[-1].removeprefix("Reason=")
        check(reason.startswith("x" * 20 + " fail vmm nvidia0 cuMemSetAccess") and len(reason) <= 70, reason)


def test_by_hand_hang():
    """A driver call that never returns: doctor answers within its budget, the node drains."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        set_node(d, "n1", HANG)
        start = time.monotonic()
        out = dry(d, "IDLE")
        took = time.monotonic() - start
        check(len(would_run(out)) == 1 and would_run(out)[0].startswith(f"{SCONTROL} update NodeName=n1 State=DRAIN 'Reason={HANG_REASON[:-3]}"), out)
        # doctor's budget ended it (the reason is doctor's), before the guard's stop at the budget and 5 s.
        check(took < TIMEOUT + 5, f"the health check took {took:.1f} s with a budget of {TIMEOUT} s")


def test_by_hand_guard():
    """A doctor that does not end at all (a program that ignores its --timeout): the guard stops it 5 s
    after the budget (and kills it 2 s later), and the node drains saying so, inside Slurm's 60 s."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        stuck = os.path.join(d, "bin", "stuck")
        with open(stuck, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\ntrap '' TERM\nsleep 60\n")
        os.chmod(stuck, 0o755)
        write_settings(d, CUMEMCTL=stuck, TIMEOUT="1")
        start = time.monotonic()
        out = dry(d, "IDLE")
        took = time.monotonic() - start
        check(would_run(out) == [f"{SCONTROL} update NodeName=n1 State=DRAIN 'Reason=cumemctl-hc: timeout doctor did not end "
                                 "within 6 s'"], out)
        # The guard ended it (the reason says so), well before the stuck program's own 60 s.
        check(took < 30, f"took {took:.1f} s")


def test_by_hand_one_at_a_time():
    """A health check that finds the last one of its node still running changes nothing."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        set_node(d, "n1", REMAP)
        with open(os.path.join(d, "lock.n1"), "w") as lock:
            held = subprocess.Popen(["flock", "-o", lock.name, "sleep", "30"])  # -o: flock alone holds it
            try:
                time.sleep(0.3)
                out = dry(d, "IDLE")
                check("the last health check still runs" in out and not would_run(out), out)
                check(would_run(dry(d, "IDLE", node="n2")) == [], "n2's lock is its own")
            finally:
                held.kill()
                held.wait()
        check(would_run(dry(d, "IDLE")), "no drain once the lock was free")


def test_by_hand_bad_settings():
    """Settings it cannot use: exit 1 and the reason, logged; no doctor run, nothing drained. A doctor that
    refuses, as root, a library that DOCTOR_OPTIONS names and that every user could change (exit 4)
    cannot judge the node: it is drained, the refusal its reason (a health check fails closed)."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        shared = os.path.join(d, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        shutil.copy2(FAKECUDA, os.path.join(shared, "libcuda.so.1"))
        for more, code, words in (({"TIMEOUT": "31"}, 1, "TIMEOUT must be whole seconds from 1 to 30"),
                                  ({"FULL_WHEN_IDLE": "maybe"}, 1, "FULL_WHEN_IDLE must be yes or no"),
                                  ({"REASON_PREFIX": "two words"}, 1, "REASON_PREFIX must be"),
                                  ({"CUMEMCTL": "/nonexistent"}, 1, "no cumemctl at /nonexistent"),
                                  ({"DOCTOR_OPTIONS": "--checks nosuch"}, 1, "doctor refused its options (exit 2")):
            write_settings(d, **more)
            p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
            check(p.returncode == code and words in p.stderr and "would run" not in p.stdout,
                  f"{more}: exit {code} expected: {describe(p)}")
            check(words in log(d), f"{more}: not logged: {log(d)}")
        write_settings(d, DOCTOR_OPTIONS=f"--checks driver --libcuda {shared}/libcuda.so.1")
        p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
        drain = would_run(p.stdout)
        check(p.returncode == 0 and len(drain) == 1 and "State=DRAIN" in drain[0] and "refusing" in drain[0],
              f"a refusal drains the node, naming it: {describe(p)}")
        with open(os.path.join(d, "scripts", "healthcheck.conf"), "a", encoding="utf-8") as f:
            f.write("NO_SUCH_SETTING=1\n")
        p = run_by_hand(d, "--dry-run")
        check(p.returncode == 1 and re.search(r"healthcheck.conf:\d+: unknown setting NO_SUCH_SETTING", p.stderr),
              describe(p))
        p = run_by_hand(d, "--node-state", "IDLE")
        check(p.returncode == 1 and "--node-state and --node-reason go with --dry-run" in p.stderr, describe(p))
        p = run_by_hand(d, "--dry-run", "--node-reason", "admin")
        check(p.returncode == 1 and "--node-reason goes with --node-state" in p.stderr, describe(p))
        # An administrator's copy in /etc/cumemctl (CUMEMCTL_ETC here) is read instead of the package's.
        etc = os.path.join(d, "etc")
        os.mkdir(etc)
        with open(os.path.join(etc, "healthcheck.conf"), "w", encoding="utf-8") as f:
            f.write("TIMEOUT=31\n")
        p = run_by_hand(d, "--dry-run", "--node-state", "IDLE", env={"CUMEMCTL_ETC": etc})
        check(p.returncode == 1 and f"{etc}/healthcheck.conf: TIMEOUT must be" in p.stderr, describe(p))
        if os.geteuid() == 0:
            # The settings decide what root runs and where it writes: another user's copy is refused, unread.
            conf = os.path.join(etc, "healthcheck.conf")
            with open(conf, "w", encoding="utf-8") as f:
                f.write(f"DOCTOR_OPTIONS=--output {d}/victim\n")
            os.chown(conf, 65534, 65534)
            p = run_by_hand(d, "--dry-run", "--node-state", "IDLE", env={"CUMEMCTL_ETC": etc})
            check(p.returncode == 4 and f"refusing settings file {conf}: {conf} belongs to uid 65534" in p.stderr
                  and "would run" not in p.stdout and not os.path.exists(f"{d}/victim"), describe(p))
    unsafe_paths()
    unsafe_programs()


def unsafe_programs():
    """A CUMEMCTL, SCONTROL or SLURM_CONF (which names the plugins scontrol loads) that others could change
    or make is refused in cumemctl's own words and with its exit code for a refusal (exit 4, logged) before
    anything runs: in a folder every user can write, its group's to write, missing from a sticky folder,
    another user's file or link in a sticky folder, a file in the middle of the path."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        shared, sticky = os.path.join(d, "shared"), os.path.join(d, "sticky")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        shutil.copy2(os.path.join(d, "bin", "cumemctl"), os.path.join(shared, "cumemctl"))
        shutil.copy2(os.path.join(d, "bin", "cumemctl"), os.path.join(d, "bin", "group-cumemctl"))
        os.chmod(os.path.join(d, "bin", "group-cumemctl"), 0o775)
        os.symlink(os.path.join(d, "bin", "cumemctl"), os.path.join(sticky, "link"))
        os.lchown(os.path.join(sticky, "link"), 65534, 65534)
        with open(os.path.join(sticky, "slurm.conf"), "w", encoding="utf-8") as f:
            f.write("PluginDir=/home/someone/plugins\n")
        os.chown(os.path.join(sticky, "slurm.conf"), 65534, 65534)
        for more, words in (
                ({"SLURM_CONF": f"{sticky}/slurm.conf"},
                 f"refusing SLURM_CONF {sticky}/slurm.conf: {sticky}/slurm.conf belongs to uid 65534 in {sticky}, a "
                 f"folder that others can add to"),
                # A file in the middle of the path is no folder: never the program (the walk stops at it).
                ({"CUMEMCTL": f"{d}/bin/cumemctl/."},
                 f"refusing CUMEMCTL {d}/bin/cumemctl/.: {d}/bin/cumemctl is not a folder"),
                ({"CUMEMCTL": f"{d}/bin/cumemctl/x"},
                 f"refusing CUMEMCTL {d}/bin/cumemctl/x: {d}/bin/cumemctl is not a folder"),
                ({"CUMEMCTL": f"{shared}/cumemctl"},
                 f"refusing CUMEMCTL {shared}/cumemctl: {shared} is writable by every user (mode 0777)"),
                ({"CUMEMCTL": f"{d}/bin/group-cumemctl"},
                 f"refusing CUMEMCTL {d}/bin/group-cumemctl: {d}/bin/group-cumemctl is writable by its group, gid 0 (mode 0775)"),
                ({"SCONTROL": f"{sticky}/scontrol"},
                 f"refusing SCONTROL {sticky}/scontrol: {sticky}/scontrol does not exist, and {sticky} is writable by every "
                 f"user (mode 1777): another user could make it"),
                ({"CUMEMCTL": f"{sticky}/link"},
                 f"refusing CUMEMCTL {sticky}/link: {sticky}/link is a link of uid 65534 in {sticky}, a folder that others "
                 f"can add to")):
            write_settings(d, **more)
            p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
            check(p.returncode == 4 and words in p.stderr and "would run" not in p.stdout and "doctor call" not in p.stdout,
                  f"{more}: exit 4 expected: {describe(p)}")
            check(words in log(d), f"{more}: not logged: {log(d)}")
        # A bare name missing from PATH, whose folders include links (/sbin -> usr/sbin on merged-/usr
        # systems): each folder is walked, the link followed, not judged by its own mode (0777).
        write_settings(d, SCONTROL="cumemctl-test-no-such-scontrol")
        p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
        check(p.returncode == 0 and "refusing" not in p.stderr,
              f"a missing bare SCONTROL in root's PATH folders ({', '.join(linked_path_folders())} links): "
              f"{describe(p)}")
        write_settings(d)
        p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
        check(p.returncode == 0, f"root's programs again: {describe(p)}")


def unsafe_paths():
    """A LOG_FILE or LOCK_FILE that someone else could have turned elsewhere (a symlink, a hard link, a
    file or folder of another user, a folder others may write): refused (exit 4, cumemctl's code for a
    refusal; the reason on stderr and in syslog), nothing written through it, no doctor run, nothing
    drained. One in a folder that does not exist: exit 1, the same way. Part of by_hand_bad_settings."""
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        victim = os.path.join(d, "victim")
        with open(victim, "w", encoding="utf-8") as f:
            f.write("root's file\n")
        pub = os.path.join(d, "pub")
        os.mkdir(pub)
        os.chmod(pub, 0o1777)  # as /tmp: others may plant names in it, sticky or not
        os.symlink(victim, os.path.join(d, "link"))
        os.symlink(os.path.join(d, "made-by-root"), os.path.join(d, "dangling"))
        os.link(victim, os.path.join(d, "hardlink"))
        cases = [({"LOG_FILE": f"{d}/link"}, "is a symlink"),
                 ({"LOG_FILE": f"{d}/dangling"}, "is a symlink"),
                 ({"LOG_FILE": f"{d}/hardlink"}, "has 2 hard links"),
                 ({"LOG_FILE": f"{pub}/log"}, f"{pub} is writable by every user"),
                 ({"LOG_FILE": f"{d}/nodir/log"}, "does not exist"),
                 ({"LOCK_FILE": f"{d}/link"}, "is a symlink"),
                 ({"LOCK_FILE": f"{d}/dangling"}, "is a symlink"),
                 ({"LOCK_FILE": f"{pub}/lock.%n"}, f"{pub} is writable by every user")]
        if os.geteuid() == 0:
            theirs = os.path.join(d, "theirs")
            os.mkdir(theirs)
            os.chown(theirs, 65534, 65534)
            with open(os.path.join(d, "their.log"), "w", encoding="utf-8"):
                pass
            os.chown(os.path.join(d, "their.log"), 65534, 65534)
            # Their link to root's own folder, though it sits in root's folder: they may have made it
            # while the folder was theirs, and it chooses where root writes.
            os.symlink(victim_dir := os.path.join(d, "rootonly"), os.path.join(d, "their-link"))
            os.mkdir(victim_dir, 0o700)
            os.lchown(os.path.join(d, "their-link"), 65534, 65534)
            cases += [({"LOG_FILE": f"{theirs}/log"}, f"{theirs} belongs to uid 65534"),
                      ({"LOG_FILE": f"{d}/their.log"}, "their.log is owned by uid 65534"),
                      ({"LOCK_FILE": f"{theirs}/lock"}, f"{theirs} belongs to uid 65534"),
                      ({"LOG_FILE": f"{d}/their-link/log"}, "their-link is a link of uid 65534: root follows only root's links")]
        set_node(d, "n1", REMAP)  # a failing node: a run that went on would drain it
        for more, words in cases:
            write_settings(d, **more)
            p = run_by_hand(d, "--dry-run", "--node-state", "IDLE")
            key = next(iter(more))
            code = 1 if words == "does not exist" else 4
            check(p.returncode == code and f"{key}=" in p.stderr and "refused" in p.stderr and words in p.stderr
                  and "doctor call" not in p.stdout and "would run" not in p.stdout, f"{more}: exit {code} expected: {describe(p)}")
        with open(victim, encoding="utf-8") as f:
            check(f.read() == "root's file\n", "a write went through a link to the victim")
        check(not os.path.exists(os.path.join(d, "made-by-root")), "a dangling symlink's target was created")
        check(os.listdir(pub) == [], f"a file was made in the world-writable folder: {os.listdir(pub)}")
        if os.geteuid() == 0:
            check(os.listdir(victim_dir) == [], f"a file was made through another user's link: {os.listdir(victim_dir)}")
        # A folder above the file that others may write, with the sticky bit (the tests' own /tmp), is fine;
        # so is a folder of root's below it.
        safe = os.path.join(pub, "root-only")
        os.mkdir(safe, 0o755)
        write_settings(d, LOG_FILE=f"{safe}/log", LOCK_FILE=f"{safe}/lock.%n")
        out = dry(d, "IDLE")
        check(would_run(out) and "cumemctl healthcheck on n1: " in open(f"{safe}/log", encoding="utf-8").read(), out)


def stub_scontrol(d, *answers):
    """A stand-in scontrol (SCONTROL) that answers `show node` with answers[0], then answers[1], ...
    (the last again after that), and records every other call in DIR/scontrol.calls."""
    path = os.path.join(d, "bin", "scontrol")
    lines = "\n".join(shlex.quote(a) for a in answers)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"""#!/bin/bash
if [[ $1 == -o && $2 == show ]]; then
  n=$(cat {shlex.quote(d)}/scontrol.count 2>/dev/null || echo 0)
  echo $((n + 1)) > {shlex.quote(d)}/scontrol.count
  answers=({lines})
  ((n < ${{#answers[@]}})) || n=$((${{#answers[@]}} - 1))
  echo "${{answers[$n]}}"
  exit 0
fi
echo "$*" >> {shlex.quote(d)}/scontrol.calls
""")
    os.chmod(path, 0o755)
    return path


def test_by_hand_changed_meanwhile():
    """The node's state is read again once doctor has answered: a drain an administrator made while
    doctor ran is neither resumed nor overwritten, and a reason is read up to Slurm's [user@time] even
    where a later field holds brackets too."""
    own = f"NodeName=n1 Arch=x86_64 State=IDLE+DRAIN Reason={REMAP_REASON} [root@2026-12-01T11:30:52] Comment=rack[3]"
    admin = "NodeName=n1 Arch=x86_64 State=IDLE+DRAIN Reason=fan replaced [alice@2026-12-01T11:31:07] Comment=rack[3]"
    idle = "NodeName=n1 Arch=x86_64 State=IDLE Comment=rack[3] Extra={\"a\":[1]}"
    with tempfile.TemporaryDirectory() as d:
        prepare(d)
        # Drained by this health check when it started, by an administrator when doctor passed: left.
        write_settings(d, SCONTROL=stub_scontrol(d, own, admin))
        p = run_by_hand(d, "--dry-run")
        check(p.returncode == 0 and not would_run(p.stdout) and "by someone else ('fan replaced')" in p.stdout
              and "the node changed while doctor ran" in p.stdout, describe(p))
        # In service when it started, drained by an administrator when doctor failed: left, reason kept.
        os.remove(os.path.join(d, "scontrol.count"))
        set_node(d, "n1", REMAP)
        write_settings(d, SCONTROL=stub_scontrol(d, idle, admin))
        p = run_by_hand(d, "--dry-run")
        check(p.returncode == 0 and not would_run(p.stdout) and "fails, but IDLE+DRAIN by someone else" in p.stdout,
              describe(p))
        # Its own drain, unchanged, with brackets after the reason: still failing, stays drained (the
        # reason read is the one it wrote, so it writes none again).
        os.remove(os.path.join(d, "scontrol.count"))
        write_settings(d, SCONTROL=stub_scontrol(d, own))
        p = run_by_hand(d, "--dry-run")
        check(p.returncode == 0 and "still failing: stays drained" in p.stdout and not would_run(p.stdout), describe(p))
        # Not a dry run: the update goes to scontrol.
        os.remove(os.path.join(d, "scontrol.count"))
        write_settings(d, SCONTROL=stub_scontrol(d, idle))
        p = run_by_hand(d)
        with open(os.path.join(d, "scontrol.calls"), encoding="utf-8") as f:
            calls = f.read()
        check(p.returncode == 0 and calls == f"update NodeName=n1 State=DRAIN Reason={REMAP_REASON}\n", f"{calls!r} {describe(p)}")


# In the cluster: slurmd runs DIR/scripts/healthcheck on n1..n3 every 2 s.
def node(name):
    """(state, reason) of a node as scontrol shows it."""
    p = subprocess.run(["scontrol", "-o", "show", "node", name], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, describe(p))
    state = re.search(r"\bState=(\S+)", p.stdout).group(1)
    m = re.search(r" Reason=(.*) \[[^]]*\]", p.stdout)
    return state, (m.group(1) if m else "")


def scontrol(*args):
    p = subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, describe(p))


def runs_logged(d, name):
    return len(re.findall(rf"cumemctl healthcheck on {name}: quick check in", log(d)))


def wait_runs(d, name, more, seconds=20):
    """Waits until the health check has run `more` more times on `name`."""
    seen = runs_logged(d, name)
    wait_for(lambda: runs_logged(d, name) >= seen + more, seconds, f"{more} more health checks on {name}:\n{log(d)[-2000:]}")


def test_cluster():
    d = os.environ["HEALTHCHECK_TEST_DIR"]
    write_settings(d)  # with the cluster's SLURM_CONF: Slurm gives the health check none
    for n in ("n1", "n2", "n3"):
        set_node(d, n, {})
        wait_runs(d, n, 1)
    check(all(node(n) == ("IDLE", "") for n in ("n1", "n2", "n3")), [node(n) for n in ("n1", "n2", "n3")])
    # healthy -> failing (a row remap failure): drained with the summary; -> healthy: resumed.
    set_node(d, "n1", REMAP)
    wait_for(lambda: node("n1") == ("IDLE+DRAIN", REMAP_REASON), 20, f"n1 drained: {node('n1')}\n{log(d)[-2000:]}")
    set_node(d, "n1", {})
    wait_for(lambda: node("n1") == ("IDLE", ""), 20, f"n1 resumed: {node('n1')}\n{log(d)[-2000:]}")
    check("cumemctl healthcheck on n1: passes again: resumed" in log(d), log(d))
    # An administrator's drain stays, failing or passing, and keeps its reason.
    scontrol("update", "NodeName=n2", "State=DRAIN", "Reason=admin: burn-in first")
    set_node(d, "n2", REMAP)
    wait_runs(d, "n2", 2)
    set_node(d, "n2", {})
    wait_runs(d, "n2", 2)
    check(node("n2") == ("IDLE+DRAIN", "admin: burn-in first"), node("n2"))
    check("on n2: fails, but IDLE+DRAIN by someone else ('admin: burn-in first'): left as it is" in log(d)
          and "on n2: passes, but IDLE+DRAIN by someone else" in log(d), log(d))
    scontrol("update", "NodeName=n2", "State=RESUME")
    # A hung NVML call: doctor answers within its budget, the node drains with the hung call.
    set_node(d, "n3", HANG)
    wait_for(lambda: node("n3")[0] == "IDLE+DRAIN" and node("n3")[1].startswith(HANG_REASON[:-3]), 30, f"n3 drained: {node('n3')}\n{log(d)[-2000:]}")
    took = [int(t) for t in re.findall(r"on n3: quick check in (\d+) s, exit 1: cumemctl: timeout", log(d))]
    check(took and max(took) <= TIMEOUT + 2, f"n3's checks took {took} s with a budget of {TIMEOUT} s")
    set_node(d, "n3", {})
    wait_for(lambda: node("n3") == ("IDLE", ""), 30, f"n3 resumed: {node('n3')}\n{log(d)[-2000:]}")
    # A job runs on the nodes the health check resumed.
    p = subprocess.run(["srun", "-N3", "/bin/true"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, describe(p))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
        sys.exit(0)
    main({"by_hand_decisions": test_by_hand_decisions, "by_hand_long_reason": test_by_hand_long_reason,
          "by_hand_hang": test_by_hand_hang, "by_hand_guard": test_by_hand_guard,
          "by_hand_one_at_a_time": test_by_hand_one_at_a_time,
          "by_hand_bad_settings": test_by_hand_bad_settings, "by_hand_changed_meanwhile": test_by_hand_changed_meanwhile,
          "cluster": test_cluster})
