"""GPU tier: `cumemctl doctor` on the real driver. Its answers are compared with direct driver
queries (cuda.bindings), its prediction for fabric handles with what cuMemCreate(FABRIC) really does,
its Prometheus output is parsed with prometheus_client where that is installed, and its time is
measured (the target is under 2 s on one H200)."""
import ctypes
import json
import re
import subprocess
import sys
import time

import direct

cu = direct.cu
FABRIC = 8


def fabric_create_result(ordinal):
    """What cuMemCreate of 2 MiB with a fabric handle returns on this device, as a name."""
    err, ctx = cu.cuDevicePrimaryCtxRetain(ordinal)
    if not direct.ok(err):
        return f"retain: {err}"
    cu.cuCtxSetCurrent(ctx)
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = ordinal
    prop.requestedHandleTypes = cu.CUmemAllocationHandleType(FABRIC)
    err, handle = cu.cuMemCreate(2 << 20, prop, 0)
    if direct.ok(err):
        cu.cuMemRelease(handle)
    cu.cuCtxSetCurrent(cu.CUcontext(0))
    cu.cuDevicePrimaryCtxRelease(ordinal)
    return err.name


LE_ENTRY_POINTS = ("cuLogicalEndpointIdReserve", "cuLogicalEndpointCreate", "cuLogicalEndpointQuery",
                   "cuLogicalEndpointBindMem", "cuLogicalEndpointDestroy")


def le_entry_points_found():
    """Whether the driver's cuGetProcAddress_v2, asked at CUDA 13.3 as cumemctl asks, has every logical
    endpoint entry point that doctor's check needs (through ctypes: an independent reader)."""
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuGetProcAddress_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                        ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
    for name in LE_ENTRY_POINTS:
        fn, status = ctypes.c_void_p(), ctypes.c_int(-1)
        if lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(fn), 13030, 0, ctypes.byref(status)) != 0 \
                or not fn.value:
            return False
    return True


def expected_le_status(ordinal):
    """doctor's logical-endpoints status as the driver's own answers predict it: skip without the unicast
    and multicast attributes (153, 154), pass where every entry point resolves, warn otherwise."""
    unicast, multicast = direct.attribute(ordinal, 153), direct.attribute(ordinal, 154)
    if not unicast and not multicast:
        return "skip"
    return "pass" if le_entry_points_found() else "warn"


