#!/usr/bin/env bash
# GPU tier: GPUDirect RDMA and the Xid log on a real node (issue 42). devices' attributes against the
# driver's own answers (nvidia-smi cannot say them; cuda.bindings can); create --rdma --map --dma-buf:
# the kernel must call the descriptor NVIDIA's dma-buf (exp_name nv_dmabuf) of the mapped size, and
# the process must end with its descriptors as before; doctor's gpudirect verdict with what the node
# has (/sys/class/infiniband, nvidia_peermem); xid as this user (root: read, else skipped with the
# reason). Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
binary=${1:-build/cmd/cumemctl}
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 125; }
status=0
fail() { echo "FAIL: $*"; status=1; }

echo "== devices: GPUDirect RDMA attributes against cuDeviceGetAttribute"
"$binary" devices --json >/tmp/gpudirect-devices.$$.json || fail "devices exited $?"
python3 - /tmp/gpudirect-devices.$$.json <<'PY' || status=1
import json, sys
from cuda.bindings import driver as cu
cu.cuInit(0)
doc = json.load(open(sys.argv[1]))
ok = True
for d in doc["results"]["devices"]:
    o, caps = d["ordinal"], d["capabilities"]
    def attr(n):
        err, v = cu.cuDeviceGetAttribute(cu.CUdevice_attribute(n), o)
        return None if err != cu.CUresult.CUDA_SUCCESS else v
    want = {"gpudirect_rdma": attr(116), "gpudirect_rdma_vmm": attr(110), "dma_buf": attr(124)}
    for k, v in want.items():
        got, exp = caps[k], None if v is None else bool(v)
        print(f"  {'ok' if got == exp else 'FAIL'}  gpu{o} {k}: {got} (driver {v})")
        ok &= got == exp
    flush, order = attr(117), attr(118)
    exp = None if flush is None else [n for b, n in ((1, "host"), (2, "memops")) if flush & b]
    print(f"  {'ok' if caps['gpudirect_rdma_flush_writes'] == exp else 'FAIL'}  gpu{o} flush: "
          f"{caps['gpudirect_rdma_flush_writes']} (driver {flush})")
    exp_o = None if order is None else {0: "none", 100: "owner", 200: "all-devices"}.get(order, f"unknown ({order})")
    print(f"  {'ok' if caps['gpudirect_rdma_writes_ordering'] == exp_o else 'FAIL'}  gpu{o} ordering: "
          f"{caps['gpudirect_rdma_writes_ordering']} (driver {order})")
    ok &= caps["gpudirect_rdma_flush_writes"] == exp and caps["gpudirect_rdma_writes_ordering"] == exp_o
sys.exit(0 if ok else 1)
PY
rm -f /tmp/gpudirect-devices.$$.json

for flags in "--rdma" ""; do
  echo "== create --size 64MiB $flags --map --dma-buf"
  out=$("$binary" create --size 64MiB $flags --map --dma-buf --json)
  rc=$?
  python3 - "$rc" "$out" <<'PY' || status=1
import json, sys
rc, doc = int(sys.argv[1]), json.loads(sys.argv[2])
r = doc["results"]
d = r.get("dma_buf")
print(f"  exit {rc}; dma_buf {json.dumps(d)}; resources balanced {r['resources'] and r['resources'].get('balanced')}")
ok = rc == 0 and d and d["exporter"] == "nv_dmabuf" and d["size_bytes"] == 67108864 and d["end_bytes"] == 67108864
ok = ok and d["link"].startswith("/dmabuf:") and r["resources"]["open_fds_delta"] == 0 and r["resources"]["balanced"]
print("  ok" if ok else "  FAIL: not NVIDIA's dma-buf of 64 MiB, or a descriptor left open")
sys.exit(0 if ok else 1)
PY
done

echo "== doctor --checks gpudirect (this node: $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')peermem $(test -d /sys/module/nvidia_peermem && echo yes || echo no))"
"$binary" doctor --checks gpudirect --json >/tmp/gpudirect-doctor.$$.json
rc=$?
python3 - "$rc" /tmp/gpudirect-doctor.$$.json <<'PY' || status=1
import json, os, sys
rc, doc = int(sys.argv[1]), json.load(open(sys.argv[2]))
ok = True
rdma = os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband")
for c in doc["results"]["checks"]:
    print(f"  gpu{c['device']} {c['status']}: {c['reason']}")
    for e in c["details"].get("exports", []):
        print(f"    {e['memory']}: fd {e['fd']} {e['exporter']} {e['size_bytes']} bytes, link {e['link']}")
    want = "pass" if rdma else "skip"
    ok &= c["status"] == want
    if rdma:
        ok &= len(c["details"].get("exports", [])) == 2
print("  ok" if ok and rc == 0 else f"  FAIL: exit {rc}")
sys.exit(0 if ok and rc == 0 else 1)
PY
rm -f /tmp/gpudirect-doctor.$$.json

echo "== doctor --checks xid as uid $(id -u)"
out=$("$binary" doctor --checks xid --json)
python3 - "$(id -u)" "$out" <<'PY' || status=1
import json, sys
uid, c = int(sys.argv[1]), json.loads(sys.argv[2])["results"]["checks"][0]
print(f"  {c['status']}: {c['reason']}")
if uid == 0:
    ok = c["status"] in ("pass", "warn", "fail") and c["details"]["records"] > 0
else:
    ok = c["status"] in ("skip", "pass", "warn", "fail")  # skip where kernel.dmesg_restrict is 1
print("  ok" if ok else "  FAIL")
sys.exit(0 if ok else 1)
PY
exit $status
