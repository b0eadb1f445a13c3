#!/usr/bin/env bash
# doctor beside a neighbour that holds all of GPU 0's memory but 64 MiB (busy is no failure), then doctor --quick
# and the full doctor against their floors on the idle GPU; one results file.
#
#   bench/doctor_busy.sh CUMEMCTL OUTPUT.json        on the GPU machine (bench targets built)
#
# With the neighbour (bench_hold_memory, from the binary's build folder, BUILD/bench/) holding the memory:
#   doctor --json               expected: exit 0, results.status busy, a busy check naming its pid
#   doctor --expect-idle --json expected: exit 1, a failed check naming its pid
#   doctor --format line        the one line, kept
#   doctor --quick --json       expected: exit 0, no busy or failed check (it needs no memory)
# Then, the neighbour gone: bench/run.sh --only doctor (doctor --quick <= 1.10x bench_doctor_floor quick;
# the full doctor's ratio to bench_doctor_floor full). OUTPUT.json holds every verdict and "pass"; the
# outputs are kept in OUTPUT.d/. Exit 0 when everything expected held, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(readlink -f "$1")
out=$2
build=$(dirname "$(dirname "$bin")")
hold=$build/bench/bench_hold_memory
dir=${out%.json}.d
mkdir -p "$dir"
for p in "$hold" "$build/bench/bench_doctor_floor"; do
  [[ -x $p ]] || { echo "doctor_busy: $p is missing: cmake --build $build --target bench_hold_memory bench_doctor_floor bench_floor bench_spawn bench_copy_bandwidth" >&2; exit 2; }
done
nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv,noheader >"$dir/nvidia-smi-before.txt" 2>&1

# The neighbour: holds the memory while its stdin (our pipe) is open.
# shellcheck source=bench/holder.bash
source "$here/holder.bash"
trap 'kill "$holder_pid" 2>/dev/null' EXIT
if ! start_holder "$hold" 64 "$dir/holder.json"; then
  echo "doctor_busy: the neighbour did not get ready: $holder" >&2
  exit 2
fi
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader >"$dir/nvidia-smi-apps.txt" 2>&1
run() { # run NAME CMD...: stdout to NAME, stderr to NAME.err, the exit code to NAME.rc
  local name=$1; shift
  "$@" >"$dir/$name" 2>"$dir/$name.err"
  echo $? >"$dir/$name.rc"
}
run doctor.json "$bin" doctor --json
run doctor-expect-idle.json "$bin" doctor --expect-idle --json
run doctor-line.txt "$bin" doctor --format line
run doctor-table.txt "$bin" doctor --no-color
run doctor-quick-beside.json "$bin" doctor --quick --json
stop_holder  # closes the neighbour's stdin: it ends and its memory goes back
sleep 1

# The benchmark of the quick level and the full doctor against their floors, on the idle GPU.
bash "$here/run.sh" --only doctor "$bin" "$dir/bench.json" >"$dir/bench.log" 2>&1
echo $? >"$dir/bench.rc"

python3 - "$dir" "$out" <<'PY'
import json, os, sys
d, out = sys.argv[1], sys.argv[2]
def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
def rc(name):
    try:
        return int(open(os.path.join(d, name + ".rc")).read())
    except (OSError, ValueError):
        return None
holder = load("holder.json") or {}
pid = holder.get("pid")
def naming(doc, status):
    """The checks of `status` whose held_by names the neighbour."""
    checks = ((doc or {}).get("results") or {}).get("checks") or []
    return [c["check"] + (f" (GPU {c['device']})" if c.get("device") is not None else "") for c in checks
            if c.get("status") == status and any(h.get("pid") == pid for h in (c.get("details") or {}).get("held_by") or [])]
doctor, idle, quick = load("doctor.json"), load("doctor-expect-idle.json"), load("doctor-quick-beside.json")
res = {"holder": holder}
res["doctor"] = {"exit": rc("doctor.json"), "status": ((doctor or {}).get("results") or {}).get("status"),
                 "busy_checks_naming_holder": naming(doctor, "busy")}
res["doctor"]["pass"] = res["doctor"]["exit"] == 0 and res["doctor"]["status"] == "busy" and bool(res["doctor"]["busy_checks_naming_holder"])
res["expect_idle"] = {"exit": rc("doctor-expect-idle.json"), "failed_checks_naming_holder": naming(idle, "fail")}
res["expect_idle"]["pass"] = res["expect_idle"]["exit"] == 1 and bool(res["expect_idle"]["failed_checks_naming_holder"])
res["line"] = open(os.path.join(d, "doctor-line.txt")).read().strip()
qs = ((quick or {}).get("results") or {}).get("summary") or {}
res["quick_beside"] = {"exit": rc("doctor-quick-beside.json"), "summary": qs,
                       "pass": rc("doctor-quick-beside.json") == 0 and qs.get("busy", 0) == 0 and qs.get("fail", 1) == 0}
bench = load("bench.json") or {}
for g in bench.get("groups", []):
    if g.get("id") in ("doctor-quick", "doctor-floor") and len(g.get("items", [])) == 2:
        floor, tool = g["items"]
        res[g["id"]] = {"floor_median_s": (floor.get("seconds") or {}).get("median"),
                        "cumemctl_median_s": (tool.get("seconds") or {}).get("median"),
                        "vs_floor": tool.get("vs_floor"), "target": tool.get("target"), "met": tool.get("met")}
res["quick_target_met"] = (res.get("doctor-quick") or {}).get("met") is True
res["pass"] = all([res["doctor"]["pass"], res["expect_idle"]["pass"], res["quick_beside"]["pass"], res["quick_target_met"]])
with open(out, "w") as f:
    json.dump(res, f, indent=1)
print(json.dumps(res, indent=1))
sys.exit(0 if res["pass"] else 1)
PY
