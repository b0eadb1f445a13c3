#!/usr/bin/python3
"""pod_to_runc.py [--once] MANIFEST CONTAINER HOST CONFIG: rewrites the runc CONFIG (config.json of a bundle that
umoci unpacked) to run as the container CONTAINER of the DaemonSet or Job in MANIFEST would on a node
whose root is the folder HOST (a made-up node: tests/cli/sysroot.sh's system root):
  - each hostPath volume that the container mounts, from HOST + its path (a Directory, DirectoryOrCreate
    or CharDevice that HOST lacks is made, an empty folder, or an empty file for /dev/kmsg), read-only
    as the mount says, at its mountPath;
  - the container's securityContext: runAsUser and runAsGroup as the process's user, the capabilities
    it adds back after dropping ALL as its only ones (bounding, effective, permitted; none ambient),
    allowPrivilegeEscalation: false as noNewPrivileges, readOnlyRootFilesystem as a read-only root;
  - its env (a value from the downward API becomes the pod's node name, "image-test") and its command
    (with --once, a loop's "sleep N & wait $!" becomes "break": one round).
Prints the command line. (seccomp's RuntimeDefault is the runtime's own profile, which runc does not
have: not applied.)
"""
import json
import os
import re
import sys

import yaml

once = sys.argv[1] == "--once"
manifest, container_name, host, config_path = sys.argv[1 + once:5 + once]
docs = [d for d in yaml.safe_load_all(open(manifest, encoding="utf-8")) if d and d.get("kind") in ("DaemonSet", "Job")]
spec = docs[0]["spec"]["template"]["spec"]
(c,) = [x for x in spec.get("initContainers", []) + spec["containers"] if x["name"] == container_name]
volumes = {v["name"]: v for v in spec.get("volumes", [])}
config = json.load(open(config_path))

mounts = []
for m in c.get("volumeMounts", []):
    v = volumes[m["name"]]
    if "hostPath" not in v:
        continue
    source = os.path.join(host, v["hostPath"]["path"].lstrip("/"))
    if not os.path.exists(source):
        if v["hostPath"].get("type") == "CharDevice":
            os.makedirs(os.path.dirname(source), exist_ok=True)
            open(source, "w").close()
        else:
            os.makedirs(source)
    mounts.append({"destination": m["mountPath"], "type": "bind", "source": source,
                   "options": ["rbind", "ro" if m.get("readOnly") else "rw"]})
config["mounts"] += mounts

sc = {**spec.get("securityContext", {}), **c.get("securityContext", {})}
config["process"]["user"] = {"uid": sc["runAsUser"], "gid": sc.get("runAsGroup", sc["runAsUser"])}
caps = sc.get("capabilities", {})
assert "ALL" in caps.get("drop", []), f"{container_name} keeps the default capabilities"
kept = ["CAP_" + x for x in caps.get("add", [])]
config["process"]["capabilities"] = {"bounding": kept, "effective": kept, "permitted": kept, "inheritable": [],
                                     "ambient": []}
config["process"]["noNewPrivileges"] = sc.get("allowPrivilegeEscalation") is False
config["root"]["readonly"] = bool(sc.get("readOnlyRootFilesystem"))
env = [e for e in config["process"]["env"] if not e.startswith("FAKECUDA_PROFILE=")]
for e in c.get("env", []):
    env.append(f"{e['name']}={e['value'] if 'value' in e else 'image-test'}")
config["process"]["env"] = env + [e for e in config["process"]["env"] if e.startswith("FAKECUDA_PROFILE=")]
args = c["command"] + c.get("args", [])
if once:
    args = [re.sub(r"sleep \d+ & wait \$!", "break", a) for a in args]
config["process"]["args"] = args
config["process"]["terminal"] = False
json.dump(config, open(config_path, "w"))
print(" ".join(config["process"]["args"]))
