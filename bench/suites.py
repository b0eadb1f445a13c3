"""The benchmarks: each function measures one group through the runner's context (bench.py) and
returns a group record: id, title, items (one measured command each), notes, and what it found."""
import json
import os
import shutil
import tempfile

FLOOR_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor.py")
# The imex-setup benchmark (bench/imex_setup.sh: imex-setup --all and its rerun), run too where the tree has it.
IMEX_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imex_setup.sh")

# The targets of docs/benchmarks.md, as ratios or seconds.
QUERY_TARGET = 1.05      # cumemctl's median at most 5% above the floor's (devices --no-free, granularity)
FREE_TARGET = 1.10       # devices with free memory: at most 10% above the floor's
PYTHON_EXPECTED = 1.5    # what the same queries in Python cost, about (informational)
DOCTOR_TARGET_S = {1: 0.5, 2: 0.7}  # doctor, every check, by GPU count (more GPUs: the two-GPU figure)
QUICK_TARGET = 1.05      # doctor --quick: at most 5% above bench_doctor_floor quick, at any GPU count
FULL_TARGET = 1.10       # the full doctor: at most 10% above bench_doctor_floor full, link checks included
VERIFY_TARGET = 0.90     # verify bandwidth at least 90% of the copy's
IMEX_TARGET_S = 1.0


def parse_json(text):
    """The JSON document a command printed, or None."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def group(gid, title, items=None, notes=None, skipped=None, **extra):
    """A group record: its measured items, notes, why it was skipped (if it was) and what else it found."""
    record = {"id": gid, "title": title, "items": items or [], "notes": notes or []}
    if skipped:
        record["skipped"] = skipped
    record.update(extra)
    return record


def median(item):
    """An item's median seconds, or None where it was not measured."""
    return item.get("seconds", {}).get("median")


def compare_to_floor(item, floor, target=None):
    """Adds the ratio of item's median to the floor's, and whether it meets `target` (a ratio)."""
    if median(item) and median(floor):
        item["vs_floor"] = median(item) / median(floor)
        if target is not None:
            item["target"] = f"<= {target:.2f}x floor"
            item["met"] = item["vs_floor"] <= target


def device_identity(doc):
    """What must agree between cumemctl and the floor for devices: count, names, UUIDs, totals."""
    if doc is None:
        return None
    body = doc.get("results", doc)
    return [body.get("device_count"),
            [(d.get("name"), d.get("uuid"), d.get("total_bytes"), d.get("compute_capability"))
             for d in body.get("devices", [])]]


def granularity_values(doc):
    """The (minimum, recommended) pairs of every combination the driver accepted, sorted."""
    if doc is None:
        return None
    rows = doc.get("rows") if "rows" in doc else doc.get("results", {}).get("rows", [])
    return sorted((r.get("minimum_bytes"), r.get("recommended_bytes")) for r in rows
                  if isinstance(r.get("minimum_bytes"), int) and isinstance(r.get("recommended_bytes"), int))


def queries(ctx, what, extra, identity, target=QUERY_TARGET):
    """bench_floor, cumemctl and floor.py answering the same queries; their times, RSS and agreement."""
    title = " ".join(["cumemctl", what, *extra, "--json"])
    labels = [" ".join(["bench_floor", what, *extra]), title]
    argvs = [[ctx.floor, what, *extra], [ctx.cumemctl, what, *extra, "--json"]]
    py_label = " ".join(["floor.py", what, *extra])
    if not ctx.python_skip:
        labels.append(py_label)
        argvs.append([ctx.python, FLOOR_PY, what, *extra])
    items = ctx.timed_together(labels, argvs)
    floor, tool = items[0], items[1]
    compare_to_floor(tool, floor, target)
    if ctx.python_skip:
        items.append(ctx.skipped(py_label, ctx.python_skip))
    else:
        compare_to_floor(items[2], floor)
        if "vs_floor" in items[2]:
            items[2]["target"] = f"about {PYTHON_EXPECTED}x floor (expected, not a target)"
    notes = []
    answers = {i["label"]: identity(parse_json(i.get("stdout"))) for i in items if "stdout" in i}
    distinct = {json.dumps(v) for v in answers.values()}
    agree = len(distinct) == 1 and None not in answers.values()
    notes.append("the programs gave the same answers" if agree else
                 "ANSWERS DIFFER between the programs (see 'answers'): they did not do the same work")
    return group(f"{what}{''.join(extra)}", title, items, notes, agree=agree, answers=answers)


