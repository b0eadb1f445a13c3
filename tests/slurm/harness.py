"""What the fleet tests (tests/slurm/*_test.py) share: the built binary and fake driver (from the
environment that tests/slurm/run.sh sets), a wrapper that plays /shared/bin/cumemctl on a node, and
small checks that stop the test with a message."""
import json
import os
import shlex
import subprocess
import sys
import time

CUMEMCTL = os.environ["CUMEMCTL"]  # the built binary
FAKECUDA = os.environ["FAKECUDA"]  # the fake driver (tests/fakecuda)
FAKENVML = os.environ["FAKENVML"]  # the fake NVML
PROFILES = os.environ["PROFILES"]  # tests/fakecuda/profiles
SOURCE = os.environ["SOURCE"]  # the source tree


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def fake_env(profile="h200", **extra):
    """The environment of a node whose driver is the fake one with `profile`."""
    env = dict(os.environ)
    env.update(CUMEMCTL_LIBCUDA=FAKECUDA, CUMEMCTL_LIBNVML=FAKENVML,
               FAKECUDA_PROFILE=os.path.join(PROFILES, profile + ".json"))
    env.update(extra)
    return env


def wait_for(predicate, seconds, what):
    """Polls `predicate` every 0.1 s until it holds; a Failure naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise Failure(f"timed out after {seconds} s waiting for {what}")


def sh(command, env=None, cwd=None, timeout=120):
    """Runs a shell command line (as docs/fleet.md writes it) and returns the completed process."""
    return subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def log(d):
    """What the scripts under test logged to D/log (their LOG_FILE), or "" before they wrote any."""
    try:
        with open(os.path.join(d, "log"), encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def describe(p):
    return f"exit {p.returncode}\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"


def write_node_wrapper(path, failing_nodes=(), profile="h200", imex_channel_dir=None, rank_env=None,
                       constrain_devices=False):
    """Writes the program that plays /shared/bin/cumemctl on every node of the one-machine cluster: the
    real binary with the fake driver, named after the node (all "nodes" here share one host name, so
    CUMEMCTL_HOST comes from Slurm's SLURMD_NODENAME where pdsh's %h did not give it). Every node has
    the fake `profile`, except the nodes in `failing_nodes`, which see no GPU (profile no-gpu), so their
    doctor fails. `imex_channel_dir`: the folder of IMEX channel nodes that the fake driver (and
    cumemctl's diagnosis) looks in. `rank_env`: {rank: {NAME: VALUE}}, more environment for the Slurm
    task whose SLURM_PROCID is that rank only, set last (e.g. FAKECUDA_INJECT to make one rank's call fail,
    FAKECUDA_PROFILE for another driver). On the cluster (SLURM_TEST_DIR set), the fake driver and NVML
    are told the stand-in device nodes (FAKECUDA_DEVICE_NODES), so that a GPU whose node the step's
    device cgroup refuses is not there (cluster.sh: ConstrainDevices=yes for real where SLURM_TEST_CGROUPS
    is 1). `constrain_devices`: where the cluster has no cgroups (SLURM_TEST_CGROUPS 0), plays
    ConstrainDevices=yes instead: a Slurm step that was given no GPU (no CUDA_VISIBLE_DEVICES from the
    cluster's gres) sees none, as a real node's step does, so that a documented srun line that asks for
    no GPU fails here as it would there."""
    cases = "".join(f"  {n}) profile=no-gpu ;;\n" for n in failing_nodes)
    ranks = "".join(f"  {int(r)}) export {' '.join(f'{k}={shlex.quote(v)}' for k, v in env.items())} ;;\n"
                    for r, env in (rank_env or {}).items())
    imex = ""
    if imex_channel_dir is not None:
        imex = f"export FAKECUDA_IMEX_DIR={shlex.quote(imex_channel_dir)} CUMEMCTL_IMEX_CHANNEL_DIR={shlex.quote(imex_channel_dir)}\n"
    constrain = ""
    if "SLURM_TEST_DIR" in os.environ:
        nodes = os.path.join(os.environ["SLURM_TEST_DIR"], "dev", "nvidia%d")
        constrain = f"export FAKECUDA_DEVICE_NODES={shlex.quote(nodes)}\n"
    if constrain_devices and os.environ.get("SLURM_TEST_CGROUPS") != "1":
        constrain += ('# ConstrainDevices=yes, played: a step given no GPU sees none.\n'
                      '[ -z "${SLURM_STEP_ID:-}" ] || export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES-}"\n')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"""#!/bin/sh
# /shared/bin/cumemctl of a test node (tests/slurm/harness.py): the fake driver, the node's name.
host=${{CUMEMCTL_HOST:-${{SLURMD_NODENAME:-}}}}
[ -z "$host" ] || export CUMEMCTL_HOST="$host"
profile={shlex.quote(profile)}
case $host in
{cases}esac
export CUMEMCTL_LIBCUDA={shlex.quote(FAKECUDA)} CUMEMCTL_LIBNVML={shlex.quote(FAKENVML)}
export FAKECUDA_PROFILE={shlex.quote(PROFILES)}/$profile.json
{imex}{constrain}case ${{SLURM_PROCID:-}} in
{ranks}esac
exec {shlex.quote(CUMEMCTL)} "$@"
""")
    os.chmod(path, 0o755)


def fleet_json(paths, cwd, stdin=None):
    """`cumemctl fleet --json` of the given arguments: (exit code, the results object)."""
    p = subprocess.run([CUMEMCTL, "fleet", "--json", *paths], cwd=cwd, input=stdin, capture_output=True,
                       text=True, timeout=60)
    try:
        return p.returncode, json.loads(p.stdout)["results"]
    except (ValueError, KeyError) as e:
        raise Failure(f"fleet --json did not give a report ({e}): {describe(p)}")


def main(tests):
    """Runs the named test functions (all of them without arguments), printing each one's time."""
    names = sys.argv[1:] or list(tests)
    failed = 0
    for name in names:
        start = time.monotonic()
        try:
            tests[name]()
            print(f"  ok    {name} ({time.monotonic() - start:.1f} s)", flush=True)
        except Failure as e:
            failed += 1
            print(f"  FAIL  {name} ({time.monotonic() - start:.1f} s): {e}", flush=True)
    sys.exit(1 if failed else 0)
