#!/usr/bin/python3
"""Checks a node-feature-discovery feature file by NFD's rules (source/local/local.go and
pkg/apis/nfd/validate of kubernetes-sigs/node-feature-discovery, docs/usage/customization-guide.md):
at most 64 KiB; comment lines start with '#', directives with '# +' (expiry-time: RFC 3339, in the future
here); every other line NAME[=VALUE] where NAME is a qualified name with a namespace that nfd-master
accepts by default (not kubernetes.io or its sub-namespaces, except feature.node.kubernetes.io and its
sub-namespaces), VALUE a valid label value; no name twice. Prints the labels as JSON, and with
KEY=VALUE arguments checks that those labels are there with those values (KEY without the namespace;
VALUE '*' any value, '-' absent).
    check_nfd.py FILE [KEY=VALUE]...
"""
import datetime
import json
import os
import re
import sys

NAMESPACE = "cumemctl.feature.node.kubernetes.io"
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
VALUE = r"(|[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)"


def fail(message):
    sys.exit(f"check_nfd: {sys.argv[1]}: {message}")


def main():
    path = sys.argv[1]
    if os.path.basename(path).startswith("."):
        fail("a dot file: NFD ignores it")
    data = open(path, "rb").read()
    if len(data) > 64 * 1024:
        fail(f"{len(data)} bytes: NFD ignores files over 64 KiB")
    labels = {}
    for n, line in enumerate(data.decode("utf-8").split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +"):
                key, _, value = line[3:].partition("=")
                if key != "expiry-time":
                    fail(f"line {n}: unknown directive {key}")
                when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
                if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value) or when <= datetime.datetime.now(datetime.timezone.utc):
                    fail(f"line {n}: expiry-time {value!r} is not an RFC 3339 time in the future")
            continue
        key, has_value, value = line.partition("=")
        ns, slash, name = key.rpartition("/")
        if not slash or len(ns) > 253 or not all(re.fullmatch(DNS_LABEL, p) for p in ns.split(".")):
            fail(f"line {n}: {key!r} has no valid namespace")
        if ns == "kubernetes.io" or (ns.endswith(".kubernetes.io") and not (ns == "feature.node.kubernetes.io" or ns.endswith(".feature.node.kubernetes.io"))):
            fail(f"line {n}: namespace {ns} is denied by default")
        if len(name) > 63 or not re.fullmatch(NAME, name):
            fail(f"line {n}: {name!r} is not a valid label name")
        value = value if has_value else "true"
        if len(value) > 63 or not re.fullmatch(VALUE, value):
            fail(f"line {n}: {value!r} is not a valid label value")
        if key in labels:
            fail(f"line {n}: {key} twice")
        labels[key] = value
    for expected in sys.argv[2:]:
        key, _, value = expected.partition("=")
        got = labels.get(f"{NAMESPACE}/{key}")
        if (value == "-" and got is not None) or (value == "*" and got is None) or (value not in ("*", "-") and got != value):
            fail(f"{key}: {got!r}, expected {value!r} (labels: {json.dumps(labels)})")
    print(json.dumps(labels, sort_keys=True))


if __name__ == "__main__":
    main()