def devices(ctx):
    """`devices --json` and `devices --no-free --json` against the floor and floor.py."""
    return [queries(ctx, "devices", [], device_identity, FREE_TARGET),
            queries(ctx, "devices", ["--no-free"], device_identity)]


def granularity(ctx):
    """`granularity --json` against the floor and floor.py."""
    if not ctx.available("granularity"):
        return [group("granularity", "cumemctl granularity --json", skipped=ctx.missing("granularity"))]
    return [queries(ctx, "granularity", [], granularity_values)]


def find_checks(doc):
    """(check, seconds, status) of every check in a doctor report: results.checks[], each with its
    check name, device (null for node checks), status and seconds."""
    checks = ((doc or {}).get("results") or {}).get("checks") or []
    found = []
    for c in checks:
        if isinstance(c, dict) and isinstance(c.get("seconds"), (int, float)):
            name = str(c.get("check", c.get("name", "?")))
            if c.get("device") is not None:
                name += f" (GPU {c['device']})"
            found.append((name, c["seconds"], c.get("status")))
    return found


def doctor(ctx):
    """`doctor --json` in total, and each check's own duration as doctor reports it."""
    if not ctx.available("doctor"):
        return [group("doctor", "cumemctl doctor --json", skipped=ctx.missing("doctor"))]
    def parse(out):
        doc = parse_json(out)
        own = ((doc or {}).get("results") or {}).get("seconds")
        return find_checks(doc), own if isinstance(own, (int, float)) else None

    item = ctx.timed("cumemctl doctor --json", [ctx.cumemctl, "doctor", "--json"], heavy=True, parse=parse,
                     ok_codes=(0, 1))
    parsed = item.pop("parsed", [])
    gpus = max((len({n for n, _, _ in run if n.startswith("context (GPU")}) for run, _ in parsed), default=0)
    if median(item) is not None and gpus > 0:
        target = DOCTOR_TARGET_S[min(gpus, 2)]
        item["target"] = f"< {target} s on {gpus} GPU(s)"
        item["met"] = median(item) < target
    per_check, status, own = {}, {}, []
    for run, own_seconds in parsed:
        if own_seconds is not None:
            own.append(own_seconds)
        for name, secs, state in run:
            per_check.setdefault(name, []).append(secs)
            status[name] = state
    checks = [{"check": name, "status": status[name], "seconds": ctx.summary(v)} for name, v in per_check.items()]
    notes = ["exit 1 (a check failed) is measured too: it is the machine's state, not the tool's speed"]
    if own:
        notes.append(f"doctor's own timing of its run (results.seconds), median {ctx.summary(own)['median']:.3f} s: "
                     "the rest of the wall time is what doctor spends outside that figure (process start, exit)")
    if not checks:
        notes.append("no per-check durations found in doctor's JSON")
    return [group("doctor", "cumemctl doctor --json", [item], notes, checks=checks)] + doctor_floors(ctx)


