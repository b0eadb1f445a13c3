"""GPU tier: GPUs named as nvidia-smi names them. devices' UUID, PCI bus id and
nvidia-smi index agree with `nvidia-smi --query-gpu=index,uuid,pci.bus_id`; --device takes the UUID, a
UUID prefix and the bus id (in nvidia-smi's form and in the short one) and selects the same GPU; doctor's
device checks and its Prometheus series carry the same names, and so do the JSON of create, create --pool,
pool-stats, trim, granularity and memtest and devices' CSV, and the line below create's table (gpu N:
nvidiaI, UUID, PCI bus id); le-bind takes the bus id."""
import subprocess
import sys

import direct


def smi_gpus():
    """{uuid: (index, bus id)} as nvidia-smi lists them, or None without nvidia-smi."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return None
    gpus = {}
    for line in r.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            gpus[parts[1]] = (int(parts[0]), parts[2])
    return gpus


def main(binary):
    direct.init_or_skip()
    c = direct.Checker()
    smi = smi_gpus()
    code, doc, err = direct.cumemctl(binary, "devices")
    c.eq("devices exit code", code, 0)
    if doc is None or smi is None:
        print(err or "no nvidia-smi")
        c.done()
    for d in doc["results"]["devices"]:
        o, uuid = d["ordinal"], d["uuid"]
        c.true(f"gpu{o} nvidia-smi lists {uuid}", uuid in smi, sorted(smi))
        if uuid not in smi:
            continue
        index, bus = smi[uuid]
        c.eq(f"gpu{o} nvml_index is nvidia-smi's index", d["nvml_index"], index)
        c.eq(f"gpu{o} pci_bus_id is nvidia-smi's", d["pci_bus_id"], bus)
        short = bus.split(":", 1)[1].lower()  # 3b:00.0 without the domain
        for spec in (uuid, uuid[:12], bus, short):
            code, one, _ = direct.cumemctl(binary, "devices", "--no-free", "--device", spec)
            got = [x["ordinal"] for x in one["results"]["devices"]] if one else None
            c.eq(f"gpu{o} --device {spec}", (code, got), (0, [o]))
        # The per-device results of the other commands name the GPU the same way, and le-bind takes the
        # bus id (exit 3 where the driver has no logical endpoints: the device was still accepted).
        want = (uuid, bus, index)
        for args, rows in ((["create", "--size", "2MiB"], lambda r: [r]),
                           (["create", "--pool", "--size", "2MiB"], lambda r: r["devices"]),
                           (["pool-stats"], lambda r: r["devices"]),
                           (["trim", "--exercise", "4x16MiB"], lambda r: r["devices"]),
                           (["granularity", "--location", "device", "--handle-type", "none"], lambda r: r["rows"]),
                           (["memtest", "--size", "64MiB", "--force"], lambda r: r["devices"])):
            code, out, _ = direct.cumemctl(binary, *args, "--device", uuid)
            got = [(x.get("uuid"), x.get("pci_bus_id"), x.get("nvml_index")) for x in rows(out["results"])] if out else []
            c.true(f"gpu{o} {' '.join(args[:2])} --device UUID: names it as nvidia-smi does",
                   code == 0 and got and all(g == want for g in got), (code, got[:1]))
        # The line below create's table names it as the drain reason does (nvidiaN, nvidia-smi's index).
        table = subprocess.run([binary, "create", "--size", "2MiB", "--device", uuid], capture_output=True, text=True)
        line = f"gpu {o}: nvidia{index}, {uuid}, PCI {bus}"
        c.true(f"gpu{o} create's table: '{line}'", table.returncode == 0 and line in table.stdout,
               [l for l in table.stdout.splitlines() if l.strip().startswith(f"gpu {o}:")][:1])
        code, lb, _ = direct.cumemctl(binary, "le-bind", "--size", "2MiB", "--device", short)
        c.true(f"gpu{o} le-bind --device {short}: accepted, and the owner is gpu{o}",
               code == 3 or (code == 0 and lb["results"]["request"]["devices"] == [o]), (code, (lb or {}).get("errors")))
        code, dr, _ = direct.cumemctl(binary, "doctor", "--quick", "--device", uuid)
        checks = [x for x in (dr or {}).get("results", {}).get("checks", []) if x.get("device") == o]
        c.true(f"gpu{o} doctor --device UUID: every device check names it",
               checks and all(x["uuid"] == uuid and x["pci_bus_id"] == bus and x["nvml_index"] == index
                              for x in checks), checks[:1])
    prom = subprocess.run([binary, "devices", "--format", "prometheus"], capture_output=True, text=True).stdout
    for uuid, (index, bus) in smi.items():
        c.true(f"Prometheus: {uuid} as dcgm-exporter labels it",
               f'gpu="{index}",UUID="{uuid}",pci_bus_id="{bus}",device="nvidia{index}"' in prom,
               [l for l in prom.splitlines() if uuid in l][:1])
    # CSV as nvidia-smi --query-gpu writes it: a row per GPU with nvidia-smi's index and bus id, total in
    # whole MiB beside total_bytes in bytes (nounits drops the units, nothing else).
    csv = subprocess.run([binary, "devices", "--format", "csv,noheader,nounits",
                          "--fields", "nvml_index,uuid,pci_bus_id,total,total_bytes"], capture_output=True, text=True)
    c.eq("devices --format csv exit code", csv.returncode, 0)
    rows = [[p.strip() for p in line.split(",")] for line in csv.stdout.splitlines()]
    c.eq("CSV: a row per GPU", len(rows), len(doc["results"]["devices"]))
    for row in rows:
        if len(row) != 5:
            c.true("CSV: five fields", False, row)
            continue
        index, uuid, bus, total, total_bytes = row
        c.eq(f"CSV {uuid}: nvidia-smi's index and bus id", (int(index), bus), smi.get(uuid))
        c.eq(f"CSV {uuid}: total is total_bytes in whole MiB", int(total), int(total_bytes) >> 20)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