def main(binary):
    count = direct.init_or_skip()
    c = direct.Checker()
    start = time.monotonic()
    r = subprocess.run([binary, "doctor", "--json"], capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - start
    print(f"  doctor took {wall:.3f} s wall clock (exit {r.returncode})")
    print("  " + r.stderr.replace("\n", "\n  "))
    doc = json.loads(r.stdout)
    direct.check_schema(doc, "cumemctl doctor")
    checks = {(x["check"], x["device"]): x for x in doc["results"]["checks"]}
    for x in doc["results"]["checks"]:
        print(f"  {x['status']:5} {x['check']:18} {x['device'] if x['device'] is not None else '-':>2} "
              f"{x['seconds']:.3f}s  {x['reason']}")
    c.true("doctor under 2 s", wall < 2.0, f"took {wall:.3f} s")
    c.eq("exit code matches the failures", r.returncode, 1 if doc["results"]["summary"]["fail"] else 0)
    c.eq("no check failed", doc["results"]["summary"]["fail"], 0)
    err, version = cu.cuDriverGetVersion()
    c.eq("driver version", checks[("driver", None)]["details"]["cuda_version"], version)
    c.eq("device count", doc["results"]["device_count"], count)
    # Every GPU in CUDA's view as in NVML's and the kernel's; peer access on several GPUs.
    c.eq(f"inventory ({checks[('inventory', None)]['reason']})", checks[("inventory", None)]["status"], "pass")
    peer = checks[("peer-access", None)]
    c.true(f"peer-access ({peer['reason']})", peer["status"] in (("pass", "skip") if count > 1 else ("skip",)))
    c.eq("no check busy or out of time", doc["results"]["summary"]["busy"] + doc["results"]["summary"]["timeout"], 0)
    for o in range(count):
        cap = checks[("capabilities", o)]["details"]
        err, total = cu.cuDeviceTotalMem(o)
        c.eq(f"gpu{o} total", cap["total_bytes"], total)
        c.eq(f"gpu{o} context check", checks[("context", o)]["status"], "pass")
        for key, number in (("vmm", 102), ("memory_pools", 115), ("fabric", 128), ("multicast", 132)):
            v = direct.attribute(o, number)
            c.eq(f"gpu{o} {key}", cap["capabilities"][key], None if v is None else bool(v))
        for check in ("vmm", "posix-fd-ipc", "pool-trim", "ipc-pool"):
            c.eq(f"gpu{o} {check} ({checks[(check, o)]['reason']})", checks[(check, o)]["status"], "pass")
        host = checks[("host-alloc", o)]
        host_vmm, numa_vmm, numa_id = direct.attribute(o, 145), direct.attribute(o, 141), direct.attribute(o, 134)
        c.eq(f"gpu{o} host-alloc ({host['reason']})", host["status"], "pass" if host_vmm or numa_vmm else "skip")
        if host["status"] == "pass":
            c.eq(f"gpu{o} host-alloc checked host-numa exactly where the device has it",
                 "host_numa" in host["details"], bool(numa_vmm) and numa_id is not None and numa_id >= 0)
        le = checks[("logical-endpoints", o)]
        c.eq(f"gpu{o} logical endpoints status ({le['reason']})", le["status"], expected_le_status(o))
        # The device's importer was started ahead (at doctor's start where NVML names the GPUs), saw only
        # this GPU, by its UUID, and served both IPC checks: one process.
        uuid = cap["uuid"]
        steps = checks[("ipc-pool", o)]["details"]["steps"]
        start = [x for x in steps if x["step"] == "start importer"]
        c.true(f"gpu{o} ipc-pool's importer was started ahead", bool(start) and start[0]["detail"].endswith(
            "started ahead"), start and start[0]["detail"])
        ctx = [x for x in steps if x["process"] == "importer" and x["step"] == "context"]
        c.true(f"gpu{o} ipc-pool's importer saw only {uuid}", bool(ctx) and f"CUDA_VISIBLE_DEVICES={uuid}" in
               ctx[0]["detail"], ctx and ctx[0]["detail"])
        fd_importer = checks[("posix-fd-ipc", o)]["details"]["importer"]
        c.true(f"gpu{o} ipc-pool used posix-fd-ipc's importer (pid {fd_importer['pid']})",
               bool(start) and f"pid {fd_importer['pid']}," in start[0]["detail"], start and start[0]["detail"])
        importer = fd_importer["steps"]
        c.eq(f"gpu{o} posix-fd-ipc's importer made its context before the handle came",
             [x["step"] for x in importer[:3]], ["init", "context", "receive"])
        print(f"  gpu{o} posix-fd-ipc importer: init {importer[0]['seconds']:.3f}s, context "
              f"{importer[1]['seconds']:.3f}s, waited for the handle {importer[2]['seconds']:.3f}s")
        # This process's memory from NVML: evidence beside the verdict (unavailable in a container without the
        # host's PID namespace, and then said so).
        memory = checks[("vmm", o)]["details"].get("process_memory")
        print(f"  gpu{o} vmm process_memory: {memory}")
        c.true(f"gpu{o} vmm carries NVML's count of this process or why not",
               memory is not None and ("delta_bytes" in memory or "unavailable" in memory), memory)
        unicast = direct.attribute(o, 153)
        c.eq(f"gpu{o} logical endpoints: unicast", le["details"]["unicast"],
             None if unicast is None else bool(unicast))
    imex = checks[("imex-channels", None)]
    if direct.attribute(0, 128):
        real = fabric_create_result(0)
        print(f"  cuMemCreate(FABRIC) on gpu0: {real}; doctor's imex-channels: {imex['status']}: {imex['reason']}")
        fabric = checks[("fabric-alloc", 0)]
        print(f"  doctor's fabric-alloc on gpu0: {fabric['status']}: {fabric['reason']}")
        if real == "CUDA_ERROR_NOT_PERMITTED":
            c.eq("fabric-alloc warns when fabric handles are refused", fabric["status"], "warn")
            c.true("fabric-alloc names the remedy", "imex-setup" in (fabric["remedy"] or ""), fabric["remedy"])
            c.true("doctor does not pass imex-channels when fabric handles are refused", imex["status"] != "pass")
            c.true("and names the remedy", "imex-setup" in (imex["remedy"] or "") or "chown" in (imex["remedy"] or ""), imex["remedy"])
        else:
            c.eq(f"fabric handles work: fabric-alloc passes ({fabric['reason']})", fabric["status"], "pass")
            c.eq("fabric handles work: imex-channels is not a failure", imex["status"] in ("pass", "warn"), True)
            c.eq("cuMemCreate(FABRIC) succeeded", real, "CUDA_SUCCESS")
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("  (prometheus_client not installed: Prometheus output not parsed)")
    else:
        p = subprocess.run([binary, "doctor", "--format", "prometheus"], capture_output=True, text=True, timeout=120)
        samples = [s for f in text_string_to_metric_families(p.stdout) for s in f.samples]
        hit = [s for s in samples if s.name == "cumemctl_check_status" and s.labels.get("check") == "context"
               and s.labels.get("status") == "pass"]
        c.eq("Prometheus: context passes on every device", sum(s.value for s in hit), count)
        uuids = {str(o): checks[("capabilities", o)]["details"]["uuid"] for o in range(count)}
        c.true("Prometheus: every device's check series carries its UUID beside the ordinal",
               all(s.labels.get("UUID") == uuids[s.labels["cuda_device"]] for s in samples
                   if s.name in ("cumemctl_check_status", "cumemctl_check_duration_seconds")
                   and "cuda_device" in s.labels))
        # dcgm-exporter's labels, as nvidia-smi names the GPUs: gpu (NVML's index), pci_bus_id, device (nvidiaN).
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True)
        if smi.returncode == 0:
            by_uuid = {u.strip(): (i.strip(), b.strip()) for i, u, b in
                       (l.split(",") for l in smi.stdout.splitlines() if l.count(",") == 2)}
            ctx = [s for s in samples if s.name == "cumemctl_check_status" and "UUID" in s.labels]
            c.true("Prometheus: gpu and pci_bus_id are nvidia-smi's index and bus id",
                   ctx and all(by_uuid.get(s.labels["UUID"]) == (s.labels.get("gpu"), s.labels.get("pci_bus_id"))
                               for s in ctx), [dict(s.labels) for s in ctx[:2]])
            c.true("Prometheus: device is nvidiaN", all(re.fullmatch(r"nvidia\d+", s.labels.get("device", ""))
                                                         for s in ctx))
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
