"""GPU tier: `cumemctl devices` reports exactly what the driver reports."""
import sys

import direct

ATTRS = {
    "vmm": 102, "memory_pools": 115, "posix_fd": 103, "fabric": 128, "gpudirect_rdma_vmm": 110,
    "generic_compression": 107, "host_numa_vmm": 141, "host_numa_pools": 142, "host_pools": 144,
    "host_vmm": 145, "multicast": 132, "gpudirect_rdma": 116, "dma_buf": 124,
}


def main(binary):
    count = direct.init_or_skip()
    c = direct.Checker()
    code, doc, err = direct.cumemctl(binary, "devices")
    c.eq("exit code", code, 0)
    if doc is None:
        print(err)
        c.done()
    c.eq("device count", doc["results"]["device_count"], count)
    err, version = direct.cu.cuDriverGetVersion()
    c.eq("driver version", doc["driver"]["version"], version)
    for d in doc["results"]["devices"]:
        o = d["ordinal"]
        err, name = direct.cu.cuDeviceGetName(256, o)
        c.eq(f"gpu{o} name", d["name"], name.split(b"\0")[0].decode())
        err, total = direct.cu.cuDeviceTotalMem(o)
        c.eq(f"gpu{o} total", d["total_bytes"], total)
        err, uuid = direct.cu.cuDeviceGetUuid(o)
        h = bytes(uuid.bytes).hex()
        c.eq(f"gpu{o} uuid", d["uuid"], f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
        cc = f"{direct.attribute(o, 75)}.{direct.attribute(o, 76)}"
        c.eq(f"gpu{o} compute capability", d["compute_capability"], cc)
        for key, number in ATTRS.items():
            v = direct.attribute(o, number)
            c.eq(f"gpu{o} {key}", d["capabilities"][key], None if v is None else bool(v))
        c.eq(f"gpu{o} host_numa_id", d["capabilities"]["host_numa_id"], direct.attribute(o, 134))
        mask = direct.attribute(o, 119)
        names = [n for bit, n in ((1, "posix-fd"), (2, "win32"), (4, "win32-kmt"), (8, "fabric")) if mask & bit]
        c.eq(f"gpu{o} pool_handle_types", d["capabilities"]["pool_handle_types"], names)
        flush = direct.attribute(o, 117)
        c.eq(f"gpu{o} gpudirect_rdma_flush_writes", d["capabilities"]["gpudirect_rdma_flush_writes"],
             None if flush is None else [n for bit, n in ((1, "host"), (2, "memops")) if flush & bit])
        order = direct.attribute(o, 118)
        c.eq(f"gpu{o} gpudirect_rdma_writes_ordering", d["capabilities"]["gpudirect_rdma_writes_ordering"],
             None if order is None else {0: "none", 100: "owner", 200: "all-devices"}.get(order, f"unknown ({order})"))
        for key, number in (("le_unicast", 153), ("le_multicast", 154), ("le_counted_ops", 155),
                            ("le_unicast_owner_access", 156)):
            v = direct.attribute(o, number)
            c.eq(f"gpu{o} {key}", d["capabilities"][key], None if v is None else bool(v))
        # Free memory moves; it must be below total and close to what a fresh context sees.
        c.true(f"gpu{o} free <= total", d["free_bytes"] is not None and d["free_bytes"] <= d["total_bytes"])
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