def doctor_floors(ctx):
    """doctor --quick against bench_doctor_floor quick (cuInit, the same attribute and NVML queries, no
    context; target QUICK_TARGET), and the full doctor against bench_doctor_floor full (cuInit, a context per
    GPU made and released, a second process per GPU that imports what the allocating checks export, those
    checks' allocations, and the link checks' copies one GPU at a time: what it must do; target FULL_TARGET)."""
    floor = os.path.join(os.path.dirname(ctx.floor), "bench_doctor_floor")
    if not os.access(floor, os.X_OK):
        return [group("doctor-floors", "doctor against its floors",
                      skipped=f"{floor} is missing: build the bench_doctor_floor target")]
    groups = []
    if ctx.available("doctor", "--quick"):
        items = ctx.timed_together(["bench_doctor_floor quick", "cumemctl doctor --quick --json"],
                                   [[floor, "quick"], [ctx.cumemctl, "doctor", "--quick", "--json"]],
                                   ok_codes=[(0,), (0, 1)])
        compare_to_floor(items[1], items[0], QUICK_TARGET)
        groups.append(group("doctor-quick", "cumemctl doctor --quick --json", items,
                            ["the floor: cuInit, each device's identity and capability attributes, NVML's memory "
                             "figures and health and its PCIe and NVLink link questions (NVML on its own thread, "
                             "as doctor loads it); no context"]))
    else:
        groups.append(group("doctor-quick", "cumemctl doctor --quick --json", skipped=ctx.missing("doctor --quick")))
    items = ctx.timed_together(["bench_doctor_floor full", "cumemctl doctor --json"],
                               [[floor, "full"], [ctx.cumemctl, "doctor", "--json"]], heavy=True,
                               ok_codes=[(0,), (0, 1)])  # a floor that fails did not do the work
    compare_to_floor(items[1], items[0], FULL_TARGET)
    groups.append(group("doctor-floor", "cumemctl doctor --json against what it must do", items,
                        ["the floor: NVML's questions and per GPU a second process started first (from the "
                         "kernel's GPU list, as doctor's importers), cuInit, one primary context per GPU (a thread "
                         "each) in which the allocating checks' memory is made, written and read back (a granule: "
                         "cuMemCreate, one exported to the second process as a POSIX fd, the default pool's trim "
                         "workload, an IPC pool and a block of it imported there, host and host-NUMA memory, a "
                         "fabric handle where supported) and the link checks' copies run one GPU at a time (8 MiB "
                         "h2d under pcie-link, 32 MiB each way pinned, 128 MiB d2d, each one untimed and four "
                         "timed), then released"]))
    return groups


def verify_figures(doc):
    """The verify pass and the timed steps from create's JSON: results.verify {bytes, fill_seconds,
    check_seconds, fill_gbps, check_gbps} and results.steps [{step, seconds}]."""
    results = (doc or {}).get("results") or {}
    verify = results.get("verify")
    if not isinstance(verify, dict):
        return None
    figures = {k: verify.get(k) for k in ("bytes", "fill_seconds", "check_seconds", "fill_gbps", "check_gbps")}
    figures["steps"] = [(s.get("step"), s.get("seconds")) for s in results.get("steps") or []
                        if isinstance(s, dict) and isinstance(s.get("seconds"), (int, float))]
    return figures


def combined_gbps(fig):
    """Bytes written plus read per second over the fill and the check together (10^9 B/s)."""
    if not fig:
        return None
    if fig.get("bytes") and fig.get("fill_seconds") and fig.get("check_seconds"):
        return 2 * fig["bytes"] / (fig["fill_seconds"] + fig["check_seconds"]) / 1e9
    if fig.get("fill_gbps") and fig.get("check_gbps"):
        return 2 / (1 / fig["fill_gbps"] + 1 / fig["check_gbps"])
    return None


