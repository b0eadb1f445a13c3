#!/usr/bin/env bash
# A Slurm cluster on this one machine, for tests: slurmctld and three slurmd "nodes" n1..n3, with
# auth/none (insecure: tests only), no systemd, everything in a temporary folder. Each node declares four
# GPUs as generic resources (GresTypes=gpu, Gres=gpu:4; gres.conf's File= entries are stand-in device
# nodes dev/nvidia0..3 of the folder), so that srun's --gpus-per-node and --gpus-per-task work as on a
# GPU cluster: Slurm gives each step the GPUs it asked for in CUDA_VISIBLE_DEVICES, which the fake driver
# (tests/fakecuda, profile gb200x4: four GPUs) honours.
# Where the kernel has cgroup v1's devices and freezer controllers (this machine and CI do), the cluster
# is Slurm's task/cgroup with ConstrainDevices=yes, for real: each step's device cgroup refuses the
# stand-in nodes of the GPUs it was not given, and the fake driver and NVML, told the nodes' path
# (FAKECUDA_DEVICE_NODES, tests/fakecuda/device_nodes.hpp), show only the GPUs whose node opens, as the
# real ones do. SLURM_TEST_CGROUPS is then 1. Without those controllers it is 0, and the node wrapper of
# harness.py plays ConstrainDevices=yes (write_node_wrapper's constrain_devices).
#   cluster.sh [--prolog FILE] [--epilog FILE] [--conf LINE]... -- COMMAND [ARGS...]
# (--conf: a line added to slurm.conf, e.g. HealthCheckProgram=FILE.)
# Starts the cluster, waits until every node is idle, runs COMMAND with SLURM_CONF set (and
# SLURM_TEST_DIR: the temporary folder, world-readable, with a world-writable work/ inside), and
# stops what it started on exit, whether COMMAND passed, failed or the script was interrupted: first
# the cluster's own jobs (scancel), then the daemons, then the folder. Exits with COMMAND's status.
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm 22.05 (Slurm 22.05 or later).
set -euo pipefail
prolog="" epilog="" extra_conf=""
while (($#)); do
  case $1 in
    --prolog) prolog=$(realpath "$2"); shift 2 ;;
    --epilog) epilog=$(realpath "$2"); shift 2 ;;
    --conf) extra_conf+="$2"$'\n'; shift 2 ;;
    --) shift; break ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "usage: cluster.sh [--prolog FILE] [--epilog FILE] [--conf LINE]... -- COMMAND [ARGS...]" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "cluster.sh: needs root (slurmd starts jobs as their users)" >&2; exit 2; }

dir=$(mktemp -d /tmp/cumemctl-slurm.XXXXXX)
chmod 0755 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/work" "$dir/dev"
# The GPUs' stand-in device nodes: the NVIDIA character major (195) and minors 0..3, as /dev/nvidiaN are.
# slurmd only stats them (their numbers are what ConstrainDevices would allow); no driver serves them.
for i in 0 1 2 3; do mknod -m 0666 "$dir/dev/nvidia$i" c 195 "$i"; done
chmod 1777 "$dir/work"
# cgroup v1's devices controller (ConstrainDevices) and freezer (proctrack/cgroup), if this kernel lets
# a folder be made in them.
cgroups=0
if [[ -f /sys/fs/cgroup/devices/devices.allow && -f /sys/fs/cgroup/freezer/tasks ]]; then
  probe=/sys/fs/cgroup/devices/cumemctl-probe.$$
  mkdir "$probe" 2>/dev/null && rmdir "$probe" && cgroups=1
fi
export SLURM_CONF=$dir/slurm.conf SLURM_TEST_DIR=$dir SLURM_TEST_CGROUPS=$cgroups
started=0 child=""

