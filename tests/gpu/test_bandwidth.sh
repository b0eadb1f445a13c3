#!/usr/bin/env bash
# GPU tier: `cumemctl bandwidth` on device 0 against its limits and against a plain copy-engine probe.
#
#     tests/gpu/test_bandwidth.sh [BINARY]
#
# 1. bandwidth --device 0 --json (the defaults): exit 0; h2d, d2h, both and d2d each measured, each with
#    a limit, each ratio above 0 and at most 1 (a figure above its limit is a wrong limit).
# 2. Where HOSTLINK names a built probe (../shared/tools/hostlink.cpp, built on the GPU machine against
#    its nvml.h): each of h2d, d2h, both and d2d within BANDWIDTH_TOLERANCE (0.10) of the probe's figure
#    in the same run (d2d against the probe's read+write figure, as bandwidth counts it).
# 3. doctor --checks pcie-link,host-bandwidth,memory-bandwidth on device 0: exit 0, each pass.
# 4. bandwidth --device 0 --size 4GiB --iterations 50 --json sent SIGTERM 0.5 s in, and again sent
#    SIGINT 8 s in (copies under way): exit 143 / 130 within 1 s of the signal, a JSON report whose
#    error is terminated / interrupted; the second keeps at least one figure.
# 5. bandwidth --device 0 --concurrent --numa none --json (the copies held at a gate, a host word the
#    streams wait on, until every GPU's first copy is queued): exit 0 within 120 s (a gate that never
#    opens hangs), and with one GPU its figures at once within BANDWIDTH_TOLERANCE of its figures alone
#    (each the best of up to three runs: a tenant beside it on the host only lowers a figure).
# Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
binary=${1:-build/cmd/cumemctl}
tolerance=${BANDWIDTH_TOLERANCE:-0.10}
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIP: no GPU"; exit 125; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
echo "== cumemctl bandwidth --device 0 --json"
"$binary" bandwidth --device 0 --json >"$tmp/bw.json"
rc=$?
echo "exit $rc"
((rc == 0)) || status=1
probe=""
if [[ -n ${HOSTLINK:-} && -x ${HOSTLINK:-} ]]; then
  echo "== $HOSTLINK"
  "$HOSTLINK" | tee "$tmp/hostlink.txt" || status=1
  probe=$tmp/hostlink.txt
else
  echo "note: HOSTLINK names no probe: the figures are held against their limits only"
fi
"$binary" doctor --device 0 --checks pcie-link,host-bandwidth,memory-bandwidth --json >"$tmp/doctor.json"
echo "doctor exit $?"
python3 - "$tmp/bw.json" "$tmp/doctor.json" "$tolerance" "$probe" <<'PY' || status=1
import json, re, sys
bw, doctor, tol, probe = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4]
ok = True
def fail(msg):
    global ok
    ok = False
    print("FAIL:", msg)
figures = {f["path"]: f for f in bw["results"]["figures"] if f["memory"] in ("pinned", "device")}
for path in ("h2d", "d2h", "both", "d2d"):
    f = figures.get(path)
    if f is None:
        fail(f"no {path} figure"); continue
    print(f"{path}: {f['gbps']:.1f} GB/s of {f['limit_gbps']} ({f['ratio']:.3f})")
    if f["limit_gbps"] is None or not (0 < f["ratio"] <= 1):
        fail(f"{path}: ratio {f['ratio']} against limit {f['limit_gbps']}")
if probe:
    text = open(probe).read()
    m = re.search(r"pinned h2d ([\d.]+) GB/s, d2h ([\d.]+) GB/s, both at once ([\d.]+) GB/s", text)
    d = re.search(r"read\+write ([\d.]+) GB/s", text)
    if not m or not d:
        fail("the probe's figures cannot be read")
    else:
        ref = {"h2d": float(m[1]), "d2h": float(m[2]), "both": float(m[3]), "d2d": float(d[1])}
        for path, want in ref.items():
            got = figures.get(path, {}).get("gbps", 0)
            off = abs(got - want) / want
            print(f"{path}: bandwidth {got:.1f}, probe {want:.1f}: {100 * off:.1f}% apart")
            if off > tol:
                fail(f"{path}: {got:.1f} GB/s is more than {100 * tol:.0f}% from the probe's {want:.1f}")
