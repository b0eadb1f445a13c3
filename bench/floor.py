"""What a user would write instead of cumemctl: the same driver queries as `cumemctl devices --json` and
`cumemctl granularity --json` (and as bench_floor), through NVIDIA's cuda.bindings. The benchmark
(bench/run.sh) times it whole, interpreter start and import included, as a user would pay it.

    python3 floor.py devices [--no-free]
    python3 floor.py granularity
"""
import json
import sys

from cuda.bindings import driver as cu

SUCCESS = cu.CUresult.CUDA_SUCCESS
INVALID_VALUE = cu.CUresult.CUDA_ERROR_INVALID_VALUE

# The attributes `devices` reports, in its order (src/gpu/device/devices.cpp); 153-156 are CUDA 13.3's.
CAPABILITY_ATTRIBUTES = (102, 115, 119, 103, 128, 110, 107, 134, 145, 141, 144, 142, 132, 153, 154, 155, 156)
CC_MAJOR, CC_MINOR, HOST_NUMA_ID = 75, 76, 134


def num(value):
    """An enum member or a plain number as an int."""
    return int(getattr(value, "value", value))


def text(value):
    """A C string the bindings return (bytes, NUL-padded, or str) as str."""
    return value.split(b"\0")[0].decode() if isinstance(value, bytes) else str(value).split("\0")[0]


def check(result, what):
    """The values of a cuda.bindings call, or exit 1 naming the call and its error."""
    err, *values = result
    if err != SUCCESS:
        sys.exit(f"floor.py: {what}: {err}")
    return values[0] if len(values) == 1 else values


def init():
    """The driver version (every cumemctl report names it), cuInit and the device count, as
    cumemctl's Driver::load and Driver::init."""
    version = check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
    (err,) = cu.cuInit(0)
    if err == cu.CUresult.CUDA_ERROR_NO_DEVICE:
        return version, 0
    check((err,), "cuInit")
    return version, check(cu.cuDeviceGetCount(), "cuDeviceGetCount")


def attribute(dev, number):
    """An attribute's value, or None where the driver refuses it as unknown."""
    err, value = cu.cuDeviceGetAttribute(cu.CUdevice_attribute(number), dev)
    if err == INVALID_VALUE:
        return None
    check((err, value), "cuDeviceGetAttribute")
    return value


def free_bytes(dev):
    """Free memory through the primary context, released again; None where it cannot be had."""
    err, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    if err != SUCCESS:
        return None
    (err,) = cu.cuCtxSetCurrent(ctx)
    free = None
    if err == SUCCESS:
        err, free, _ = cu.cuMemGetInfo()
    cu.cuCtxSetCurrent(None)
    cu.cuDevicePrimaryCtxRelease(dev)
    return free if err == SUCCESS else None


def device(ordinal, with_free):
    """One device's answers."""
    dev = check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
    name = text(check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName"))
    err, uuid = cu.cuDeviceGetUuid(dev)
    h = bytes(uuid.bytes).hex() if err == SUCCESS else ""
    err, bus = cu.cuDeviceGetPCIBusId(32, dev)
    total = check(cu.cuDeviceTotalMem(dev), "cuDeviceTotalMem")
    return {
        "ordinal": ordinal,
        "name": name,
        "uuid": f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" if h else "",
        "pci_bus_id": text(bus) if err == SUCCESS else "",
        "compute_capability": f"{attribute(dev, CC_MAJOR)}.{attribute(dev, CC_MINOR)}",
        "total_bytes": total,
        "attributes": [attribute(dev, a) for a in CAPABILITY_ATTRIBUTES],
        "free_bytes": free_bytes(dev) if with_free else None,
    }


def devices(with_free):
    """What `cumemctl devices --json` answers: driver version, device count, each device."""
    version, count = init()
    return {"driver_version": version, "device_count": count,
            "devices": [device(i, with_free) for i in range(count)]}


def granularity_rows(ordinal):
    """Location x handle type x flag set, minimum and recommended, as bench_floor asks them."""
    dev = check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
    numa = attribute(dev, HOST_NUMA_ID)
    T = cu.CUmemLocationType
    locations = [(T.CU_MEM_LOCATION_TYPE_DEVICE, ordinal), (T.CU_MEM_LOCATION_TYPE_HOST, 0)]
    if numa is not None and numa >= 0:
        locations.append((T.CU_MEM_LOCATION_TYPE_HOST_NUMA, numa))
    H = cu.CUmemAllocationHandleType
    handle_types = (H.CU_MEM_HANDLE_TYPE_NONE, H.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                    H.CU_MEM_HANDLE_TYPE_FABRIC)
    G = cu.CUmemAllocationGranularity_flags
    rows = []
    for loc_type, loc_id in locations:
        for ht in handle_types:
            for flag in range(4):
                prop = cu.CUmemAllocationProp()
                prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
                prop.location.type = loc_type
                prop.location.id = loc_id
                prop.requestedHandleTypes = ht
                if flag == 1:
                    prop.allocFlags.compressionType = 1  # CU_MEM_ALLOCATION_COMP_GENERIC
                elif flag == 2:
                    prop.allocFlags.gpuDirectRDMACapable = 1
                elif flag == 3:
                    prop.allocFlags.usage = 1  # CU_MEM_CREATE_USAGE_TILE_POOL
                row = {"device": ordinal, "location": num(loc_type), "id": loc_id, "handle_type": num(ht),
                       "flag": flag}
                for key, option in (("minimum_bytes", G.CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                                    ("recommended_bytes", G.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)):
                    err, g = cu.cuMemGetAllocationGranularity(prop, option)
                    row[key] = int(g) if err == SUCCESS else None
                rows.append(row)
    return rows


def granularity():
    """What `cumemctl granularity --json` answers: every combination on every device."""
    version, count = init()
    return {"driver_version": version, "device_count": count,
            "rows": [r for i in range(count) for r in granularity_rows(i)]}


def main(argv):
    """Runs the mode argv names and prints its JSON document."""
    if len(argv) < 2 or argv[1] not in ("devices", "granularity"):
        sys.exit("usage: floor.py devices [--no-free] | floor.py granularity")
    doc = devices("--no-free" not in argv) if argv[1] == "devices" else granularity()
    print(json.dumps(doc))


if __name__ == "__main__":
    main(sys.argv)
