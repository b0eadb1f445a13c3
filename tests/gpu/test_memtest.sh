#!/usr/bin/env bash
# GPU tier: `cumemctl memtest` on device 0 against its targets (coverage, GB/s against the copy
# bandwidth, under 10 s), everything in one results file.
#
#     tests/gpu/test_memtest.sh [BINARY [OUT]]     (default build/cmd/cumemctl, memtest-results.txt)
#
# 1. bench_copy_bandwidth (built beside BINARY: build/bench/) on 16 GiB: the device's copy bandwidth,
#    bytes read plus written per second, in this same run.
# 2. The full default memtest of device 0 with --json, timed from process start to exit. Pass: exit 0,
#    verdict pass, no mismatch, coverage >= 99.5% of the free memory at the start, every pattern pass
#    >= 90% of the copy bandwidth (both counting bytes read plus written), wall time < 10 s.
# 3. nvidia-smi: no compute process left on the GPU, its used memory back to what it was before.
# 4. A second memtest (--passes 100, so that it runs long), sent SIGTERM after 3 s. Pass: exit 143, a
#    JSON report that says where it stopped, the exit within 2 s of the signal, and step 3 again.
# 5. A fragmented device (where cuda.bindings is installed): a second process holds every other 64 MiB
#    block of 70% of the free memory; memtest --force. Pass: exit 0, coverage >= 99.5% of the free
#    memory at the start, and step 3 again once the helper is gone.
# MEMTEST_MIN_RATIO (0.90), MEMTEST_MIN_COVERAGE (0.995) and MEMTEST_MAX_SECONDS (10) change the targets.
# Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
binary=${1:-build/cmd/cumemctl}
out=${2:-memtest-results.txt}
# The copy benchmark of the binary's build (BENCH_COPY_BANDWIDTH names another, for an installed binary).
copy=${BENCH_COPY_BANDWIDTH:-$(dirname "$(dirname "$binary")")/bench/bench_copy_bandwidth}
min_ratio=${MEMTEST_MIN_RATIO:-0.90}
min_coverage=${MEMTEST_MIN_COVERAGE:-0.995}
max_seconds=${MEMTEST_MAX_SECONDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec > >(tee -a "$out") 2>&1
echo "# memtest on the GPU, $(date -u +%Y-%m-%dT%H:%M:%SZ), $("$binary" --version 2>&1)"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIP: no GPU (nvidia-smi -L failed)"; exit 125; fi
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,memory.used,ecc.mode.current \
  --format=csv -i 0
used_before=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0)
status=0
fail() { echo "FAIL: $*"; status=1; }

# Nothing of ours is left on GPU 0: no compute process, used memory within 64 MiB of the start.
nothing_left() {
  local apps used
  apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader -i 0)
  used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0)
  echo "nvidia-smi after $1: compute apps: ${apps:-none}; memory.used ${used} MiB (before: ${used_before} MiB)"
  [[ -z $apps ]] || fail "compute processes left on GPU 0 after $1: $apps"
  ((used <= used_before + 64)) || fail "GPU 0 uses ${used} MiB after $1, ${used_before} MiB before"
}

echo "== bench_copy_bandwidth 16 GiB"
if [[ ! -x $copy ]]; then
  fail "$copy is missing: cmake --build build --target bench_copy_bandwidth"
  exit 1
fi
"$copy" 17179869184 5 | tee "$tmp/copy.json" || fail "bench_copy_bandwidth exited $?"

echo "== cumemctl memtest --device 0 --json (the default set over all free memory)"
start=$(date +%s.%N)
"$binary" memtest --device 0 --json >"$tmp/memtest.json" 2>"$tmp/memtest.err"
rc=$?
wall=$(awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $start}")
cat "$tmp/memtest.err"
echo "exit $rc, wall ${wall} s (process start to exit)"
python3 - "$tmp/copy.json" "$tmp/memtest.json" "$rc" "$wall" "$min_ratio" "$min_coverage" "$max_seconds" <<'PY' || status=1
import json, sys
copy, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rc, wall, ratio, coverage, max_seconds = int(sys.argv[3]), float(sys.argv[4]), *map(float, sys.argv[5:8])
ok = True
def judge(good, text):
    global ok
    print(("ok:   " if good else "FAIL: ") + text)
    ok &= good
d = report["results"]["devices"][0]
copy_gbps = copy["gbps_median"]
print(json.dumps({k: d[k] for k in ("uuid", "free_at_start_bytes", "nvml_free_at_start_bytes", "tested_bytes",
                                    "coverage", "coverage_of_nvml_free", "chunk_bytes", "chunks", "mismatches",
                                    "pattern_seconds",
                                    "seconds", "verdict")}, indent=1))
judge(rc == 0 and report["exit_code"] == 0, f"exit {rc}")
judge(d["verdict"]["status"] == "pass" and d["mismatches"] == 0, f"verdict {d['verdict']['status']}, "
      f"{d['mismatches']} mismatches")
