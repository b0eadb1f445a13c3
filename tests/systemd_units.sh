#!/usr/bin/env bash
# The shipped systemd units (packaging/systemd): systemd-analyze verify, then the service's ExecStart
# as systemd runs it ($$ to $), with the built cumemctl and the fake driver, into a temporary textfile
# folder: the file must be there, whole, and pass promtool check metrics' parser. Under a second;
# skipped (125) without systemd-analyze.
#   systemd_units.sh CUMEMCTL FAKECUDA FAKENVML PROFILE
set -euo pipefail
cumemctl=$(realpath "$1") fake=$(realpath "$2") fakenvml=$(realpath "$3") profile=$(realpath "$4")
units=$(cd "$(dirname "$0")/../packaging/systemd" && pwd)
command -v systemd-analyze >/dev/null || { echo "systemd_units: no systemd-analyze"; exit 125; }
systemd-analyze verify --man=no "$units/cumemctl-doctor.service" "$units/cumemctl-doctor.timer"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/textfile"
ln -s "$cumemctl" "$tmp/bin/cumemctl"
exec_start=$(sed -n 's/^ExecStart=//p' "$units/cumemctl-doctor.service" | sed 's/\$\$/$/g')
[[ $exec_start == "/bin/sh -c '"*"'" ]] || { echo "ExecStart is not /bin/sh -c '...': $exec_start"; exit 1; }
script=${exec_start#/bin/sh -c \'}
script=${script%\'}
PATH="$tmp/bin:$PATH" TEXTFILE_DIR="$tmp/textfile" CUMEMCTL_LIBCUDA=$fake CUMEMCTL_LIBNVML=$fakenvml \
  FAKECUDA_PROFILE=$profile /bin/sh -c "$script"
ls "$tmp/textfile"
[[ $(ls "$tmp/textfile") == cumemctl-doctor.prom ]] || { echo "the textfile folder holds $(ls "$tmp/textfile")"; exit 1; }
grep -q '^cumemctl_check_status{check="driver",status="pass"} 1$' "$tmp/textfile/cumemctl-doctor.prom"
if command -v promtool >/dev/null; then
  # dcgm-exporter's camelCase label names are the one lint allowed (tests/slurm/prometheus_test.py).
  lint=$(promtool check metrics <"$tmp/textfile/cumemctl-doctor.prom" 2>&1 || true)
  other=$(grep -v "camelCase" <<<"$lint" || true)
  [[ -z $other ]] || { echo "promtool check metrics: $other"; exit 1; }
fi
echo "systemd units: ok"
