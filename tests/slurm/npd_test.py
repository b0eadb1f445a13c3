#!/usr/bin/python3
"""node-problem-detector's custom plugin monitor for doctor (packaging/k8s/cumemctl-monitor.json): the
configuration against the fields and rules that NPD documents and checks (its
pkg/custompluginmonitor/types: config.go's pluginGlobalConfig and CustomPluginConfig, types.go's
CustomRule, ApplyConfiguration and Validate; docs/custom_plugin_monitor.md), and the rule's command
line run as NPD runs it (exec of path with args, the rule's timeout; exit 0 OK, 1 NonOK, 2 Unknown,
stdout cut to max_output_length) against the fake driver, for each status. docs/fleet.md's ConfigMap
(packaging/k8s/node-problem-detector-cumemctl.yaml) must hold the same configuration, and its pod must
give NPD's container the binary that its init container copies out of the cumemctl image. There is no NPD here (not a Debian package).
    npd_test.py [TEST...]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

from harness import CUMEMCTL, PROFILES, SOURCE, check, fake_env, main

CONFIG = os.path.join(SOURCE, "packaging/k8s/cumemctl-monitor.json")
# The JSON names of NPD's types (json:"..." tags); "-" fields are not read.
TOP = {"plugin", "pluginConfig", "source", "conditions", "rules", "metricsReporting"}
PLUGIN_CONFIG = {"invoke_interval": str, "timeout": str, "max_output_length": int, "concurrency": int,
                 "enable_message_change_based_condition_update": bool, "skip_initial_status": bool}
CONDITION = {"type": str, "reason": str, "message": str}  # a default condition (pkg/types Condition)
RULE = {"type": str, "condition": str, "reason": str, "path": str, "args": list, "timeout": str,
        "invoke_interval": str}
OK, NON_OK, UNKNOWN = 0, 1, 2


def go_duration(text):
    """Seconds of a Go time.ParseDuration string ("5s", "1m30s", "250ms"), or None where Go refuses it."""
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    if text == "0":
        return 0
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * units[u] for n, u in parts)


def load():
    with open(CONFIG, encoding="utf-8") as f:
        return json.load(f)


def test_config_fields():
    c = load()
    problems = [f"unknown field {k}" for k in c if k not in TOP]
    check(c.get("plugin") == "custom", "plugin must be \"custom\" (Validate)")
    check(isinstance(c.get("source"), str) and c["source"], "source must be named")
    pc = c.get("pluginConfig", {})
    for k, v in pc.items():
        if k not in PLUGIN_CONFIG:
            problems.append(f"pluginConfig: unknown field {k}")
        elif not isinstance(v, PLUGIN_CONFIG[k]) or (PLUGIN_CONFIG[k] is int and isinstance(v, bool)):
            problems.append(f"pluginConfig.{k}: {PLUGIN_CONFIG[k].__name__} expected, got {v!r}")
    global_timeout = go_duration(pc.get("timeout", "5s"))
    interval = go_duration(pc.get("invoke_interval", "30s"))
    check(global_timeout is not None and interval is not None, f"durations Go cannot parse: {pc}")
    check(pc.get("max_output_length", 80) <= 80, "messages longer than the 80 that Kubernetes shows")
    defaults = set()
    for cond in c.get("conditions", []):
        problems += [f"condition: unknown field {k}" for k in cond if k not in CONDITION]
        check(all(isinstance(cond.get(k), str) and cond[k] for k in CONDITION), f"condition {cond}: type, reason, message")
        defaults.add(cond["type"])
    check(c.get("rules"), "no rules")
    for rule in c["rules"]:
        for k, v in rule.items():
            if k not in RULE:
                problems.append(f"rule: unknown field {k}")
            elif not isinstance(v, RULE[k]):
                problems.append(f"rule.{k}: {RULE[k].__name__} expected, got {v!r}")
        check(rule.get("type") in ("temporary", "permanent"), f"rule type {rule.get('type')!r}")
        if rule["type"] == "permanent":
            check(rule.get("condition") in defaults, f"permanent problem {rule.get('condition')} has no default condition")
        check(os.path.isabs(rule["path"]) and os.path.exists(rule["path"]), f"rule path {rule['path']} (Validate stats it)")
        timeout = go_duration(rule.get("timeout", pc.get("timeout", "5s")))
        check(timeout is not None and timeout <= global_timeout, f"rule timeout {rule.get('timeout')} above the global one")
        # doctor answers within its budget plus a second: inside the rule's timeout, below the interval.
        budget = float(re.search(r"--timeout (\d+(?:\.\d+)?)", " ".join(rule["args"])).group(1))
        check(budget + 1 < timeout < interval, f"doctor's budget {budget} s + 1 s, timeout {timeout} s, interval {interval} s")
        check("--quick" in " ".join(rule["args"]) and "--format line" in " ".join(rule["args"]), rule["args"])
    check(not problems, "; ".join(problems))


def test_fleet_configmap():
    """docs/fleet.md's ConfigMap holds this configuration, and its DaemonSet mounts it."""
    text = open(os.path.join(SOURCE, "docs/fleet.md"), encoding="utf-8").read()
    docs = [d for block in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M) for d in yaml.safe_load_all(block)]
    maps = [d for d in docs if d.get("kind") == "ConfigMap" and "cumemctl-monitor.json" in d.get("data", {})]
    check(len(maps) == 1, "no ConfigMap with cumemctl-monitor.json in docs/fleet.md")
    check(json.loads(maps[0]["data"]["cumemctl-monitor.json"]) == load(),
          "docs/fleet.md's cumemctl-monitor.json differs from packaging/k8s/cumemctl-monitor.json")
    npd = [d for d in docs if d.get("kind") == "DaemonSet" and d["metadata"]["name"] == "node-problem-detector-cumemctl"]
    check(len(npd) == 1, "no DaemonSet node-problem-detector-cumemctl in docs/fleet.md")
    container = npd[0]["spec"]["template"]["spec"]["containers"][0]
    flags = " ".join(container.get("command", []) + container.get("args", []))
    m = re.search(r"--config\.custom-plugin-monitor=(\S+)", flags)
    check(m, f"NPD is not given the custom plugin monitor: {flags}")
    mounted = {v["mountPath"] for v in container["volumeMounts"]}
    check(any(m.group(1) == os.path.join(p, "cumemctl-monitor.json") for p in mounted), f"{m.group(1)} not mounted: {mounted}")
    # The binary: the init container (the cumemctl image) copies it into a volume that NPD's container
    # mounts at the same path and has on its PATH, as the rule's `sh -c "cumemctl ..."` needs.
    (init,) = npd[0]["spec"]["template"]["spec"].get("initContainers", [None])
    copy = re.search(r">(\S+)/cumemctl\b", " ".join(init.get("command", []))) if init else None
    check(copy, f"no init container copies the binary: {init}")
    volume = {v["mountPath"]: v["name"] for v in init["volumeMounts"]}.get(copy.group(1))
    shared = {v["mountPath"]: v["name"] for v in container["volumeMounts"]}.get(copy.group(1))
    path = next((e["value"] for e in container.get("env", []) if e["name"] == "PATH"), "")
    check(volume is not None and volume == shared and copy.group(1) in path.split(":"),
          f"NPD's container does not run the copied binary: {copy.group(1)}, mounts {volume}/{shared}, PATH {path}")


