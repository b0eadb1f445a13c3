"""GPU tier: `cumemctl create --access` and `create --pool --access` against the driver.

On any machine: `--access 0` (the owning device only) behaves like plain --map --verify, and device
0's access, as cumemctl reads it back, equals what cuMemGetAccess / cuMemPoolGetAccess say here for the
same kind of memory made the same way; a device past the count is refused (exit 3). Where the machine
has two or more GPUs: `create --device 1 --map --verify --access 0,1` and `create --pool --device 1
--access 0,1`, whose outcome (granted and checked from device 0, or refused before anything is made)
must follow cuDeviceCanAccessPeer(0, 1) as the driver answers it here. On one GPU that part is skipped
and the test says so."""
import sys

import direct

cu = direct.cu
SIZE = 64 << 20
RW = "read-write"


def must(result, what):
    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what}: {err}")
    return values[0] if len(values) == 1 else values


def location(dev):
    loc = cu.CUmemLocation()
    loc.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    loc.id = dev
    return loc


def flags_name(flags):
    return {0: "none", 1: "read", 3: RW}.get(int(flags), f"flags {int(flags)}")


def direct_mapping_access(dev):
    """cuMemCreate + map + cuMemSetAccess for `dev` here; what cuMemGetAccess then says for `dev`."""
    p = cu.CUmemAllocationProp()
    p.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    p.location = location(dev)
    gran = must(cu.cuMemGetAllocationGranularity(
        p, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity")
    handle = must(cu.cuMemCreate(gran, p, 0), "cuMemCreate")
    ptr = must(cu.cuMemAddressReserve(gran, gran, 0, 0), "cuMemAddressReserve")
    try:
        must(cu.cuMemMap(ptr, gran, 0, handle, 0), "cuMemMap")
        desc = cu.CUmemAccessDesc()
        desc.location = location(dev)
        desc.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        must(cu.cuMemSetAccess(ptr, gran, [desc], 1), "cuMemSetAccess")
        flags = must(cu.cuMemGetAccess(location(dev), ptr), "cuMemGetAccess")
        cu.cuMemUnmap(ptr, gran)
    finally:
        cu.cuMemAddressFree(ptr, gran)
        cu.cuMemRelease(handle)
    return flags_name(flags)


def direct_pool_access(dev):
    """A new pool on `dev` here; what cuMemPoolGetAccess says for `dev`."""
    props = cu.CUmemPoolProps()
    props.allocType = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    props.location = location(dev)
    pool = must(cu.cuMemPoolCreate(props), "cuMemPoolCreate")
    try:
        return flags_name(must(cu.cuMemPoolGetAccess(pool, location(dev)), "cuMemPoolGetAccess"))
    finally:
        cu.cuMemPoolDestroy(pool)


def step_names(doc):
    return [s["step"] for s in doc["results"]["steps"]]


def test_owner_only(c, binary):
    code, plain, _ = direct.cumemctl(binary, "create", "--size", "64MiB", "--map", "--verify")
    code_a, doc, err = direct.cumemctl(binary, "create", "--size", "64MiB", "--map", "--verify", "--access", "0")
    c.eq("create --access 0: exit", code_a, code)
    if doc is None:
        return c.true("create --access 0: JSON", False, err)
    r = doc["results"]
    c.eq("create --access 0: verify ok", r["verify"]["ok"], True)
    c.eq("create --access 0: bytes verified", r["verify"]["bytes"], SIZE)
    c.eq("create --access 0: steps are plain --map --verify's plus peer-access and read-access",
         [s for s in step_names(doc) if s not in ("peer-access", "read-access")], step_names(plain))
    c.eq("create --access 0: the list is checked first", step_names(doc)[:1], ["peer-access"])
    c.eq("create --access 0: device 0's access (cuMemGetAccess)",
         [(a["device"], a["access"], a["peer"]) for a in r["access"]], [(0, direct_mapping_access(0), False)])
    c.eq("create --access 0: no check from another device", r["peer_checks"], [])
    c.eq("create --access 0: resources balanced", r["resources"]["balanced"], True)

    code, doc, err = direct.cumemctl(binary, "create", "--pool", "--size", "64MiB", "--access", "0")
    c.eq("create --pool --access 0: exit", code, 0)
    if doc is None:
        return c.true("create --pool --access 0: JSON", False, err)
    d = doc["results"]["devices"][0]
    c.eq("create --pool --access 0: device 0's access (cuMemPoolGetAccess)",
         [(a["device"], a["access"]) for a in d["access"]], [(0, direct_pool_access(0))])
    c.eq("create --pool --access 0: no check from another device", d["checks"], [])


def test_past_count(c, binary, count):
    code, doc, _ = direct.cumemctl(binary, "create", "--size", "2MiB", "--map", "--access", str(count))
    c.eq(f"create --access {count} (cuDeviceGetCount = {count}): exit", code, 3)
    c.eq("  the error names the device", doc["errors"][0]["message"] if doc else None,
         f"device {count} does not exist")


def test_two_devices(c, binary):
    can = must(cu.cuDeviceCanAccessPeer(0, 1), "cuDeviceCanAccessPeer")
    print(f"  cuDeviceCanAccessPeer(0, 1) = {can}")
    code, doc, err = direct.cumemctl(binary, "create", "--device", "1", "--size", "64MiB", "--map", "--verify",
                                     "--access", "0,1")
    pool_code, pool_doc, pool_err = direct.cumemctl(binary, "create", "--pool", "--device", "1", "--size", "64MiB",
                                                    "--access", "0,1")
    if not can:
        want = "device 0 cannot access the memory of device 1 (cuDeviceCanAccessPeer: 0)"
        for what, co, dc in (("create", code, doc), ("create --pool", pool_code, pool_doc)):
            c.eq(f"{what} --device 1 --access 0,1 without peer access: exit", co, 3)
            c.eq(f"  {what}: the error names the pair", dc["errors"][0]["message"] if dc else None, want)
        return
    c.eq("create --device 1 --access 0,1: exit", code, 0)
    if doc is None:
        return c.true("create --device 1: JSON", False, err)
    r = doc["results"]
    c.eq("  access (device, access, peer)", [(a["device"], a["access"], a["peer"]) for a in r["access"]],
         [(1, RW, False), (0, RW, True)])
    c.eq("  checked from device 0", [(p["device"], p["ok"], p["bytes"]) for p in r["peer_checks"]],
         [(0, True, SIZE)])
    print(f"  check from device 0: {r['peer_checks'][0]['check_gbps']:.1f} GB/s over the peer link"
          if r["peer_checks"] else "")
    c.eq("  resources balanced", r["resources"]["balanced"], True)
    c.eq("create --pool --device 1 --access 0,1: exit", pool_code, 0)
    if pool_doc is None:
        return c.true("create --pool --device 1: JSON", False, pool_err)
    d = pool_doc["results"]["devices"][0]
    c.eq("  pool access (device, access, peer)", [(a["device"], a["access"], a["peer"]) for a in d["access"]],
         [(1, RW, False), (0, RW, True)])
    c.eq("  block checked from device 0", [(k["device"], k["ok"]) for k in d["checks"]], [(0, True)])


def main(binary):
    count = direct.init_or_skip()
    ctx = must(cu.cuDevicePrimaryCtxRetain(0), "cuDevicePrimaryCtxRetain")
    must(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    c = direct.Checker()
    print("-- test_owner_only")
    test_owner_only(c, binary)
    print("-- test_past_count")
    test_past_count(c, binary, count)
    if count >= 2:
        print("-- test_two_devices")
        test_two_devices(c, binary)
    else:
        print(f"-- test_two_devices: skipped: this machine has {count} GPU (cuDeviceGetCount); "
              "create --device 1 --access 0,1 needs two")
    cu.cuDevicePrimaryCtxRelease(0)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
