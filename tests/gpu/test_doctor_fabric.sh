#!/usr/bin/env bash
# GPU tier, opt-in (it creates and removes a device node): doctor's imex-channels and fabric-alloc
# checks before and after an IMEX channel node exists. Without channel nodes both must warn with the
# remedy; with a private channel0 (root, 0600) both must pass, as must the whole doctor (a real fabric
# allocation and export among them); the node is removed again.
# Runs only as root with CUMEMCTL_GPU_ALLOW_MKNOD=1 and when no channel node exists yet.
#   bash tests/gpu/test_doctor_fabric.sh BINARY       exit 0 pass, 1 fail, 125 skipped
set -uo pipefail
bin=$1
dir=/dev/nvidia-caps-imex-channels
[[ ${CUMEMCTL_GPU_ALLOW_MKNOD:-} == 1 ]] || { echo "skip: set CUMEMCTL_GPU_ALLOW_MKNOD=1 to allow mknod in $dir"; exit 125; }
[[ $(id -u) == 0 ]] || { echo "skip: needs root"; exit 125; }
major=$(awk '$2 == "nvidia-caps-imex-channels" {print $1}' /proc/devices)
[[ -n $major ]] || { echo "skip: the driver registers no IMEX channel major"; exit 125; }
if compgen -G "$dir/channel*" >/dev/null; then echo "skip: $dir already has channel nodes"; exit 125; fi
status() { "$bin" doctor --checks "${1:-imex-channels}" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["results"]["checks"][0]; print(c["status"]); print(c["remedy"], file=sys.stderr)'; }
failed=0
made_dir=0
[[ -d $dir ]] || made_dir=1
before=$(status 2>/tmp/cumemctl-remedy.$$)
remedy=$(cat /tmp/cumemctl-remedy.$$); rm -f /tmp/cumemctl-remedy.$$
echo "before: $before ($remedy)"
# IMEX's one remedy (imex::no_channel_remedy): imex-setup makes the node, --check --verify proves it.
[[ $before == warn && $remedy == *"cumemctl imex-setup"* && $remedy == *"imex-setup --check --verify"* ]] ||
  { echo "FAIL: expected warn with the remedy"; failed=1; }
fabric_before=$(status fabric-alloc 2>/tmp/cumemctl-remedy.$$)
fabric_remedy=$(cat /tmp/cumemctl-remedy.$$); rm -f /tmp/cumemctl-remedy.$$
echo "fabric-alloc before: $fabric_before ($fabric_remedy)"
[[ $fabric_before == warn && $fabric_remedy == "$remedy" ]] || { echo "FAIL: fabric-alloc: expected warn with the remedy"; failed=1; }
mkdir -p "$dir" && mknod -m 0600 "$dir/channel0" c "$major" 0
start=$(date +%s.%N)
after=$(status 2>/dev/null)
fabric_after=$(status fabric-alloc 2>/dev/null)
"$bin" doctor >/dev/null 2>&1; rc=$?
secs=$(awk "BEGIN{print $(date +%s.%N) - $start}")
echo "after: imex-channels $after, fabric-alloc $fabric_after; full doctor exit $rc; three runs ${secs}s"
[[ $after == pass ]] || { echo "FAIL: expected pass with channel0"; failed=1; }
[[ $fabric_after == pass ]] || { echo "FAIL: fabric-alloc: expected pass with channel0"; failed=1; }
[[ $rc == 0 ]] || { echo "FAIL: doctor exit $rc with channel0"; failed=1; }
rm -f "$dir/channel0"
((made_dir)) && rmdir "$dir"
exit $failed
