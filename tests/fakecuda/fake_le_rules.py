#!/usr/bin/python3
"""The fake driver's logical endpoint rules that cumemctl, which follows them, never breaks: called
straight through ctypes so that the fake is seen to refuse what the driver refuses. Run as
`fake_le_rules.py LIBFAKECUDA` with FAKECUDA_PROFILE naming the gb200x4 profile; exit 0 when every rule
holds, 1 with the broken ones listed."""
import ctypes
import sys

SUCCESS, INVALID_VALUE, OUT_OF_MEMORY = 0, 1, 2
MiB = 1 << 20
UNICAST, MULTICAST = 1, 2
LOC_DEVICE, LOC_HOST_NUMA = 1, 3


class Prop(ctypes.Structure):
    """CUlogicalEndpointProp (24 bytes): type, union {device | numDevices}, size, ipcHandleTypes, flags."""
    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int), ("size", ctypes.c_uint64),
                ("ipc", ctypes.c_uint), ("flags", ctypes.c_uint)]


class MemProp(ctypes.Structure):
    """CUmemAllocationProp: type, handle types, location {type, id}, win32 metadata, allocFlags."""
    _fields_ = [("type", ctypes.c_int), ("handles", ctypes.c_int), ("loc_type", ctypes.c_int),
                ("loc_id", ctypes.c_int), ("win32", ctypes.c_void_p), ("flags", ctypes.c_uint8 * 8)]


class Fake:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.failed = []
        assert self.lib.cuInit(0) == SUCCESS

    def expect(self, what, got, want):
        print(f"  {'ok  ' if got == want else 'FAIL'}  {what}: {got} (want {want})")
        if got != want:
            self.failed.append(what)

    def reserve(self, count):
        base = ctypes.c_uint32()
        assert self.lib.cuLogicalEndpointIdReserve(ctypes.byref(base), count) == SUCCESS
        return base.value

    def create(self, le_id, kind, dev_or_count, size=4 * MiB):
        return self.lib.cuLogicalEndpointCreate(le_id, ctypes.byref(Prop(kind, dev_or_count, size, 0, 0)))

    def query(self, le_id):
        status = ctypes.c_int()
        assert self.lib.cuLogicalEndpointQuery(le_id, 1, ctypes.byref(status)) == SUCCESS
        return status.value

    def memory(self, loc_type, loc_id, size=4 * MiB):
        handle = ctypes.c_uint64()
        prop = MemProp(1, 0, loc_type, loc_id, None)
        assert self.lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop), 0) == SUCCESS
        return handle.value

    def bind(self, le_id, dev, offset, handle, mem_offset, size):
        return self.lib.cuLogicalEndpointBindMem(le_id, dev, ctypes.c_uint64(offset), ctypes.c_uint64(handle),
                                                 ctypes.c_uint64(mem_offset), ctypes.c_uint64(size),
                                                 ctypes.c_ulonglong(0))

    def unbind(self, le_id, dev, offset, size):
        return self.lib.cuLogicalEndpointUnbind(le_id, dev, ctypes.c_uint64(offset), ctypes.c_uint64(size))


def ids(f):
    base = f.reserve(2)
    f.expect("create on an ID that was never reserved", f.create(base + 5, UNICAST, 0), INVALID_VALUE)
    f.expect("create", f.create(base, UNICAST, 0), SUCCESS)
    f.expect("create twice on one ID", f.create(base, UNICAST, 0), INVALID_VALUE)
    f.expect("release a range that still has an endpoint", f.lib.cuLogicalEndpointIdRelease(base, 2), INVALID_VALUE)
    f.expect("destroy", f.lib.cuLogicalEndpointDestroy(base), SUCCESS)
    f.expect("release the range", f.lib.cuLogicalEndpointIdRelease(base, 2), SUCCESS)
    f.expect("release it again", f.lib.cuLogicalEndpointIdRelease(base, 2), INVALID_VALUE)
    f.expect("create with a size no multiple of the alignment", f.create(f.reserve(1), UNICAST, 0, 3 * MiB),
             INVALID_VALUE)


