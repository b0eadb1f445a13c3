#!/usr/bin/python3
"""What packaging/systemd/cumemctl-doctor.service runs, run here against the fake driver: its ExecStart
with its Environment= settings substituted as systemd does (`${NAME}` inside a word, a lone `$NAME` split
into words at white space), /usr/bin/cumemctl the built binary and TEXTFILE_DIR a temporary folder. The
file it leaves is what node_exporter's textfile collector reads (`promtool check metrics`: no complaint;
the report's timestamp and exit code among its series), and its exit status is one the unit counts as
success (SuccessExitStatus) unless the options were refused. (systemd-analyze verify checks the units'
syntax in tests/install_test.sh, where the installed binary is.)
    systemd_test.py [TEST...]     (tests: pass no_gpu bad_options timer)
"""
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from harness import CUMEMCTL, SOURCE, check, describe, fake_env, main

UNITS = os.path.join(SOURCE, "packaging/systemd")


def unit(name):
    """A unit file's settings: {(section, key): [values, in order]}."""
    settings, section = {}, None
    with open(os.path.join(UNITS, name), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if m := re.fullmatch(r"\[(\w+)\]", line):
                section = m.group(1)
                continue
            key, _, value = line.partition("=")
            settings.setdefault((section, key), []).append(value)
    return settings


def exec_start(textfile, doctor_options=""):
    """The service's command as systemd runs it: Environment= (the last setting of a name wins, then
    DOCTOR_OPTIONS as /etc/default/cumemctl-doctor would set it), then the substitution."""
    s = unit("cumemctl-doctor.service")
    env = {}
    for assignment in s[("Service", "Environment")]:
        name, _, value = assignment.partition("=")
        env[name] = value
    check(set(env) == {"TEXTFILE_DIR", "DOCTOR_OPTIONS"}, f"the service's settings: {sorted(env)}")
    env.update(TEXTFILE_DIR=textfile, DOCTOR_OPTIONS=doctor_options)
    (line,) = s[("Service", "ExecStart")]
    words = []
    for word in line.split():
        if m := re.fullmatch(r"\$(\w+)", word):
            words += env[m.group(1)].split()
        else:
            words.append(re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], word))
    check(words[0] == "/usr/bin/cumemctl", f"ExecStart runs {words[0]}, not the packages' /usr/bin/cumemctl")
    return [CUMEMCTL] + words[1:]


def success_codes():
    return {0} | {int(c) for c in unit("cumemctl-doctor.service")[("Service", "SuccessExitStatus")][0].split()}


def run_service(profile, doctor_options=""):
    """Runs the service's command in a fresh folder; (the process, the .prom file's text or None)."""
    d = tempfile.mkdtemp(prefix="cumemctl-systemd.")
    try:
        command = exec_start(d, doctor_options)
        p = subprocess.run(command, env=fake_env(profile), capture_output=True, text=True, timeout=60)
        p.command = shlex.join(command)
        names = os.listdir(d)
        check(names in ([], ["cumemctl-doctor.prom"]), f"{p.command} left {names} (a temporary file?)")
        text = None
        if names:
            with open(os.path.join(d, names[0]), encoding="utf-8") as f:
                text = f.read()
        return p, text
    finally:
        shutil.rmtree(d)


def check_metrics(p, text, exit_code):
    check(text is not None, f"{p.command} wrote no cumemctl-doctor.prom: {describe(p)}")
    check(p.stdout == "", f"{p.command} wrote on stdout (the file is the output): {p.stdout}")
    promtool = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    # dcgm-exporter's camelCase label names (UUID, modelName, Hostname), kept so that the series join
    # with DCGM's, are the one lint allowed (as tests/slurm/prometheus_test.py allows it).
    lines = [l for l in (promtool.stdout + promtool.stderr).splitlines() if l.strip()]
    other = [l for l in lines if not l.endswith("label names should be written in 'snake_case' not 'camelCase'")]
    check(not other and (promtool.returncode == 0 or lines), f"promtool check metrics: {promtool.stdout}{promtool.stderr}")
    check(re.search(r'^cumemctl_report_timestamp_seconds\{[^}]*command="doctor"', text, re.M),
          f"no report timestamp in\n{text}")
    check(re.search(rf"^cumemctl_report_exit_code(\{{[^}}]*\}})? {exit_code}$", text, re.M),
          f"the exit code {exit_code} is not in the metrics:\n{text}")


def test_pass():
    """A node of the fake H200: doctor's quick level passes or warns, exit 0, the metrics written."""
    p, text = run_service("h200")
    check(p.returncode == 0, f"{p.command}: {describe(p)}")
    check_metrics(p, text, 0)
    # The quick level: no context check (nor any other that makes a context or takes GPU memory).
    check('check="driver"' in text and 'check="context"' not in text and 'check="vmm"' not in text,
          f"not the quick level:\n{text[:2000]}")


def test_no_gpu():
    """A node whose GPUs are gone: doctor exits 3, which the unit counts as success (the failure is in the
    metrics, where an alert sees it), and the file says so."""
    p, text = run_service("no-gpu")
    check(p.returncode != 0 and p.returncode in success_codes(), f"{p.command}: exit {p.returncode}, wanted one of "
          f"SuccessExitStatus {sorted(success_codes() - {0})}: {describe(p)}")
    check_metrics(p, text, p.returncode)


def test_bad_options():
    """DOCTOR_OPTIONS that doctor refuses: exit 2, which fails the unit (systemctl --failed shows it), and
    no file is left."""
    p, text = run_service("h200", "--expect-gpus many")
    check(p.returncode == 2 and 2 not in success_codes(), f"{p.command}: {describe(p)}")
    check(text is None, f"{p.command} left a file:\n{text}")


def test_timer():
    """The timer starts the service (by name) at boot and every few minutes, and is enabled in timers.target."""
    t = unit("cumemctl-doctor.timer")
    check(("Timer", "Unit") not in t, "the timer names its unit: cumemctl-doctor.service is the default")
    check(t.get(("Timer", "OnBootSec")) and t.get(("Timer", "OnUnitActiveSec")), f"the timer's settings: {t}")
    check(t.get(("Install", "WantedBy")) == ["timers.target"], f"WantedBy {t.get(('Install', 'WantedBy'))}")
    check(unit("cumemctl-doctor.service")[("Service", "Type")] == ["oneshot"], "the service is not oneshot")


if __name__ == "__main__":
    main({"pass": test_pass, "no_gpu": test_no_gpu, "bad_options": test_bad_options, "timer": test_timer})
