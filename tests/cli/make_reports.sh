#!/usr/bin/env bash
# Writes a small fleet of reports for the fleet tests, each with its own CUMEMCTL_HOST:
#   gpu01-gpu03  H200, doctor passes (IMEX channels not checked: no mknod needed)
#   gpu04        H200, doctor warns: no IMEX channel node
#   gpu05        H100 on a CUDA 12.4 driver: passes, differs in driver and capabilities
#   gpu06        no GPU: doctor fails
#   dev01        a devices report of gpu01
#   make_reports.sh DIR FAKE_LIBCUDA CUMEMCTL PROFILES SYSROOT_SCRIPT
set -uo pipefail
dir=$1 fake=$2 cumemctl=$3 profiles=$4 sysroot=$5
mkdir -p "$dir"
"$sysroot" "$dir/root" --module 580.159.04
run() {  # HOST PROFILE ARGS...
  local host=$1 profile=$2
  shift 2
  CUMEMCTL_HOST=$host CUMEMCTL_LIBCUDA=$fake FAKECUDA_PROFILE="$profiles/$profile.json" \
    CUMEMCTL_SYSROOT="$dir/root" "$cumemctl" "$@" --json
}
passing=driver,devices,context,capabilities,logical-endpoints
for n in 1 2 3; do run gpu0$n h200 doctor --checks $passing >"$dir/gpu0$n.json"; done
run gpu04 h200 doctor >"$dir/gpu04.json"
run gpu05 cuda12 doctor --checks $passing >"$dir/gpu05.json"
run gpu06 no-gpu doctor >"$dir/gpu06.json"
run gpu01 h200 devices >"$dir/dev01.json"
exit 0
