"""GPU tier: `cumemctl create` on the real driver. 1 GiB mapped and verified on the device (bandwidth
reported); a POSIX-fd handle exported and checked by a second process; a fabric handle, which fails with
the IMEX diagnosis while no channel node exists and passes export and import once one does (the test
accepts both and says which it saw); host and host-NUMA allocations mapped and verified; sizes that
are not a multiple of the granularity refused; what was granted compared with the driver's own answer;
and no leak: free memory and descriptors equal before and after, inside cumemctl and seen from here."""
import os
import stat
import sys

import direct

cu = direct.cu
IMEX_DIR = "/dev/nvidia-caps-imex-channels"
HOST_NUMA_ID, HOST_VMM, HOST_NUMA_VMM = 134, 145, 141


def check(err, what):
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what}: {err.name}")


def free_memory():
    """The device's free memory, read in this process's context (made current by main)."""
    err, free, _ = cu.cuMemGetInfo()
    check(err, "cuMemGetInfo")
    return free


def prop(location_type=1, location_id=0, handle_types=0, compression=False):
    p = cu.CUmemAllocationProp()
    p.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    p.location.type = cu.CUmemLocationType(location_type)
    p.location.id = location_id
    p.requestedHandleTypes = cu.CUmemAllocationHandleType(handle_types)
    if compression:
        try:
            p.allocFlags.compressionType = 1
        except (TypeError, ValueError, OverflowError):
            p.allocFlags.compressionType = bytes([1])
    return p


def direct_create(p, size):
    """cuMemCreate here: (result name, granted properties or None); the allocation is released again."""
    err, handle = cu.cuMemCreate(size, p, 0)
    if err != cu.CUresult.CUDA_SUCCESS:
        return err.name, None
    err, granted = cu.cuMemGetAllocationPropertiesFromHandle(handle)
    cu.cuMemRelease(handle)
    return "CUDA_SUCCESS", granted


def as_int(value):
    return value[0] if isinstance(value, (bytes, bytearray)) else int(value)


def channel_state():
    """('accessible', node) / ('none', why): whether this process can open an IMEX channel node."""
    if not os.path.isdir(IMEX_DIR):
        return "none", f"{IMEX_DIR} does not exist"
    for name in sorted(os.listdir(IMEX_DIR)):
        path = os.path.join(IMEX_DIR, name)
        if name.startswith("channel") and stat.S_ISCHR(os.lstat(path).st_mode) and os.access(path, os.R_OK | os.W_OK):
            return "accessible", path
    return "none", f"{IMEX_DIR} holds no channel node this process can open"


class Run:
    """One cumemctl create, with the leak checks every run gets."""

    def __init__(self, c, binary, name, *args):
        before = free_memory()
        self.code, self.doc, self.err = direct.cumemctl(binary, "create", *args)
        after = free_memory()
        self.name = name
        self.results = (self.doc or {}).get("results", {})
        c.true(f"{name}: valid JSON", self.doc is not None, self.err)
        c.eq(f"{name}: free memory seen from here, after vs before", after, before)
        res = self.results.get("resources") or {}
        if res:
            # Inside its own context the driver keeps a little bookkeeping (one granule on two H200s) until
            # the context goes, and other processes move device free memory: cumemctl shows it, labelled
            # device-wide, and judges only what it made and released (descriptors, handles).
            print(f"        device free memory in cumemctl, after - before: {res.get('device_free_delta_bytes')}")
            c.eq(f"{name}: cumemctl's verdict: balanced", res.get("balanced"), True)
            c.eq(f"{name}: no handle left unreleased", res.get("handles_not_released"), 0)
            c.eq(f"{name}: descriptors in cumemctl, after vs before", res.get("open_fds_after"), res["open_fds_before"])
            if res.get("new_fds"):
                print(f"        new descriptors: {res['new_fds']}")

    def errors(self):
        return (self.doc or {}).get("errors", [])


