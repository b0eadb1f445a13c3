#!/usr/bin/env bash
# Adds an IMEX service to a system root made by sysroot.sh (doctor's imex-domain check):
# /etc/nvidia-imex/config.cfg and its node file, the nvidia-imex systemd unit, and a /proc entry for a
# running daemon (/proc/4194242: its comm, its status's uids and its exe link, as the kernel shows them).
#   imex_sysroot.sh DIR [--nodes A,B,...] [--bind IP] [--cmd 0|1] [--nodes-file PATH]
#                       [--unit loaded|masked|none] [--exec-start PATH] [--not-running] [--no-config]
#                       [--daemon-uid N] [--daemon-exe PATH] [--daemon-comm NAME]
# Defaults: nodes 127.0.0.1,10.0.0.2 (127.0.0.1 is an address of every host), the command service on
# port 50005, the unit loaded (ExecStart=/usr/bin/nvidia-imex), the daemon running as uid 0 from
# /usr/bin/nvidia-imex under the name nvidia-imex.
set -euo pipefail
root=$1
shift
nodes=127.0.0.1,10.0.0.2 bind="" cmd=1 unit=loaded running=1 config=1 nodes_file=/etc/nvidia-imex/nodes_config.cfg
exec_start=/usr/bin/nvidia-imex daemon_uid=0 daemon_exe=/usr/bin/nvidia-imex daemon_comm=nvidia-imex
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --bind) bind=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --nodes-file) nodes_file=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --not-running) running=0; shift ;;
    --no-config) config=0; shift ;;
    --exec-start) exec_start=$2; shift 2 ;;
    --daemon-uid) daemon_uid=$2; shift 2 ;;
    --daemon-exe) daemon_exe=$2; shift 2 ;;
    --daemon-comm) daemon_comm=$2; shift 2 ;;
    *) echo "imex_sysroot.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$root/etc/nvidia-imex" "$root/etc/systemd/system" "$root/proc"
if ((config)); then
  # The keys of the shipped config.cfg (mnnvl-facts.md 3.1).
  cat >"$root/etc/nvidia-imex/config.cfg" <<CFG
# IMEX settings (test system root)
LOG_LEVEL=4
LOG_FILE_NAME=/var/log/nvidia-imex.log
BIND_INTERFACE_IP=$bind
SERVER_PORT=50000
IMEX_NODE_CONFIG_FILE=$nodes_file
IMEX_CMD_ENABLED=$cmd
IMEX_CMD_PORT=50005
CFG
fi
mkdir -p "$root$(dirname "$nodes_file")"
tr , '\n' <<<"$nodes" >"$root$nodes_file"
case $unit in
  loaded) printf '[Service]\nType=forking\nExecStart=%s -c /etc/nvidia-imex/config.cfg\n' "$exec_start" \
            >"$root/etc/systemd/system/nvidia-imex.service" ;;
  masked) ln -sf /dev/null "$root/etc/systemd/system/nvidia-imex.service" ;;
  none) ;;
esac
if ((running)); then
  mkdir -p "$root/proc/4194242"
  echo "$daemon_comm" >"$root/proc/4194242/comm"
  printf 'Name:\t%s\nUid:\t%s\t%s\t%s\t%s\n' "$daemon_comm" "$daemon_uid" "$daemon_uid" "$daemon_uid" "$daemon_uid" \
    >"$root/proc/4194242/status"
  ln -sfn "$daemon_exe" "$root/proc/4194242/exe"
fi
