"""GPU tier: `pool-stats`, `trim` and `create --pool` against what the driver says directly.

Pool statistics are per process, so the figures that depend on use (reserved, used) are compared with
the same workload run here, in this process, through cuda.bindings; the settings (release threshold,
reuse policies), the locations a device has and the granularity are read from the driver directly.
"""
import os
import stat
import sys

import direct

cu = direct.cu
MIB = 1 << 20
WORKLOAD = (64, 16 * MIB)  # 64x16MiB
KEEP_ALL = (1 << 64) - 1


def must(result, what):
    """The values of a driver call's result tuple; raises when the call failed."""
    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what}: {err}")
    return values[0] if len(values) == 1 else values


def attr(pool, name):
    value = must(cu.cuMemPoolGetAttribute(pool, getattr(cu.CUmemPool_attribute, name)), name)
    return int(value)


def location(kind, ident=0):
    loc = cu.CUmemLocation()
    loc.type = cu.CUmemLocationType(kind)
    loc.id = ident
    return loc


def default_pool(loc, managed=False):
    """The location's default pool, or None where the driver refuses it."""
    kind = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED if managed else \
        cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    err, pool = cu.cuMemGetDefaultMemPool(loc, kind)
    return pool if err == cu.CUresult.CUDA_SUCCESS else None


def direct_workload(pool, stream, threshold):
    """Runs 64x16MiB on `pool` here; returns reserved after alloc, after free and after sync."""
    must(cu.cuMemPoolSetAttribute(pool, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                  cu.cuuint64_t(threshold)), "set threshold")
    count, size = WORKLOAD
    ptrs = [must(cu.cuMemAllocFromPoolAsync(size, pool, stream), "alloc") for _ in range(count)]
    must(cu.cuStreamSynchronize(stream), "sync")
    after_alloc = attr(pool, "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT")
    for p in ptrs:
        must(cu.cuMemFreeAsync(p, stream), "free")
    after_free = attr(pool, "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT")
    must(cu.cuStreamSynchronize(stream), "sync")
    after_sync = attr(pool, "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT")
    must(cu.cuMemPoolSetAttribute(pool, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                  cu.cuuint64_t(0)), "reset threshold")
    must(cu.cuMemPoolTrimTo(pool, 0), "trim")
    return after_alloc, after_free, after_sync


def imex_channel_accessible():
    folder = "/dev/nvidia-caps-imex-channels"
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for n in names:
        p = os.path.join(folder, n)
        if n.startswith("channel") and stat.S_ISCHR(os.lstat(p).st_mode) and os.access(p, os.R_OK | os.W_OK):
            return True
    return False


def check_overview(c, binary, pool):
    code, doc, err = direct.cumemctl(binary, "pool-stats", "--device", "0")
    c.eq("pool-stats exit code", code, 0)
    if doc is None:
        print(err)
        return
    c.eq("statistics labelled per process", doc["results"]["statistics_scope"], "process")
    pools = doc["results"]["devices"][0]["pools"]
    dev = pools[0]
    c.eq("device pool available", dev["available"], True)
    for key, name in (("release_threshold_bytes", "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD"),
                      ("reuse_follow_event_dependencies", "CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES"),
                      ("reuse_allow_opportunistic", "CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC"),
                      ("reuse_allow_internal_dependencies", "CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES")):
        want = attr(pool, name)
        got = dev["default"]["attributes"][key]
        c.eq(f"device default pool {key}", got if key.startswith("release") else int(got), want)
    by_name = {(p["location"], p["allocation_type"]): p for p in pools}
    numa = direct.attribute(0, 134)
    pinned = [("host", 144, location(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST))]
    if numa is not None and numa >= 0:
        pinned.append((f"host-numa:{numa}", 142, location(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA, numa)))
    for name, number, loc in pinned:
        entry = by_name.get((name, "pinned"))
        supported = direct.attribute(0, number) == 1 and default_pool(loc) is not None
        c.eq(f"{name} pool reported", entry is not None and entry["available"], supported)
        if supported and entry is not None and entry["available"]:
            want = attr(default_pool(loc), "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD")
            c.eq(f"{name} default pool release threshold", entry["default"]["attributes"]["release_threshold_bytes"], want)
    for name, loc in (("none", location(0)), ("device", location(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE)),
                      ("host", location(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST))):
        entry = by_name.get((name, "managed"))
        c.eq(f"managed pool at {name} available", entry is not None and entry["available"],
             default_pool(loc, managed=True) is not None)


def check_exercise(c, binary, pool, stream):
    for label, args, threshold in (("threshold 0", [], 0), ("threshold max", ["--release-threshold", "max"], KEEP_ALL)):
        want_alloc, want_free, want_sync = direct_workload(pool, stream, threshold)
        code, doc, err = direct.cumemctl(binary, "pool-stats", "--device", "0", "--exercise", "64x16MiB", *args)
        c.eq(f"pool-stats --exercise ({label}) exit code", code, 0)
        if doc is None:
            print(err)
            continue
        ex = doc["results"]["devices"][0]["selected"]["exercise"]
        c.eq(f"{label}: reserved after alloc", ex["after_alloc"]["reserved_bytes"], want_alloc)
        c.true(f"{label}: reserved after alloc holds the workload", ex["after_alloc"]["reserved_bytes"] >= ex["bytes"])
        c.eq(f"{label}: reserved after free", ex["after_free"]["reserved_bytes"], want_free)
        c.eq(f"{label}: reserved after sync", ex["after_sync"]["reserved_bytes"], want_sync)
        c.eq(f"{label}: reserved high after sync", ex["after_sync"]["reserved_high_bytes"], want_alloc)
        c.eq(f"{label}: what the threshold implies holds", ex["threshold"]["holds"], True)


