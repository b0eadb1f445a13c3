"""GPU tier: the multi-node NVLink fabric as `cumemctl devices` reads it from NVML equals the Fabric
section of `nvidia-smi -q` for each GPU (matched by UUID), and doctor's fabric and imex-domain checks
agree with it: on a GPU that is not attached (the standalone H200: NVML answers success with state
NOT_SUPPORTED, nvidia-smi prints N/A) both skip with the reason and nothing fails; on an attached GPU
(a multi-node NVLink machine, not lent yet) the fabric check does not skip. Only nvidia-smi's words that
../shared/mnnvl-facts.md §1.5 records are compared; a value it does not record is printed, not judged."""
import re
import shutil
import subprocess
import sys

import direct

# nvidia-smi's words (facts §1.5) -> cumemctl's JSON; None: nvidia-smi's N/A, where NVML gave nothing.
STATES = {"Completed": "completed", "In Progress": "in-progress", "Not Started": "not-started",
          "Not Supported": "not-supported", "N/A": "not-supported"}
SUMMARIES = {"Healthy": "healthy", "Unhealthy": "unhealthy", "Limited Capacity": "limited-capacity",
             "Not Supported": "not-supported"}
# Health rows -> (cumemctl's field, {nvidia-smi's word: cumemctl's word}); only the words the facts record.
HEALTH_ROWS = {
    "Bandwidth": ("degraded_bandwidth", {"Full": "full", "Degraded": "degraded"}),
    "Route Recovery in progress": ("route_recovery", {}),
    "Route Unhealthy": ("route_unhealthy", {}),
    "Access Timeout Recovery": ("access_timeout_recovery", {}),
    "Incorrect Configuration": ("incorrect_configuration", {"None": "none"}),
    "Partition Assigned": ("partition_assigned", {}),
}


def smi_fabric(uuid):
    """The Fabric section of `nvidia-smi -q -i UUID`: {key: value}, the Health rows as {"Health": {...}};
    None where nvidia-smi prints no Fabric section."""
    text = subprocess.run(["nvidia-smi", "-q", "-i", uuid], capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip() == "Fabric"), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    out, health, in_health = {}, {}, False
    for line in lines[start + 1:]:
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth <= indent:
            break
        if line.strip() == "Health":
            in_health, health_indent = True, depth
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        if in_health and depth <= health_indent:
            in_health = False
        (health if in_health else out)[key.strip()] = value.strip()
    out["Health"] = health
    return out


def compare(c, o, f, smi):
    """One GPU's fabric figures against nvidia-smi's."""
    state = smi.get("State")
    c.eq(f"gpu{o} fabric state ({state})", f["state"], STATES.get(state, f"unknown nvidia-smi word {state!r}"))
    completed = f["state"] == "completed"
    status = smi.get("Status")
    if status not in (None, "N/A"):
        c.eq(f"gpu{o} fabric status", f["status"], status)
    else:
        c.true(f"gpu{o} fabric status N/A: cumemctl gives none or the state is not completed",
               f["status"] is None or not completed, f["status"])
    clique = smi.get("CliqueId")
    if clique not in (None, "N/A"):
        c.eq(f"gpu{o} fabric clique", f["clique_id"], int(clique))
    else:
        c.true(f"gpu{o} fabric clique N/A: not completed", not completed, f["clique_id"])
    uuid = smi.get("ClusterUUID")
    if uuid not in (None, "N/A"):
        c.eq(f"gpu{o} fabric cluster UUID", f["cluster_uuid"], uuid.lower())
    else:
        c.true(f"gpu{o} fabric cluster UUID N/A: not attached", not f["attached"], f["cluster_uuid"])
    health = smi.get("Health", {})
    summary = health.get("Summary")
    if summary in SUMMARIES:
        c.eq(f"gpu{o} fabric health summary", f["health_summary"], SUMMARIES[summary])
    elif summary in (None, "N/A"):
        c.true(f"gpu{o} fabric health summary N/A", f["health_summary"] in (None, "not-supported"), f["health_summary"])
    else:
        print(f"  note  gpu{o} health summary {summary!r}: not among the facts' words, not compared")
    for row, (key, words) in HEALTH_ROWS.items():
        value = health.get(row)
        ours = (f["health"] or {}).get(key)
        if value is None:
            continue
        if value == "N/A":
            c.true(f"gpu{o} fabric {row} N/A", ours in (None, "not-supported"), ours)
        elif value in words:
            c.eq(f"gpu{o} fabric {row}", ours, words[value])
        else:
            print(f"  note  gpu{o} {row} {value!r} (cumemctl: {ours!r}): nvidia-smi's word is not in the facts, not compared")


