#!/usr/bin/python3
"""docs/fleet.md's Slurm and pdsh commands, run for real: the indented command blocks of its "Slurm"
and "pdsh" sections, srun on the one-machine cluster (tests/slurm/cluster.sh; SLURM_CONF set), pdsh in
exec mode, against the fake driver. Node n3 sees no GPU, so its doctor fails; n1 and n2 pass or warn.
    fleet_test.py [TEST...]     (tests: srun_doc srun_constrained srun_drain pdsh_doc pdsh_exit)
"""
import glob
import json
import os
import re
import shutil
import tempfile

from harness import CUMEMCTL, SOURCE, check, describe, fleet_json, main, sh, write_node_wrapper

NODES = ["n1", "n2", "n3"]
FAILING = "n3"


def workdir():
    """A folder that every job's user can use (in the cluster's world-writable work/ where there is
    one), with shared/bin/cumemctl: the node wrapper (tests/slurm/harness.py): four GPUs a node, as the
    cluster's gres declares, and a Slurm step that asked for none sees none (ConstrainDevices=yes)."""
    base = os.path.join(os.environ["SLURM_TEST_DIR"], "work") if "SLURM_TEST_DIR" in os.environ else None
    d = tempfile.mkdtemp(prefix="fleet.", dir=base)
    os.chmod(d, 0o755)
    write_node_wrapper(os.path.join(d, "shared/bin/cumemctl"), failing_nodes=[FAILING], profile="gb200x4",
                       constrain_devices=True)
    return d


def expect_summary(results, what):
    """The summary of n1..n3: three nodes, n3 failed in devices, the others not failed, no bad input."""
    nodes = {n["host"]: n for n in results["nodes"]}
    check(sorted(nodes) == NODES, f"{what}: nodes {sorted(nodes)}, expected {NODES}")
    check(results["node_count"] == 3, f"{what}: node_count {results['node_count']}")
    check(nodes[FAILING]["status"] == "fail" and "devices" in nodes[FAILING]["failed"],
          f"{what}: {FAILING} should fail in devices: {nodes[FAILING]}")
    for n in NODES:
        if n != FAILING:
            check(nodes[n]["status"] in ("pass", "warn"), f"{what}: {n} is {nodes[n]['status']}")
    check(not results.get("input_problems"), f"{what}: input problems {results.get('input_problems')}")


def doc_blocks(section):
    """The shell blocks (indented four spaces) of a section of docs/fleet.md, continuation lines joined,
    made to run here: /shared/bin/cumemctl is the node wrapper of the work folder, a bare cumemctl the
    built binary, --nodes=64 and gpu[001-128] the three nodes, --gpus-per-node=8 the four GPUs that each
    node of the cluster has, and pdsh runs in exec mode (no ssh),
    giving each name its CUMEMCTL_HOST through %h. srun's %N (the node's host name) becomes %n (its
    index in the job): the three nodes here share this machine's host name, so %N would name one file
    for all of them, which each task truncates as it starts (a report was lost in about one run of
    six), where on a real cluster it names one per node."""
    with open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8") as f:
        text = f.read()
    body = re.search(rf"^## {section}\n(.*?)(?=^## )", text, re.S | re.M).group(1)
    blocks = []
    for block in re.findall(r"(?:^    .*\n)+", body, re.M):
        command = re.sub(r"\\\n\s*", "", re.sub(r"^    ", "", block, flags=re.M))
        command = command.replace("/shared/bin/cumemctl", "shared/bin/cumemctl").replace("--nodes=64", "--nodes=3")
        command = command.replace("--gpus-per-node=8", "--gpus-per-node=4")
        command = command.replace("'gpu[001-128]'", "'n[1-3]'").replace("reports/%N.", "reports/%n.")
        command = re.sub(r"\bpdsh (.*?)shared/bin/cumemctl", r"pdsh -R exec \1env CUMEMCTL_HOST=%h shared/bin/cumemctl",
                         command)
        blocks.append(command)
    check(len(blocks) >= 2, f"the {section} section of docs/fleet.md has {len(blocks)} command blocks")
    return blocks


