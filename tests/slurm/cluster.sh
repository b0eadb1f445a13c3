#!/usr/bin/env bash
# A Slurm cluster on this one machine, for tests: slurmctld and three slurmd "nodes" n1..n3, with
# auth/none (insecure: tests only), no systemd, no cgroups, everything in a temporary folder.
#   cluster.sh [--prolog FILE] [--epilog FILE] -- COMMAND [ARGS...]
# Starts the cluster, waits until every node is idle, runs COMMAND with SLURM_CONF set (and
# SLURM_TEST_DIR: the temporary folder, world-readable, with a world-writable work/ inside), and
# stops what it started on exit, whether COMMAND passed, failed or the script was interrupted: first
# the cluster's own jobs (scancel), then the daemons, then the folder. Exits with COMMAND's status.
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm 22.05 (Slurm 22.05 or later).
set -euo pipefail
prolog="" epilog=""
while (($#)); do
  case $1 in
    --prolog) prolog=$(realpath "$2"); shift 2 ;;
    --epilog) epilog=$(realpath "$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "usage: cluster.sh [--prolog FILE] [--epilog FILE] -- COMMAND [ARGS...]" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "cluster.sh: needs root (slurmd starts jobs as their users)" >&2; exit 2; }

dir=$(mktemp -d /tmp/cumemctl-slurm.XXXXXX)
chmod 0755 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/work"
chmod 1777 "$dir/work"
export SLURM_CONF=$dir/slurm.conf SLURM_TEST_DIR=$dir
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

cat >"$SLURM_CONF" <<EOF
ClusterName=cumemctl-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
SlurmdDebug=info
SlurmctldDebug=info
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
PrologFlags=Alloc
GresTypes=gpu
TmpFS=$dir/nodetmp/mine
${prolog:+Prolog=$prolog}
${epilog:+Epilog=$epilog}
NodeName=n[1-3] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((base + 1))-$((base + 3))] CPUs=4 RealMemory=1000 Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=n[1-3] Default=YES MaxTime=10 State=UP
EOF

# Four GPUs a node, as gres, so that docs/fleet.md's srun lines ask for GPUs as on a real cluster
# (--gpus-per-node): device files of the NVIDIA major in the cluster's folder stand for them (no
# cgroup constrains them here; Slurm sets CUDA_VISIBLE_DEVICES, which the fake driver honours).
mkdir -p "$dir/dev"
for i in 0 1 2 3; do [[ -e $dir/dev/nvidia$i ]] || mknod "$dir/dev/nvidia$i" c 195 "$i"; done
printf 'NodeName=n[1-3] Name=gpu File=%s/dev/nvidia[0-3]\n' "$dir" >"$dir/gres.conf"

# Two PMIx settings that only a cluster of nodes on one host needs (seen here with a small PMIx
# program, and with fabric-matrix): the nodes share one host name and address, so the PMIx plugin's
# direct connections between their slurmstepds reach the wrong node ("unexpected contrib from n3:2",
# "No process controlled by this slurmstepd is involved in this collective", a fence that never
# returns), while its messages through slurmd work; and PMIx's shared-memory store of a job's data
# collides between the three servers on one host (a second fence's data of one node NOT-FOUND, or a get
# that never returns), while its hash store works. A real cluster needs neither line.
printf 'PMIxDirectConn=false\nPMIxEnv=PMIX_MCA_gds=hash\n' >"$dir/mpi.conf"

start=$SECONDS
started=1
slurmctld -i
# Each slurmd sees a temporary folder of its own at TmpFS, as real nodes do (its own /tmp): a private
# mount namespace with the node's folder bound there. Slurm's PMIx plugin makes its per-step folders in
# TmpFS, the same path on every node, so srun --mpi=pmix across the three nodes needs it.
mkdir -p "$dir/nodetmp/mine"
for n in n1 n2 n3; do
  mkdir -p "$dir/spool/$n" "$dir/nodetmp/$n"
  chmod 1777 "$dir/nodetmp/$n"
  unshare --mount --propagation private \
    bash -c 'mount --bind "$1" "$2" && exec slurmd -N "$3"' slurmd-ns "$dir/nodetmp/$n" "$dir/nodetmp/mine" "$n"
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
echo "cluster.sh: 3 nodes idle after $((SECONDS - start)) s (ports $base-$((base + 3)), $dir)"
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