def main(binary):
    count = direct.init_or_skip()
    if shutil.which("nvidia-smi") is None:
        print("skip: no nvidia-smi")
        sys.exit(direct.SKIP)
    c = direct.Checker()
    code, doc, err = direct.cumemctl(binary, "devices")
    c.eq("devices exit code", code, 0)
    if doc is None:
        print(err)
        c.done()
    attached = {}
    for d in doc["results"]["devices"]:
        o, f = d["ordinal"], d.get("fabric")
        c.true(f"gpu{o} has fabric info", f is not None and f.get("error") is None, str(f))
        if not f:
            continue
        print(f"  info  gpu{o} {d['uuid']}: NVML {f['api']} result {f['result']} state {f['state']} status {f['status']} "
              f"cluster {f['cluster_uuid']} clique {f['clique_id']} mask {f['health_mask']} summary {f['health_summary']}")
        attached[o] = f["attached"]
        smi = smi_fabric(d["uuid"])
        if smi is None:
            c.true(f"gpu{o}: nvidia-smi has no Fabric section, so cumemctl says not attached", not f["attached"])
            continue
        compare(c, o, f, smi)
    code, doc, err = direct.cumemctl(binary, "doctor", "--checks", "fabric,imex-domain")
    c.eq("doctor fabric,imex-domain exit code", code, 0 if doc and doc["results"]["summary"]["fail"] == 0 else 1)
    if doc is None:
        print(err)
        c.done()
    checks = {(r["check"], r.get("device")): r for r in doc["results"]["checks"]}
    for o, is_attached in attached.items():
        r = checks[("fabric", o)]
        print(f"  info  doctor fabric gpu{o}: {r['status']}: {r['reason']}")
        if is_attached:
            c.true(f"gpu{o} attached: the fabric check does not skip", r["status"] != "skip", r["reason"])
        else:
            c.eq(f"gpu{o} not attached: the fabric check skips", r["status"], "skip")
            c.true(f"gpu{o} says why", r["reason"].startswith("not attached to a multi-node NVLink fabric"), r["reason"])
    r = checks[("imex-domain", None)]
    print(f"  info  doctor imex-domain: {r['status']}: {r['reason']}")
    if not any(attached.values()):
        c.eq("no GPU attached: imex-domain skips", r["status"], "skip")
        c.true("as not applicable", r["reason"].startswith("not applicable"), r["reason"])
        c.eq("and never fails here", doc["results"]["summary"]["fail"], 0)
    code, _, _ = direct.cumemctl(binary, "doctor")
    c.true("the whole doctor ran", code in (0, 1), code)
    prom = subprocess.run([binary, "devices", "--format", "prometheus"], capture_output=True, text=True).stdout
    for o, is_attached in attached.items():
        c.true(f"gpu{o} Prometheus fabric_attached {int(is_attached)}",
               re.search(rf'^cumemctl_device_fabric_attached\{{[^}}]*cuda_device="{o}"[^}}]*\}} {int(is_attached)}$', prom, re.M),
               "\n".join(l for l in prom.splitlines() if "fabric_attached" in l))
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
