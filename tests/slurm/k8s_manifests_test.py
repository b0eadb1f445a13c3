#!/usr/bin/python3
"""The Kubernetes manifests: packaging/k8s as `kubectl kustomize` renders it (packaging/k8s, what runs
all the time, and packaging/k8s/jobs, the Jobs), and docs/fleet.md, whose ```yaml blocks are those files
word for word (each block's first line names its file). Each rendered object names only fields that
exist in the API version and kind it declares, with values of the field's type. The field lists come
from the Kubernetes Python client's models (Debian's python3-kubernetes: one class per kind and version,
V1DaemonSet for apps/v1 DaemonSet, with the JSON name and type of every field). There is no cluster
here: this checks the manifests' shape, not that a cluster accepts them. Beyond the shape:
- every manifest file of packaging/k8s is a resource of one of the two kustomizations, so none goes
  unchecked; every container that runs the cumemctl image (scripts/image.sh) names the same image, at
  the version of CMakeLists.txt;
- Pod Security (docs/fleet.md says which level the host mounts need): each namespace the manifests
  make is labelled `pod-security.kubernetes.io/enforce` with the lowest level that admits its pods (a
  hostPath volume or a capability beyond baseline's needs privileged; running as root, baseline); a
  pod elsewhere (kube-system aside) must pass restricted.
- Least privilege: no pod mounts the host's / or the folders of the runtime's sockets; every
  container, init containers included, has a RuntimeDefault seccomp profile, drops ALL capabilities
  and adds back only those a check needs (SYSLOG, for /dev/kmsg), cannot escalate privileges, has a
  read-only root file system and says which user it runs as (runAsNonRoot unless root); no host
  namespaces, no privileged container.
- The doctor DaemonSet runs doctor over and over (a loop that sleeps), writing doctor's metrics with
  --output (atomically) into a hostPath volume mounted writable, every other host mount read-only.
    k8s_manifests_test.py SOURCE      (the source tree; kubectl on PATH, or $KUBECTL)
"""
import glob
import os
import re
import subprocess
import sys

import kubernetes
import kubernetes.client as k8s
import yaml

# The kinds the document may use, by (apiVersion, kind).
KINDS = {("apps/v1", "DaemonSet"): k8s.V1DaemonSet, ("batch/v1", "Job"): k8s.V1Job, ("v1", "ConfigMap"): k8s.V1ConfigMap,
         ("v1", "Namespace"): k8s.V1Namespace}
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


# Capabilities a container may add back after dropping ALL, each with the check that needs it.
ALLOWED_CAPABILITIES = {"SYSLOG": "doctor's xid check reads /dev/kmsg under kernel.dmesg_restrict=1"}
# Host paths no pod may mount: the host's root, and the folders that hold the container runtime's and
# the kubelet's sockets (a socket opens through a read-only mount too).
FORBIDDEN_HOST_PATHS = {"/", "/run", "/var/run", "/var", "/run/containerd", "/var/run/containerd", "/var/lib",
                        "/var/lib/kubelet", "/var/run/docker.sock", "/run/containerd/containerd.sock"}
# Pod Security's baseline level allows these capabilities to be added, and no others.
BASELINE_CAPABILITIES = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
LEVELS = ["restricted", "baseline", "privileged"]


def pod_level(spec):
    """The lowest Pod Security level that admits a pod spec (the parts of the levels these manifests
    touch: host paths, added capabilities, running as root, dropped capabilities, seccomp)."""
    containers = spec.get("initContainers", []) + spec.get("containers", [])
    added = {cap for c in containers for cap in c.get("securityContext", {}).get("capabilities", {}).get("add", [])}
    if any("hostPath" in v for v in spec.get("volumes", [])) or added - BASELINE_CAPABILITIES:
        return "privileged"
    pod_sc = spec.get("securityContext", {})
    for c in containers:
        sc = {**pod_sc, **c.get("securityContext", {})}
        if (not sc.get("runAsNonRoot") or sc.get("runAsUser") == 0 or added - {"NET_BIND_SERVICE"}
                or "ALL" not in sc.get("capabilities", {}).get("drop", [])):
            return "baseline"
    return "restricted"


