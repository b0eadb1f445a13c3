#!/usr/bin/env bash
# GPU tier: the frame's watch on a real GPU. A measurement names each process that shared the GPU while
# it ran, and names nobody where the GPU was idle or the only other processes were cumemctl's own.
#
#     tests/gpu/test_shared_gpu.sh [BINARY]      (default build/cmd/cumemctl; bench_hold_memory beside it)
#
# 1. bandwidth, doctor and fabric-matrix --local 1 on an idle GPU: exit 0, no warning that names a
#    process (doctor's importers and fabric-matrix's ranks are its own).
# 2. bandwidth --size 4GiB --iterations 20 with a holder (bench_hold_memory, 20 GB) started 1.5 s into
#    the run: exit 0 and a warning whose held_by names the holder's pid.
# 3. With the holder there from the start: doctor (exit 0) and fabric-matrix --local 1 (exit 0) each
#    name it, doctor as a busy check or a warning, never twice.
# 4. With a holder there from the start, stopped ones: doctor stopped by SIGTERM while it runs (the
#    signal sent 0.3-0.55 s in until one lands) exits 143 and still names it; a fabric-matrix --dir
#    rank (one of one, fabric handles, the IMEX channel made and removed where
#    CUMEMCTL_GPU_ALLOW_MKNOD=1) names it, as "fabric-matrix rank 0".
# Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
binary=${1:-build/cmd/cumemctl}
hold=${BENCH_HOLD_MEMORY:-$(dirname "$(dirname "$binary")")/bench/bench_hold_memory}
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIP: no GPU"; exit 125; fi
[[ -x $hold ]] || { echo "FAIL: no bench_hold_memory beside $binary ($hold)"; exit 1; }
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
status=0
# named FILE [PID]: the pids that the report's warnings and busy checks name, one per line; with PID,
# whether it is among them exactly once.
named() {
  python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pids = [h.get("pid") for w in r.get("warnings") or [] for h in w.get("held_by") or []]
for c in (r.get("results") or {}).get("checks") or []:
    if c.get("status") == "busy":
        pids += [h.get("pid") for h in (c.get("details") or {}).get("held_by") or []]
print("named:", pids)
if len(sys.argv) > 2:
    sys.exit(0 if pids.count(int(sys.argv[2])) == 1 else 1)
sys.exit(0 if not pids else 1)
PY
}
# start_holder FILE SECONDS: a holder on GPU 0 from now for SECONDS, its card in FILE; sets pid.
start_holder() {
  ("$hold" --device 0 --leave 120000 < <(sleep "$2") >"$1") &
  for _ in $(seq 100); do [[ -s $1 ]] && break; sleep 0.1; done
  sleep 1
  pid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pid"])' "$1" 2>/dev/null)
  echo "holder pid ${pid:-none}"
}
# expect NAME RC WANT: reports a result line
expect() {
  if (($2 == $3)); then echo "PASS $1"; else echo "FAIL $1"; status=1; fi
}

echo "== 1. idle"
"$binary" bandwidth --device 0 --json >"$tmp/bw.json"; expect "bandwidth idle exits 0" $? 0
named "$tmp/bw.json"; expect "bandwidth idle names nobody" $? 0
"$binary" doctor --json >"$tmp/doctor.json"; expect "doctor idle exits 0" $? 0
named "$tmp/doctor.json"; expect "doctor idle names nobody (its importers are its own)" $? 0
"$binary" fabric-matrix --local 1 --handle-type posix-fd --json >"$tmp/matrix.json"; expect "fabric-matrix idle exits 0" $? 0
named "$tmp/matrix.json"; expect "fabric-matrix idle names nobody (its ranks are its own)" $? 0

echo "== 2. a holder that starts during bandwidth"
(sleep 1.5; exec "$hold" --device 0 --leave 120000 < <(sleep 15) >"$tmp/holder1.json") &
"$binary" bandwidth --device 0 --size 4GiB --iterations 20 --json >"$tmp/bw-mid.json"; expect "bandwidth beside a job exits 0" $? 0
pid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pid"])' "$tmp/holder1.json" 2>/dev/null)
echo "holder pid ${pid:-none}"
if [[ -n $pid ]]; then named "$tmp/bw-mid.json" "$pid"; expect "bandwidth names the job that started during it" $? 0
else expect "the holder started" 1 0; fi
wait

echo "== 3. a holder there from the start"
start_holder "$tmp/holder2.json" 20
"$binary" doctor --json >"$tmp/doctor-held.json"; expect "doctor beside a job exits 0" $? 0
named "$tmp/doctor-held.json" "${pid:-0}"; expect "doctor names the job once" $? 0
"$binary" fabric-matrix --local 1 --handle-type posix-fd --json >"$tmp/matrix-held.json"; expect "fabric-matrix beside a job exits 0" $? 0
named "$tmp/matrix-held.json" "${pid:-0}"; expect "fabric-matrix names the job once" $? 0
wait

echo "== 4. a holder beside a stopped doctor and a distributed rank"
start_holder "$tmp/holder3.json" 40
# doctor takes about 0.6 s on an H200: SIGTERM after each of these delays in turn until one lands while
# it runs (exit 143); that run's report must still name the holder.
stopped=0
for delay in 0.45 0.35 0.55 0.3 0.5 0.4; do
  "$binary" doctor --json >"$tmp/doctor-stopped.json" &
  doctor=$!
  sleep "$delay"
  kill -TERM "$doctor" 2>/dev/null
  wait "$doctor"
  rc=$?
  echo "doctor, SIGTERM after $delay s: exit $rc"
  if ((rc == 143)); then stopped=1; break; fi
done
expect "doctor stopped by SIGTERM exits 143" "$stopped" 1
named "$tmp/doctor-stopped.json" "${pid:-0}"; expect "the stopped doctor still names the job" $? 0
# A --dir rank passes fabric handles (posix-fd ones cannot travel through a folder): an IMEX channel is
# needed, made here where the tier may (CUMEMCTL_GPU_ALLOW_MKNOD=1) and removed again.
channels=/dev/nvidia-caps-imex-channels
made_dir=0 made_node=0
if [[ ! -e $channels/channel0 && ${CUMEMCTL_GPU_ALLOW_MKNOD:-} == 1 && $(id -u) == 0 ]]; then
  [[ -d $channels ]] || made_dir=1
  "$binary" imex-setup --json >"$tmp/imex-setup.json" && made_node=1
fi
if [[ -e $channels/channel0 ]]; then
  mkdir -m 700 "$tmp/rendezvous"
  "$binary" fabric-matrix --dir "$tmp/rendezvous" --rank 0 --ranks 1 --handle-type fabric --json >"$tmp/rank.json"
  rc=$?; ((rc == 0 || rc == 1)); expect "a fabric-matrix rank beside a job ends (exit $rc)" $? 0
  named "$tmp/rank.json" "${pid:-0}"; expect "the rank names the job" $? 0
  grep -q "fabric-matrix rank 0" "$tmp/rank.json"; expect "its warning says which rank saw it" $? 0
else
  echo "note: no IMEX channel and CUMEMCTL_GPU_ALLOW_MKNOD is not 1: the --dir rank is not run"
fi
((made_node)) && rm -f "$channels/channel0"
((made_dir)) && rmdir "$channels" 2>/dev/null
wait
exit "$status"