for c in doctor["results"]["checks"]:
    print(f"doctor {c['check']}: {c['status']}: {c['reason']}")
    if c["status"] != "pass":
        fail(f"doctor {c['check']} is {c['status']}")
if doctor["exit_code"] != 0:
    fail(f"doctor exit {doctor['exit_code']}")
sys.exit(0 if ok else 1)
PY
# Step 4: a stop request ends a long run within a second.
stop_within() {  # SIGNAL DELAY EXIT KIND MIN_FIGURES
  echo "== cumemctl bandwidth --device 0 --size 4GiB --iterations 50 --json, SIG$1 after $2 s"
  "$binary" bandwidth --device 0 --size 4GiB --iterations 50 --json >"$tmp/stop.json" &
  local pid=$! signalled rc took
  sleep "$2"
  signalled=$(date +%s.%N)
  kill -"$1" "$pid"
  wait "$pid"
  rc=$?
  took=$(awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $signalled}")
  echo "exit $rc, ${took} s from SIG$1 to exit"
  ((rc == $3)) || { echo "FAIL: exit $rc after SIG$1, not $3"; status=1; }
  awk "BEGIN{exit !($took < 1)}" || { echo "FAIL: ${took} s to stop after SIG$1"; status=1; }
  python3 - "$tmp/stop.json" "$3" "$4" "$5" <<'PY' || status=1
import json, sys
r, code, kind, least = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
figures = (r.get("results") or {}).get("figures", [])
print(f"exit_code {r['exit_code']}, errors {[e['kind'] for e in r['errors']]}, {len(figures)} figures")
assert r["exit_code"] == code and r["errors"][0]["kind"] == kind, "the report does not say it was stopped"
assert len(figures) >= least, f"fewer than {least} figures kept"
PY
}
stop_within TERM 0.5 143 terminated 0
stop_within INT 8 130 interrupted 1

# Step 5: every GPU at once, started together at the gate. A copy that another tenant of the host slows
# comes out low, never high: each path's best figure alone and at once over up to three runs.
for run in 1 2 3; do
  echo "== cumemctl bandwidth --device 0 --concurrent --numa none --json (run $run)"
  timeout -s KILL 120 "$binary" bandwidth --device 0 --concurrent --numa none --json >"$tmp/at-once-$run.json"
  rc=$?
  echo "exit $rc"
  ((rc == 0)) || { status=1; break; }
  python3 - "$tolerance" "$tmp"/at-once-*.json <<'PY' && break
import json, sys
tol, runs = float(sys.argv[1]), [json.load(open(p))["results"]["figures"] for p in sys.argv[2:]]
best = lambda concurrent: {p: max(x["gbps"] for f in runs for x in f if x["path"] == p and x["concurrent"] == concurrent and x["memory"] == "pinned") for p in ("h2d", "d2h")}
alone, at_once = best(False), best(True)
ok = all(sorted(x["path"] for x in f if x["concurrent"]) == ["d2h", "h2d"] for f in runs)
for path in sorted(at_once):
    off = abs(at_once[path] - alone[path]) / alone[path]
    print(f"{path}: at once {at_once[path]:.1f} GB/s, alone {alone[path]:.1f} (best of {len(runs)}): {100 * off:.1f}% apart")
    ok = ok and off <= tol
sys.exit(0 if ok else 1)
PY
  if ((run == 3)); then
    echo "FAIL: one GPU's figures at once are not its figures alone"
    status=1
  fi
done
exit $status
