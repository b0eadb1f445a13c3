"""GPU tier: `cumemctl fabric-matrix --local` on the real driver, one rank per GPU (two on an
nvidia-h200-x2). Without an IMEX channel node (when the node has none to start with) every pair fails
with the IMEX diagnosis; after `imex-setup` every pair passes with fabric handles, and with posix-fd
handles in any case. Each pair's read bandwidth is printed beside what `create --access` measures over
the same link (device 1's memory read from device 0), with 1 GiB per rank. The GPUs the ranks name
are compared with cuDeviceGetUuid; device 0's free memory, seen from here, is the same after every run.
A channel node this test made is removed at the end. Needs root for imex-setup; exits 125 without a GPU."""
import os
import stat
import sys

import direct

cu = direct.cu
IMEX_DIR = "/dev/nvidia-caps-imex-channels"
SIZE = "1GiB"


def channel_nodes():
    if not os.path.isdir(IMEX_DIR):
        return []
    return sorted(n for n in os.listdir(IMEX_DIR)
                  if n.startswith("channel") and stat.S_ISCHR(os.lstat(os.path.join(IMEX_DIR, n)).st_mode))


def uuid_of(ordinal):
    err, dev = cu.cuDeviceGet(ordinal)
    err, uuid = cu.cuDeviceGetUuid(dev)
    h = bytes(uuid.bytes).hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def free_memory():
    err, free, _ = cu.cuMemGetInfo()
    return free


def matrix_run(c, binary, name, n, *args):
    """Runs fabric-matrix --local n; checks the ranks' GPUs and device 0's free memory; returns the matrix."""
    before = free_memory()
    code, doc, err = direct.cumemctl(binary, "fabric-matrix", "--local", str(n), "--size", SIZE, *args)
    after = free_memory()
    c.true(f"{name}: valid JSON", doc is not None, err)
    c.eq(f"{name}: device 0's free memory seen from here, after vs before", after, before)
    if doc is None:
        return code, None
    m = doc["results"]["matrix"]
    c.eq(f"{name}: the ranks' GPUs", [r["uuid"] for r in m["rank_info"]], [uuid_of(i) for i in range(n)])
    print(f"  {name}: exit {code}; GB/s read by row from column's memory:")
    for i, row in enumerate(m["cells"]):
        cells = [f"{x['gbps']:8.1f}" if x["status"] == "pass" else f"{'FAIL ' + x['diagnosis']:>20}" for x in row]
        print(f"    rank {i}: " + " ".join(cells))
    for i, row in enumerate(m["cells"]):
        for x in row:
            if x["status"] != "pass" and x.get("problem"):
                print(f"    {i} <- {x['peer']}: {x['diagnosis']}: {x['problem']['message']}")
                print(f"        cause: {x['problem']['cause']}")
                break
    return code, m


def all_pass(c, name, code, m):
    c.eq(f"{name}: exit", code, 0)
    if m is not None:
        c.eq(f"{name}: every pair passed", [[x["status"] for x in row] for row in m["cells"]],
             [["pass"] * len(m["cells"])] * len(m["cells"]))


def nvlink_reference(binary):
    """create --device 1 --access 0 --verify: device 1's memory read from device 0 (GB/s), or None."""
    code, doc, _ = direct.cumemctl(binary, "create", "--size", SIZE, "--device", "1", "--access", "0", "--verify")
    checks = (doc or {}).get("results", {}).get("peer_checks") or []
    return checks[0]["check_gbps"] if code == 0 and checks else None


def main(binary):
    count = direct.init_or_skip()
    n = min(count, 2)
    ctx = cu.cuDevicePrimaryCtxRetain(0)[1]
    cu.cuCtxSetCurrent(ctx)
    c = direct.Checker()
    before = channel_nodes()
    folder_existed = os.path.isdir(IMEX_DIR)
    made = False
    try:
        if not before:
            print("-- without a channel node: the IMEX diagnosis")
            code, m = matrix_run(c, binary, "fabric, no channel", n)
            c.eq("fabric, no channel: exit", code, 1)
            if m is not None:
                c.eq("fabric, no channel: every pair's diagnosis", {x["diagnosis"] for row in m["cells"] for x in row},
                     {"imex-channel"})
            print("-- imex-setup")
            code, doc, err = direct.cumemctl(binary, "imex-setup")
            c.eq("imex-setup: exit", code, 0)
            made = True
        else:
            print(f"note: {IMEX_DIR} holds {', '.join(before)} already: the no-channel run is skipped")
        print("-- fabric handles")
        code, m = matrix_run(c, binary, "fabric", n)
        all_pass(c, "fabric", code, m)
        print("-- posix-fd handles")
        code, p = matrix_run(c, binary, "posix-fd", n, "--handle-type", "posix-fd")
        all_pass(c, "posix-fd", code, p)
        if n >= 2:
            ref = nvlink_reference(binary)
            print(f"-- bandwidth: device 1's memory read from device 0: create --access {ref} GB/s, "
                  f"fabric-matrix fabric {m and m['cells'][0][1]['gbps']} GB/s, "
                  f"posix-fd {p and p['cells'][0][1]['gbps']} GB/s")
    finally:
        if made:
            direct.cumemctl(binary, "imex-setup", "--channel", "0", "--remove")
            # The folder too, where imex-setup made it: the next test finds the node as it was.
            if not folder_existed and os.path.isdir(IMEX_DIR) and not os.listdir(IMEX_DIR):
                os.rmdir(IMEX_DIR)
        cu.cuDevicePrimaryCtxRelease(0)
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
