#!/usr/bin/python3
"""The Kubernetes manifests in docs/fleet.md: each ```yaml block parses as YAML and names only fields
that exist in the API version and kind it declares, with values of the field's type. The field lists
come from the Kubernetes Python client's models (Debian's python3-kubernetes: one class per kind and
version, V1DaemonSet for apps/v1 DaemonSet, with the JSON name and type of every field). There is no
cluster here: this checks the manifests' shape, not that a cluster accepts them.
    k8s_manifests_test.py docs/fleet.md
"""
import re
import sys

import kubernetes
import kubernetes.client as k8s
import yaml

# The kinds the document may use, by (apiVersion, kind).
KINDS = {("apps/v1", "DaemonSet"): k8s.V1DaemonSet, ("batch/v1", "Job"): k8s.V1Job, ("v1", "Namespace"): k8s.V1Namespace}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def check(value, type_name, path, problems):
    """Checks `value` against the client's type name ('V1PodSpec', 'list[V1Container]', 'dict(str, str)',
    'str', ...), appending what does not fit to `problems`."""
    if m := re.fullmatch(r"list\[(.+)\]", type_name):
        if not isinstance(value, list):
            problems.append(f"{path}: a list expected, got {value!r}")
            return
        for i, item in enumerate(value):
            check(item, m.group(1), f"{path}[{i}]", problems)
    elif type_name == "dict(str, str)" and re.search(r"\.(limits|requests)$", path):
        # Quantities: the client types them as strings; the API takes "64Mi" or a plain number.
        for key, item in (value or {}).items():
            if not isinstance(item, (str, int, float)) or isinstance(item, bool):
                problems.append(f"{path}.{key}: a quantity expected, got {item!r}")
    elif m := re.fullmatch(r"dict\(str, (.+)\)", type_name):
        if not isinstance(value, dict):
            problems.append(f"{path}: a map expected, got {value!r}")
            return
        for key, item in value.items():
            check(item, m.group(1), f"{path}.{key}", problems)
    elif type_name in PRIMITIVES:
        if not isinstance(value, PRIMITIVES[type_name]) or (type_name == "int" and isinstance(value, bool)):
            problems.append(f"{path}: {type_name} expected, got {value!r}")
    elif type_name == "object":
        pass  # IntOrString and other free fields
    else:
        cls = getattr(k8s, type_name)
        if not isinstance(value, dict):
            problems.append(f"{path}: a {type_name} object expected, got {value!r}")
            return
        fields = {json_name: attr for attr, json_name in cls.attribute_map.items()}
        for key, item in value.items():
            if key not in fields:
                problems.append(f"{path}.{key}: no such field in {type_name}")
                continue
            check(item, cls.openapi_types[fields[key]], f"{path}.{key}", problems)


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
    if len(blocks) < 2:
        sys.exit(f"FAIL: expected the DaemonSet and the Job manifests, found {len(blocks)} yaml blocks")
    problems, seen = [], []
    for block in blocks:
        for doc in yaml.safe_load_all(block):
            kind = (doc.get("apiVersion"), doc.get("kind"))
            if kind not in KINDS:
                problems.append(f"{kind}: not a kind this test knows")
                continue
            name = doc.get("metadata", {}).get("name", "?")
            check(doc, KINDS[kind].__name__, f"{kind[1]} {name}", problems)
            seen.append(f"{kind[0]} {kind[1]} {name}")
    if problems:
        sys.exit("FAIL:\n  " + "\n  ".join(problems))
    print(f"ok: {', '.join(seen)} (fields as the Kubernetes Python client {kubernetes.__version__} defines them)")


if __name__ == "__main__":
    main()
