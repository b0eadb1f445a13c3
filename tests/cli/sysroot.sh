#!/usr/bin/env bash
# Makes a system root for doctor's tests (CUMEMCTL_SYSROOT): /proc/devices, /proc/driver/nvidia/params,
# /sys/module/nvidia/version, /etc/passwd and /etc/nsswitch.conf, and IMEX channel nodes.
#   sysroot.sh DIR [--major N | --no-major] [--users a,b] [--nss SOURCE] [--module VERSION]
#                  [--channel N[:MODE[:TYPE[:MAJOR:MINOR]]]]...   (TYPE c: character device, f: file)
#                  [--gpu BUSID:UUID]...   (/proc/driver/nvidia/gpus/BUSID/information naming UUID)
#                  [--rdma NAME]...        (/sys/class/infiniband/NAME: an RDMA device, as mlx5_core makes them)
#                  [--peermem]             (/sys/module/nvidia_peermem: the legacy GPUDirect RDMA module loaded)
#                  [--flavour open|proprietary] [--kernel RELEASE]   (/proc/driver/nvidia/version's first line;
#                                          /proc/sys/kernel/osrelease)
#                  [--xid DOMAIN:BUS:DEV:XID:USEC:TEXT]...   (an Xid record in the kernel log) [--no-kmsg]
#                  [--no-driver]           (a node whose NVIDIA kernel module is not loaded: no IMEX
#                                          major, no /proc/driver/nvidia, no /sys/module/nvidia, no NVRM
#                                          line in the kernel log; the case runner's default root)
# Channel nodes need mknod, that is root.
#
# The kernel log, ROOT/dev/kmsg, is in /dev/kmsg's record format, "PRIO,SEQ,USEC,FLAGS;MESSAGE"
# (the kernel's Documentation/ABI/testing/dev-kmsg), starting at sequence 0 (nothing overwritten). Its
# NVRM lines are as drivers log them: the module's load line as the H200's 580.159.04 open modules
# printed it (dmesg, 2026-12-01, /work/shared/xid-sources.md), an Xid line as
# "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to
# activate." (NVIDIA's Xid documentation and stas00/ml-engineering's debug.md) or "NVRM: Xid
# (PCI:0000:2b:00): 79, GPU has fallen off the bus." (NVIDIA/open-gpu-kernel-modules issue 1151): the
# PCI address is domain:bus:device, without the function. ROOT/proc/stat gives btime; ROOT/proc/self is
# where the fake driver writes what the kernel would say of its dma-bufs (FAKECUDA_PROC_SELF).
set -euo pipefail
root=$1
shift
major=511 users="" nss=files module=580.159.04 channels=() gpus=()
rdma=() peermem=0 flavour=open kernel=6.8.0-49-generic xids=() kmsg=1 driver=1
while (($#)); do
  case $1 in
    --major) major=$2; shift 2 ;;
    --no-major) major=""; shift ;;
    --users) users=$2; shift 2 ;;
    --nss) nss=$2; shift 2 ;;
    --module) module=$2; shift 2 ;;
    --channel) channels+=("$2"); shift 2 ;;
    --gpu) gpus+=("$2"); shift 2 ;;
    --rdma) rdma+=("$2"); shift 2 ;;
    --peermem) peermem=1; shift ;;
    --flavour) flavour=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --xid) xids+=("$2"); shift 2 ;;
    --no-kmsg) kmsg=0; shift ;;
    --no-driver) driver=0 major=""; shift ;;
    *) echo "sysroot.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$root/proc/driver/nvidia" "$root/sys/module/nvidia" "$root/etc" "$root/dev"
{
  echo "Character devices:"
  echo "  1 mem"
  echo "195 nvidia"
  [[ -n $major ]] && echo "$major nvidia-caps-imex-channels"
  echo
  echo "Block devices:"
  echo "  8 sd"
} >"$root/proc/devices"
printf 'ResmanDebugLevel: 4294967295\nImexChannelCount: 2048\nCreateImexChannel0: 0\n' >"$root/proc/driver/nvidia/params"
echo "$module" >"$root/sys/module/nvidia/version"
{
  echo "root:x:0:0:root:/root:/bin/bash"
  echo "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"
  uid=1000
  for u in ${users//,/ }; do echo "$u:x:$uid:$uid::/home/$u:/bin/bash"; uid=$((uid + 1)); done
} >"$root/etc/passwd"
echo "passwd: files $([[ $nss == files ]] || echo "$nss")" >"$root/etc/nsswitch.conf"
if ((${#channels[@]})); then
  dir="$root/dev/nvidia-caps-imex-channels"
  mkdir -p "$dir"
  for spec in "${channels[@]}"; do
    IFS=: read -r n mode type cmaj cmin <<<"$spec"
    mode=${mode:-0600} type=${type:-c} cmaj=${cmaj:-${major:-511}} cmin=${cmin:-$n}
    if [[ $type == f ]]; then : >"$dir/channel$n"; else mknod "$dir/channel$n" c "$cmaj" "$cmin"; fi
    chmod "$mode" "$dir/channel$n"
  done
fi
for spec in "${gpus[@]}"; do
  bus=${spec%%:GPU-*} uuid=GPU-${spec#*:GPU-}
  mkdir -p "$root/proc/driver/nvidia/gpus/$bus"
  printf 'Model: \t\t NVIDIA Fake\nIRQ:   \t\t 42\nGPU UUID: \t %s\nBus Location: \t %s\n' "$uuid" "$bus" \
    >"$root/proc/driver/nvidia/gpus/$bus/information"
done
mkdir -p "$root/proc/sys/kernel" "$root/proc/self" "$root/sys/class/infiniband"
echo "$kernel" >"$root/proc/sys/kernel/osrelease"
printf 'cpu  10 0 10 100 0 0 0 0 0 0\nbtime 1764547200\nprocesses 100\n' >"$root/proc/stat"
if [[ $flavour == open ]]; then
  first="NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  $module  Release Build  (dvs-builder@U22-I3-AE18-09-3)  Wed Oct  1 00:00:00 UTC 2025"
else
  first="NVRM version: NVIDIA UNIX x86_64 Kernel Module  $module  Wed Oct  1 00:00:00 UTC 2025"
fi
printf '%s\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n' "$first" >"$root/proc/driver/nvidia/version"
for name in "${rdma[@]}"; do mkdir -p "$root/sys/class/infiniband/$name"; done
if ((peermem)); then mkdir -p "$root/sys/module/nvidia_peermem"; fi
if ((kmsg)); then
  {
    echo "6,0,0,-;Linux version $kernel (buildd@lcy02-amd64-001) (gcc 13.2.0) #1 SMP PREEMPT_DYNAMIC"
    echo " SUBSYSTEM=cpu"
    echo "6,1,4012345,-;nvidia: loading out-of-tree module taints kernel."
    echo "6,2,4123456,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  $module  Release Build"
    seq=3
    for spec in "${xids[@]}"; do
      IFS=: read -r dom bus dev xid usec text <<<"$spec"
      echo "4,$seq,$usec,-;NVRM: Xid (PCI:$dom:$bus:$dev): $xid, $text"
      seq=$((seq + 1))
    done
  } >"$root/dev/kmsg"
fi
if ((driver == 0)); then
  rm -rf "$root/proc/driver/nvidia" "$root/sys/module/nvidia"
  [[ ! -f $root/dev/kmsg ]] || sed -i '/nvidia\|NVRM/d' "$root/dev/kmsg"
fi
