#!/usr/bin/python3
"""`cumemctl fabric-matrix` under srun: the command block of docs/fleet.md's
"fabric-matrix" / "Slurm" section, run as written on the one-machine cluster (tests/slurm/cluster.sh;
SLURM_CONF set) with 3 nodes and 2 tasks per node: 6 ranks whose rank, count, local rank (the GPU) and
run name come from Slurm's environment, against the fake driver with four GPUs per node (gb200x4), as
an ordinary user (nobody) whose IMEX channel is the one the cluster's prolog gave the job (when the
cluster runs it: IMEX_TEST_DIR), else one made here.
    matrix_test.py [TEST...]     (tests: srun_pass srun_import_refused)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from harness import SOURCE, Failure, check, describe, fleet_json, main, write_node_wrapper

NODES, PER_NODE = 3, 2
RANKS = NODES * PER_NODE
USER = 65534  # nobody
REFUSED_RANK = 4  # on n3, local rank 0
INJECT = "cuMemImportFromShareableHandle=CUDA_ERROR_NOT_PERMITTED@1x100"


def doc_block():
    """The command block of docs/fleet.md's fabric-matrix Slurm section, continuation lines joined, made
    to run here: /shared is the work folder, 16 nodes of 4 GPUs are 3 of 2, and cumemctl is found on
    PATH (the node wrapper, as a cluster's cumemctl would be)."""
    with open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## fabric-matrix.*?\n(.*?)(?=^## )", text, re.S | re.M)
    check(section, "docs/fleet.md has no fabric-matrix section")
    slurm = re.search(r"^### Slurm\n(.*?)(?=^### )", section.group(1), re.S | re.M)
    check(slurm, "docs/fleet.md's fabric-matrix section has no Slurm part")
    blocks = re.findall(r"(?:^    .*\n)+", slurm.group(1), re.M)
    check(len(blocks) == 1, f"the fabric-matrix Slurm part of docs/fleet.md has {len(blocks)} command blocks")
    command = re.sub(r"\\\n\s*", "", re.sub(r"^    ", "", blocks[0], flags=re.M))
    for documented in ("/shared/", "-N 16", "--ntasks-per-node=4", "--gpus-per-node=4 --exclusive", "srun",
                       "--output=", "--error=",
                       "cumemctl fabric-matrix --dir", "cumemctl fleet"):
        check(documented in command, f"docs/fleet.md's fabric-matrix srun block lost '{documented}':\n{command}")
    return (command.replace("/shared/", "./").replace("-N 16", f"-N {NODES}")
            .replace("--ntasks-per-node=4", f"--ntasks-per-node={PER_NODE}")
            .replace("--gpus-per-node=4", f"--gpus-per-node={PER_NODE}"))


def run_matrix(rank_env=None):
    """Runs the documented block as user nobody in a fresh work folder; returns (the finished process,
    the folder, the job id, {rank: its JSON report}, the channel folder)."""
    base = os.path.join(os.environ["SLURM_TEST_DIR"], "work")
    d = tempfile.mkdtemp(prefix="matrix.", dir=base)
    os.chown(d, USER, USER)
    if "IMEX_TEST_DIR" in os.environ:  # the per-job channel the cluster's prolog makes (imex_test.py)
        channels = os.path.join(os.environ["IMEX_TEST_DIR"], "root/dev/nvidia-caps-imex-channels")
    else:
        channels = os.path.join(d, "imex-channels")
        os.mkdir(channels)
        os.mknod(os.path.join(channels, "channel0"), 0o020600, os.makedev(511, 0))
        os.chown(os.path.join(channels, "channel0"), USER, USER)
    write_node_wrapper(os.path.join(d, "bin/cumemctl"), profile="gb200x4", imex_channel_dir=channels,
                       rank_env=rank_env, constrain_devices=True)
    command = doc_block()
    env = dict(os.environ, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"])
    p = subprocess.run(["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "bash", "-c", command],
                       env=env, cwd=d, capture_output=True, text=True, timeout=120)
    what = f"docs/fleet.md's\n{command}\n"
    outputs = glob.glob(os.path.join(d, "run-*-*.json"))
    jobs = {re.fullmatch(r"run-(\d+)-\d+\.json", os.path.basename(o)).group(1) for o in outputs}
    check(len(jobs) == 1 and len(outputs) == RANKS, f"{what}: outputs {sorted(outputs)}: {describe(p)}")
    job = jobs.pop()
    reports = {}
    for r in range(RANKS):
        path = os.path.join(d, f"run-{job}-{r}.json")
        try:
            with open(path, encoding="utf-8") as f:
                reports[r] = json.load(f)
        except ValueError as e:
            raise Failure(f"rank {r}'s output is not one JSON report ({e}): {open(path).read()[-2000:]}")
    check(os.listdir(os.path.join(d, "run")) == [], f"the rendezvous folder keeps {os.listdir(os.path.join(d, 'run'))}")
    return p, d, job, reports, what


def errors_of(d, job, rank):
    """What a rank wrote on standard error (srun's --error file of the documented block)."""
    with open(os.path.join(d, f"run-{job}-{rank}.err"), encoding="utf-8") as f:
        return f.read()


def check_ranks(reports, job):
    """What every rank took from Slurm: its rank and the count (SLURM_PROCID, SLURM_NTASKS), its GPU
    (SLURM_LOCALID: 0 and 1 on each node, so two ranks of a node never share one) and the run (the
    job id); rank 0's matrix names every rank's node and GPU."""
    for r, rep in reports.items():
        res = rep["results"]
        check(rep["command"] == "fabric-matrix" and res["mode"] == "rank", f"rank {r}: {res.get('mode')}")
        check((res["rank"], res["ranks"], res["rank_source"]) == (r, RANKS, "SLURM_PROCID"),
              f"rank {r}: rank {res['rank']} of {res['ranks']} from {res['rank_source']}")
        check((res["device"], res["device_source"]) == (r % PER_NODE, "SLURM_LOCALID"),
              f"rank {r}: device {res['device']} from {res['device_source']}")
        check(res["run"] == job, f"rank {r}: run {res['run']}, expected the job id {job}")
        check(rep["host"] == f"n{r // PER_NODE + 1}", f"rank {r} ran on {rep['host']}")
        check((res["matrix"] is None) == (r != 0), f"rank {r}: the matrix is rank 0's alone")
    info = reports[0]["results"]["matrix"]["rank_info"]
    placed = [(i["rank"], i["host"], i["device"]) for i in info]
    expected = [(r, f"n{r // PER_NODE + 1}", r % PER_NODE) for r in range(RANKS)]
    check(placed == expected, f"rank 0's matrix places the ranks {placed}, expected {expected}")


def test_srun_pass():
    """Every pair of the 6 ranks passes: srun and fleet exit 0, every rank's report is ok, rank 0's
    matrix and fleet's (from all reports) have 36 passing cells."""
    p, d, job, reports, what = run_matrix()
    try:
        check(p.returncode == 0, f"{what}: should exit 0: {describe(p)}")
        check_ranks(reports, job)
        for r, rep in reports.items():
            check(rep["ok"] and rep["exit_code"] == 0, f"rank {r} failed: {rep.get('errors')}")
            cells = rep["results"]["row"]["cells"]
            check([c["status"] for c in cells] == ["pass"] * RANKS, f"rank {r}'s row: {cells}")
            err = errors_of(d, job, r)
            check(err == "", f"rank {r}'s standard error: {err}")
        m = reports[0]["results"]["matrix"]
        check(m["passed"] and m["failed_pairs"] == 0, f"rank 0's matrix: {m}")
        check(all(c["status"] == "pass" for row in m["cells"] for c in row) and len(m["cells"]) == RANKS,
              f"rank 0's cells: {m['cells']}")
        check(re.search(rf"^\s*every pair of {RANKS} ranks passed$", p.stdout, re.M), f"fleet's table: {describe(p)}")
        code, results = fleet_json(sorted(glob.glob(os.path.join(d, "run-*.json"))), d)
        check(code == 0, f"fleet --json exit {code}: {results}")
        fm = results["fabric_matrices"]
        check(len(fm) == 1 and fm[0]["run"] == job and fm[0]["ranks"] == RANKS and fm[0]["passed"],
              f"fleet's matrices: {fm}")
    finally:
        shutil.rmtree(d)


def test_srun_import_refused():
    """Rank 4's imports are refused (CUDA_ERROR_NOT_PERMITTED, injected through the wrapper for
    SLURM_PROCID 4 only): its row fails against every other rank with the IMEX diagnosis, naming rank 4
    and its node, and every other pair passes; every rank exits 1, so srun does; rank 0's report and
    fleet over all the reports say the same."""
    p, d, job, reports, what = run_matrix({REFUSED_RANK: {"FAKECUDA_INJECT": INJECT}})
    try:
        check(p.returncode == 1, f"{what}: fleet should exit 1: {describe(p)}")
        check_ranks(reports, job)
        failed = f"{RANKS - 1} of {RANKS * RANKS} pairs of the fabric matrix failed"
        for r, rep in reports.items():
            check(rep["exit_code"] == 1 and rep["errors"][0]["message"] == failed,
                  f"rank {r}: exit {rep['exit_code']}, errors {rep.get('errors')}")
            err = errors_of(d, job, r)
            check(f"cumemctl: error: {failed}" in err, f"rank {r}'s standard error (--error): {err}")
        code, results = fleet_json(sorted(glob.glob(os.path.join(d, "run-*.json"))), d)
        check(code == 1, f"fleet --json exit {code}: {results}")
        check(len(results["fabric_matrices"]) == 1, f"fleet's matrices: {results['fabric_matrices']}")
        refused_node = f"n{REFUSED_RANK // PER_NODE + 1}"
        for source, m in (("rank 0's report", reports[0]["results"]["matrix"]),
                          ("fleet", results["fabric_matrices"][0])):
            check(not m["passed"] and m["failed_pairs"] == RANKS - 1, f"{source}: {m['failed_pairs']} failed pairs")
            for i, row in enumerate(m["cells"]):
                for j, c in enumerate(row):
                    if i != REFUSED_RANK or i == j:
                        check(c["status"] == "pass", f"{source}: rank {i} reading rank {j}: {c}")
                        continue
                    message = (f"rank {i} ({refused_node}) reading rank {j} (n{j // PER_NODE + 1}): "
                               "cuMemImportFromShareableHandle failed: CUDA_ERROR_NOT_PERMITTED")
                    check(c["status"] == "fail" and c["diagnosis"] == "imex-channel"
                          and c["problem"]["message"].startswith(message),
                          f"{source}: rank {i} reading rank {j} should fail with '{message}': {c}")
        for j in range(RANKS):  # fleet's table for people: the failing pairs, each with rank 4's node
            pair = rf"^\s*{REFUSED_RANK}\s+{j}\s+imex-channel\s+rank {REFUSED_RANK} \({refused_node}\) reading rank {j} "
            check((re.search(pair, p.stdout, re.M) is not None) == (j != REFUSED_RANK),
                  f"fleet's table of failing pairs, rank {REFUSED_RANK} reading rank {j}: {describe(p)}")
    finally:
        shutil.rmtree(d)


def pmix_block(timeout=None):
    """The srun command block of docs/fleet.md's PMIx part, continuation lines joined, made to run here
    (16 nodes of 4 GPUs are 3 of 2; `timeout`: --timeout added for the cases where a rank is missing)."""
    with open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8") as f:
        text = f.read()
    part = re.search(r"^### Through the launcher's PMIx.*?\n(.*?)(?=^### )", text, re.S | re.M)
    check(part, "docs/fleet.md has no PMIx part in its fabric-matrix section")
    blocks = re.findall(r"(?:^    .*\n)+", part.group(1), re.M)
    check(len(blocks) == 2, f"the PMIx part of docs/fleet.md has {len(blocks)} command blocks, not srun's and mpirun's")
    command = re.sub(r"\\\n\s*", "", re.sub(r"^    ", "", blocks[0], flags=re.M))
    for documented in ("srun --mpi=pmix", "-N 16", "--ntasks-per-node=4", "--gpus-per-node=4 --exclusive",
                       "cumemctl fabric-matrix --json > matrix.json", "cumemctl fleet matrix.json"):
        check(documented in command, f"docs/fleet.md's PMIx srun block lost '{documented}':\n{command}")
    command = command.replace("-N 16", f"-N {PMIX_NODES}").replace("--ntasks-per-node=4",
                                                                  f"--ntasks-per-node={PMIX_PER_NODE}")
    command = command.replace("--gpus-per-node=4", f"--gpus-per-node={PMIX_PER_NODE}")
    if timeout:
        command = command.replace("fabric-matrix --json", f"fabric-matrix --timeout {timeout} --json")
    return command


# The PMIx runs: three nodes of two tasks, as an ordinary user, as the folder's runs are.
PMIX_NODES, PMIX_PER_NODE = NODES, PER_NODE
PMIX_RANKS = PMIX_NODES * PMIX_PER_NODE


def run_pmix(rank_env=None, timeout=None, every_rank=False):
    """Runs the documented PMIx block as USER in a fresh work folder whose TMPDIR stays empty
    unless a rank makes a folder; returns (the process, the folder, rank 0's report, seconds).
    `every_rank`: each rank writes its whole report (--all-report) to a file of its own (srun's
    --output=rank-%t.json), read into the process as `reports`, one per rank (None: not JSON)."""
    base = os.path.join(os.environ["SLURM_TEST_DIR"], "work")
    d = tempfile.mkdtemp(prefix="pmix.", dir=base)
    os.chown(d, USER, USER)
    channels = os.path.join(d, "imex-channels")
    os.mkdir(channels)
    os.mknod(os.path.join(channels, "channel0"), 0o020600, os.makedev(511, 0))
    os.chown(os.path.join(channels, "channel0"), USER, USER)
    tmp = os.path.join(d, "tmp")
    os.mkdir(tmp)
    os.chown(tmp, USER, USER)
    write_node_wrapper(os.path.join(d, "bin/cumemctl"), profile="gb200x4", imex_channel_dir=channels,
                       rank_env=rank_env, constrain_devices=True)
    command = pmix_block(timeout)
    if every_rank:  # srun alone (its status is the process's), each task's output to a file of its own
        command = command.splitlines()[0].replace(" > matrix.json", "")
        command = command.replace("srun --mpi=pmix", "srun --mpi=pmix --output=rank-%t.json --error=rank-%t.err").replace(
            "fabric-matrix", "fabric-matrix --all-report", 1)
    env = dict(os.environ, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"], TMPDIR=tmp)
    start = time.monotonic()
    p = subprocess.run(["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "bash", "-c", command],
                       env=env, cwd=d, capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - start
    p.reports = []
    for rank in range(PMIX_RANKS if every_rank else 0):
        try:
            with open(os.path.join(d, f"rank-{rank}.json"), encoding="utf-8") as f:
                p.reports.append(json.load(f))
        except (OSError, ValueError):
            p.reports.append(None)
    try:
        with open(os.path.join(d, "rank-0.json" if every_rank else "matrix.json"), encoding="utf-8") as f:
            report = json.load(f)
    except ValueError as e:
        raise Failure(f"rank 0's report is not one JSON report ({e}): {describe(p)}")
    check(os.listdir(tmp) == [], f"a rank made something in TMPDIR: {os.listdir(tmp)}")
    return p, d, report, seconds


def check_pmix_report(report):
    """Rank 0's report: met through PMIx, no folder, identity from the PMIx server."""
    res = report["results"]
    check(res["rendezvous"]["kind"] == "pmix" and res["folder"] is None, f"the rendezvous: {res['rendezvous']}, "
          f"folder {res['folder']}")
    check((res["rank"], res["ranks"], res["rank_source"]) == (0, PMIX_RANKS, "PMIx"),
          f"rank {res['rank']} of {res['ranks']} from {res['rank_source']}")
    check(res["device_source"] == "PMIX_LOCAL_RANK" and res["run"].isdigit(),
          f"device from {res['device_source']}, run {res['run']} (the job id)")
    steps = [s["step"] for s in res["steps"]]
    check("fence-cards" in steps and "fence-rows" in steps, f"the PMIx fences among the steps: {steps}")


def test_srun_pmix():
    """docs/fleet.md's PMIx block: the ranks meet through srun's PMIx alone (no folder is given or made:
    TMPDIR stays empty); rank 0's report, the only one on srun's output, holds the passing matrix."""
    p, d, report, seconds = run_pmix()
    try:
        check(p.returncode == 0, f"the PMIx block should exit 0: {describe(p)}")
        check_pmix_report(report)
        m = report["results"]["matrix"]
        check(m["passed"] and len(m["cells"]) == PMIX_RANKS and all(c["status"] == "pass" for row in m["cells"] for c in row),
              f"rank 0's matrix: {m}")
        placed = [(i["rank"], i["host"], i["device"]) for i in m["rank_info"]]
        check(placed == [(r, f"n{r // PMIX_PER_NODE + 1}", r % PMIX_PER_NODE) for r in range(PMIX_RANKS)],
              f"the ranks' nodes and GPUs: {placed}")
        check(re.search(rf"^\s*every pair of {PMIX_RANKS} ranks passed$", p.stdout, re.M), f"fleet's table: {describe(p)}")
        print(f"  note  {PMIX_RANKS} ranks through PMIx in {seconds:.1f} s")
    finally:
        shutil.rmtree(d)


def test_srun_pmix_missing_rank():
    """Rank 2 never comes (its driver does not load: it exits 3 before it publishes): every other rank,
    on all three nodes, names it once the fence has been given up, and its own reads of every other
    rank pass. Every rank writes valid JSON (--all-report, a file each): the live ranks their row and
    the matrix, rank 2 its error (exit 3, no driver). The rows of the other ranks in rank 0's matrix are
    not asserted: after a failed fence they come through Slurm 22.05's PMIx now and then only (a row
    that does not come is named so)."""
    p, d, report, seconds = run_pmix({2: {"CUMEMCTL_LIBCUDA": "/nonexistent/libcuda.so.1"}}, timeout=5, every_rank=True)
    try:
        check(p.returncode != 0, f"srun should fail: {describe(p)}")
        check_pmix_report(report)
        m = report["results"]["matrix"]
        check(m["rank_info"][2]["state"] == "missing", f"rank 2's state: {m['rank_info'][2]}")
        for r, other in enumerate(p.reports):
            check(other is not None, f"rank {r} wrote no JSON report: {describe(p)}")
            if r == 2:
                check(other["exit_code"] == 3 and "driver" in other["errors"][0]["message"], f"rank 2's report: {other}")
                continue
            res = other["results"]
            check(res["rank"] == r and other["exit_code"] == 1, f"rank {r}'s report: rank {res['rank']}, "
                  f"exit {other['exit_code']}")
            wait = [s for s in res["steps"] if s["step"] == "wait-cards"][0]
            check("never came: rank 2" in wait["detail"], f"rank {r}'s wait names rank 2: {wait}")
            for c in res["row"]["cells"]:
                want = ("fail", "missing") if c["peer"] == 2 else ("pass", None)
                check((c["status"], c["diagnosis"] if c["status"] == "fail" else None) == want,
                      f"rank {r} reading rank {c['peer']}: {c}")
            for i, row in enumerate(res["matrix"]["cells"]):
                for j, c in enumerate(row):
                    check(c["status"] == "fail" or 2 not in (i, j), f"rank {r}'s matrix: {i} reading {j}: {c}")
        # Slurm's fence waits for its own PMIxTimeout whatever PMIX_TIMEOUT says: each rank gives up the
        # cards' fence after the timeout and a grace (7 s), asks each rank's server (3 s), then gives up
        # the rows' fence over the ranks that came the same way (7 s) and asks again (3 s at most): the
        # man page's "about twice --timeout and 10 s", about 20 s on a quiet machine. What is judged is
        # what ended the wait: --timeout, well before the next longest wait, Slurm's PMIxTimeout (300 s,
        # its default here), whose end srun would report; not how close to 20 s a loaded machine came
        # (31 s beside the other test stages).
        check(seconds < 90, f"the ranks took {seconds:.1f} s: not ended by --timeout 5")
        print(f"  note  the run with a missing rank took {seconds:.1f} s (--timeout 5)")
    finally:
        shutil.rmtree(d)


def test_srun_pmix_version():
    """Rank 1 runs another driver version (a profile of CUDA 13.0): every pair with rank 1 fails with the
    diagnosis 'version', the rest pass."""
    d0 = tempfile.mkdtemp(prefix="profile.", dir=os.path.join(os.environ["SLURM_TEST_DIR"], "work"))
    other = os.path.join(d0, "gb200x4-13.0.json")
    subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "tests/fakecuda/make_profile.py"), "gb200x4", other,
                    "driver_version=13000"],
                   check=True, env=dict(os.environ, PROFILES=os.path.join(SOURCE, "tests/fakecuda/profiles")))
    os.chmod(d0, 0o755)
    os.chmod(other, 0o644)
    try:
        p, d, report, _ = run_pmix({1: {"FAKECUDA_PROFILE": other}})
        try:
            check_pmix_report(report)
            m = report["results"]["matrix"]
            for i, row in enumerate(m["cells"]):
                for j, c in enumerate(row):
                    if (i == 1) != (j == 1):
                        check(c["status"] == "fail" and c["diagnosis"] == "version", f"rank {i} reading {j}: {c}")
                    else:
                        check(c["status"] == "pass", f"rank {i} reading rank {j}: {c}")
        finally:
            shutil.rmtree(d)
    finally:
        shutil.rmtree(d0)


def test_mpirun_pmix():
    """docs/fleet.md's mpirun line on this machine (Debian's Open MPI, whose launcher serves PMIx; no
    Slurm): 3 ranks meet through PMIx with no folder, and rank 0's report, the only one on mpirun's
    output, holds the passing matrix."""
    part = re.search(r"^### Through the launcher's PMIx.*?\n(.*?)(?=^### )",
                     open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8").read(), re.S | re.M)
    line = re.findall(r"(?:^    .*\n)+", part.group(1), re.M)[1].strip()
    check(line == "mpirun -np 64 --map-by ppr:4:node cumemctl fabric-matrix --json > matrix.json",
          f"docs/fleet.md's mpirun line changed: {line}")
    if shutil.which("mpirun") is None:
        raise Failure("no mpirun (scripts/setup.sh installs openmpi-bin)")
    d = tempfile.mkdtemp(prefix="mpirun.", dir="/tmp")
    try:
        channels = os.path.join(d, "imex-channels")
        os.mkdir(channels)
        os.mknod(os.path.join(channels, "channel0"), 0o020600, os.makedev(511, 0))
        tmp = os.path.join(d, "tmp")
        os.mkdir(tmp)
        write_node_wrapper(os.path.join(d, "bin/cumemctl"), profile="gb200x4", imex_channel_dir=channels)
        command = line.replace("-np 64 --map-by ppr:4:node", "-np 3 --oversubscribe --allow-run-as-root")
        env = dict(os.environ, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"], TMPDIR=tmp,
                   CUMEMCTL_HOST="mpi-node")
        p = subprocess.run(["bash", "-c", command], env=env, cwd=d, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"{command}: {describe(p)}")
        with open(os.path.join(d, "matrix.json"), encoding="utf-8") as f:
            report = json.load(f)
        res = report["results"]
        check(res["rendezvous"]["kind"] == "pmix" and res["folder"] is None and res["ranks"] == 3,
              f"mpirun's ranks met through {res['rendezvous']}, {res['ranks']} ranks")
        check(res["matrix"]["passed"] and len(res["matrix"]["cells"]) == 3, f"the matrix: {res['matrix']}")
        check(os.listdir(tmp) == [], f"a rank made something in TMPDIR: {os.listdir(tmp)}")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main({"srun_pass": test_srun_pass, "srun_import_refused": test_srun_import_refused, "srun_pmix": test_srun_pmix,
          "srun_pmix_missing_rank": test_srun_pmix_missing_rank, "srun_pmix_version": test_srun_pmix_version,
          "mpirun_pmix": test_mpirun_pmix})
