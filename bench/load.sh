#!/usr/bin/env bash
# Load and concurrency benchmark (not a timed test, never in CI): does cumemctl cry wolf on a
# busy node? Runs `doctor` N times on a device while a load generator (cumemctl itself, creating,
# verifying and releasing SIZE in a loop) runs on the same device, and counts the verdicts; then starts M
# `create --map --verify` at once, spread over every device, and counts exits and warnings.
#   bench/load.sh CUMEMCTL OUTDIR [DOCTOR_RUNS=20] [CONCURRENT=16] [LOAD_SIZE=8GiB]
# Writes OUTDIR/load-summary.txt and every report; exit 0 when no run failed and nothing warned.
set -uo pipefail
bin=$1 out=$2 runs=${3:-20} concurrent=${4:-16} load_size=${5:-8GiB}
mkdir -p "$out"
count=$("$bin" devices --no-free --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"]["device_count"])')
summary=$out/load-summary.txt
: >"$summary"

# The load generator: its own process group, stopped on every exit path.
( while :; do "$bin" create --device 0 --size "$load_size" --map --verify >/dev/null 2>&1; done ) &
load=$!
trap 'kill -- -$load 2>/dev/null; kill $load 2>/dev/null; wait $load 2>/dev/null' EXIT
sleep 1
pass=0 fail=0 warn=0
for i in $(seq "$runs"); do
  "$bin" doctor --device 0 --json >"$out/doctor-load-$i.json" 2>"$out/doctor-load-$i.err"
  rc=$?
  status=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["results"]["status"], ",".join(c["check"] for c in d["results"]["checks"] if c["status"] in ("fail","warn")))' "$out/doctor-load-$i.json" 2>/dev/null)
  echo "doctor under load $i: exit $rc, $status" >>"$summary"
  case $rc in 0) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
  [[ $status == warn* ]] && warn=$((warn + 1))
done
kill $load 2>/dev/null; wait $load 2>/dev/null; trap - EXIT
echo "doctor --device 0 beside a $load_size create/verify loop: $runs runs, $pass exit 0, $fail failed, $warn warned" | tee -a "$summary"

pids=()
for i in $(seq "$concurrent"); do
  "$bin" create --device $(((i - 1) % count)) --size 2GiB --map --verify --json >"$out/create-$i.json" 2>"$out/create-$i.err" &
  pids+=($!)
done
ok=0 warned=0 failed=0
for i in $(seq "$concurrent"); do
  wait "${pids[$((i - 1))]}"; rc=$?
  w=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["warnings"]))' "$out/create-$i.json" 2>/dev/null || echo "?")
  echo "create $i: exit $rc, $w warnings" >>"$summary"
  if ((rc == 0)); then ok=$((ok + 1)); else failed=$((failed + 1)); fi
  [[ $w != 0 ]] && warned=$((warned + 1))
done
echo "$concurrent concurrent create --size 2GiB --map --verify over $count device(s): $ok exit 0, $failed failed, $warned with a warning" | tee -a "$summary"
((fail == 0 && warn == 0 && failed == 0 && warned == 0))