def test_verify_1gib(c, binary, dev):
    r = Run(c, binary, "1 GiB --map --verify", "--size", "1GiB", "--device", str(dev), "--map", "--verify")
    c.eq("1 GiB: exit code", r.code, 0)
    v = r.results.get("verify") or {}
    c.eq("1 GiB: bytes verified", v.get("bytes"), 1 << 30)
    c.eq("1 GiB: mismatches", v.get("mismatches"), 0)
    c.true("1 GiB: fill and check bandwidth reported", v.get("fill_gbps", 0) > 0 and v.get("check_gbps", 0) > 0)
    print(f"        fill {v.get('fill_gbps', 0):.0f} GB/s, check {v.get('check_gbps', 0):.0f} GB/s")
    for s in r.results.get("steps", []):
        print(f"        step {s['step']:<13} {s['call']:<40} {s['seconds'] * 1e3:9.3f} ms")
    err, gran = cu.cuMemGetAllocationGranularity(prop(1, dev), cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    c.eq("1 GiB: minimum granularity", (r.results.get("granularity") or {}).get("minimum_bytes"), gran)
    c.eq("1 GiB: granted location", (r.results.get("granted") or {}).get("location"), "device")


def test_bad_size(c, binary, dev):
    r = Run(c, binary, "12345 bytes", "--size", "12345", "--device", str(dev))
    c.eq("12345 bytes: exit code", r.code, 2)
    c.true("12345 bytes: refused before cuMemCreate",
           all(s["call"] != "cuMemCreate" for s in r.results.get("steps", [])))
    err, gran = cu.cuMemGetAllocationGranularity(prop(1, dev), cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    c.true("12345 bytes: the granularity is named", str(gran) in ((r.errors() or [{}])[0].get("cause") or ""),
           str(r.errors()))
    r = Run(c, binary, "12345 --round-up", "--size", "12345", "--round-up", "--device", str(dev))
    c.eq("12345 --round-up: exit code", r.code, 0)
    c.eq("12345 --round-up: size", r.results.get("size_bytes"), gran)


def test_posix_fd(c, binary, dev):
    r = Run(c, binary, "posix-fd --import-check", "--size", "64MiB", "--device", str(dev), "--handle-type", "posix-fd",
            "--verify", "--export", "--import-check")
    c.eq("posix-fd: exit code", r.code, 0)
    c.true("posix-fd: a descriptor was exported", isinstance((r.results.get("export") or {}).get("fd"), int))
    ic = r.results.get("import_check") or {}
    c.eq("posix-fd: the second process found the pattern", ic.get("ok"), True)
    c.eq("posix-fd: the second process's mismatches", (ic.get("check") or {}).get("mismatches"), 0)
    c.true("posix-fd: the second process is another process", ic.get("pid") not in (None, 0, os.getpid()))
    if not ic.get("ok"):
        print(f"        {r.errors()}")


def test_fabric(c, binary, dev):
    state, detail = channel_state()
    result, _ = direct_create(prop(1, dev, 8), 2 << 20)
    print(f"        IMEX channel: {state} ({detail}); direct cuMemCreate(FABRIC): {result}")
    r = Run(c, binary, f"fabric ({state})", "--size", "2MiB", "--device", str(dev), "--handle-type", "fabric",
            "--import-check")
    if result == "CUDA_ERROR_NOT_PERMITTED":
        c.eq("fabric without a usable channel: exit code", r.code, 4)
        e = (r.errors() or [{}])[0]
        c.eq("fabric without a usable channel: the driver's error", (e.get("driver_call") or {}).get("name"), result)
        c.true("fabric without a usable channel: the cause names the channel folder", IMEX_DIR in (e.get("cause") or ""),
               e.get("cause"))
        c.true("fabric without a usable channel: the remedy is imex-setup", "cumemctl imex-setup" in (e.get("remedy") or ""))
        print(f"        cause: {e.get('cause')}\n        remedy: {e.get('remedy')}")
    else:
        c.eq("fabric with a channel: direct cuMemCreate", result, "CUDA_SUCCESS")
        c.eq("fabric with a channel: exit code", r.code, 0)
        c.eq("fabric with a channel: 64-byte handle as hex", len((r.results.get("export") or {}).get("fabric_handle", "")), 128)
        c.eq("fabric with a channel: the second process found the pattern", (r.results.get("import_check") or {}).get("ok"), True)


def granted_name(granted):
    """The granted location as cumemctl names it: device, host or host-numa:N."""
    kind = int(granted.location.type)
    return {1: "device", 2: "host"}.get(kind, f"host-numa:{granted.location.id}" if kind == 3 else f"type-{kind}")


def test_host(c, binary, dev):
    numa = direct.attribute(dev, HOST_NUMA_ID)
    cases = [("host", HOST_VMM, 2, 0), ("host-numa", HOST_NUMA_VMM, 3, numa)]
    for location, attribute, location_type, location_id in cases:
        if direct.attribute(dev, attribute) != 1 or (location == "host-numa" and (numa is None or numa < 0)):
            print(f"        skip {location}: attribute {attribute} is {direct.attribute(dev, attribute)}, NUMA id {numa}")
            continue
        # What the driver grants for this request, asked directly (a host request comes back as the
        # host NUMA node on this driver).
        result, direct_granted = direct_create(prop(location_type, location_id), 2 << 20)
        granted = granted_name(direct_granted) if direct_granted is not None else result
        r = Run(c, binary, f"{location} --verify", "--size", "256MiB", "--device", str(dev), "--location", location, "--verify")
        c.eq(f"{location}: exit code", r.code, 0)
        c.eq(f"{location}: granted", (r.results.get("granted") or {}).get("location"), granted)
        v = r.results.get("verify") or {}
        c.eq(f"{location}: mismatches", v.get("mismatches"), 0)
        print(f"        {location}: fill {v.get('fill_gbps', 0):.1f} GB/s, check {v.get('check_gbps', 0):.1f} GB/s")


def test_compression_granted(c, binary, dev):
    result, granted = direct_create(prop(1, dev, compression=True), 2 << 20)
    r = Run(c, binary, "compression", "--size", "2MiB", "--device", str(dev), "--compression")
    if granted is None:
        c.eq("compression: refused as the driver refuses it",
             ((r.errors() or [{}])[0].get("driver_call") or {}).get("name"), result)
        return
    c.eq("compression: exit code", r.code, 0)
    c.eq("compression: granted as the driver grants it", (r.results.get("granted") or {}).get("compression"),
         as_int(granted.allocFlags.compressionType) == 1)


def main(binary):
    direct.init_or_skip()
    dev = 0
    err, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    check(err, "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx)[0], "cuCtxSetCurrent")
    c = direct.Checker()
    for test in (test_verify_1gib, test_bad_size, test_posix_fd, test_fabric, test_host, test_compression_granted):
        print(f"-- {test.__name__}")
        test(c, binary, dev)
    cu.cuDevicePrimaryCtxRelease(dev)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
