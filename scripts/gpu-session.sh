#!/usr/bin/env bash
# One GPU-tier session on a real node, as recorded in docs/hardware/: the whole GPU tier, then the
# IMEX before/after story of the issues (doctor and a fabric create before any channel node exists,
# imex-setup --verify, a rerun, the fabric create and doctor after), each output kept in OUTDIR.
#   scripts/gpu-session.sh BINARY OUTDIR        (root; leaves channel0 in place, as imex-setup made it)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$1
out=$2
mkdir -p "$out"
step() { echo "== $*"; }
run() { # run NAME CMD...: keeps stdout as NAME.json (or .txt), prints the exit code and time
  local name=$1; shift
  local start=$(date +%s.%N)
  "$@" >"$out/$name" 2>"$out/$name.err"
  local rc=$?
  printf '%-28s exit %d  %.3f s\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $start" | awk '{print $1 - $3}')"
}
step "node"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
ls -la /dev/nvidia-caps-imex-channels 2>&1 | head -5
step "GPU tier (tests/gpu)"
CUMEMCTL_GPU_ALLOW_MKNOD=1 CUMEMCTL="$bin" bash scripts/gpu-check.sh "$out/gpu-results.txt"
step "before imex-setup"
run doctor-before.json "$bin" doctor --json
run doctor-before.txt "$bin" doctor --no-color
run create-fabric-before.json "$bin" create --size 2MiB --handle-type fabric --export --json
run imex-check-before.json "$bin" imex-setup --check --json
step "imex-setup"
run imex-setup.json "$bin" imex-setup --verify --json
run imex-setup-rerun.json "$bin" imex-setup --json
step "after imex-setup"
run create-fabric-after.json "$bin" create --size 2MiB --handle-type fabric --map --verify --export --import-check --json
run doctor-after.json "$bin" doctor --json
run doctor-after.txt "$bin" doctor --no-color
run doctor-after.prom "$bin" doctor --format prometheus
for i in 1 2 3; do run "doctor-time-$i.json" "$bin" doctor --json; done
step "other commands"
run devices.txt "$bin" devices --no-color
run granularity.txt "$bin" granularity --no-color
run create-1g.json "$bin" create --size 1GiB --map --verify --json
run create-posix.json "$bin" create --size 64MiB --handle-type posix-fd --map --verify --export --import-check --json
run create-host.json "$bin" create --size 64MiB --location host --map --verify --json
run create-host-numa.json "$bin" create --size 64MiB --location host-numa --map --verify --json
run create-bad-size.json "$bin" create --size 12345 --json
run pool-stats.json "$bin" pool-stats --exercise 64x16MiB --json
run pool-stats.txt "$bin" pool-stats --exercise 64x16MiB --no-color
run trim.json "$bin" trim --json
run create-pool-ipc.json "$bin" create --pool --size 64MiB --handle-type posix-fd --ipc-check --json
run create-pool-fabric.json "$bin" create --pool --size 64MiB --handle-type fabric --ipc-check --json
run le-bind.json "$bin" le-bind --device 0 --size 2MiB --json
run le-bind-limits.json "$bin" le-bind --device 0 --size 2MiB --limits-only --json
ls -la /dev/nvidia-caps-imex-channels
step "multi-node NVLink fabric (not attached on a standalone GPU: both checks skip with the reason)"
nvidia-smi -q | awk '/^    Fabric$/ {p = 1; print; next} p && /^    [^ ]/ {p = 0} p' >"$out/nvidia-smi-fabric.txt"
run devices-fabric.json "$bin" devices --json
run doctor-mnnvl.json "$bin" doctor --checks fabric,imex-domain --json
run doctor-mnnvl.txt "$bin" doctor --checks fabric,imex-domain --no-color
step "locality domains (CUDA 13.4; below 13.4: devices says unknown, every domain:I command exits 3)"
run devices-locality.json "$bin" devices --no-free --json
run devices-locality.txt "$bin" devices --no-free --no-color
run granularity-domain.json "$bin" granularity --location domain:0 --json
run create-domain.json "$bin" create --size 64MiB --location domain:0 --verify --json
run create-pool-domain.json "$bin" create --pool --size 64MiB --location domain:0 --handle-type posix-fd --ipc-check --json
run pool-stats-domain.json "$bin" pool-stats --location domain:0 --json
run trim-domain.json "$bin" trim --location domain:0 --json
run create-domain-rdma.json "$bin" create --size 2MiB --location domain:0 --rdma --json
run create-domain-rdma-pcie.json "$bin" create --size 2MiB --location domain:0 --rdma --rdma-over-pcie --json
run doctor-locality.json "$bin" doctor --checks locality --json
python3 tests/cli/fixtures/locality_trap.py libcuda.so.1 >"$out/locality-trap.txt" 2>&1
step "every report of the session against the schema (schema/report.schema.json)"
run granularity.json "$bin" granularity --json
run memtest-1g.json "$bin" memtest --device 0 --size 1GiB --json
run fleet.json "$bin" fleet "$out/doctor-after.json" "$out/devices-fabric.json" --json
if python3 -c 'import jsonschema' 2>/dev/null; then
  python3 tests/cli/validate_reports.py "$out"/*.json >"$out/schema-check.txt" 2>&1
  echo "schema check: exit $? ($(tail -1 "$out/schema-check.txt"); failures in $out/schema-check.txt)"
else
  echo "schema check: skipped (python3-jsonschema is not installed: pip install jsonschema)"
fi