def check_trim(c, binary):
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location = location(cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE)
    granule = must(cu.cuMemGetAllocationGranularity(
        prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity")
    code, doc, err = direct.cumemctl(binary, "trim", "--device", "0")
    c.eq("trim exit code", code, 0)
    if doc is None:
        print(err)
        return
    d = doc["results"]["devices"][0]
    c.eq("trim granule", d["granule_bytes"], int(granule))
    c.eq("trim returned the memory", d["returned"], True)
    c.eq("trim: pool empty after cuMemPoolTrimTo(0)", d["reserved_after_bytes"], 0)
    c.true("trim: free memory back within a granule",
           d["device_free_after_trim_bytes"] + d["granule_bytes"] >= d["device_free_at_start_bytes"], d["reason"])
    print(f"  info  trim: {d['reserved_before_bytes']} bytes reserved, cuMemPoolTrimTo {d['trim_seconds'] * 1e3:.3f} ms")


def check_make_current(c, binary):
    code, doc, err = direct.cumemctl(binary, "pool-stats", "--device", "0", "--pool", "new", "--make-current")
    c.eq("pool-stats --make-current exit code", code, 0)
    if doc is None:
        print(err)
        return
    m = doc["results"]["devices"][0]["selected"]["make_current"]
    c.eq("new pool became current", m["now_current"], True)
    c.eq("plain cuMemAllocAsync drew from the new pool", m["draw"]["drew_from_new"], True)


def free_here():
    """The device's free memory, read in this process's context (made current by main)."""
    return must(cu.cuMemGetInfo(), "cuMemGetInfo")[0]


def check_ipc(c, binary):
    before = free_here()
    code, doc, err = direct.cumemctl(binary, "create", "--pool", "--device", "0", "--handle-type", "posix-fd",
                                     "--ipc-check", "--size", "1GiB")
    c.eq("free memory seen from here, after create --pool --ipc-check vs before", free_here(), before)
    c.eq("create --pool --ipc-check (posix-fd) exit code", code, 0)
    if doc is None or not doc["results"].get("devices"):
        print(err)
        return
    d = doc["results"]["devices"][0]
    c.eq("posix-fd IPC check passed", d["ipc_check"] and d["ipc_check"]["passed"], True)
    steps = {(s["process"], s["step"]): s for s in d["steps"]}
    read = steps.get(("importer", "read pattern"))
    c.eq("importer read the pattern", read is not None and read["ok"], True)
    stats = steps.get(("importer", "pool statistics"))
    print(f"  info  imported pool statistics: {stats and stats['detail']}")
    # Inside its own context the driver keeps about one granule after a pool IPC export until the context
    # goes (on the H200, driver 580.159.04: 2 MiB after a 64 MiB block, 2 MiB + 64 KiB after 1 GiB); from
    # here, after the process ended, free memory must be equal: that is the leak check.
    res = d["resources"] or {}
    delta = res.get("device_free_before_bytes", 0) - res.get("device_free_after_bytes", 0)
    print(f"  info  device free memory inside cumemctl (device-wide, not judged), before minus after: {delta} bytes")
    c.eq("cumemctl's verdict: balanced", res.get("balanced"), True)
    c.eq("no handle left unreleased", res.get("handles_not_released"), 0)
    c.eq("descriptors inside cumemctl as before", res.get("open_fds_after"), res.get("open_fds_before"))
    order = [(s["process"], s["step"]) for s in d["steps"]]
    c.true("importer freed before the exporter",
           ("importer", "free import") in order and ("exporter", "free") in order and
           order.index(("importer", "free import")) < order.index(("exporter", "free")))
    code, doc, err = direct.cumemctl(binary, "create", "--pool", "--device", "0", "--handle-type", "fabric", "--ipc-check",
                                     "--size", "64MiB")
    if imex_channel_accessible():
        c.eq("fabric IPC check with an IMEX channel: exit code", code, 0)
    else:
        c.eq("fabric IPC check without an IMEX channel: exit code (permission)", code, 4)
        if doc is not None and doc["errors"]:
            # Refused before the driver is asked (its refused export crashed the process on 580.159.04).
            c.true("fabric export refused with the IMEX diagnosis", "IMEX channel" in (doc["errors"][0].get("cause") or ""),
                   doc["errors"][0])


def main(binary):
    direct.init_or_skip()
    c = direct.Checker()
    ctx = must(cu.cuDevicePrimaryCtxRetain(0), "retain")
    must(cu.cuCtxSetCurrent(ctx), "set current")
    stream = must(cu.cuStreamCreate(1), "stream")
    pool = must(cu.cuDeviceGetDefaultMemPool(0), "default pool")
    try:
        check_overview(c, binary, pool)
        check_exercise(c, binary, pool, stream)
        check_trim(c, binary)
        check_make_current(c, binary)
        check_ipc(c, binary)
    finally:
        cu.cuStreamDestroy(stream)
        cu.cuCtxSetCurrent(cu.CUcontext(0))
        cu.cuDevicePrimaryCtxRelease(0)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
