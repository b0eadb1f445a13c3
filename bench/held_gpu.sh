#!/usr/bin/env bash
# Every command beside a job that holds GPU 0's memory: the table of cumemctl(1), EXIT STATUS,
# "A GPU held by other processes", on a real GPU. bench_hold_memory (BUILD/bench/) holds all of the
# memory but --leave MiB; each command runs beside it with --json, and its exit code, its first error's
# kind and whether held_by names the holder's pid are compared with what the table says.
#
#   bench/held_gpu.sh CUMEMCTL OUTPUT_DIR [LEAVE_MIB...]      (default: 1024 64)
#
# Writes OUTPUT_DIR/LEAVE/NAME.json (and .err, .rc) and OUTPUT_DIR/summary.txt, one line a run:
# "PASS|FAIL leave=MiB NAME: exit N (expected E), kind K, held_by names the holder: yes|no".
# Exit 0 when every run answered as expected, 1 otherwise, 2 when the holder did not start.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/holder.bash
source "$here/holder.bash"
bin=$(readlink -f "$1")
out=$2
shift 2
leaves=("$@")
((${#leaves[@]})) || leaves=(1024 64)
build=$(dirname "$(dirname "$bin")")
hold=$build/bench/bench_hold_memory
[[ -x $hold ]] || { echo "held_gpu: $hold is missing: cmake --build $build --target bench_hold_memory" >&2; exit 2; }
mkdir -p "$out"
: >"$out/summary.txt"
failed=0

# NAME|EXPECTED EXIT (0/3: either; a 3 must be busy naming the holder)|EXPECTED KIND (- any)|cumemctl's arguments, per amount left.
expected_1024=(
  "doctor|0|-|doctor"
  "doctor-expect-idle|1|-|doctor --expect-idle"
  "memtest|3|busy|memtest"
  "trim|0|-|trim"
  "trim-exercise-typed|2|usage|trim --exercise 64x16MiB"
  "create-2GiB|3|busy|create --size 2GiB --map"
  "create-pool-ipc|0/3|-|create --pool --size 64MiB --handle-type posix-fd --ipc-check"
)
expected_64=(
  "doctor|0|-|doctor"
  "doctor-expect-idle|1|-|doctor --expect-idle"
  "memtest-force|3|busy|memtest --force"
  "trim|3|busy|trim"
  "pool-stats|3|busy|pool-stats --exercise 4x2MiB"
  "create|3|busy|create --size 2MiB --map --verify"
  "create-pool|3|busy|create --pool --size 2MiB"
  "fabric-matrix|3|busy|fabric-matrix --local 1 --handle-type posix-fd"
)

for leave in "${leaves[@]}"; do
  dir=$out/$leave
  mkdir -p "$dir"
  if ! start_holder "$hold" "$leave" "$dir/holder.json"; then
    echo "held_gpu: the holder (leave $leave MiB) did not get ready: $holder" >&2
    exit 2
  fi
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader >"$dir/nvidia-smi-apps.txt" 2>&1
  if [[ $leave == 64 ]]; then list=("${expected_64[@]}"); else list=("${expected_1024[@]}"); fi
  for row in "${list[@]}"; do
    IFS='|' read -r name want_rc want_kind args <<<"$row"
    # shellcheck disable=SC2086 # the arguments are words
    "$bin" $args --json >"$dir/$name.json" 2>"$dir/$name.err"
    echo $? >"$dir/$name.rc"
    line=$(python3 - "$dir/$name.json" "$(cat "$dir/$name.rc")" "$want_rc" "$want_kind" "$holder" "$leave" "$name" <<'PY'
import json, sys
path, rc, want_rc, want_kind, holder, leave, name = sys.argv[1:]
pid = (json.loads(holder or "{}")).get("pid")
try:
    doc = json.load(open(path))
except ValueError:
    doc = {}
errors = doc.get("errors") or []
kind = errors[0].get("kind") if errors else "-"
named = any(h.get("pid") == pid for e in errors for h in (e.get("held_by") or []))
checks = (doc.get("results") or {}).get("checks") or []
named = named or any(h.get("pid") == pid for c in checks for h in ((c.get("details") or {}).get("held_by") or []))
ok = rc in want_rc.split("/") and (want_kind == "-" or kind == want_kind) and (want_kind != "busy" or named)
ok = ok and (rc != "3" or (kind == "busy" and named))
print(f"{'PASS' if ok else 'FAIL'} leave={leave} {name}: exit {rc} (expected {want_rc}), kind {kind}, "
      f"held_by names the holder: {'yes' if named else 'no'}")
PY
)
    echo "$line" | tee -a "$out/summary.txt"
    [[ $line == PASS* ]] || failed=$((failed + 1))
  done
  stop_holder  # the holder's stdin closes: it ends and its memory goes back
  sleep 1
done
echo "held_gpu: $failed unexpected" | tee -a "$out/summary.txt"
((failed == 0))