def least_privilege(d, spec, what, problems):
    """Every pod: RuntimeDefault seccomp, no host root, and per container: capabilities dropped (ALL,
    adding back only ALLOWED_CAPABILITIES), no privilege escalation, a read-only root file system, and
    the user it runs as said (runAsUser; runAsNonRoot unless it is root)."""
    for v in spec.get("volumes", []):
        if "hostPath" in v and os.path.normpath(v["hostPath"]["path"]) in FORBIDDEN_HOST_PATHS:
            problems.append(f"{what}: volume {v['name']} mounts the host's {v['hostPath']['path']}")
    pod_sc = spec.get("securityContext", {})
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        sc = c.get("securityContext", {})
        seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {})).get("type")
        if seccomp != "RuntimeDefault":
            problems.append(f"{what}: container {c['name']} has no RuntimeDefault seccomp profile ({seccomp})")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            problems.append(f"{what}: container {c['name']} keeps the runtime's default capabilities (no drop: [ALL])")
        for cap in caps.get("add", []):
            if cap not in ALLOWED_CAPABILITIES:
                problems.append(f"{what}: container {c['name']} adds capability {cap}, which no check needs")
        if sc.get("allowPrivilegeEscalation") is not False or sc.get("privileged"):
            problems.append(f"{what}: container {c['name']} may gain privileges (allowPrivilegeEscalation)")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{what}: container {c['name']} has a writable root file system")
        user = sc.get("runAsUser", pod_sc.get("runAsUser"))
        if user is None:
            problems.append(f"{what}: container {c['name']} does not say which user it runs as (runAsUser)")
        elif user != 0 and sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is not True:
            problems.append(f"{what}: container {c['name']} runs as uid {user} without runAsNonRoot")