def create_verify(ctx):
    """`create --map --verify` at each size, against the copy bandwidth of the same size."""
    if not ctx.available("create", "--verify"):
        return [group("create", "cumemctl create --map --verify", skipped=ctx.missing("create --map --verify"))]
    rows = []
    for label, size in ctx.sizes:
        item = ctx.timed(f"cumemctl create --size {label} --map --verify --json",
                         [ctx.cumemctl, "create", "--size", str(size), "--map", "--verify", "--json"],
                         heavy=True, parse=lambda out: verify_figures(parse_json(out)))
        figures = [f for f in item.pop("parsed", []) if f]
        row = {"size": label, "bytes": size, "create": item}
        for key in ("fill_gbps", "check_gbps"):
            values = [f[key] for f in figures if isinstance(f.get(key), (int, float))]
            if values:
                row[key] = ctx.summary(values)["median"]
        values = [g for g in (combined_gbps(f) for f in figures) if g]
        if values:
            row["verify_gbps"] = ctx.summary(values)["median"]
        steps = {}
        for f in figures:
            for name, secs in f["steps"]:
                steps.setdefault(name, []).append(secs)
        row["steps"] = {name: ctx.summary(v)["median"] for name, v in steps.items()}
        copy = ctx.once(f"bench_copy_bandwidth {label}", [ctx.copy, str(size), "5"])
        row["copy"] = copy
        doc = parse_json(copy.get("stdout"))
        if doc:
            row["copy_gbps"] = doc["gbps_median"]
            row["copy_bytes"] = doc["size_bytes"]
        probe = os.path.join(ctx.build, "tests", "gpu", "verify_probe")
        if os.access(probe, os.X_OK):
            run = ctx.once(f"verify_probe --size {label} (the kernels alone)",
                           [probe, "--size", str(size), "--repeat", "5"])
            doc = parse_json(run.get("stdout")) or {}
            row["probe"] = {k: doc.get(k) for k in ("fill_gbps", "check_gbps", "copy_gbps", "ok")}
        if row.get("verify_gbps") and row.get("copy_gbps"):
            row["verify_vs_copy"] = row["verify_gbps"] / row["copy_gbps"]
            row["met"] = row["verify_vs_copy"] >= VERIFY_TARGET
        rows.append(row)
    notes = [f"target: verify (bytes written + read per second) >= {VERIFY_TARGET:.0%} of the copy's "
             "(bytes read + written per second, cuMemcpyDtoD, same size, same run)",
             "wall time includes cuInit, the context, cuMemCreate, map, fill, check and release",
             "verify_probe (tests/gpu, where built): the same kernels on a cuMemAlloc buffer without create, and "
             "its own copy of half the buffer onto the other half; best of 5 each"]
    return [group("create", "cumemctl create --map --verify", rows=rows, notes=notes)]


def imex_setup(ctx):
    """`imex-setup --all` in a temporary --dev-root: the first run and the idempotent rerun."""
    if not ctx.available("imex-setup", "--dev-root"):
        return [group("imex", "cumemctl imex-setup --all", skipped=ctx.missing("imex-setup"))]
    # /dev is a tmpfs (devtmpfs): a temporary root on /dev/shm is the closer match where there is one.
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else ctx.tmp
    root = tempfile.mkdtemp(prefix="cumemctl-bench-dev-root-", dir=base)
    sources = ctx.imex_sources()
    argv = [ctx.cumemctl, "imex-setup", "--all", "--dev-root", root, *sources, "--json"]

    def fresh():
        """An empty device root, before each first run."""
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(os.path.join(root, "dev"))

    def actions(out):
        """How many channels each action took: results.channels[].action."""
        counts = {}
        for c in ((parse_json(out) or {}).get("results") or {}).get("channels") or []:
            counts[c.get("action")] = counts.get(c.get("action"), 0) + 1
        return counts

    try:
        first = ctx.timed("imex-setup --all (2048 channels, fresh --dev-root)", argv, before_each=fresh,
                          parse=actions)
        fresh()
        ctx.once("imex-setup --all (setting up the rerun)", argv)
        rerun = ctx.timed("imex-setup --all again (idempotent rerun)", argv, parse=actions)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for item in (first, rerun):
        item["actions"] = (item.pop("parsed", None) or [None])[-1]
        if median(item) is not None:
            item["target"] = f"< {IMEX_TARGET_S:.0f} s"
            item["met"] = median(item) < IMEX_TARGET_S
    proc = ("the node's /proc/devices and params" if "/proc/devices" in sources
            else "fabricated /proc/devices and params (major 242, 2048 channels)")
    notes = [f"in a temporary --dev-root under {base}, reading {proc}; the real /dev is not touched by the "
             "benchmark: time `cumemctl imex-setup --all` there separately (docs/benchmarks.md)"]
    extra = {}
    if os.path.exists(IMEX_SCRIPT):
        script = ctx.once("bench/imex_setup.sh (imex-setup's own benchmark)",
                          ["bash", IMEX_SCRIPT, ctx.cumemctl, "7"], env={"TMPDIR": base})
        extra["script"] = {"command": f"TMPDIR={base} bench/imex_setup.sh CUMEMCTL 7",
                           "output": script.get("stdout", "").strip(), "error": script.get("error")}
    return [group("imex", "cumemctl imex-setup --all", [first, rerun], notes, **extra)]


ALL = {"devices": devices, "granularity": granularity, "doctor": doctor, "create": create_verify,
       "imex": imex_setup}
