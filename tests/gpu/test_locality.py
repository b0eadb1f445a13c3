"""GPU tier: CUDA 13.4 locality domains against the real driver. Below 13.4 (the H200's 13.0): `devices`
says unknown with the driver's version, every command that takes --location domain:I exits 3 naming
the driver, and the driver itself, asked directly, answers the localized granularity (2 MiB) and
refuses cuMemCreate and cuMemPoolCreate (the trap cumemctl does not fall into). On 13.4 or newer: the
figures equal the attributes, and a localized allocation, pool and doctor check run. Never a multicast
object."""
import os
import subprocess
import sys

import direct

DRIVER_134 = 13040
COMMANDS = (("create", "--size", "2MiB"), ("create", "--pool", "--size", "2MiB"), ("pool-stats",), ("trim",),
            ("granularity",))


def words(v):
    return f"{v // 1000}.{v % 1000 // 10}"


def below_134(binary, version, count, c):
    code, doc, err = direct.cumemctl(binary, "devices", "--no-free")
    c.eq("devices exit", code, 0)
    for d in (doc or {}).get("results", {}).get("devices", []):
        o = d["ordinal"]
        loc = d["locality"]
        c.eq(f"gpu{o} unknown_reason", loc["unknown_reason"], f"driver {words(version)}; needs 13.4")
        c.eq(f"gpu{o} domains", loc["domains"], None)
        c.eq(f"gpu{o} localized_allocation", loc["localized_allocation"], None)
        for number in (149, 157, 161):
            c.eq(f"gpu{o} attribute {number} refused by the driver", direct.attribute(o, number), None)
    table = subprocess.run([binary, "devices", "--no-free", "--no-color"], capture_output=True, text=True)
    c.true("devices table says unknown (driver X; needs 13.4)",
           f"unknown (driver {words(version)}; needs 13.4)" in table.stdout, table.stdout[-400:])
    for cmd in COMMANDS:
        code, doc, err = direct.cumemctl(binary, *cmd, "--location", "domain:0")
        name = " ".join(cmd)
        c.eq(f"{name} --location domain:0 exit", code, 3)
        msg = doc["errors"][0]["message"] if doc and doc.get("errors") else err
        c.true(f"{name}: the words", msg.startswith("locality domains need a CUDA 13.4 driver; this one is "
                                                    f"{words(version)}"), msg)
    code, doc, err = direct.cumemctl(binary, "create", "--size", "2MiB", "--location", "domain:256")
    c.eq("domain:256 exit (usage, before the driver)", code, 2)
    # The trap, asked of the driver directly (ctypes, location type 6 by number).
    here = os.path.dirname(os.path.abspath(__file__))
    trap = subprocess.run([sys.executable, os.path.join(here, "..", "cli", "fixtures", "locality_trap.py"),
                           os.environ.get("CUMEMCTL_LIBCUDA", "libcuda.so.1")], capture_output=True, text=True,
                          timeout=60)
    print(f"  info  the driver directly: {trap.stdout.strip()} {trap.stderr.strip()}")
    c.true("the driver refuses cuMemCreate at location type 6", "cuMemCreate CUDA_ERROR_INVALID_VALUE" in trap.stdout,
           trap.stdout)
    code, doc, err = direct.cumemctl(binary, "doctor", "--checks", "locality")
    c.eq("doctor --checks locality exit", code, 0)
    for r in (doc or {}).get("results", {}).get("checks", []):
        if r["check"] == "locality":
            c.eq(f"doctor locality gpu{r.get('device')} status", r["status"], "skip")


def at_134(binary, count, c):
    code, doc, err = direct.cumemctl(binary, "devices", "--no-free")
    c.eq("devices exit", code, 0)
    for d in (doc or {}).get("results", {}).get("devices", []):
        o = d["ordinal"]
        loc = d["locality"]
        c.eq(f"gpu{o} domains", loc["domains"], direct.attribute(o, 149))
        c.eq(f"gpu{o} sms_per_domain", loc["sms_per_domain"], direct.attribute(o, 157))
        print(f"  info  gpu{o} attribute 161: {direct.attribute(o, 161)}; allocation: {loc['localized_allocation_detail']}")
        c.eq(f"gpu{o} localized allocation works", loc["localized_allocation"], True)
    code, doc, err = direct.cumemctl(binary, "create", "--size", "64MiB", "--location", "domain:0", "--verify")
    c.eq("create --location domain:0 --verify exit", code, 0)
    if doc:
        print(f"  info  placement {doc['results'].get('placement')}; reads {doc['results'].get('domain_reads')}")
    code, doc, err = direct.cumemctl(binary, "create", "--pool", "--size", "64MiB", "--location", "domain:0")
    c.eq("create --pool --location domain:0 exit", code, 0)
    code, doc, err = direct.cumemctl(binary, "doctor", "--checks", "locality")
    c.true("doctor --checks locality exit 0", code == 0, err)
    for r in (doc or {}).get("results", {}).get("checks", []):
        if r["check"] == "locality":
            print(f"  info  doctor locality gpu{r.get('device')}: {r['status']}: {r['reason']}")


def main(binary):
    count = direct.init_or_skip()
    c = direct.Checker()
    err, version = direct.cu.cuDriverGetVersion()
    print(f"  info  driver {version}")
    if version < DRIVER_134:
        below_134(binary, version, count, c)
    else:
        at_134(binary, count, c)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
