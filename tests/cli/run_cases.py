#!/usr/bin/python3
"""End-to-end cases: run the real cumemctl binary (usually against the fake driver) and check its exit
code, its JSON and its text, bpftrace-style.

A case file holds cases separated by blank lines. Each case is a list of directives:

    NAME    what the case shows (required, first)
    PROFILE h200                      fake driver profile (tests/fakecuda/profiles/h200.json); sets
                                      FAKECUDA_PROFILE, CUMEMCTL_LIBCUDA to the fake driver and
                                      CUMEMCTL_LIBNVML to the fake NVML (tests/fakenvml), which reads the
                                      same profile; without PROFILE, CUMEMCTL_LIBNVML names a path that
                                      does not exist (no test sees the machine's own NVML)
    NEEDS   root | fuse | PROGRAM     skip the case unless running as root / root with /dev/fuse /
                                      PROGRAM is on PATH
    ENV     NAME=VALUE                one more environment variable (repeatable)
    SETUP   shell command             run before RUN, must succeed (repeatable)
    RUN     shell command             the command under test ({cumemctl}, {fake}, {tmp}, {cli}: the
                                      folder of this runner, {source}: the source tree, ... expand in
                                      every directive, JSON strings included; other braces stay)
    EXIT    N                         the expected exit code (required)
    JSON    {...}                     a fragment that stdout's JSON must contain (repeatable)
    PROMETHEUS name{l="v",...} value  stdout (Prometheus text) has a sample of that name whose labels
                                      include these, with this value ("*": any value) (repeatable)
    NOT_PROMETHEUS name{l="v",...}    no sample of that name has labels that include these
    STDOUT  text                      stdout contains text (repeatable)
    STDERR  text                      stderr contains text (repeatable)
    NOT_STDOUT text / NOT_STDERR text must not appear
    CHECK   shell command             run after RUN, must succeed (repeatable)

Whenever stdout is JSON (the command line has --json or --format json), it must be exactly one JSON
document that validates against the report schema, every key in it is snake_case (jq .a.b reaches
it), and no value is "" (none is null, so that jq's select(.remedy) picks only what has one) but where
EMPTY_IS_A_VALUE says "" is a value. Whenever the command line has --format prometheus,
stdout must parse with prometheus_client's parser (the reference implementation of the text format),
and every family must have HELP and TYPE, a cumemctl_ name, and no repeated sample. A JSON fragment matches when every key of an object
fragment matches, every element of a list fragment matches the element at the same index, and scalars
are equal; the string "*" matches any value, and a string starting with "~" is a regular expression.
Steps and doctor's checks (a list under the key "steps" or "checks") match by name instead, so that a
step added elsewhere breaks no case: each element names its step ("step" or "call", and "process"
where given) or check ("check" or "device") and matches the next one of that name after
the one the element before it found; [] means none. An element that names none (the {} that matched a
position) is an error of the case file, and so is a case without EXIT.

Hermetic: every case runs with CUMEMCTL_HERMETIC=1 and CUMEMCTL_SYSROOT naming a fake system root
(sysroot.sh --no-driver: a node without the NVIDIA module, made once per run; a case's ENV may name
its own); the binary refuses to read the real kernel log, /proc/devices or /dev under
CUMEMCTL_HERMETIC, and a case whose stderr says it tried fails, whatever its EXIT.

Every shell command of a case (SETUP, RUN, CHECK) finds `python3` as this runner's own interpreter, first on
PATH: the helpers it runs (make_profile.py, the stand-in nvidia-imex-ctl) need what the runner needs,
and a version manager's shim in front of the system's python costs more than the case it serves.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema
from prometheus_client.parser import text_string_to_metric_families


# How long a case's RUN may take before it counts as hung: room for a doctor run under qemu-user on a
# loaded machine (minutes), while a real hang still ends the case.
RUN_LIMIT_S = 300

SNAKE_CASE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")


def not_snake_case(doc, where="$"):
    """(path, key) of every object key in doc that is not snake_case (jq .a.b must reach it)."""
    found = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if not SNAKE_CASE.match(k):
                found.append((where, k))
            found += not_snake_case(v, f"{where}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += not_snake_case(v, f"{where}[{i}]")
    return found


# Where "" is a value in a report, not "none" (which is null: jq's select(.x) must not pick it): a path
# pattern (keys joined with ".", list indices as [*]) and why. Everywhere else "" fails the case.
EMPTY_IS_A_VALUE = {
    "$.results.checks[*].details.cuda_visible_devices":
        "CUDA_VISIBLE_DEVICES as set: \"\" (set, empty: the driver shows no device) is not null (unset: every device)",
    "$.results.checks[*].details.query.output":
        "the first line that nvidia-imex-ctl printed: \"\" is a query that ran and printed nothing (one that did "
        "not run has no query)",
    "$.results.failing_nodes":
        "a Slurm host list: \"\" is the empty list, as --format nodelist prints it; jq -r of a null would hand "
        "scontrol the word 'null'",
}
# Places that are still "" for "none" (the JSON rule says null), and may not grow: fields of the records
# that fabric-matrix's ranks write for each other (a card, a row), which the reports show as they are;
# null there is a change of the records' format (its format_version, and the readers of other ranks).
EMPTY_NOT_YET_NULL = {
    "$.results.matrix.cells[*][*].diagnosis": "fabric-matrix: a passing cell's diagnosis",
    "$.results.row.cells[*].diagnosis": "fabric-matrix: a rank's row, a passing cell's diagnosis",
    "$.results.rows[*].cells[*].diagnosis": "fabric-matrix --local: a passing cell's diagnosis",
    "$.results.fabric_matrices[*].cells[*][*].diagnosis": "fleet's fabric-matrix: a passing cell's diagnosis",
    "$.results.cards[*].fabric_cluster_uuid": "fabric-matrix: a card of a GPU in no fabric cluster",
    "$.results.card.fabric_cluster_uuid": "fabric-matrix: a rank's card of a GPU in no fabric cluster",
}


def empty_strings(doc, where="$", pattern="$"):
    """(path) of every "" in doc whose place is not in EMPTY_IS_A_VALUE or EMPTY_NOT_YET_NULL ("none" is null)."""
    found = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += empty_strings(v, f"{where}.{k}", f"{pattern}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += empty_strings(v, f"{where}[{i}]", f"{pattern}[*]")
    elif doc == "" and pattern not in EMPTY_IS_A_VALUE and pattern not in EMPTY_NOT_YET_NULL:
        found.append(where)
    return found


def parse_cases(path):
    cases, current = [], None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                current = None
                continue
            if line.lstrip().startswith("#"):
                continue
            key, _, value = line.partition(" ")
            value = value.strip()
            if key == "NAME":
                current = {"name": value, "where": f"{os.path.basename(path)}:{lineno}", "env": {}, "setup": [],
                           "json": [], "prometheus": [], "not_prometheus": [], "stdout": [], "stderr": [], "not_stdout": [], "not_stderr": [], "check": []}
                cases.append(current)
                continue
            if current is None:
                raise SystemExit(f"{path}:{lineno}: a case starts with NAME")
            if key == "NEEDS":
                current.setdefault("needs", []).append(value)
            elif key == "PROFILE":
                current["profile"] = value
            elif key == "ENV":
                name, _, val = value.partition("=")
                current["env"][name] = val
            elif key in ("SETUP", "CHECK"):
                current[key.lower()].append(value)
            elif key == "RUN":
                current["run"] = value
            elif key == "EXIT":
                current["exit"] = int(value)
            elif key == "JSON":
                fragment = json.loads(value)
                mistake = by_name_mistake(fragment)
                if mistake:
                    raise SystemExit(f"{path}:{lineno}: {mistake}")
                current["json"].append(fragment)
            elif key == "PROMETHEUS":
                current["prometheus"].append(parse_sample(value, f"{path}:{lineno}"))
            elif key == "NOT_PROMETHEUS":
                current["not_prometheus"].append(parse_sample(value + " 0", f"{path}:{lineno}"))
            elif key in ("STDOUT", "STDERR", "NOT_STDOUT", "NOT_STDERR"):
                current[key.lower()].append(value)
            else:
                raise SystemExit(f"{path}:{lineno}: unknown directive {key}")
    for case in cases:
        need_exit(case)
    return cases


def need_exit(case):
    """Every case states the exit code it expects: a case without EXIT is a mistake of its file."""
    if "exit" not in case:
        raise SystemExit(f"{case['where']}: the case {case['name']!r} has no EXIT: every case states the exit "
                         f"code it expects (EXIT 0 when it should succeed)")


def parse_sample(text, where):
    """Parses 'name{labels} value' (value may be '*') with the Prometheus parser into (name, labels, value)."""
    body, _, value = text.rpartition(" ")
    any_value = value == "*"
    try:
        families = list(text_string_to_metric_families(f"{body} {0 if any_value else value}\n"))
        sample = families[0].samples[0]
    except Exception as e:
        raise SystemExit(f"{where}: cannot parse the expected sample {text!r}: {e}")
    return sample.name, dict(sample.labels), None if any_value else sample.value


def check_prometheus(text, case):
    """Parses stdout as Prometheus text and checks the case's samples; returns a list of problems."""
    problems = []
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:
        return [f"stdout is not Prometheus text: {e}"]
    helped = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    typed = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    samples, seen = [], set()
    for f in families:
        if not f.name.startswith("cumemctl_"):
            problems.append(f"metric {f.name} lacks the cumemctl_ prefix")
        if f.name not in helped or typed.get(f.name) != "gauge":
            problems.append(f"metric {f.name} lacks HELP or TYPE gauge")
        for s in f.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen:
                problems.append(f"sample {s.name}{s.labels} is repeated")
            seen.add(key)
            samples.append(s)
    def found(name, labels):
        return [s for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    for name, labels, value in case["prometheus"]:
        hits = found(name, labels)
        if not hits:
            problems.append(f"no sample {name}{labels}")
        elif value is not None and not any(s.value == value for s in hits):
            problems.append(f"sample {name}{labels} is {[s.value for s in hits]}, expected {value}")
    for name, labels, _ in case["not_prometheus"]:
        if found(name, labels):
            problems.append(f"unexpected sample {name}{labels}")
    return problems


def expand_strings(value, expand):
    """The JSON fragment with {name} expanded in every string."""
    if isinstance(value, str):
        return expand(value)
    if isinstance(value, list):
        return [expand_strings(v, expand) for v in value]
    if isinstance(value, dict):
        return {k: expand_strings(v, expand) for k, v in value.items()}
    return value


# Lists matched by name, not by position: the steps of the one step model ($defs/step) and checks (doctor's,
# create --pool's checks from each device). Each element of such a fragment names its entry with these
# keys (at least one of the first group, and any of the second that it gives): steps by "step" (the step's
# name) or "call", narrowed by "process"; checks by "check" or "device".
BY_NAME = {"steps": (("step", "call"), ("process",)), "checks": (("check", "device"), ())}
# How a fragment written for matching by position is written for matching by name, for the message.
BY_NAME_EXAMPLE = {"steps": ('[{}, {}, {"step": "reserve", "ok": false}]', '[{"step": "reserve", "ok": false}]'),
                   "checks": ('[{}, {}, {"check": "vmm", "status": "pass"}]', '[{"check": "vmm", "status": "pass"}]')}


def matches_by_name(key, fragment, actual, where):
    """A list fragment under `key` (BY_NAME): each element is the next entry of `actual`, after the one the
    element before found, that has its name; its other keys must match that entry. [] means no entries.
    Returns None or the difference (the case file's parser has checked that every element names one:
    by_name_mistake)."""
    names, narrowing = BY_NAME[key]
    if not isinstance(actual, list):
        return f"{where}: expected a list, got {actual!r}"
    if not fragment:
        return None if not actual else f"{where}: expected no {key}, got {len(actual)}"
    def name_of(entry):
        return {k: entry.get(k) for k in names + narrowing if k in entry}
    at = 0
    for i, element in enumerate(fragment):
        wanted = {k: element[k] for k in names + narrowing if k in element}
        found = next((j for j in range(at, len(actual)) if isinstance(actual[j], dict)
                      and all(k in actual[j] and matches(v, actual[j][k]) is None for k, v in wanted.items())), None)
        if found is None:
            listed = ", ".join(json.dumps(name_of(e)) for e in actual[at:] if isinstance(e, dict))
            after = f" after {where}[{at - 1}]" if at else ""
            return f"{where}: no {key[:-1]} {json.dumps(wanted)}{after}; there: [{listed}]"
        diff = matches(element, actual[found], f"{where}[{found}]")
        if diff:
            return diff
        at = found + 1
    return None


def by_name_mistake(fragment, where="$"):
    """Why a JSON fragment cannot be matched (an element of a BY_NAME list that names nothing: a fragment
    written for matching by position), with how to write it; None when it can."""
    if isinstance(fragment, list):
        return next((m for i, v in enumerate(fragment) if (m := by_name_mistake(v, f"{where}[{i}]"))), None)
    if not isinstance(fragment, dict):
        return None
    for key, value in fragment.items():
        if key in BY_NAME and isinstance(value, list):
            names = BY_NAME[key][0]
            for i, element in enumerate(value):
                if not isinstance(element, dict) or not any(n in element for n in names):
                    before, after = BY_NAME_EXAMPLE[key]
                    return (f"{where}.{key}[{i}] is {json.dumps(element)}, which names no {key[:-1]}: {key} are "
                            f"matched by name, in order, never by position. Give each element its "
                            f"{' or '.join(json.dumps(n) for n in names)}, and leave out the {{}} of the "
                            f"{key} before it: {before} is {after}")
        mistake = by_name_mistake(value, f"{where}.{key}")
        if mistake:
            return mistake
    return None


def matches(fragment, actual, where="$"):
    """Returns None when actual contains fragment, else a description of the first difference. A list
    under a key of BY_NAME matches by name (matches_by_name); any other list element by element."""
    if isinstance(fragment, str) and fragment == "*":
        return None
    if isinstance(fragment, str) and fragment.startswith("~"):
        if isinstance(actual, str) and re.search(fragment[1:], actual):
            return None
        return f"{where}: {actual!r} does not match /{fragment[1:]}/"
    if isinstance(fragment, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        for k, v in fragment.items():
            if k not in actual:
                return f"{where}: no key {k!r}"
            if k in BY_NAME and isinstance(v, list):
                diff = matches_by_name(k, v, actual[k], f"{where}.{k}")
            else:
                diff = matches(v, actual[k], f"{where}.{k}")
            if diff:
                return diff
        return None
    if isinstance(fragment, list):
        if not isinstance(actual, list) or len(actual) < len(fragment):
            return f"{where}: expected a list of at least {len(fragment)}, got {actual!r}"
        for i, v in enumerate(fragment):
            diff = matches(v, actual[i], f"{where}[{i}]")
            if diff:
                return diff
        return None
    if fragment != actual or type(fragment) is not type(actual):
        return f"{where}: expected {fragment!r}, got {actual!r}"
    return None


def unmet_need(case):
    """Why the case cannot run here (a NEEDS that is not met), or None."""
    for need in case.get("needs", []):
        if need == "root":
            if os.geteuid() != 0:
                return "needs root"
        elif need == "fuse":
            if os.geteuid() != 0 or not os.access("/dev/fuse", os.R_OK | os.W_OK):
                return "needs root and /dev/fuse"
        elif shutil.which(need) is None:
            return f"needs {need}"
    return None


def run_case(case, args, validator):
    tmp = tempfile.mkdtemp(prefix="cumemctl-cli-")
    try:
        subst = {"cumemctl": args.binary, "fake": args.fake, "not_a_driver": args.not_a_driver,
                 "fakenvml": args.fake_nvml, "fakenvml_minimal": args.fake_nvml_minimal,
                 "profiles": args.profiles, "tmp": tmp, "cli": os.path.dirname(os.path.abspath(__file__)),
                 "source": os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))}
        # Only {name} of the names above expands; other braces (JSON, shell) stay as they are.
        expand = lambda s: re.sub(r"\{(\w+)\}", lambda m: subst.get(m.group(1), m.group(0)), s)
        env = dict(os.environ)
        env.pop("CUMEMCTL_LIBCUDA", None)
        env.pop("NO_COLOR", None)
        env.pop("FAKENVML_INJECT", None)
        env["CUMEMCTL_LIBNVML"] = "/nonexistent/libnvidia-ml.so.1"
        if "profile" in case:
            env["FAKECUDA_PROFILE"] = os.path.join(args.profiles, case["profile"] + ".json")
            env["CUMEMCTL_LIBCUDA"] = args.fake
            env["CUMEMCTL_LIBNVML"] = args.fake_nvml
        env["FAKECUDA_IMEX_DIR"] = os.path.join(tmp, "imex-channels")
        env["PATH"] = args.python_dir + os.pathsep + env.get("PATH", os.defpath)
        # doctor's budget with room: what a case shows must not depend on how fast this machine is (under
        # qemu, or beside other work, a whole doctor run can take longer than the 45 s default). A case
        # about the budget gives --timeout, which wins, or sets this itself. It stays under RUN_LIMIT_S,
        # so that a slow doctor still answers with its own report rather than being killed.
        env["CUMEMCTL_DOCTOR_TIMEOUT"] = str(RUN_LIMIT_S - 60)
        # Hermetic: no case reads this machine's kernel log, /proc/devices or /dev. Each runs under a fake
        # system root (sysroot.sh --no-driver, unless the case gives its own), and with
        # CUMEMCTL_HERMETIC the binary refuses to read the real system where a case drops the root.
        env["CUMEMCTL_HERMETIC"] = "1"
        env["CUMEMCTL_SYSROOT"] = args.sysroot
        for k, v in case["env"].items():
            env[k] = expand(v)
        for cmd in case["setup"]:
            r = subprocess.run(["bash", "-c", expand(cmd)], env=env, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                return f"SETUP failed ({r.returncode}): {cmd}\n{r.stderr}"
        if "run" not in case:
            return "no RUN"
        cmd = expand(case["run"])
        r = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S,
                           stdin=subprocess.DEVNULL)
        if args.dump:
            dump_outputs(args.dump, case, r, tmp)
        problems = []
        if "a hermetic test would read this machine's" in r.stderr:
            problems.append("it reads the real system: give it a fake system root (CUMEMCTL_SYSROOT)")
        if r.returncode != case["exit"]:
            problems.append(f"exit {r.returncode}, expected {case['exit']}")
        wants_json = "--json" in cmd or "--format json" in cmd or "--format=json" in cmd
        if wants_json:
            try:
                doc = json.loads(r.stdout)
            except json.JSONDecodeError as e:
                problems.append(f"stdout is not one JSON document: {e}")
                doc = None
            if doc is not None:
                errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
                for e in errors[:3]:
                    problems.append(f"schema: {'/'.join(map(str, e.path))}: {e.message}")
                problems += [f"JSON key {k!r} at {w} is not snake_case" for w, k in not_snake_case(doc)[:3]]
                problems += [f"JSON {w} is \"\": none is null (or add the place to EMPTY_IS_A_VALUE, saying why "
                             f"\"\" is a value there)" for w in empty_strings(doc)[:3]]
                for frag in case["json"]:
                    diff = matches(expand_strings(frag, expand), doc)
                    if diff:
                        problems.append(f"JSON {diff}")
        elif case["json"]:
            problems.append("JSON expected but the command does not ask for --json")
        if ("--format prometheus" in cmd or "--format=prometheus" in cmd) and not wants_json:
            problems += check_prometheus(r.stdout, case)
        elif case["prometheus"] or case["not_prometheus"]:
            problems.append("PROMETHEUS expected but the command does not ask for --format prometheus")
        for text in case["stdout"]:
            if expand(text) not in r.stdout:
                problems.append(f"stdout lacks {text!r}")
        for text in case["stderr"]:
            if expand(text) not in r.stderr:
                problems.append(f"stderr lacks {text!r}")
        for text in case["not_stdout"]:
            if expand(text) in r.stdout:
                problems.append(f"stdout has {text!r}")
        for text in case["not_stderr"]:
            if expand(text) in r.stderr:
                problems.append(f"stderr has {text!r}")
        for check in case["check"]:
            c = subprocess.run(["bash", "-c", expand(check)], env=env, capture_output=True, text=True, timeout=60)
            if c.returncode != 0:
                problems.append(f"CHECK failed: {check}\n{c.stdout}{c.stderr}")
        if problems:
            return "\n".join(problems) + f"\n--- command: {cmd}\n--- stdout:\n{r.stdout[-3000:]}\n--- stderr:\n{r.stderr[-2000:]}"
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--fake", required=True)
    ap.add_argument("--not-a-driver", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--fake-nvml-minimal", required=True)
    ap.add_argument("--profiles", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--filter", default="", help="run only cases whose name contains this")
    ap.add_argument("--leave-out", action="append", default=[], nargs=2, metavar=("NAME", "WHY"),
                    help="skip the case of this name, saying why (repeatable)")
    ap.add_argument("--dump", default="", metavar="DIR",
                    help="write each case's exit code, stdout and stderr to DIR, to compare two builds")
    ap.add_argument("paths", nargs="+", help="case files or folders of *.case files")
    args = ap.parse_args()
    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".case"))
        else:
            files.append(p)
    left_out = dict(args.leave_out)
    args.python_dir = tempfile.mkdtemp(prefix="cumemctl-cli-python-")
    os.chmod(args.python_dir, 0o755)  # a case may run python3 as another user
    os.symlink(sys.executable, os.path.join(args.python_dir, "python3"))
    shared = share_with_others(args)
    args.sysroot = tempfile.mkdtemp(prefix="cumemctl-cli-sysroot-")
    os.chmod(args.sysroot, 0o755)  # read by cases run as another user too
    subprocess.run(["bash", os.path.join(os.path.dirname(os.path.abspath(__file__)), "sysroot.sh"), args.sysroot,
                    "--no-driver"],
                   check=True)
    try:
        passed, failed, skipped = run_files(files, args, validator, left_out)
    finally:
        shutil.rmtree(args.python_dir, ignore_errors=True)
        shutil.rmtree(args.sysroot, ignore_errors=True)
        if shared:
            shutil.rmtree(shared, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    # A case to leave out that is not there (renamed, removed) is a mistake in the caller's list.
    for name in left_out:
        print(f"FAIL  --leave-out {name!r}: no such case")
    return 1 if failed or left_out or not passed else 0


def reachable_by_others(path):
    """Whether a user who is neither owner nor group can read `path`: every folder above it lets others
    through, and the file lets them read it."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    while True:
        if not os.stat(folder).st_mode & 0o001:
            return False
        if folder == os.path.dirname(folder):
            break
        folder = os.path.dirname(folder)
    return bool(os.stat(path).st_mode & 0o004)


def share_with_others(args):
    """Cases run cumemctl as other users (setpriv): where the build sits under a folder they cannot
    enter (a clone under a 0700 home), the binary, the fakes and the profiles (with make_profile.py
    beside them, as cases name it) are copied into a folder they can, and used from there. Returns that
    folder, or None where nothing had to move."""
    binaries = ("binary", "fake", "not_a_driver", "fake_nvml", "fake_nvml_minimal")
    profiles = os.path.join(args.profiles, os.pardir, "make_profile.py")
    if all(reachable_by_others(getattr(args, b)) for b in binaries) and reachable_by_others(profiles) and \
            all(reachable_by_others(os.path.join(args.profiles, n)) for n in os.listdir(args.profiles)):
        return None
    shared = tempfile.mkdtemp(prefix="cumemctl-cli-shared-")
    os.chmod(shared, 0o755)
    for b in binaries:
        src = getattr(args, b)
        folder = os.path.join(shared, b)
        os.mkdir(folder, 0o755)
        dst = os.path.join(folder, os.path.basename(src))
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        setattr(args, b, dst)
    fake = os.path.join(shared, "fakecuda")
    shutil.copytree(args.profiles, os.path.join(fake, "profiles"))
    shutil.copy2(profiles, fake)
    for root, dirs, names in os.walk(shared):
        for n in dirs:
            os.chmod(os.path.join(root, n), 0o755)
        for n in names:
            os.chmod(os.path.join(root, n), os.stat(os.path.join(root, n)).st_mode | 0o444)
    args.profiles = os.path.join(fake, "profiles")
    return shared


def dump_outputs(folder, case, r, tmp):
    """Writes what RUN printed (its exit code, stdout, stderr; the case's temporary folder as {tmp}) to
    FOLDER/FILE-LINE.txt, so that two builds' outputs can be compared."""
    name = case["where"].replace("/", "_").replace(":", "-") + ".txt"
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(f"# {case['name']}\nexit {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}".replace(tmp, "{tmp}"))


def run_files(files, args, validator, left_out):
    """Runs every case of the files, printing each result; returns (passed, failed, skipped)."""
    passed = failed = skipped = 0
    for path in files:
        for case in parse_cases(path):
            if args.filter and args.filter not in case["name"]:
                continue
            unmet = unmet_need(case) or left_out.pop(case["name"], None)
            if unmet:
                skipped += 1
                print(f"skip  {case['where']}  {case['name']} ({unmet})")
                continue
            started = time.monotonic()
            why = run_case(case, args, validator)
            if why is None:
                passed += 1
                print(f"ok    {case['where']}  {case['name']} ({time.monotonic() - started:.2f} s)")
            else:
                failed += 1
                print(f"FAIL  {case['where']}  {case['name']}\n" + "\n".join("      " + l for l in why.splitlines()))
    return passed, failed, skipped


if __name__ == "__main__":
    sys.exit(main())