def run_doc_block(command):
    """Runs a block in a fresh work folder, three times (what interleaves does not do so every time), and
    checks what its last command says: cumemctl fleet, n1..n3 with n3 failed and every input read; or
    (the pdsh -S block) that a node failed."""
    for attempt in range(3):
        d = workdir()
        try:
            env = dict(os.environ, PATH=os.path.dirname(CUMEMCTL) + ":" + os.environ["PATH"])
            p = sh(command, env=env, cwd=d)
            what = f"docs/fleet.md's\n{command}(run {attempt + 1})"
            if "cumemctl fleet" not in command.splitlines()[-1]:
                check("a node failed" in p.stdout, f"{what}: should say that a node failed: {describe(p)}")
                check(sorted(os.listdir(os.path.join(d, "reports"))) == NODES,
                      f"{what}: reports/ holds {os.listdir(os.path.join(d, 'reports'))}")
                continue
            if "--output='reports/" in command:
                reports = [f for f in os.listdir(os.path.join(d, "reports")) if f.endswith(".json")]
                check(len(reports) == 3, f"{what}: reports/ holds {reports}, one report per node wanted")
            check(p.returncode == 1, f"{what}: fleet should exit 1 (n3 failed): {describe(p)}")
            check(re.search(r"^cumemctl fleet: 3 nodes \(1 failed, .*\), 3 reports$", p.stdout, re.M),
                  f"{what}: fleet's summary: {describe(p)}")
            check(re.search(r"^ +n3 +fail .*fail: devices", p.stdout, re.M), f"{what}: n3's row: {p.stdout}")
            check("cumemctl: error" not in p.stderr, f"{what}: {p.stderr}")
            inputs = sorted(f for f in glob.glob(os.path.join(d, "reports/*")) if not f.endswith(".err")) or \
                glob.glob(os.path.join(d, "all.json"))
            if inputs:
                _, results = fleet_json(inputs, d)
                expect_summary(results, what)
            for path in glob.glob(os.path.join(d, "reports/*.json")):
                # The step's GPUs reached doctor: all four of each node that has some (n3 has none).
                with open(path, encoding="utf-8") as f:
                    report = json.load(f)
                if report["host"] != FAILING:
                    count = report["results"].get("device_count")
                    check(count == 4, f"{what}: {report['host']}'s doctor saw {count} GPUs, the node's 4 wanted")
        finally:
            shutil.rmtree(d)


def test_srun_doc():
    """Every command block of docs/fleet.md's Slurm section, on the cluster."""
    for command in doc_blocks("Slurm"):
        # Under ConstrainDevices=yes (which the node wrapper plays) a step sees only the GPUs it asked for.
        for srun in re.findall(r"\bsrun [^|]*", command):
            check("--gpus-per-node=" in srun and "--exclusive" in srun,
                  f"docs/fleet.md's srun asks for no GPUs or not the whole node: {srun}")
        run_doc_block(command)


def test_pdsh_doc():
    """Every command block of docs/fleet.md's pdsh section, in pdsh's exec mode."""
    for command in doc_blocks("pdsh"):
        run_doc_block(command)


PDSH = "pdsh -R exec -w 'n[1-3]' env CUMEMCTL_HOST=%h shared/bin/cumemctl doctor --json"


def test_pdsh_exit():
    """What docs/fleet.md says of pdsh's exit code: 0 although n3's doctor failed (named on stderr);
    with -S the largest exit code, doctor's 1."""
    d = workdir()
    try:
        p = sh(PDSH + " > /dev/null", cwd=d)
        check(p.returncode == 0, f"pdsh without -S: {describe(p)}")
        check(re.search(r"n3: .*exit code 1", p.stderr), f"pdsh names n3's exit code on stderr: {p.stderr}")
        p = sh(PDSH.replace("pdsh ", "pdsh -S ") + " > /dev/null", cwd=d)
        check(p.returncode == 1, f"pdsh -S should exit 1 (doctor's exit code on n3): {describe(p)}")
    finally:
        shutil.rmtree(d)


# Run in a step: the step's devices cgroup (cgroup v1) and which stand-in GPU nodes it may open, as JSON.
PROBE = """
import errno, json, os
allowed = []
for i in range(4):
    try:
        os.close(os.open(os.path.join(os.environ["SLURM_TEST_DIR"], "dev", f"nvidia{i}"), os.O_RDWR))
        allowed.append(i)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EACCES):
            allowed.append(i)
cgroup = [l.split(":", 2)[2].strip() for l in open("/proc/self/cgroup") if l.split(":")[1] == "devices"]
print(json.dumps({"allowed": allowed, "cgroup": cgroup[0] if cgroup else None,
                  "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}))
"""


