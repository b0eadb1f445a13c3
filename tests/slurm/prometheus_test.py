#!/usr/bin/python3
"""Prometheus for real: `doctor` and `devices --format prometheus` written to a textfile
collector folder as docs/fleet.md says (a temporary file renamed into place), Debian's
prometheus-node-exporter started on a loopback port reading that folder, its /metrics scraped, and
`promtool check metrics` run over each file.
    prometheus_test.py [TEST...]     (tests: promtool node_exporter)
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from harness import SOURCE, Failure, check, describe, fake_env, main, sh

COMMANDS = ("doctor", "devices")
DCGM_CAMEL_LABELS = {"UUID", "modelName", "Hostname"}


def doc_block():
    """The first command block of docs/fleet.md's Prometheus section: the loop that writes the files."""
    with open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8") as f:
        text = f.read()
    body = re.search(r"^## Prometheus.*?\n(.*?)(?=^## |\Z)", text, re.S | re.M).group(1)
    block = re.sub(r"^    ", "", re.search(r"(?:^    .*\n)+", body, re.M).group(0), flags=re.M)
    check(re.match(r"dir=\S+", block) and "mv " in block, f"docs/fleet.md's Prometheus block: {block}")
    return block


def write_textfiles(d):
    """Runs docs/fleet.md's loop with its folder DIR/textfile, a bare cumemctl the built binary with the
    fake driver; returns the folder."""
    root = os.path.join(d, "root")
    subprocess.run([os.path.join(SOURCE, "tests/cli/sysroot.sh"), root, "--channel", "0:0600"], check=True)
    env = fake_env("h200", CUMEMCTL_SYSROOT=root,
                   FAKECUDA_IMEX_DIR=os.path.join(root, "dev/nvidia-caps-imex-channels"),
                   PATH=os.path.dirname(os.environ["CUMEMCTL"]) + ":" + os.environ["PATH"])
    textfile = os.path.join(d, "textfile")
    os.makedirs(textfile)
    command = re.sub(r"^dir=\S+", f"dir={textfile}", doc_block())
    p = sh(command, env=env)
    check(p.returncode == 0, f"docs/fleet.md's\n{command}: {describe(p)}")
    names = sorted(os.listdir(textfile))
    check(names == sorted(f"cumemctl-{c}.prom" for c in COMMANDS), f"the textfile folder holds {names}")
    return textfile


def test_promtool():
    """promtool check metrics: nothing to complain about in any command's output."""
    d = tempfile.mkdtemp(prefix="cumemctl-prom.")
    try:
        textfile = write_textfiles(d)
        for name in sorted(os.listdir(textfile)):
            with open(os.path.join(textfile, name), encoding="utf-8") as f:
                text = f.read()
            p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            # dcgm-exporter's label names (UUID, modelName, Hostname) are camelCase on purpose, so that
            # the series join with DCGM's: promtool's lint of them is the only complaint allowed, and
            # only where those are the only such labels.
            camel = {l for _, labels, _ in samples(text) for l in labels if l != l.lower()}
            check(camel <= DCGM_CAMEL_LABELS, f"{name}: camelCase labels {sorted(camel - DCGM_CAMEL_LABELS)}")
            other = [l for l in (p.stdout + p.stderr).splitlines()
                     if l.strip() and not l.endswith("label names should be written in 'snake_case' not 'camelCase'")]
            check(not other, f"promtool check metrics on {name}: {describe(p)}")
    finally:
        shutil.rmtree(d)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, seconds=15):
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def samples(text):
    """[(name, labels, value)] of a scrape."""
    return [(s.name, s.labels, s.value) for fam in text_string_to_metric_families(text) for s in fam.samples]


def find(all_samples, name, **labels):
    return [v for n, l, v in all_samples if n == name and all(l.get(k) == w for k, w in labels.items())]


def test_node_exporter():
    """node_exporter's textfile collector serves every command's series, with no scrape error and no
    series that two files both write (its log)."""
    d = tempfile.mkdtemp(prefix="cumemctl-prom.")
    exporter = None
    try:
        textfile = write_textfiles(d)
        port = free_port()
        exporter = subprocess.Popen(
            ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
             "--collector.textfile", f"--collector.textfile.directory={textfile}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "exporter.log"), "w"))
        text = scrape(f"http://127.0.0.1:{port}/metrics")
        got = samples(text)
        log = open(os.path.join(d, "exporter.log"), encoding="utf-8").read()
        check(find(got, "node_textfile_scrape_error") == [0.0],
              f"node_textfile_scrape_error {find(got, 'node_textfile_scrape_error')}; exporter log:\n{log[-3000:]}")
        # A series that two files both write (same name, same labels) is served once, and node_exporter
        # logs "collected metric ... was collected before with the same name and label values" on every
        # scrape, while the scrape still answers 200 and node_textfile_scrape_error stays 0: only its log
        # tells. Each command's files must be told apart by their labels.
        twice = [l for l in log.splitlines() if "collected before" in l]
        check(not twice, "node_exporter logs series that two files both write:\n" + "\n".join(twice[:5]))
        for command in COMMANDS:
            check(find(got, "node_textfile_mtime_seconds", file=os.path.join(textfile, f"cumemctl-{command}.prom"))
                  or find(got, "node_textfile_mtime_seconds", file=f"cumemctl-{command}.prom"),
                  f"no node_textfile_mtime_seconds for cumemctl-{command}.prom")
            check(len(find(got, "cumemctl_report_timestamp_seconds", command=command)) == 1,
                  f"cumemctl_report_timestamp_seconds{{command=\"{command}\"}}: "
                  f"{find(got, 'cumemctl_report_timestamp_seconds', command=command)}")
        check(find(got, "cumemctl_check_status", check="driver", status="pass") == [1.0],
              "cumemctl_check_status{check=driver,status=pass} is not 1")
        check(find(got, "cumemctl_check_status", check="imex-channels", status="pass") == [1.0],
              "cumemctl_check_status{check=imex-channels,status=pass} is not 1")
        check(find(got, "cumemctl_report_exit_code", command="doctor") == [0.0], "doctor's exit code is not 0")
        ours = sorted({n for n, _, _ in got if n.startswith("cumemctl_")})
        check(len(ours) >= 10, f"only {ours}")
    finally:
        if exporter is not None:
            exporter.terminate()
            try:
                exporter.wait(timeout=10)
            except subprocess.TimeoutExpired:
                exporter.kill()
                exporter.wait()
        shutil.rmtree(d)


if __name__ == "__main__":
    main({"promtool": test_promtool, "node_exporter": test_node_exporter})