def pod_security(docs, problems):
    """The Pod Security rules above, over every parsed document: each namespace the manifests make is
    labelled with the lowest level that admits every pod in it, and no pod asks for more than it needs."""
    levels = {d["metadata"]["name"]: d["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce")
              for d in docs if d.get("kind") == "Namespace"}
    needed = {}
    for d in docs:
        spec = d.get("spec", {}).get("template", {}).get("spec")
        if spec is None:
            continue
        what = f"{d['kind']} {d['metadata']['name']}"
        namespace = d["metadata"].get("namespace", "default")
        level = pod_level(spec)
        if namespace in levels:
            needed[namespace] = max(needed.get(namespace, "restricted"), level, key=LEVELS.index)
        elif namespace != "kube-system" and level != "restricted":
            problems.append(f"{what}: needs Pod Security level {level} in namespace {namespace}, which the "
                            "manifests do not make")
        for flag in ("hostNetwork", "hostPID", "hostIPC"):
            if spec.get(flag):
                problems.append(f"{what}: {flag} (more than the host mounts need)")
        least_privilege(d, spec, what, problems)
        host_volumes = {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            for m in c.get("volumeMounts", []):
                if m["name"] in host_volumes and not m.get("readOnly") and d["metadata"]["name"] != "cumemctl-doctor":
                    problems.append(f"{what}: host path {host_volumes[m['name']]} mounted writable")
    for namespace, level in levels.items():
        if level != needed.get(namespace, "restricted"):
            problems.append(f"namespace {namespace}: labelled {level}, but the lowest level that admits its pods "
                            f"is {needed.get(namespace, 'restricted')}")


def doctor_daemonset(docs, problems):
    """The doctor DaemonSet: periodic, its metrics written atomically into a writable host folder."""
    (ds,) = [d for d in docs if d.get("kind") == "DaemonSet" and d["metadata"]["name"] == "cumemctl-doctor"] or [None]
    if ds is None:
        problems.append("no DaemonSet cumemctl-doctor")
        return
    spec = ds["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    script = " ".join(c.get("command", []) + c.get("args", []))
    if not re.search(r"\bwhile\b.*\bsleep \d+", script, re.S) or "sleep infinity" in script:
        problems.append(f"the doctor DaemonSet does not run doctor periodically: {script!r}")
    m = re.search(r"cumemctl doctor [^\n]*--format prometheus --output (\S+)", script)
    if not m:
        problems.append(f"the doctor DaemonSet writes no metrics with --output (atomically): {script!r}")
        return
    folder = m.group(1).rsplit("/", 1)[0]
    host = {v["name"]: v["hostPath"] for v in spec.get("volumes", []) if "hostPath" in v}
    mounts = [x for x in c.get("volumeMounts", []) if x["mountPath"] == folder]
    if not mounts or mounts[0]["name"] not in host or mounts[0].get("readOnly"):
        problems.append(f"the metrics' folder {folder} is not a writable hostPath mount: {mounts}")
    elif not host[mounts[0]["name"]]["path"].startswith("/var/lib/"):
        problems.append(f"the metrics go to the host's {host[mounts[0]['name']]['path']}, not a textfile folder")


def render(source, problems):
    """The objects of both kustomizations as `kubectl kustomize` renders them, and the manifest files
    that are resources of neither."""
    k8s = os.path.join(source, "packaging", "k8s")
    kubectl = os.environ.get("KUBECTL", "kubectl")
    docs, listed = [], set()
    for folder in (k8s, os.path.join(k8s, "jobs")):
        try:
            p = subprocess.run([kubectl, "kustomize", folder], capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            sys.exit(f"FAIL: no {kubectl} (scripts/setup.sh installs Debian's kubernetes-client)")
        if p.returncode != 0:
            problems.append(f"kubectl kustomize {folder}: {p.stderr.strip()}")
            continue
        docs += [d for d in yaml.safe_load_all(p.stdout) if d]
        kustomization = yaml.safe_load(open(os.path.join(folder, "kustomization.yaml"), encoding="utf-8"))
        listed |= {os.path.normpath(os.path.join(folder, r)) for r in kustomization.get("resources", [])}
    files = {os.path.normpath(f) for f in glob.glob(os.path.join(k8s, "**", "*.yaml"), recursive=True)
             if os.path.basename(f) != "kustomization.yaml"}
    problems += [f"{os.path.relpath(f, source)}: a resource of neither kustomization" for f in sorted(files - listed)]
    return docs


def document_blocks(source, problems):
    """docs/fleet.md's ```yaml blocks: each one the file that its first line names, word for word."""
    text = open(os.path.join(source, "docs", "fleet.md"), encoding="utf-8").read()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
    if len(blocks) < 2:
        problems.append(f"docs/fleet.md: expected the manifests, found {len(blocks)} yaml blocks")
    for block in blocks:
        m = re.match(r"# (packaging/k8s/\S+):", block)
        path = m and os.path.join(source, m.group(1))
        if not path or not os.path.isfile(path):
            problems.append(f"docs/fleet.md: a yaml block that names no file of packaging/k8s: {block[:80]!r}")
        elif open(path, encoding="utf-8").read() != block:
            problems.append(f"docs/fleet.md: the block of {m.group(1)} differs from the file")


def images(source, docs, problems):
    """Every container of the cumemctl image names one image, at the project's version."""
    version = re.search(r"^project\(cumemctl VERSION ([0-9.]+)", open(os.path.join(source, "CMakeLists.txt")).read(), re.M)
    found = set()
    for d in docs:
        spec = d.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            if re.search(r"(^|/)cumemctl:", c.get("image", "")):
                found.add(c["image"])
    if len(found) != 1 or not next(iter(found)).endswith(f"cumemctl:{version.group(1)}"):
        problems.append(f"the cumemctl image: {sorted(found)}, expected one, at version {version.group(1)}")
    return found


def main():
    source = sys.argv[1]
    problems, seen = [], []
    document_blocks(source, problems)
    docs = render(source, problems)
    for doc in docs:
        kind = (doc.get("apiVersion"), doc.get("kind"))
        if kind not in KINDS:
            problems.append(f"{kind}: not a kind this test knows")
            continue
        name = doc.get("metadata", {}).get("name", "?")
        check(doc, KINDS[kind].__name__, f"{kind[1]} {name}", problems)
        seen.append(f"{kind[0]} {kind[1]} {name}")
    found = images(source, docs, problems)
    pod_security(docs, problems)
    doctor_daemonset(docs, problems)
    if problems:
        sys.exit("FAIL:\n  " + "\n  ".join(problems))
    print(f"ok: {', '.join(seen)} (fields as the Kubernetes Python client {kubernetes.__version__} defines them), "
          f"image {', '.join(found)}")


if __name__ == "__main__":
    main()