judge(d["coverage"] >= coverage, f"coverage {d['coverage']:.4%} of {d['free_at_start_bytes'] / 1e9:.1f} GB free "
      f"at the start in its context (need {coverage:.1%}); of NVML's free before the context "
      f"({d['nvml_free_at_start_bytes']} bytes): {d['coverage_of_nvml_free'] or 0:.4%}")
for p in d["patterns"]:
    r = p["gbps"] / copy_gbps
    judge(r >= ratio, f"{p['pattern']} pass {p['pass']}: {p['gbps']:.0f} GB/s = {r:.1%} of copy {copy_gbps:.0f} "
          f"GB/s (need {ratio:.0%}), {p['seconds']:.3f} s")
judge(wall < max_seconds, f"wall {wall:.2f} s, process start to exit (need < {max_seconds:.0f} s); patterns "
      f"{d['pattern_seconds']:.2f} s, the device's whole run {d['seconds']:.2f} s")
steps = {s["step"]: s["seconds"] for s in d["steps"]}
print("steps (s):", json.dumps(steps))
sys.exit(0 if ok else 1)
PY
nothing_left "the full run"

echo "== cumemctl memtest --device 0 --passes 100 --json, SIGTERM after 3 s"
"$binary" memtest --device 0 --passes 100 --json >"$tmp/term.json" 2>"$tmp/term.err" &
pid=$!
sleep 3
signalled=$(date +%s.%N)
kill -TERM "$pid"
wait "$pid"
rc=$?
stop=$(awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $signalled}")
cat "$tmp/term.err"
echo "exit $rc, ${stop} s from SIGTERM to exit"
((rc == 143)) || fail "memtest exited $rc after SIGTERM, not 143"
awk "BEGIN{exit !($stop < 2)}" || fail "memtest took ${stop} s to stop after SIGTERM"
python3 - "$tmp/term.json" <<'PY' || status=1
import json, sys
report = json.load(open(sys.argv[1]))
d = report["results"]["devices"][0]
print(json.dumps({"exit_code": report["exit_code"], "stopped_in": d["stopped_in"], "tested_bytes": d["tested_bytes"],
                  "patterns_done": len(d["patterns"]), "errors": [e["message"] for e in report["errors"]]}, indent=1))
ok = report["exit_code"] == 143 and bool(d["stopped_in"])
print(("ok:   " if ok else "FAIL: ") + f"the report says where it stopped ({d['stopped_in']}); nvidia-smi below says "
      "whether everything was released")
sys.exit(0 if ok else 1)
PY
nothing_left "SIGTERM"

echo "== fragmented device: a second process holds every other 64 MiB block of 70% of the free memory"
cat >"$tmp/fragment.py" <<'PY'
import os, sys, time
from cuda.bindings import driver as cu
cu.cuInit(0)
_, dev = cu.cuDeviceGet(0)
_, ctx = cu.cuDevicePrimaryCtxRetain(dev)
cu.cuCtxSetCurrent(ctx)
_, free, _ = cu.cuMemGetInfo()
block = 64 << 20
blocks = []
for _ in range(int(free * 0.7) // block):
    err, p = cu.cuMemAlloc(block)
    if err != cu.CUresult.CUDA_SUCCESS:
        break
    blocks.append(p)
for p in blocks[::2]:
    cu.cuMemFree(p)
with open(sys.argv[1], "w") as f:
    f.write(str(len(blocks[1::2]) * block))
while not os.path.exists(sys.argv[2]):
    time.sleep(0.1)
PY
if python3 -c "from cuda.bindings import driver" 2>/dev/null; then
  python3 "$tmp/fragment.py" "$tmp/held" "$tmp/stop" &
  helper=$!
  for _ in $(seq 300); do [[ -s $tmp/held ]] && break; sleep 0.1; done
  echo "the helper (pid $helper) holds $(cat "$tmp/held" 2>/dev/null || echo '?') bytes in 64 MiB blocks with 64 MiB holes"
  "$binary" memtest --device 0 --force --json >"$tmp/frag.json" 2>"$tmp/frag.err"
  rc=$?
  touch "$tmp/stop"
  wait "$helper"
  python3 - "$tmp/frag.json" "$rc" "$min_coverage" <<'PY' || status=1
import json, sys
report, rc, need = json.load(open(sys.argv[1])), int(sys.argv[2]), float(sys.argv[3])
d = report["results"]["devices"][0]
print(json.dumps({k: d[k] for k in ("free_at_start_bytes", "tested_bytes", "coverage", "chunks", "other_processes",
                                    "allocation_shortfall", "verdict")}, indent=1))
ok = rc == 0 and d["coverage"] >= need and d["verdict"]["status"] == "pass"
print(("ok:   " if ok else "FAIL: ") + f"fragmented: exit {rc}, coverage {d['coverage']:.4%} of the free memory at "
      f"the start (need {need:.1%}), in {d['chunks']} chunks")
sys.exit(0 if ok else 1)
PY
  nothing_left "the fragmented run"
else
  echo "skipped: cuda.bindings is not installed (the helper that fragments the device needs it)"
fi
echo "memtest gpu test: $([[ $status == 0 ]] && echo PASS || echo FAIL)"
exit $status