def unicast(f):
    le_id = f.reserve(1)
    f.create(le_id, UNICAST, 0)
    mem = f.memory(LOC_DEVICE, 0)
    f.expect("bind before construction completed", f.bind(le_id, 0, 0, mem, 0, 2 * MiB), INVALID_VALUE)
    f.expect("first query: not constructed", f.query(le_id), 0)
    f.expect("second query: constructed", f.query(le_id), 1)
    f.expect("bind on a device that is not the owner", f.bind(le_id, 1, 0, mem, 0, 2 * MiB), INVALID_VALUE)
    f.expect("bind at a misaligned offset", f.bind(le_id, 0, MiB, mem, 0, 2 * MiB), INVALID_VALUE)
    f.expect("bind past the allocation", f.bind(le_id, 0, 0, mem, 2 * MiB, 4 * MiB), INVALID_VALUE)
    f.expect("bind past the endpoint", f.bind(le_id, 0, 2 * MiB, mem, 0, 4 * MiB), INVALID_VALUE)
    f.expect("bind memory of another device", f.bind(le_id, 0, 0, f.memory(LOC_DEVICE, 1), 0, 2 * MiB), INVALID_VALUE)
    f.expect("bind host-NUMA memory of a node not closest (GPU 0 is near node 0)",
             f.bind(le_id, 0, 0, f.memory(LOC_HOST_NUMA, 1), 0, 2 * MiB), INVALID_VALUE)
    f.expect("bind host-NUMA memory of the closest node", f.bind(le_id, 0, 0, f.memory(LOC_HOST_NUMA, 0), 0, 2 * MiB),
             SUCCESS)
    f.expect("bind over an existing binding", f.bind(le_id, 0, 0, mem, 0, 2 * MiB), INVALID_VALUE)
    f.expect("bind the second half", f.bind(le_id, 0, 2 * MiB, mem, 0, 2 * MiB), SUCCESS)
    f.expect("destroy while bound", f.lib.cuLogicalEndpointDestroy(le_id), INVALID_VALUE)
    f.expect("unbind part of a binding", f.unbind(le_id, 0, 0, 4 * MiB + 2 * MiB), INVALID_VALUE)
    f.expect("unbind both bindings at once", f.unbind(le_id, 0, 0, 4 * MiB), SUCCESS)
    f.expect("destroy once unbound", f.lib.cuLogicalEndpointDestroy(le_id), SUCCESS)


def multicast(f):
    le_id = f.reserve(1)
    f.expect("create a team of 2", f.create(le_id, MULTICAST, 2), SUCCESS)
    f.expect("add device 0", f.lib.cuLogicalEndpointAddDevice(le_id, 0), SUCCESS)
    f.expect("add device 0 again", f.lib.cuLogicalEndpointAddDevice(le_id, 0), INVALID_VALUE)
    f.expect("query with the team incomplete", f.query(le_id), 0)
    f.expect("query again, still incomplete", f.query(le_id), 0)
    f.expect("add device 2", f.lib.cuLogicalEndpointAddDevice(le_id, 2), SUCCESS)
    f.expect("add a third to a team of 2", f.lib.cuLogicalEndpointAddDevice(le_id, 3), INVALID_VALUE)
    f.query(le_id)
    f.expect("constructed after the team is complete", f.query(le_id), 1)
    f.expect("bind on a device that was not added", f.bind(le_id, 1, 0, f.memory(LOC_DEVICE, 1), 0, 2 * MiB),
             INVALID_VALUE)
    f.expect("bind on an added device", f.bind(le_id, 2, 0, f.memory(LOC_DEVICE, 2), 0, 2 * MiB), SUCCESS)


def bind_resources(f):
    le_id = f.reserve(1)
    f.create(le_id, UNICAST, 3, 64 * 2 * MiB + 2 * MiB)
    f.query(le_id)
    f.query(le_id)
    mem = f.memory(LOC_DEVICE, 3, 2 * MiB)
    results = [f.bind(le_id, 3, i * 2 * MiB, mem, 0, 2 * MiB) for i in range(65)]
    f.expect("64 binds use up the bind resources of a device", results[:64], [SUCCESS] * 64)
    f.expect("the 65th is out of bind resources", results[64], OUT_OF_MEMORY)


def main(path):
    f = Fake(path)
    for check in (ids, unicast, multicast, bind_resources):
        print(check.__name__)
        check(f)
    print(f"{len(f.failed)} failed")
    return 1 if f.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
