#!/usr/bin/env bash
# The multi-GPU runs (the tier and benchmarks, doctor at 1, 2, 4, 8 GPUs, every peer pair, the fabric
# matrix, memtest on every device, a busy neighbour, SIGTERM and SIGKILL mid-run) at the GPU count of
# this machine, as docs/hardware/ records them: one command per part (the device machine allows 10
# minutes a command), each part's outputs and a line per result in OUTDIR.
#
#   scripts/multi-gpu-session.sh BINARY OUTDIR [PART...]     (root; default: every part, in this order)
#
# Parts:
#   tier      the GPU tier (scripts/gpu-check.sh), bench/run.sh and bench/load.sh
#   doctor    doctor and doctor --quick (3 and 9 runs, interleaved with their floors) at 1, 2, 4, 8 GPUs (up to this machine's count),
#             each as `--device 0-K` and under CUDA_VISIBLE_DEVICES, against bench_doctor_floor quick and
#             full under the same CUDA_VISIBLE_DEVICES; then bench/doctor_model.py for the same counts
#             (needs BUILD/tests/libfakecuda.so: the build of the binary with its fakes)
#   peers     doctor's peer-access check (every ordered pair's GB/s) and create --access all --verify
#   fabric    imex-setup --verify, then fabric-matrix --local all with fabric and with posix-fd handles
#   memtest   memtest on every device at once (--time bounds it), beside each device's copy bandwidth
#   busy      doctor on every GPU beside bench_hold_memory holding GPU 0 (bench/doctor_busy.sh's
#             neighbour): GPU 0 busy and named, every other GPU passes, exit 0
#   bandwidth the paths on a server: every GPU's pinned buffers on its own NUMA node (each figure names
#             the node; its own node's numa: figures no slower than another's), NVLink's links up equal on
#             every GPU (doctor's nvlink check) and GPU->GPU figures against links up x their speed,
#             bandwidth --concurrent (each GPU and the sum, where this binary has it), doctor's link
#             checks passing on every GPU, and scripts/gpu-bandwidth-compare.sh beside nvbandwidth where
#             carry/nvbandwidth holds its source
#   signals   SIGTERM and SIGKILL in the middle of create --access all --verify, doctor, fabric-matrix
#             --local all and memtest (an exit 0 says the run ended before its signal); after each, none
#             of its processes is left and nvidia-smi lists no compute process
# OUTDIR/summary.txt gathers one line per result ("PASS|FAIL|INFO part: what"); exit 0 when nothing
# failed. Multicast is never made (doctor, fabric-matrix and memtest make none; NCCL_NVLS_ENABLE=0 and
# the like are set for anything else). The binary's build folder (BUILD/cmd/cumemctl) gives the bench
# programs (BUILD/bench/) and the fakes (BUILD/tests/).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
(($# >= 2)) || { echo "usage: scripts/multi-gpu-session.sh BINARY OUTDIR [tier|doctor|peers|fabric|memtest|busy|bandwidth|signals]..." >&2; exit 2; }
bin=$(realpath "$1")
out=$2
shift 2
parts=("$@")
((${#parts[@]})) || parts=(tier doctor peers fabric memtest busy bandwidth signals)
build=$(dirname "$(dirname "$bin")")
mkdir -p "$out"
summary=$out/summary.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
py=python3
[[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
((gpus > 0)) || { echo "multi-gpu-session: nvidia-smi lists no GPU" >&2; exit 125; }
failed=0

note() { echo "$*" | tee -a "$summary"; }
verdict() { # verdict PART OK(0|1) WHAT
  if (($2)); then note "PASS $1: $3"; else note "FAIL $1: $3"; failed=1; fi
}
# The fields of a report that the summary needs, by a Python expression over d (the report).
field() { $py -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
gpu_processes() { nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c .; }
counts() { local k; for k in 1 2 4 8; do ((k <= gpus)) && echo "$k"; done; }

note "# multi-gpu-session $(date -u +%Y-%m-%dT%H:%M:%SZ): $gpus GPU(s), $("$bin" --version 2>&1 | head -1)"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv,noheader >"$out/gpus.csv"
nvidia-smi topo -m >"$out/topo.txt" 2>&1

part_tier() {
  CUMEMCTL_GPU_ALLOW_MKNOD=1 CUMEMCTL="$bin" timeout 300 bash scripts/gpu-check.sh "$out/gpu-results.txt" \
    >"$out/gpu-check.log" 2>&1
  local rc=$?
  verdict tier $((rc == 0)) "GPU tier exit $rc: $(grep -m1 '^gpu tier' "$out/gpu-results.txt" 2>/dev/null)"
  timeout 420 bash bench/run.sh "$bin" "$out/bench.json" >"$out/bench.log" 2>&1
  rc=$?
  verdict tier $((rc == 0)) "bench/run.sh exit $rc ($gpus GPUs; figures in bench.json.md)"
  timeout 300 bash bench/load.sh "$bin" "$out/load" 10 $((4 * gpus)) 8GiB >"$out/load.log" 2>&1
  rc=$?
  verdict tier $((rc == 0)) "bench/load.sh exit $rc: $(tail -2 "$out/load/load-summary.txt" 2>/dev/null | tr '\n' ' ')"
}

# timed NAME CMD...: runs CMD with stdout to OUTDIR/doctor/NAME, prints its seconds.
timed() {
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$@" >"$out/doctor/$name" 2>"$out/doctor/$name.err"
  echo "$? $(echo "$(date +%s.%N) $start" | awk '{printf "%.3f", $1 - $2}')"
}

part_doctor() {
  mkdir -p "$out/doctor"
  local k last visible r rc s
  for k in $(counts); do
    last=$((k - 1))
    visible=$(seq -s, 0 "$last")
    # Interleaved, so that a slow spell of the machine (cuInit here takes 160 or 270 ms, by turns) falls
    # on the floor and on doctor alike: 9 runs of the quick ones, 3 of the full ones.
    for r in 1 2 3 4 5 6 7 8 9; do
      read -r rc s < <(CUDA_VISIBLE_DEVICES=$visible timed "floor-quick-$k-$r" "$build/bench/bench_doctor_floor" quick)
      note "INFO doctor: $k GPUs floor quick run $r: exit $rc, $s s"
      read -r rc s < <(CUDA_VISIBLE_DEVICES=$visible timed "quick-visible-$k-$r.json" "$bin" doctor --quick --json)
      note "INFO doctor: $k GPUs doctor --quick (CUDA_VISIBLE_DEVICES) run $r: exit $rc, $s s"
      read -r rc s < <(timed "quick-device-$k-$r.json" "$bin" doctor --quick --device "0-$last" --json)
      note "INFO doctor: $k GPUs doctor --quick --device 0-$last run $r: exit $rc, $s s"
      ((r <= 3)) || continue
      read -r rc s < <(CUDA_VISIBLE_DEVICES=$visible timed "floor-full-$k-$r" "$build/bench/bench_doctor_floor" full)
      note "INFO doctor: $k GPUs floor full run $r: exit $rc, $s s"
      read -r rc s < <(CUDA_VISIBLE_DEVICES=$visible timed "full-visible-$k-$r.json" "$bin" doctor --json)
      note "INFO doctor: $k GPUs doctor (CUDA_VISIBLE_DEVICES) run $r: exit $rc, $s s"
      read -r rc s < <(timed "full-device-$k-$r.json" "$bin" doctor --device "0-$last" --json)
      note "INFO doctor: $k GPUs doctor --device 0-$last run $r: exit $rc, $s s"
    done
  done
  # Medians and ratios. The target, --quick at most 1.10x its floor, is held under the floor's own
  # CUDA_VISIBLE_DEVICES; `--device 0-K` (cuInit still sees every GPU of the machine) is reported beside it.
  $py - "$summary" <<'PY' | tee -a "$summary"
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"INFO doctor: (\d+) GPUs (.*) run \d: exit (\d+), ([\d.]+) s", line)
    if m:
        runs.setdefault(int(m[1]), {}).setdefault(re.sub(r" 0-\d+$", "", m[2]), []).append((int(m[3]), float(m[4])))
for k, by in sorted(runs.items()):
    med = {what: statistics.median(s for _, s in v) for what, v in by.items()}
    bad = sorted(what for what, v in by.items() if any(rc != 0 for rc, _ in v))
    fq, ff = med.get("floor quick"), med.get("floor full")
    q, qd = med.get("doctor --quick (CUDA_VISIBLE_DEVICES)"), med.get("doctor --quick --device")
    f, fd = med.get("doctor (CUDA_VISIBLE_DEVICES)"), med.get("doctor --device")
    if None in (fq, ff, q, qd, f, fd):
        continue
    ok = q <= 1.10 * fq and not bad
    print(f"{'PASS' if ok else 'FAIL'} doctor: {k} GPUs: --quick {q:.3f} s = {q / fq:.2f}x floor {fq:.3f} s (target 1.10x; "
          f"--device: {qd:.3f} s); full {f:.3f} s = {f / ff:.2f}x floor {ff:.3f} s (--device: {fd:.3f} s)"
          + (f"; nonzero exits: {bad}" if bad else ""))
PY
  grep -q "^FAIL doctor" "$summary" && failed=1
  if [[ -f $build/tests/libfakecuda.so ]]; then
    timeout 300 $py bench/doctor_model.py "$build" --devices "$(counts | paste -sd,)" >"$out/doctor/model.md" 2>&1
    note "INFO doctor: bench/doctor_model.py exit $? (doctor/model.md: the model's prediction at the same counts)"
  fi
}

part_peers() {
  mkdir -p "$out/peers"
  timeout 300 "$bin" doctor --json >"$out/peers/doctor.json" 2>"$out/peers/doctor.err"
  local rc=$?
  local pairs
  pairs=$(field "$out/peers/doctor.json" \
    "'; '.join(f'{p[\"owner\"]}->{p[\"reader\"]} {p[\"gbps\"]:.0f} GB/s' for c in d['results']['checks'] if c['check'] == 'peer-access' for p in (c['details'] or {}).get('pairs', []))")
  local status
  status=$(field "$out/peers/doctor.json" "[c['status'] for c in d['results']['checks'] if c['check'] == 'peer-access']")
  if ((gpus > 1)); then
    verdict peers $((rc == 0)) "doctor exit $rc, peer-access $status over $((gpus * (gpus - 1))) ordered pairs: $pairs"
  else
    note "INFO peers: one GPU, no pair (doctor exit $rc, peer-access $status)"
  fi
  timeout 300 "$bin" create --size 4GiB --map --access all --verify --json >"$out/peers/create-access.json" \
    2>"$out/peers/create-access.err"
  rc=$?
  verdict peers $((rc == 0)) "create --size 4GiB --map --access all --verify: exit $rc"
}

part_fabric() {
  mkdir -p "$out/fabric"
  timeout 120 "$bin" imex-setup --verify --json >"$out/fabric/imex-setup.json" 2>"$out/fabric/imex-setup.err"
  local rc=$? h
  verdict fabric $((rc == 0)) "imex-setup --verify: exit $rc"
  for h in fabric posix-fd; do
    timeout 300 "$bin" fabric-matrix --local all --handle-type "$h" --json >"$out/fabric/matrix-$h.json" \
      2>"$out/fabric/matrix-$h.err"
    rc=$?
    verdict fabric $((rc == 0)) "fabric-matrix --local all --handle-type $h: exit $rc, GB/s rows $(field "$out/fabric/matrix-$h.json" \
      "[[None if c['gbps'] is None else round(c['gbps']) for c in row] for row in d['results']['matrix']['cells']]")"
  done
}

part_memtest() {
  mkdir -p "$out/memtest"
  timeout 420 "$bin" memtest --device all --time 240 --json >"$out/memtest/memtest.json" 2>"$out/memtest/memtest.err"
  local rc=$?
  verdict memtest $((rc == 0)) "memtest --device all --time 240: exit $rc"
  local i
  for ((i = 0; i < gpus; i++)); do
    CUDA_VISIBLE_DEVICES=$i timeout 60 "$build/bench/bench_copy_bandwidth" $((8 << 30)) 5 \
      >"$out/memtest/copy-bandwidth-$i.json" 2>&1
  done
  note "INFO memtest: per device $(field "$out/memtest/memtest.json" \
    "[(x['ordinal'], (x['verdict'] or {}).get('status'), {p['pattern']: round(p['gbps']) for p in x['patterns']}) for x in d['results']['devices']]"); copy bandwidth (bench_copy_bandwidth, GB/s) $(for ((i = 0; i < gpus; i++)); do
      field "$out/memtest/copy-bandwidth-$i.json" "round(d['gbps_median'])"; done | paste -sd,)"
}

part_busy() {
  mkdir -p "$out/busy"
  local rc i hin
  # The neighbour holds GPU 0's memory while its stdin (this pipe) is open.
  exec {hin}> >(exec "$build/bench/bench_hold_memory" --device 0 --leave 64 >"$out/busy/holder.txt" 2>&1)
  for ((i = 0; i < 300; i++)); do grep -q ready "$out/busy/holder.txt" 2>/dev/null && break; sleep 0.1; done
  timeout 300 "$bin" doctor --json >"$out/busy/doctor.json" 2>"$out/busy/doctor.err"
  rc=$?
  exec {hin}>&-
  sleep 1
  local busy others
  busy=$(field "$out/busy/doctor.json" "sorted({c['device'] for c in d['results']['checks'] if c['status'] == 'busy'})")
  others=$(field "$out/busy/doctor.json" "sorted({c['device'] for c in d['results']['checks'] if c['status'] in ('fail', 'timeout') or (c['status'] == 'busy' and c['device'] != 0)})")
  note "INFO busy: warnings $(field "$out/busy/doctor.json" "[(c['check'], c['device'], c['reason']) for c in d['results']['checks'] if c['status'] == 'warn']")"
  verdict busy $((rc == 0)) "doctor beside a neighbour holding GPU 0: exit $rc, busy on devices $busy, other GPUs not passing: $others"
  [[ $busy == "[0]" && $others == "[]" ]]
  verdict busy $((!$?)) "only GPU 0 is busy and no other GPU failed"
}

# interrupt NAME SIGNAL AFTER CMD...: starts CMD in a process group of its own, sends SIGNAL to it (the
# leader only, as a user's kill does) after AFTER seconds, then checks what is left.
interrupt() {
  local name=$1 sig=$2 after=$3 pid rc left
  shift 3
  setsid "$@" >"$out/signals/$name-$sig.out" 2>"$out/signals/$name-$sig.err" &
  pid=$!
  sleep "$after"
  kill "-$sig" "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  sleep 2
  left=$(pgrep -g "$pid" | wc -l)
  local apps
  apps=$(gpu_processes)
  verdict signals $((left == 0 && apps == 0)) "$name: SIG$sig after $after s: exit $rc; its processes left $left; GPU processes $apps"
  pkill -KILL -g "$pid" 2>/dev/null
}

part_signals() {
  mkdir -p "$out/signals"
  local sig
  for sig in TERM KILL; do
    interrupt create "$sig" 0.5 "$bin" create --size 64GiB --map --access all --verify --json
    interrupt doctor "$sig" 0.5 "$bin" doctor --json
    interrupt fabric-matrix "$sig" 0.4 "$bin" fabric-matrix --local all --json
    interrupt memtest "$sig" 1.5 "$bin" memtest --device all --passes 50 --time 20 --json
  done
}

part_bandwidth() {
  local d=$out/bandwidth
  mkdir -p "$d"
  "$bin" bandwidth --numa all --no-peers --size 256MiB --json >"$d/numa.json" 2>"$d/numa.err"
  local numa
  numa=$($py - "$d/numa.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["results"]["figures"]
bad = []
for x in f:
    if x["memory"] == "pinned" and x["path"] in ("h2d", "d2h") and x["numa_node"] is None:
        bad.append(f"GPU {x['device']} {x['path']}: pinned buffers on no named node")
own = {x["device"]: x["numa_node"] for x in f if x["memory"] == "pinned" and x["path"] == "h2d"}
for x in f:
    if x["memory"].startswith("numa:") and x["numa_node"] != own.get(x["device"]):
        near = [y for y in f if y["device"] == x["device"] and y["path"] == x["path"] and y["numa_node"] == own.get(x["device"]) and y["memory"].startswith("numa:")]
        if near and near[0]["gbps"] < 0.98 * x["gbps"]:
            bad.append(f"GPU {x['device']} {x['path']}: own node {own[x['device']]} slower than node {x['numa_node']}")
print("; ".join(bad) if bad else "ok: " + ", ".join(f"GPU {g} node {n}" for g, n in sorted(own.items())))
PY
)
  verdict bandwidth "$([[ $numa == ok:* ]] && echo 1 || echo 0)" "NUMA placement: $numa"
  "$bin" doctor --checks pcie-link,nvlink,host-bandwidth,memory-bandwidth --json >"$d/doctor-links.json" 2>&1
  "$bin" bandwidth --numa none --size 256MiB --json >"$d/peers.json" 2>"$d/peers.err"
  local have_concurrent=0
  if "$bin" bandwidth --help 2>/dev/null | grep -q -- --concurrent; then
    have_concurrent=1
    "$bin" bandwidth --concurrent --size 256MiB --json >"$d/concurrent.json" 2>"$d/concurrent.err"
  fi
  local line
  while IFS= read -r line; do
    verdict bandwidth "${line%% *}" "${line#* }"
  done < <($py - "$d" "$have_concurrent" <<'PY'
import json, sys
d, concurrent = sys.argv[1], sys.argv[2] == "1"
def load(name):
    try:
        return json.load(open(f"{d}/{name}"))
    except (OSError, ValueError):
        return None
doc = load("doctor-links.json")
checks = (doc or {}).get("results", {}).get("checks", [])
bad = [f"{c['check']} {c['device']} {c['status']}: {c['reason']}" for c in checks if c["status"] not in ("pass", "skip")]
print(1 if doc and not bad else 0, "doctor's link checks: " + ("; ".join(bad) if bad else f"{len(checks)} pass or skip"))
peers = [x for x in ((load("peers.json") or {}).get("results") or {}).get("figures", []) if x["path"] == "peer"]
texts = [f"{x['device']}->{x['peer']} {x['gbps']:.0f} GB/s" + (f" ({x['ratio']:.2f} of NVLink)" if x["ratio"] else " (no limit)")
         for x in peers]
print(1 if all(x["limit_gbps"] for x in peers) else 0, "GPU->GPU: " + (", ".join(texts) or "no peer pair"))
if concurrent:
    sums = ((load("concurrent.json") or {}).get("results") or {}).get("sums") or []
    print(1 if sums else 0, "concurrent: " + (", ".join(f"{s['path']} sum {s['gbps']:.1f} GB/s over {len(s['devices'])} GPUs" for s in sums) or "no sum"))
else:
    print(1, "concurrent: this binary has no --concurrent")
PY
)
  if [[ -f carry/nvbandwidth/CMakeLists.txt ]]; then
    OUT_DIR=$d/compare scripts/gpu-bandwidth-compare.sh "$bin" carry/nvbandwidth 4 >"$d/compare.txt" 2>&1
    verdict bandwidth "$((! $?))" "beside nvbandwidth: $(tail -1 "$d/compare.txt")"
  else
    note "INFO bandwidth: no carry/nvbandwidth: the comparison with nvbandwidth was not run"
  fi
}

for part in "${parts[@]}"; do
  case $part in
    tier | doctor | peers | fabric | memtest | busy | bandwidth | signals) echo "== $part"; "part_$part" ;;
    *) echo "multi-gpu-session: unknown part '$part'" >&2; exit 2 ;;
  esac
done
note "# multi-gpu-session: $( ((failed)) && echo "something failed" || echo "all passed") (${parts[*]})"
exit "$failed"