log_tail() {
  for f in "$dir"/log/*.log; do
    [[ -f $f ]] && { echo "--- $f"; tail -15 "$f"; }
  done
}

# The pid a daemon wrote to its pid file, if that process is still alive.
live_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

stop() {
  local status=$? pids=() pid f i
  trap - EXIT INT TERM
  set +e  # everything below is tried, whatever fails
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null
    wait "$child" 2>/dev/null
  fi
  if ((started)); then
    # The cluster's own jobs first, through Slurm: their slurmstepd processes are not the daemons'
    # children once those have daemonised.
    local jobs=()
    mapfile -t jobs < <(squeue -h -o %i 2>/dev/null)
    ((${#jobs[@]} == 0)) || scancel --full --quiet "${jobs[@]}" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  for f in "$dir"/slurmd.*.pid "$dir"/slurmctld.pid; do
    [[ -f $f ]] && pid=$(live_pid "$f") && pids+=("$pid") && kill -TERM "$pid" 2>/dev/null
  done
  for ((i = 0; i < 50; i++)); do
    local alive=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    ((${#alive[@]})) || break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && { echo "cluster.sh: pid $pid did not stop, killing it" >&2; kill -KILL "$pid"; }
  done
  ((status == 0)) || log_tail >&2
  # The cgroup folders Slurm made for this cluster's jobs (slurm_nN/uid_U/job_J in each controller, J
  # from FirstJobId on), innermost first; then, when no other cluster's slurmd runs, the slurm_nN
  # folders above them. rmdir leaves any that still hold a process.
  if ((cgroups)); then
    for f in /sys/fs/cgroup/*/slurm_n[1-3]/uid_*/job_*; do
      [[ -d $f ]] || continue
      local job=${f##*/job_}
      [[ $job =~ ^[0-9]+$ ]] && ((job >= ${base:-0} * 10 && job < ${base:-0} * 10 + 100)) || continue
      find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    if ! pgrep -x slurmd >/dev/null; then
      for f in /sys/fs/cgroup/*/slurm_n[1-3]; do
        [[ -d $f ]] && find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
      done
    fi
  fi
  rm -rf "$dir"
  exit "$status"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Ports: a free block of four (slurmctld, n1..n3), so that two clusters never meet.
base=$(/usr/bin/python3 - <<'PY'
import random, socket
for _ in range(100):
    base = random.randrange(20000, 30000, 10)
    try:
        socks = [socket.create_server(("127.0.0.1", base + i)) for i in range(4)]
    except OSError:
        continue
    for s in socks:
        s.close()
    print(base)
    break
PY
)
[[ -n $base ]] || { echo "cluster.sh: no free block of four ports" >&2; exit 1; }
host=$(hostname -s)

# Each node has an address of its own (127.0.0.1-3, all loopback), as real nodes have. Slurm's PMIx
# plugin connects a job's slurmstepds to each other by the node's address: with one address for all
# three, its direct connections reached the wrong node ("unexpected contrib from n3:2", a fence that
# never returns) and, with them turned off, the second fence of a job lost one node's data now and then
# (NOT-FOUND, also in a small C program of PMIx calls alone). With three addresses neither is seen.
# With cgroups, a job's cgroup folders (slurm_nN/uid_U/job_J) are this machine's, not the cluster's:
# FirstJobId from the ports keeps two clusters' job numbers apart (base is a multiple of 10, so each
# cluster has 100 numbers of its own; the tests make far fewer jobs).
proctrack=proctrack/pgid task=task/none
((cgroups)) && proctrack=proctrack/cgroup task=task/cgroup
cat >"$SLURM_CONF" <<EOF
ClusterName=cumemctl-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/mine
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
SlurmdDebug=info
SlurmctldDebug=info
SlurmdParameters=config_overrides
ProctrackType=$proctrack
TaskPlugin=$task
FirstJobId=$((base * 10))
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
GresTypes=gpu
PrologFlags=Alloc
TmpFS=$dir/nodetmp/mine
${prolog:+Prolog=$prolog}
${epilog:+Epilog=$epilog}
${extra_conf}NodeName=n[1-3] NodeHostname=$host NodeAddr=127.0.0.[1-3] Port=[$((base + 1))-$((base + 3))] CPUs=4 RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=n[1-3] Default=YES MaxTime=10 State=UP
EOF
# cgroup.conf too: only the devices are constrained (ConstrainDevices=yes), as on a GPU cluster.
if ((cgroups)); then
  cat >"$dir/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainDevices=yes
EOF
fi
# gres.conf sits beside slurm.conf, where slurmd looks for it.
cat >"$dir/gres.conf" <<EOF
NodeName=n[1-3] Name=gpu File=$dir/dev/nvidia[0-3]
EOF

start=$SECONDS
started=1
slurmctld -i
# Each slurmd sees a temporary folder and a spool folder of its own, as real nodes do: a private mount
# namespace with the node's folders bound at TmpFS and SlurmdSpoolDir. Slurm's PMIx plugin makes its
# per-step folders in TmpFS, the same path on every node, and reaches a step's slurmstepd through a
# socket in the spool folder whose path it takes from slurm.conf as written (its messages named
# "spool/%n/stepd.slurm.pmix.J.S" while SlurmdSpoolDir had a %n: one path for the three nodes), so
# srun --mpi=pmix across the three nodes needs both.
mkdir -p "$dir/nodetmp/mine" "$dir/spool/mine"
for n in n1 n2 n3; do
  mkdir -p "$dir/spool/$n" "$dir/nodetmp/$n"
  chmod 1777 "$dir/nodetmp/$n"
  unshare --mount --propagation private \
    bash -c 'mount --bind "$1" "$2" && mount --bind "$3" "$4" && exec slurmd -N "$5"' slurmd-ns \
    "$dir/nodetmp/$n" "$dir/nodetmp/mine" "$dir/spool/$n" "$dir/spool/mine" "$n"
done
for ((i = 0; i < 150; i++)); do
  [[ $(sinfo -h -o %T 2>/dev/null | sort -u) == idle ]] && break
  sleep 0.2
done
if [[ $(sinfo -h -o %T 2>/dev/null | sort -u) != idle ]]; then
  echo "cluster.sh: the nodes are not idle after 30 s:" >&2
  sinfo >&2 || true
  exit 1
fi
constrained="no cgroups: the node wrapper plays ConstrainDevices=yes"
((cgroups)) && constrained="task/cgroup with ConstrainDevices=yes"
echo "cluster.sh: 3 nodes idle after $((SECONDS - start)) s (ports $base-$((base + 3)), $dir, $constrained)"
# In the background, so that a signal to this script stops the cluster at once (stop() ends it first).
(
  trap - EXIT INT TERM
  exec "$@"
) &
child=$!
status=0
wait "$child" || status=$?
child=""
exit "$status"