def run_rule(env):
    """The rule's command as NPD runs it: (NPD status, message cut to max_output_length, seconds)."""
    c = load()
    rule = c["rules"][0]
    timeout = go_duration(rule.get("timeout", c["pluginConfig"]["timeout"]))
    start = time.monotonic()
    p = subprocess.run([rule["path"], *rule["args"]], env=env, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - start
    status = p.returncode if p.returncode in (OK, NON_OK, UNKNOWN) else UNKNOWN
    return status, p.stdout.strip()[:c["pluginConfig"]["max_output_length"]], took


def test_statuses():
    with tempfile.TemporaryDirectory() as d:
        # "cumemctl" on PATH is the built one (the pod puts it in /opt/cumemctl/bin, first on PATH).
        os.symlink(CUMEMCTL, os.path.join(d, "cumemctl"))
        path = d + ":/usr/bin:/bin"
        remap = os.path.join(d, "remap.json")
        pending = os.path.join(d, "pending.json")
        make = [sys.executable, os.path.join(PROFILES, "..", "make_profile.py"), "h200"]
        subprocess.run(make + [remap, 'devices[0].nvml.remapped_rows={"failure": 1}'], check=True)
        subprocess.run(make + [pending, 'devices[0].nvml.remapped_rows={"pending": 1}'], check=True)
        cases = [
            # (imex-channels warns where this machine's /dev has no IMEX channels: still OK.)
            ("healthy", fake_env(PATH=path), OK, r"cumemctl: (pass |warn imex-channels)"),
            ("warning", fake_env(PATH=path, FAKECUDA_PROFILE=pending), OK, "cumemctl: warn memory-health nvidia0 row remap pending"),
            ("remap failure", fake_env(PATH=path, FAKECUDA_PROFILE=remap), NON_OK,
             r"cumemctl: fail memory-health nvidia0 row remap failed"),
            ("hung NVML call", fake_env(PATH=path, FAKENVML_INJECT="nvmlDeviceGetRemappedRows=hang"), NON_OK,
             r"cumemctl: timeout memory-health nvidia0 nvmlDeviceGetRem"),
            ("no driver", fake_env(PATH=path, CUMEMCTL_LIBCUDA="/nonexistent/libcuda.so.1"), UNKNOWN,
             "cumemctl: fail driver no driver"),
            ("no cumemctl", dict(fake_env(), PATH="/usr/bin:/bin"), UNKNOWN, ""),
        ]
        for name, env, status, message in cases:
            got, text, took = run_rule(env)
            check(got == status and re.match(message, text) and "\n" not in text,
                  f"{name}: status {got} '{text}' ({took:.1f} s), expected {status} '{message}...'")


if __name__ == "__main__":
    main({"config_fields": test_config_fields, "fleet_configmap": test_fleet_configmap, "statuses": test_statuses})
