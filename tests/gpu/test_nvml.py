"""GPU tier: what `cumemctl devices` takes from NVML equals what `nvidia-smi -q -x` says (matched by UUID,
as the two count devices differently), the totals keep the driver's meaning, no context was needed, and
doctor's memory-health check passes on a healthy GPU."""
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import direct

MiB = 1 << 20


def smi_devices():
    """{uuid: <gpu> element} from nvidia-smi -q -x."""
    xml = subprocess.run(["nvidia-smi", "-q", "-x"], capture_output=True, text=True, check=True).stdout
    return {g.findtext("uuid"): g for g in ET.fromstring(xml).iter("gpu")}


def mib(text):
    """'143771 MiB' -> 143771."""
    return int(text.split()[0])


def on(text):
    return {"Enabled": True, "Disabled": False, "Yes": True, "No": False}.get(text)


def main(binary):
    count = direct.init_or_skip()
    if shutil.which("nvidia-smi") is None:
        print("skip: no nvidia-smi")
        sys.exit(direct.SKIP)
    c = direct.Checker()
    smi = smi_devices()
    code, doc, err = direct.cumemctl(binary, "devices")
    c.eq("exit code", code, 0)
    if doc is None:
        print(err)
        c.done()
    c.true("nvml loaded", doc["results"].get("nvml", {}).get("loaded"), str(doc["results"].get("nvml")))
    c.eq("device count", len(doc["results"]["devices"]), count)
    for d in doc["results"]["devices"]:
        o, uuid = d["ordinal"], d["uuid"]
        g = smi.get(uuid)
        if g is None:
            c.true(f"gpu{o} {uuid} in nvidia-smi", False, f"nvidia-smi lists {list(smi)}")
            continue
        n = d.get("nvml") or {}
        c.eq(f"gpu{o} free memory from", d.get("free_source"), "nvml")
        fb = g.find("fb_memory_usage")
        c.eq(f"gpu{o} total MiB", n.get("total_bytes", 0) // MiB, mib(fb.findtext("total")))
        # nvidia-smi rounds the reserved memory up to whole MiB (644939776 bytes shows as 616 MiB).
        c.eq(f"gpu{o} reserved MiB", -(-n.get("reserved_bytes", 0) // MiB), mib(fb.findtext("reserved")))
        # cuDeviceTotalMem is NVML's v2 total less the reserved memory.
        c.eq(f"gpu{o} total - reserved", n.get("total_bytes", 0) - n.get("reserved_bytes", 0), d["total_bytes"])
        # Used and free move with other processes: within 64 MiB of nvidia-smi's a moment later.
        c.true(f"gpu{o} used ~ nvidia-smi", abs(n.get("used_bytes", 0) // MiB - mib(fb.findtext("used"))) <= 64,
               f"{n.get('used_bytes')} vs {fb.findtext('used')}")
        c.eq(f"gpu{o} bar1 total MiB", (n.get("bar1_total_bytes") or 0) // MiB,
             mib(g.find("bar1_memory_usage").findtext("total")))
        ecc = g.find("ecc_mode")
        c.eq(f"gpu{o} ecc enabled", n["ecc"]["enabled"], on(ecc.findtext("current_ecc")))
        c.eq(f"gpu{o} ecc pending", n["ecc"]["pending"], on(ecc.findtext("pending_ecc")))
        rows = g.find("remapped_rows")
        if rows is not None and rows.findtext("remapped_row_corr") not in (None, "N/A"):
            r = n.get("remapped_rows") or {}
            c.eq(f"gpu{o} remapped corrected", r.get("corrected"), int(rows.findtext("remapped_row_corr")))
            c.eq(f"gpu{o} remapped uncorrected", r.get("uncorrected"), int(rows.findtext("remapped_row_unc")))
            c.eq(f"gpu{o} remap pending", r.get("pending"), on(rows.findtext("remapped_row_pending")))
            c.eq(f"gpu{o} remap failure", r.get("failure"), on(rows.findtext("remapped_row_failure")))
        c.eq(f"gpu{o} persistence", n.get("persistence_mode"), on(g.findtext("persistence_mode")))
        mig = g.find("mig_mode")
        if mig is not None and mig.findtext("current_mig") not in (None, "N/A"):
            c.eq(f"gpu{o} mig", n["mig"]["enabled"], on(mig.findtext("current_mig")))
    code, doc, err = direct.cumemctl(binary, "doctor", "--checks", "memory-health")
    c.eq("doctor memory-health exit", code, 0)
    if doc:
        health = [r for r in doc["results"]["checks"] if r["check"] == "memory-health"]
        c.eq("memory-health results", len(health), count)
        for r in health:
            c.eq(f"memory-health gpu{r.get('device')}", r["status"], "pass")
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
