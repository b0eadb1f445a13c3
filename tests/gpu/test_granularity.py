"""GPU tier: every row of `cumemctl granularity --json` equals what cuMemGetAllocationGranularity answers
directly (through cuda.bindings) for the same properties: the minimum and the recommended granularity,
or the same error; skipped host-NUMA rows only where the device has no NUMA node."""
import sys

import direct

cu = direct.cu
LOCATIONS = {"device": 1, "host": 2, "host-numa": 3}
HANDLE_TYPES = {"none": 0, "posix-fd": 1, "fabric": 8}
HOST_NUMA_ID = 134


def set_uchar(obj, name, value):
    """Sets an unsigned char field, which some cuda.bindings versions take as an int, others as bytes."""
    try:
        setattr(obj, name, value)
    except (TypeError, ValueError, OverflowError):
        setattr(obj, name, bytes([value]))


def prop_for(row):
    """The CUmemAllocationProp that the row describes."""
    kind, _, node = row["location"].partition(":")
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType(LOCATIONS[kind])
    prop.location.id = row["device"] if kind == "device" else int(node or 0)
    prop.requestedHandleTypes = cu.CUmemAllocationHandleType(HANDLE_TYPES[row["handle_type"]])
    flags = set(row["flags"])
    set_uchar(prop.allocFlags, "compressionType", 1 if "compression" in flags else 0)
    set_uchar(prop.allocFlags, "gpuDirectRDMACapable", 1 if "rdma" in flags else 0)
    prop.allocFlags.usage = 1 if "tile-pool" in flags else 0
    return prop


def direct_answer(prop):
    """(minimum, recommended, None) or (None, None, error name) as the driver answers."""
    got = []
    for option in (cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                   cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED):
        err, value = cu.cuMemGetAllocationGranularity(prop, option)
        if err != cu.CUresult.CUDA_SUCCESS:
            return None, None, err.name
        got.append(value)
    return got[0], got[1], None


def main(binary):
    count = direct.init_or_skip()
    c = direct.Checker()
    code, doc, err = direct.cumemctl(binary, "granularity", "--size", "12345")
    if doc is None:
        print(err)
        c.true("granularity gave JSON", False)
        c.done()
    c.eq("exit code", code, 0)
    rows = doc["results"]["rows"]
    c.eq("rows: devices x 3 locations x 3 handle types x 4 flag sets", len(rows), count * 36)
    for row in rows:
        what = f"gpu{row['device']} {row['location']} {row['handle_type']} {'+'.join(row['flags']) or 'none'}"
        if row["status"] == "skipped":
            numa = direct.attribute(row["device"], HOST_NUMA_ID)
            c.true(f"{what}: skipped, and the device's host NUMA id is {numa}", numa is None or numa < 0)
            continue
        if row["location"].startswith("host-numa:"):
            c.eq(f"{what}: the device's nearest node", int(row["location"].split(":")[1]),
                 direct.attribute(row["device"], HOST_NUMA_ID))
        minimum, recommended, error = direct_answer(prop_for(row))
        if error is None:
            c.eq(f"{what}: status", row["status"], "ok")
            c.eq(f"{what}: minimum", row["minimum_bytes"], minimum)
            c.eq(f"{what}: recommended", row["recommended_bytes"], recommended)
            c.eq(f"{what}: 12345 rounded to the minimum", row.get("size_rounded_to_minimum_bytes"),
                 (12345 + minimum - 1) // minimum * minimum)
        else:
            c.eq(f"{what}: status", row["status"], "refused")
            c.eq(f"{what}: error", row["problem"]["driver_call"]["name"], error)
            print(f"        why: {row['problem']['cause'] or row['problem']['message']}")
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