def test_srun_constrained():
    """Slurm's ConstrainDevices=yes (for real where the cluster has cgroups, SLURM_TEST_CGROUPS=1, else
    played by the node wrapper): a step given two of n1's four GPUs sees just those two, known by their
    UUIDs (the GPU of device node N is the one of NVML index N), and a step given none sees no GPU, so
    its doctor fails in devices."""
    real = os.environ.get("SLURM_TEST_CGROUPS") == "1"
    # CI's machines have cgroup v1's controllers (cluster.sh): there the real thing is required.
    check(real or not (os.environ.get("CI") or os.environ.get("CUMEMCTL_CI")),
          "the cluster has no cgroups (cluster.sh found no cgroup v1 devices and freezer controllers), so "
          "ConstrainDevices=yes would only be played: CI requires it for real")
    with open(os.path.join(SOURCE, "tests/fakecuda/profiles/gb200x4.json"), encoding="utf-8") as f:
        uuids = [d["uuid"] for d in json.load(f)["devices"]]
    d = workdir()
    try:
        with open(os.path.join(d, "probe.py"), "w", encoding="utf-8") as f:
            f.write(PROBE)
        p = sh("srun -N1 -w n1 --gpus-per-node=2 bash -c "
               "'/usr/bin/python3 probe.py && shared/bin/cumemctl devices --json --no-free'", cwd=d)
        check(p.returncode == 0, f"a step with two GPUs: {describe(p)}")
        probe, _, report = p.stdout.partition("\n")
        probe = json.loads(probe)
        devices = json.loads(report)["results"]["devices"]
        if real:
            check(probe["cgroup"] and "/slurm_n1/" in probe["cgroup"] + "/",
                  f"the step is not in Slurm's devices cgroup: {probe}")
            check(len(probe["allowed"]) == 2, f"the step's cgroup should allow 2 of the 4 GPU nodes: {probe}")
            # NVML index N <-> profile device 3 - N (tests/fakecuda/device_nodes.hpp).
            wanted = sorted(uuids[3 - n] for n in probe["allowed"])
            seen = sorted(dev["uuid"].replace("GPU-", "").replace("-", "") for dev in devices)
            check(seen == wanted, f"the step sees GPUs {seen}, its cgroup allows {wanted}")
        check(len(devices) == 2, f"a step given two GPUs sees {len(devices)}: {report}")
        check(probe["visible"] == "0,1", f"Slurm's CUDA_VISIBLE_DEVICES in the step: {probe}")

        p = sh("srun -N1 -w n2 bash -c '/usr/bin/python3 probe.py && shared/bin/cumemctl doctor --json'", cwd=d)
        check(p.returncode == 1, f"doctor in a step given no GPU should fail: {describe(p)}")
        probe, _, report = p.stdout.partition("\n")
        probe = json.loads(probe)
        if real:
            check(probe["allowed"] == [] and "/slurm_n2/" in (probe["cgroup"] or "") + "/",
                  f"a step given no GPU: its devices cgroup should refuse all four GPU nodes: {probe}")
        doc = json.loads(report)["results"]
        failed = [c["check"] for c in doc["checks"] if c["status"] == "fail"]
        check("devices" in failed, f"doctor in a step given no GPU fails in {failed}, devices wanted")
        print(f"        ConstrainDevices=yes: {'task/cgroup' if real else 'played by the node wrapper (no cgroups)'}")
    finally:
        shutil.rmtree(d)


def drain_block():
    """docs/fleet.md's block that drains the failing nodes (the one that runs scontrol update)."""
    with open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8") as f:
        text = f.read()
    blocks = [re.sub(r"^    ", "", b, flags=re.M) for b in re.findall(r"(?:^    .*\n)+", text, re.M)]
    drains = [b for b in blocks if "state=drain" in b]
    check(len(drains) == 1, f"docs/fleet.md should have one drain block, has {len(drains)}")
    check("--expect" in drains[0], f"docs/fleet.md's drain block passes no --expect: {drains[0]}")
    return drains[0]


def node_state(node):
    p = sh(f"scontrol show node {node}")
    check(p.returncode == 0, f"scontrol show node {node}: {describe(p)}")
    return re.search(r"\bState=(\S+)", p.stdout).group(1)


def test_srun_drain():
    """docs/fleet.md's drain block on the cluster, beside forged reports: failing reports of the hosts
    'ALL', 'all', 'n9' and 'n[1-2]' (written by a node for names that are no node of the job), and an
    expected name that Slurm does not know ('ghost', missing, so on the list, and refused by scontrol):
    n3, the real failure, is drained, n1 and n2 are not, and no name drains every node."""
    d = workdir()
    try:
        os.makedirs(os.path.join(d, "reports"))
        wrapper = os.path.join(d, "shared/bin/cumemctl")
        for host in NODES + ["ALL", "all", "n9", "n[1-2]"]:
            name = host if host in NODES else "forged-" + re.sub(r"\W", "_", host)
            # A forged report: the failing profile (no GPU), its host name set by whoever wrote it.
            env = dict(os.environ, CUMEMCTL_HOST=host if host in NODES else FAILING)
            p = sh(f"{wrapper} doctor --json > reports/{name}.json", env=env, cwd=d)
            check(p.returncode in (0, 1), f"doctor as {host}: {describe(p)}")
            if host not in NODES:
                path = os.path.join(d, "reports", name + ".json")
                with open(path, encoding="utf-8") as f:
                    report = json.load(f)
                report["host"] = host
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(report, f)
        env = dict(os.environ, SLURM_JOB_NODELIST="n[1-3],ghost",
                   PATH=os.path.dirname(CUMEMCTL) + ":" + os.environ["PATH"])
        p = sh(drain_block(), env=env, cwd=d)
        check(re.search(r"not drained: ghost", p.stderr), f"scontrol should refuse ghost, named: {describe(p)}")
        check("DRAIN" in node_state(FAILING), f"{FAILING} should be drained: {node_state(FAILING)} {describe(p)}")
        for n in NODES:
            if n != FAILING:
                check("DRAIN" not in node_state(n), f"{n} should not be drained: {node_state(n)}")
    finally:
        for n in NODES:
            sh(f"scontrol update nodename={n} state=resume")
        shutil.rmtree(d)


if __name__ == "__main__":
    main({"srun_doc": test_srun_doc, "srun_constrained": test_srun_constrained, "srun_drain": test_srun_drain,
          "pdsh_doc": test_pdsh_doc, "pdsh_exit": test_pdsh_exit})
