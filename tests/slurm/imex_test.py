#!/usr/bin/python3
"""The per-job IMEX channel prolog and epilog (packaging/slurm), against a temporary device root:
run by hand as slurmd runs them (no PATH, Slurm's variables only), and in jobs of the one-machine
cluster (tests/slurm/cluster.sh started with them as Prolog and Epilog).
    imex_test.py prepare DIR [controller]
                                  copies the scripts into DIR/scripts with settings for DIR (before the
                                  cluster starts: its slurm.conf names DIR/scripts/imex-prolog); with
                                  controller, CHANNELS_FROM=controller (run the jobs test with
                                  IMEX_CHANNELS_FROM=controller, PrologSlurmctld and EpilogSlurmctld set)
    imex_test.py [TEST...]        the tests (by-hand tests need nothing; job tests need the cluster,
                                  started with the scripts of $IMEX_TEST_DIR)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import CUMEMCTL, SOURCE, check, describe, log, main, wait_for

CHANNELS = "dev/nvidia-caps-imex-channels"
NOBODY, DAEMON = 65534, 1  # two users that every Debian system has


# Stand-ins for Slurm's squeue and scontrol (by-hand tests): squeue lists the job ids in DIR/running,
# scontrol shows DIR/job.J (AdminComment and Comment lines as scontrol prints them) and appends each
# update to DIR/updates.
FAKE_SQUEUE = """#!/bin/sh
[ -e "{d}/squeue-fails" ] && exit 1
cat "{d}/running" 2>/dev/null
exit 0
"""
FAKE_SCONTROL = """#!/bin/bash
d={d}
if [[ $1 == show ]]; then cat "$d/job.$3" 2>/dev/null; exit 0; fi
if [[ $1 == update ]]; then
  shift; job=${{1#jobid=}}; comment=${{2#AdminComment=}}
  printf '%s\n' "$*" >>"$d/updates"
  printf 'JobId=%s JobName=x\n   AdminComment=%s\n' "$job" "$comment" >"$d/job.$job"
fi
"""


def prepare(d, first=1, last=2047, major=True, fake_slurm=False):
    """DIR/root: a system root with a fake /proc (tests/cli/sysroot.sh, IMEX major 511 unless
    major=False); DIR/scripts: the prolog, the epilog and their settings; with fake_slurm, DIR/bin's
    stand-ins for squeue and scontrol named in them (the cluster's tests use Slurm's own)."""
    subprocess.run([os.path.join(SOURCE, "tests/cli/sysroot.sh"), os.path.join(d, "root")]
                   + ([] if major else ["--no-major"]), check=True)
    scripts = os.path.join(d, "scripts")
    os.makedirs(scripts, exist_ok=True)
    for name in ("imex-channel", "imex-prolog", "imex-epilog", "settings.bash"):
        shutil.copy2(os.path.join(SOURCE, "packaging/slurm", name), scripts)
    with open(os.path.join(scripts, "imex-channels.conf"), "w", encoding="utf-8") as f:
        f.write(f"# written by tests/slurm/imex_test.py\nCUMEMCTL={CUMEMCTL}\nDEV_ROOT={d}/root\n"
                f"FIRST_CHANNEL={first}\nLAST_CHANNEL={last}\nSTATE_DIR={d}/state\n"
                f"PROC_DEVICES={d}/root/proc/devices\nNVIDIA_PARAMS={d}/root/proc/driver/nvidia/params\n"
                f"LOG_FILE={d}/log\n")
        if fake_slurm:
            f.write(f"SQUEUE={d}/bin/squeue\nSCONTROL={d}/bin/scontrol\n")
    if fake_slurm:
        os.makedirs(os.path.join(d, "bin"), exist_ok=True)
        for name, text in (("squeue", FAKE_SQUEUE), ("scontrol", FAKE_SCONTROL)):
            with open(os.path.join(d, "bin", name), "w", encoding="utf-8") as f:
                f.write(text.format(d=d))
            os.chmod(os.path.join(d, "bin", name), 0o755)
    os.chmod(d, 0o755)
    return d


def channel_nodes(d):
    """{channel number: (uid, mode, is a character device)} of DIR/root/dev/nvidia-caps-imex-channels."""
    nodes = {}
    for path in glob.glob(os.path.join(d, "root", CHANNELS, "channel*")):
        try:
            st = os.lstat(path)
        except FileNotFoundError:  # an epilog removed it between the listing and here: it is gone
            continue
        nodes[int(path.rsplit("channel", 1)[1])] = (st.st_uid, st.st_mode & 0o7777, (st.st_mode & 0o170000) == 0o020000)
    return nodes


def records(d):
    try:
        return sorted(os.listdir(os.path.join(d, "state")))
    except FileNotFoundError:
        return []


def run_script(d, which, job, uid=NOBODY, gid=NOBODY, node="n1", where="slurmd"):
    """Runs DIR/scripts/imex-prolog or imex-epilog as slurmd does (where="slurmctld": as the controller
    runs its PrologSlurmctld and EpilogSlurmctld): as root, no PATH, Slurm's variables."""
    env = {"SLURM_JOB_ID": str(job), "SLURM_JOB_UID": str(uid), "SLURM_JOB_GID": str(gid),
           "SLURM_JOB_USER": "nobody", "SLURMD_NODENAME": node,
           "SLURM_SCRIPT_CONTEXT": ("prolog_" if which == "prolog" else "epilog_") + where}
    return subprocess.run([os.path.join(d, "scripts", "imex-" + which)], env=env, capture_output=True, text=True,
                          timeout=30)


class Scratch:
    """A temporary folder prepared as above, removed afterwards."""

    def __init__(self, **kw):
        self.kw = kw

    def __enter__(self):
        self.d = prepare(tempfile.mkdtemp(prefix="cumemctl-imex."), fake_slurm=True, **self.kw)
        return self.d

    def __exit__(self, *exc):
        shutil.rmtree(self.d)


def test_by_hand_start_end():
    """The prolog gives job 101 channel 1 + 101 mod 4 = 2, owned by its user, 0600; the epilog removes it."""
    with Scratch(first=1, last=4) as d:
        p = run_script(d, "prolog", 101)
        check(p.returncode == 0, f"prolog: {describe(p)}")
        check(channel_nodes(d) == {2: (NOBODY, 0o600, True)}, f"after the prolog: {channel_nodes(d)}")
        check(records(d) == ["channel2", "lock"], f"records {records(d)}")
        p = run_script(d, "prolog", 101, node="n2")  # another node of the job, sharing this /dev
        check(p.returncode == 0 and channel_nodes(d) == {2: (NOBODY, 0o600, True)}, f"second prolog: {describe(p)}")
        p = run_script(d, "epilog", 101)
        check(p.returncode == 0, f"epilog: {describe(p)}")
        check(channel_nodes(d) == {} and records(d) == ["lock"], f"after the epilog: {channel_nodes(d)} {records(d)}")
        p = run_script(d, "epilog", 101, node="n2")
        check(p.returncode == 0, f"a second epilog: {describe(p)}")


def test_by_hand_taken():
    """A channel held by another job, or made by someone else, stays as it is; the prolog exits 0 (the
    node is not drained) and says that the job runs without a channel here."""
    with Scratch(first=1, last=4) as d:
        check(run_script(d, "prolog", 101, uid=DAEMON, gid=DAEMON).returncode == 0, "prolog of job 101")
        p = run_script(d, "prolog", 105)  # 105 mod 4 == 101 mod 4: channel 2 again
        check(p.returncode == 0, f"a taken channel must not fail the prolog: {describe(p)}")
        check(channel_nodes(d) == {2: (DAEMON, 0o600, True)}, f"job 101's channel changed: {channel_nodes(d)}")
        check("channel 2 is held by job 101" in log(d), f"log: {log(d)}")
        check(run_script(d, "epilog", 105).returncode == 0 and channel_nodes(d) == {2: (DAEMON, 0o600, True)},
              "job 105's epilog removed job 101's channel")
        check(run_script(d, "epilog", 101).returncode == 0 and channel_nodes(d) == {}, "job 101's epilog")
        # A node that no job holds (an administrator's): left alone.
        os.mknod(os.path.join(d, "root", CHANNELS, "channel3"), 0o020600, os.makedev(511, 3))
        p = run_script(d, "prolog", 102)
        check(p.returncode == 0 and channel_nodes(d) == {3: (0, 0o600, True)}, f"someone else's node: {describe(p)}")
        check("made by someone else" in log(d), f"log: {log(d)}")
        check(run_script(d, "epilog", 102).returncode == 0 and 3 in channel_nodes(d), "the epilog removed it")


def test_by_hand_admin_run_beside_jobs():
    """An administrator's plain imex-setup over the whole range (a bring-up script, a periodic job) keeps
    the channel a running job holds as that job's prolog made it: owner the job's user, 0600. Only the
    job's own epilog removes it."""
    with Scratch(first=1, last=4) as d:
        check(run_script(d, "prolog", 101, uid=DAEMON, gid=DAEMON).returncode == 0, "prolog of job 101")
        admin = [CUMEMCTL, "imex-setup", "--channels", "1-4", "--dev-root", os.path.join(d, "root"),
                 "--proc-devices", os.path.join(d, "root/proc/devices"),
                 "--params", os.path.join(d, "root/proc/driver/nvidia/params"), "--json"]
        for extra in (["--dry-run"], []):
            p = subprocess.run(admin + extra, capture_output=True, text=True, timeout=30)
            check(p.returncode == 0, f"imex-setup {extra}: {describe(p)}")
            channels = {c["channel"]: c["action"] for c in json.loads(p.stdout)["results"]["channels"]}
            check(channels[2] == "kept", f"imex-setup {extra} did not keep job 101's channel: {channels}")
        nodes = channel_nodes(d)
        check(nodes[2] == (DAEMON, 0o600, True), f"job 101's channel was widened: {nodes}")
        check(nodes[1][1] == nodes[3][1] == nodes[4][1], f"the administrator's channels differ: {nodes}")
        p = run_script(d, "prolog", 102)  # channel 3, which the administrator made: left alone
        check(p.returncode == 0 and channel_nodes(d)[3] == nodes[3], f"prolog 102: {describe(p)}")
        check(run_script(d, "epilog", 102).returncode == 0 and 3 in channel_nodes(d), "epilog 102 removed channel 3")
        check(run_script(d, "epilog", 101).returncode == 0 and 2 not in channel_nodes(d), "epilog 101")
        check(sorted(channel_nodes(d)) == [1, 3, 4], f"after the epilogs: {channel_nodes(d)}")


def test_by_hand_epilog_fails():
    """An epilog that cannot remove its job's node (something else now lies there) exits 1, so Slurm
    drains the node, and keeps the record, so that no other job gets the channel there."""
    with Scratch(first=1, last=4) as d:
        check(run_script(d, "prolog", 101).returncode == 0, "prolog of job 101")
        node = os.path.join(d, "root", CHANNELS, "channel2")
        os.unlink(node)
        open(node, "w").close()  # a regular file: imex-setup never touches one
        p = run_script(d, "epilog", 101)
        check(p.returncode == 1 and "could not remove" in p.stderr, f"epilog: {describe(p)}")
        check(records(d) == ["channel2", "lock"], f"the record should stay: {records(d)}")
        p = run_script(d, "prolog", 105)  # the same channel: still held by job 101
        check(p.returncode == 0 and "held by job 101" in p.stderr and os.path.isfile(node), f"prolog 105: {describe(p)}")


def test_by_hand_no_imex():
    """A driver without IMEX channels: the job gets none and the node is not drained."""
    with Scratch(major=False) as d:
        p = run_script(d, "prolog", 7)
        check(p.returncode == 0, f"prolog without IMEX channels: {describe(p)}")
        check(channel_nodes(d) == {} and records(d) == ["lock"], f"{channel_nodes(d)} {records(d)}")
        check("no IMEX channels here" in log(d), f"log: {log(d)}")
        check(run_script(d, "epilog", 7).returncode == 0, "epilog")


def test_by_hand_bad_settings():
    """A setting that cannot be followed fails the prolog (Slurm drains the node: the operator must look)."""
    with Scratch() as d:
        conf = os.path.join(d, "scripts", "imex-channels.conf")
        with open(conf, "a", encoding="utf-8") as f:
            f.write("FIRST_CHANNEL=9\nLAST_CHANNEL=3\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 1 and "FIRST_CHANNEL" in p.stderr, f"FIRST > LAST: {describe(p)}")
        with open(conf, "a", encoding="utf-8") as f:
            f.write("FIRST_CHANNEL=1\nLAST_CHANNEL=5000\n")  # beyond the driver's 2048 channels
        p = run_script(d, "prolog", 4999)
        check(p.returncode == 1 and channel_nodes(d) == {} and records(d) == ["lock"], f"channel 5000: {describe(p)}")
        with open(conf, "a", encoding="utf-8") as f:
            f.write("LAST_CHANEL=5\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 1 and "unknown setting LAST_CHANEL" in p.stderr, f"a misspelt key: {describe(p)}")
        if os.geteuid() == 0:
            # Settings that another user could have written choose where root makes nodes: refused, unread.
            with open(conf, "w", encoding="utf-8") as f:
                f.write(f"DEV_ROOT={d}/elsewhere\nFIRST_CHANNEL=7\nLAST_CHANNEL=7\n")
            os.chown(conf, 65534, 65534)
            p = run_script(d, "prolog", 7)
            check(p.returncode == 4 and f"refusing settings file {conf}: {conf} belongs to uid 65534" in p.stderr
                  and channel_nodes(d) == {} and not os.path.exists(f"{d}/elsewhere"), f"another user's settings: {describe(p)}")


def test_by_hand_unsafe_paths():
    """The prolog runs as root: a LOG_FILE that is a symlink, or in a folder others may write, and a
    STATE_DIR in such a folder, are refused (exit 4, cumemctl's code for a refusal; Slurm drains the
    node) before anything is written, and nothing is written through the symlink. A channel folder of
    another user is imex-setup's refusal (its exit 4), passed on."""
    with Scratch() as d:
        conf = os.path.join(d, "scripts", "imex-channels.conf")
        target = os.path.join(d, "target")
        with open(target, "w", encoding="utf-8") as f:
            f.write("root's file\n")
        os.symlink(target, os.path.join(d, "log"))
        p = run_script(d, "prolog", 7)
        check(p.returncode == 4 and "LOG_FILE" in p.stderr and "symlink" in p.stderr, f"a symlinked log: {describe(p)}")
        with open(target, encoding="utf-8") as f:
            check(f.read() == "root's file\n", "the prolog wrote through the symlinked LOG_FILE")
        check(channel_nodes(d) == {} and records(d) == [], f"a refused prolog made {channel_nodes(d)} {records(d)}")
        os.unlink(os.path.join(d, "log"))
        shared = os.path.join(d, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        with open(conf, "a", encoding="utf-8") as f:
            f.write(f"LOG_FILE={shared}/log\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 4 and "is writable by every user" in p.stderr and not os.path.exists(f"{shared}/log"),
              f"a log in a world-writable folder: {describe(p)}")
        with open(conf, "a", encoding="utf-8") as f:
            f.write(f"LOG_FILE={d}/log\nSTATE_DIR={shared}/state\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 4 and "STATE_DIR" in p.stderr and channel_nodes(d) == {} and
              not os.path.exists(f"{shared}/state/lock"), f"a state folder in a world-writable folder: {describe(p)}")
        with open(conf, "a", encoding="utf-8") as f:
            f.write(f"STATE_DIR={d}/state\n")
        channels = os.path.join(d, "root", CHANNELS)
        os.makedirs(channels, exist_ok=True)
        os.chown(channels, NOBODY, NOBODY)
        p = run_script(d, "prolog", 7)
        check(p.returncode == 4 and "imex-setup exited 4" in p.stderr and f"{channels} belongs to uid {NOBODY}" in p.stderr
              and channel_nodes(d) == {} and records(d) == ["lock"], f"a channel folder of another user: {describe(p)}")
        os.chown(channels, 0, 0)
        p = run_script(d, "prolog", 7)
        check(p.returncode == 0 and 8 in channel_nodes(d) and "channel 8" in log(d), f"safe paths again (job 7: channel 8): {describe(p)}")


def test_by_hand_unsafe_programs():
    """The prolog runs as root: a program that its settings name (CUMEMCTL, SQUEUE, SCONTROL), or the
    slurm.conf (SLURM_CONF) that names the plugins they load, and that others could change or make is refused (exit 4, Slurm drains the node) in cumemctl's own words and
    with its exit code for a refusal,
    before anything is run or made: in a folder every user can write, another user's link in a sticky
    folder, a file its group can write, a missing name in a sticky folder, a hard link in a sticky
    folder."""
    with Scratch() as d:
        shared, sticky = os.path.join(d, "shared"), os.path.join(d, "sticky")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        shutil.copy2(os.path.join(d, "bin", "squeue"), os.path.join(shared, "squeue"))
        os.symlink(CUMEMCTL, os.path.join(sticky, "cumemctl"))
        os.lchown(os.path.join(sticky, "cumemctl"), NOBODY, NOBODY)
        os.chmod(os.path.join(d, "bin", "scontrol"), 0o775)
        # A second name for root's program in a sticky folder: any user could have made it (a hard link).
        os.link(os.path.join(d, "bin", "squeue"), os.path.join(sticky, "linked-squeue"))
        # The slurm.conf that squeue and scontrol read names the plugins they load.
        with open(os.path.join(sticky, "slurm.conf"), "w", encoding="utf-8") as f:
            f.write("PluginDir=/home/someone/plugins\n")
        os.chown(os.path.join(sticky, "slurm.conf"), NOBODY, NOBODY)
        cases = [
            (f"SLURM_CONF={sticky}/slurm.conf\n", f"refusing SLURM_CONF {sticky}/slurm.conf: {sticky}/slurm.conf belongs to uid {NOBODY} in {sticky}, a folder that others can add to"),
            (f"SQUEUE={sticky}/linked-squeue\n", f"refusing SQUEUE {sticky}/linked-squeue: {sticky}/linked-squeue has 2 hard links, in {sticky}, a folder that others can add to: any user could have made this name for root's file"),
            (f"SQUEUE={shared}/squeue\n", f"refusing SQUEUE {shared}/squeue: {shared} is writable by every user (mode 0777)"),
            (f"CUMEMCTL={sticky}/cumemctl\n", f"refusing CUMEMCTL {sticky}/cumemctl: {sticky}/cumemctl is a link of uid {NOBODY} in {sticky}, a folder that others can add to"),
            (f"SCONTROL={d}/bin/scontrol\n", f"refusing SCONTROL {d}/bin/scontrol: {d}/bin/scontrol is writable by its group, gid 0 (mode 0775)"),
            (f"SQUEUE={sticky}/squeue\n", f"refusing SQUEUE {sticky}/squeue: {sticky}/squeue does not exist, and {sticky} is writable by every user (mode 1777): another user could make it"),
        ]
        base = open(os.path.join(d, "scripts", "imex-channels.conf"), encoding="utf-8").read()
        for setting, words in cases:
            with open(os.path.join(d, "scripts", "imex-channels.conf"), "w", encoding="utf-8") as f:
                f.write(base + f"SCONTROL={d}/bin/scontrol\n" * (not setting.startswith("SCONTROL")) + setting)
            os.chmod(os.path.join(d, "bin", "scontrol"), 0o755 if not setting.startswith("SCONTROL") else 0o775)
            p = run_script(d, "prolog", 7)
            check(p.returncode == 4 and words in p.stderr, f"{setting.strip()}: exit 4 expected: {describe(p)}")
            check(channel_nodes(d) == {} and records(d) == [], f"{setting.strip()}: a refused prolog made {channel_nodes(d)} {records(d)}")
        with open(os.path.join(d, "scripts", "imex-channels.conf"), "w", encoding="utf-8") as f:
            f.write(base)
        os.chmod(os.path.join(d, "bin", "scontrol"), 0o755)
        p = run_script(d, "prolog", 7)
        check(p.returncode == 0 and 8 in channel_nodes(d), f"root's programs again (job 7: channel 8): {describe(p)}")


def test_by_hand_fuse_program():
    """A program on a FUSE file system that another user mounted shows root's name and mode 0755, and
    what it holds is what that user's program says: the prolog refuses it (exit 4) in cumemctl's
    words, as it refuses a LOG_FILE or STATE_DIR there; and runs the same program from the same file
    system mounted by root."""
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        log("by_hand_fuse_program: skipped, no /dev/fuse here")
        return
    sys.path.insert(0, os.path.join(SOURCE, "tests", "cli"))
    from fuse_mount import mounted
    with Scratch() as d:
        mount = os.path.join(d, "m")
        os.mkdir(mount)
        base = open(os.path.join(d, "scripts", "imex-channels.conf"), encoding="utf-8").read()
        with open(os.path.join(d, "scripts", "imex-channels.conf"), "w", encoding="utf-8") as f:
            f.write(base + f"SQUEUE={mount}/squeue\n")
        with mounted(mount, NOBODY, os.path.join(d, "bin", "squeue")):
            p = run_script(d, "prolog", 7)
        words = (f"refusing SQUEUE {mount}/squeue: {mount} is on a fuse.fakeroot file system that uid {NOBODY} "
                 "mounted: its owners and modes are what that user's program says")
        check(p.returncode == 4 and words in p.stderr, f"a user's FUSE mount: exit 4 expected: {describe(p)}")
        check(channel_nodes(d) == {} and records(d) == [], f"a refused prolog made {channel_nodes(d)} {records(d)}")
        # What root writes (LOG_FILE, STATE_DIR) on such a mount is refused too: the FUSE program could
        # answer the later open with a link anywhere.
        for setting in (f"LOG_FILE={mount}/log\n", f"STATE_DIR={mount}/state\n"):
            with open(os.path.join(d, "scripts", "imex-channels.conf"), "w", encoding="utf-8") as f:
                f.write(base + setting)
            with mounted(mount, NOBODY, os.path.join(d, "bin", "squeue")):
                p = run_script(d, "prolog", 7)
            words = f"{mount} is on a fuse.fakeroot file system that uid {NOBODY} mounted"
            check(p.returncode == 4 and words in p.stderr, f"{setting.strip()} on a user's FUSE mount: {describe(p)}")
            check(channel_nodes(d) == {} and records(d) == [], f"a refused prolog made {channel_nodes(d)}")
        with open(os.path.join(d, "scripts", "imex-channels.conf"), "w", encoding="utf-8") as f:
            f.write(base + f"SQUEUE={mount}/squeue\n")
        with mounted(mount, 0, os.path.join(d, "bin", "squeue")):
            p = run_script(d, "prolog", 7)
        check(p.returncode == 0 and 8 in channel_nodes(d), f"root's FUSE mount (job 7: channel 8): {describe(p)}")


def set_conf(d, text):
    with open(os.path.join(d, "scripts", "imex-channels.conf"), "a", encoding="utf-8") as f:
        f.write(text)


def test_by_hand_state_dir_checked_first():
    """STATE_DIR and every folder above it are checked before anything is made or changed: a symlink on
    the way, a folder that others may write without the sticky bit, one that another user owns under a
    sticky folder (as /tmp) are refused (exit 4) and nothing is made in them or chmod-ed through them; a
    STATE_DIR made fresh under a sticky folder passes."""
    with Scratch() as d:
        victim = os.path.join(d, "victim")
        os.mkdir(victim, 0o755)
        os.symlink(victim, os.path.join(d, "link"))
        shared = os.path.join(d, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        sticky = os.path.join(d, "sticky")
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        squatted = os.path.join(sticky, "state")
        os.mkdir(squatted, 0o755)
        os.chown(squatted, NOBODY, NOBODY)
        for state, why in ((f"{d}/link/state", "is a symlink"), (f"{d}/link", "is a symlink"),
                           (f"{shared}/state", "others may write"), (squatted, "owned by uid 65534")):
            set_conf(d, f"STATE_DIR={state}\n")
            p = run_script(d, "prolog", 7)
            check(p.returncode == 4 and "STATE_DIR" in p.stderr and why in p.stderr, f"STATE_DIR={state}: {describe(p)}")
            check(os.listdir(victim) == [] and os.stat(victim).st_mode & 0o7777 == 0o755,
                  f"STATE_DIR={state}: the prolog acted through the link: {os.listdir(victim)}")
            check(not os.path.exists(f"{shared}/state") and os.listdir(squatted) == [] and channel_nodes(d) == {},
                  f"STATE_DIR={state}: something was made")
        set_conf(d, f"STATE_DIR={sticky}/fresh/state\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 0 and 8 in channel_nodes(d), f"a fresh STATE_DIR under a sticky folder: {describe(p)}")
        check(os.stat(f"{sticky}/fresh").st_mode & 0o7777 == 0o700, "the folders made are root's alone")
        # Prologs of two jobs starting at once on one node, neither finding STATE_DIR yet: the one whose
        # mkdir comes second finds the folder made (its mkdir fails, as this stand-in's does after making
        # it) and goes on to check it, rather than failing the job.
        loser = ("source scripts/settings.bash; mkdir() { command mkdir \"$@\"; return 1; }; "
                 f"safe_dir {d}/together/state")
        p = subprocess.run(["bash", "-c", loser], cwd=d, capture_output=True, text=True, timeout=30)
        check(p.returncode == 0 and p.stdout.strip() == f"{d}/together/state", f"a prolog that lost the race: {describe(p)}")


def test_by_hand_job_id_collisions():
    """CHANNELS_FROM=job-id: a job whose number another running job computes too (ids 4 apart with a
    range of 4), on any node of the domain, is refused a channel and the prolog says so (exit 0: no
    drain); so is every job when Slurm cannot be asked. Alone, it gets its channel."""
    with Scratch(first=1, last=4) as d:
        with open(os.path.join(d, "running"), "w", encoding="utf-8") as f:
            f.write("101\n105\n")  # job 105 runs elsewhere in the domain: channel 2 too
        p = run_script(d, "prolog", 101)
        check(p.returncode == 0 and channel_nodes(d) == {} and "job 105 also computes channel 2" in log(d),
              f"a colliding job: {describe(p)} {log(d)}")
        open(os.path.join(d, "squeue-fails"), "w").close()
        p = run_script(d, "prolog", 102)
        check(p.returncode == 0 and channel_nodes(d) == {} and "cannot ask Slurm" in log(d), f"no squeue: {describe(p)}")
        os.unlink(os.path.join(d, "squeue-fails"))
        with open(os.path.join(d, "running"), "w", encoding="utf-8") as f:
            f.write("101\n102\n")
        p = run_script(d, "prolog", 101)
        check(p.returncode == 0 and channel_nodes(d) == {2: (NOBODY, 0o600, True)}, f"alone: {describe(p)}")
        check(run_script(d, "epilog", 101).returncode == 0 and channel_nodes(d) == {}, "epilog")


def test_by_hand_controller():
    """CHANNELS_FROM=controller: PrologSlurmctld gives each job the lowest free number (whatever its id),
    written into its AdminComment beside what was there; the nodes' prologs make that channel; a job for
    which none is free is refused (exit 1 of PrologSlurmctld: Slurm holds it, no node drained) until
    EpilogSlurmctld frees one. A number in a user's Comment is not taken for the controller's."""
    with Scratch(first=1, last=2) as d:
        set_conf(d, "CHANNELS_FROM=controller\n")
        with open(os.path.join(d, "running"), "w", encoding="utf-8") as f:
            f.write("101\n105\n109\n")
        with open(os.path.join(d, "job.101"), "w", encoding="utf-8") as f:
            f.write("JobId=101 JobName=x\n   AdminComment=kept by the admin\n")
        for job, channel in ((101, 1), (105, 2)):  # ids 4 apart: job-id would give both the same
            p = run_script(d, "prolog", job, where="slurmctld")
            check(p.returncode == 0 and f"channel {channel} chosen for job {job}" in log(d), f"choose {job}: {describe(p)}")
        check(open(os.path.join(d, "job.101")).read().endswith("AdminComment=kept by the admin cumemctl_imex_channel=1\n"),
              f"job 101's AdminComment: {open(os.path.join(d, 'job.101')).read()}")
        p = run_script(d, "prolog", 109, where="slurmctld")
        check(p.returncode == 1 and "job 109 refused" in log(d), f"none free: {describe(p)}")
        for job, uid in ((101, NOBODY), (105, DAEMON)):
            p = run_script(d, "prolog", job, uid=uid, gid=uid)
            check(p.returncode == 0, f"node prolog {job}: {describe(p)}")
        check(channel_nodes(d) == {1: (NOBODY, 0o600, True), 2: (DAEMON, 0o600, True)}, f"nodes: {channel_nodes(d)}")
        # A user's Comment that looks like the controller's choice: two AdminComment lines, refused.
        with open(os.path.join(d, "job.110"), "w", encoding="utf-8") as f:
            f.write("JobId=110\n   Comment=x\n   AdminComment=cumemctl_imex_channel=1\n   AdminComment=y\n")
        p = run_script(d, "prolog", 110)
        check(p.returncode == 0 and "chose no channel" in log(d) and channel_nodes(d)[1][0] == NOBODY,
              f"a forged choice: {describe(p)}")
        check(run_script(d, "epilog", 101).returncode == 0 and 1 not in channel_nodes(d), "node epilog 101")
        check(run_script(d, "epilog", 101, where="slurmctld").returncode == 0, "EpilogSlurmctld 101")
        p = run_script(d, "prolog", 109, where="slurmctld")
        check(p.returncode == 0 and "channel 1 chosen for job 109" in log(d), f"after the release: {describe(p)}")
        with open(os.path.join(d, "running"), "w", encoding="utf-8") as f:
            f.write("109\n")  # job 105 ended without its EpilogSlurmctld: its number is free again
        p = run_script(d, "prolog", 111, where="slurmctld")
        check(p.returncode == 0 and "channel 2 chosen for job 111" in log(d), f"a stale number: {describe(p)}")


def test_by_hand_no_descriptors_to_programs():
    """Root's programs get none of the script's own descriptors: not the lock (which a program that
    outlived the prolog, or a daemon it started, would go on holding) and not the log. squeue, scontrol
    and cumemctl (through a wrapper) each list what they were given, on a node and on the controller."""
    with Scratch(first=1, last=4) as d:
        for name in ("squeue", "scontrol"):
            path = os.path.join(d, "bin", name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace("\n", f"\nls /proc/$$/fd >\"{d}/fds.{name}.$$\"\n", 1))
        wrapper = os.path.join(d, "bin", "cumemctl")
        with open(wrapper, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\nls /proc/$$/fd >\"{d}/fds.cumemctl.$$\"\nexec {CUMEMCTL} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        set_conf(d, f"CUMEMCTL={wrapper}\n")
        with open(os.path.join(d, "running"), "w", encoding="utf-8") as f:
            f.write("101\n")
        for job, which, where in ((101, "prolog", "slurmd"), (101, "epilog", "slurmd"), (102, "prolog", "slurmctld")):
            if where == "slurmctld":
                set_conf(d, "CHANNELS_FROM=controller\n")
            p = run_script(d, which, job, where=where)
            check(p.returncode == 0, f"{which} {job} ({where}): {describe(p)}")
        given = {}
        for path in glob.glob(os.path.join(d, "fds.*")):
            with open(path, encoding="utf-8") as f:
                given.setdefault(os.path.basename(path).split(".")[1], []).append(sorted(int(x) for x in f.read().split()))
        check(sorted(given) == ["cumemctl", "scontrol", "squeue"], f"the programs that ran: {sorted(given)}")
        for name, lists in given.items():
            check(all(8 not in fds and 9 not in fds for fds in lists), f"{name} was given {lists}")


def test_by_hand_switch():
    """CHANNELS_FROM=switch: Slurm's own plugin gives the channels; the scripts make nothing."""
    with Scratch() as d:
        set_conf(d, "CHANNELS_FROM=switch\n")
        p = run_script(d, "prolog", 7)
        check(p.returncode == 0 and channel_nodes(d) == {} and records(d) == [], f"switch: {describe(p)}")


# Each task of a job: writes what it sees in the channel folder (obs.1), waits for `phase2`, looks
# again (obs.2), waits for `go`. A line per node: "path uid mode type", "usable path" when it can open it.
TASK = r"""
set -eu
look() {
  out=$WORK/$TAG.$SLURMD_NODENAME.$1
  { echo "job $SLURM_JOB_ID uid $(id -u) node $SLURMD_NODENAME"
    for f in $CHDIR/*; do
      [ -e "$f" ] || continue
      stat -c '%n %u %a %F' "$f"
      if [ -r "$f" ] && [ -w "$f" ]; then echo "usable $f"; fi
    done; } >"$out.tmp"
  mv "$out.tmp" "$out"
}
look 1
while [ ! -e "$WORK/phase2" ]; do sleep 0.1; done
look 2
while [ ! -e "$WORK/go" ]; do sleep 0.1; done
"""


def read_obs(work, tag, phase):
    """{node: (job, uid, {channel: (uid, mode, type)}, set of usable channels)} of one job's tasks."""
    obs = {}
    for node in ("n1", "n2", "n3"):
        with open(os.path.join(work, f"{tag}.{node}.{phase}"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        m = re.fullmatch(r"job (\d+) uid (\d+) node (\S+)", lines[0])
        seen, usable = {}, set()
        for line in lines[1:]:
            if line.startswith("usable "):
                usable.add(int(line.rsplit("channel", 1)[1]))
            else:
                path, uid, mode, kind = line.split(" ", 3)
                seen[int(path.rsplit("channel", 1)[1])] = (int(uid), mode, kind)
        obs[node] = (int(m.group(1)), int(m.group(2)), seen, usable)
    return obs


def test_jobs():
    """Two jobs at once on n1..n3, of users nobody and daemon: each sees on every node one channel it can
    open, FIRST + job mod count (with IMEX_CHANNELS_FROM=controller: the lowest free, chosen by the
    scripts as PrologSlurmctld), owned by its user with mode 0600, and cannot open the other's; after
    both, no channel node and no record is left (nor a number held on the controller)."""
    d = os.environ["IMEX_TEST_DIR"]
    controller = os.environ.get("IMEX_CHANNELS_FROM") == "controller"
    if controller:
        set_conf(d, f"SLURM_CONF={os.environ['SLURM_CONF']}\n")  # Slurm gives PrologSlurmctld none
    work = tempfile.mkdtemp(prefix="imex.", dir=os.path.join(os.environ["SLURM_TEST_DIR"], "work"))
    os.chmod(work, 0o777)
    env = dict(os.environ, WORK=work, CHDIR=os.path.join(d, "root", CHANNELS))
    jobs = []
    try:
        for tag, user in (("A", NOBODY), ("B", DAEMON)):
            jobs.append(subprocess.Popen(
                ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                 "srun", "--nodes=3", "--ntasks-per-node=1", f"--job-name=imex-{tag}", "sh", "-c", TASK],
                env=dict(env, TAG=tag), cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            wait_for(lambda: len(glob.glob(os.path.join(work, f"{tag}.*.1"))) == 3, 30, f"job {tag}'s tasks")
        open(os.path.join(work, "phase2"), "w").close()
        wait_for(lambda: len(glob.glob(os.path.join(work, "*.*.2"))) == 6, 30, "the second look")
        open(os.path.join(work, "go"), "w").close()
        for p in jobs:
            out, _ = p.communicate(timeout=30)
            check(p.returncode == 0, f"srun exit {p.returncode}: {out}")
        a1, b1, a2 = read_obs(work, "A", 1), read_obs(work, "B", 1), read_obs(work, "A", 2)
        channel = {}
        for tag, user, obs in (("A", NOBODY, a1), ("B", DAEMON, b1)):
            job_ids = {o[0] for o in obs.values()}
            check(len(job_ids) == 1, f"job {tag}: tasks in jobs {job_ids}")
            job = job_ids.pop()
            # Chosen on the controller: the lowest free number, in the jobs' order.
            channel[tag] = {"A": 1, "B": 2}[tag] if controller else 1 + job % 2047
            for node, (_, uid, seen, usable) in obs.items():
                check(uid == user, f"job {tag} on {node} ran as uid {uid}")
                check(usable == {channel[tag]}, f"job {tag} (job id {job}) on {node} can open {usable}, "
                                                f"expected only channel {channel[tag]}: {seen}")
                check(seen[channel[tag]] == (user, "600", "character special file"),
                      f"job {tag} on {node}: its channel is {seen[channel[tag]]}")
            for node in ("n1", "n2", "n3"):
                check(f"job {job} on {node}: channel {channel[tag]} for uid {user}" in log(d),
                      f"no prolog line for job {job} on {node}:\n{log(d)}")
        check(channel["A"] != channel["B"], f"both jobs got channel {channel['A']}")
        for node, (_, _, seen, usable) in a2.items():
            check(channel["B"] in seen and channel["B"] not in usable,
                  f"job A on {node} while B ran: sees {seen}, can open {usable}")
        left = ["controller", "lock"] if controller else ["lock"]
        wait_for(lambda: channel_nodes(d) == {} and records(d) == left, 15, "the epilogs to remove the channels")
        if controller:
            wait_for(lambda: os.listdir(os.path.join(d, "state", "controller")) == ["lock"], 15,
                     "EpilogSlurmctld to free the numbers")
    finally:
        for p in jobs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
        if sys.argv[3:] == ["controller"]:
            set_conf(sys.argv[2], "CHANNELS_FROM=controller\n")
        sys.exit(0)
    main({"by_hand_start_end": test_by_hand_start_end, "by_hand_taken": test_by_hand_taken,
          "by_hand_admin_run_beside_jobs": test_by_hand_admin_run_beside_jobs,
          "by_hand_epilog_fails": test_by_hand_epilog_fails, "by_hand_no_imex": test_by_hand_no_imex, "by_hand_bad_settings": test_by_hand_bad_settings,
          "by_hand_unsafe_paths": test_by_hand_unsafe_paths, "by_hand_unsafe_programs": test_by_hand_unsafe_programs,
          "by_hand_fuse_program": test_by_hand_fuse_program,
          "by_hand_state_dir_checked_first": test_by_hand_state_dir_checked_first,
          "by_hand_job_id_collisions": test_by_hand_job_id_collisions,
          "by_hand_controller": test_by_hand_controller, "by_hand_switch": test_by_hand_switch,
          "by_hand_no_descriptors_to_programs": test_by_hand_no_descriptors_to_programs,
          "jobs": test_jobs})
