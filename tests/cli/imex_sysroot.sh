#!/usr/bin/env bash
# Adds an IMEX service to a system root made by sysroot.sh (doctor's imex-domain check):
# /etc/nvidia-imex/config.cfg and its node file, the nvidia-imex systemd unit, and a /proc entry for a
# running daemon.
#   imex_sysroot.sh DIR [--nodes A,B,...] [--bind IP] [--cmd 0|1] [--nodes-file PATH]
#                       [--unit loaded|masked|none] [--not-running] [--no-config]
# Defaults: nodes 127.0.0.1,10.0.0.2 (127.0.0.1 is an address of every host), the command service on
# port 50005, the unit loaded, the daemon running.
set -euo pipefail
root=$1
shift
nodes=127.0.0.1,10.0.0.2 bind="" cmd=1 unit=loaded running=1 config=1 nodes_file=/etc/nvidia-imex/nodes_config.cfg
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --bind) bind=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --nodes-file) nodes_file=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --not-running) running=0; shift ;;
    --no-config) config=0; shift ;;
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
  loaded) printf '[Service]\nType=forking\nExecStart=/usr/bin/nvidia-imex -c /etc/nvidia-imex/config.cfg\n' \
            >"$root/etc/systemd/system/nvidia-imex.service" ;;
  masked) ln -sf /dev/null "$root/etc/systemd/system/nvidia-imex.service" ;;
  none) ;;
esac
if ((running)); then
  mkdir -p "$root/proc/4242"
  echo nvidia-imex >"$root/proc/4242/comm"
fi
