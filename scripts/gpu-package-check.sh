#!/usr/bin/env bash
# The GPU tier against the packaged amd64 binary, as a node gets it: installs DIST's
# cumemctl_VERSION_amd64.deb with dpkg -i, checks that /usr/bin/cumemctl is DIST/bin/amd64/cumemctl
# (the stripped release binary, glibc 2.31 floor) and runs scripts/gpu-check.sh against it, then removes
# the package. The programs of the GPU tier that the package does not ship are a build's: the verify
# probe (VERIFY_PROBE, default build/tests/gpu/verify_probe) and the copy benchmark that memtest's
# bandwidth is judged against (BENCH_COPY_BANDWIDTH, default build/bench/bench_copy_bandwidth). Root.
# Exit as scripts/gpu-check.sh (0 passed, 1 failed, 125 no GPU).
#   scripts/gpu-package-check.sh DIST [RESULTS-FILE]
set -uo pipefail
cd "$(dirname "$0")/.."
dist=$1 out=${2:-gpu-package-results.txt}
deb=$(ls "$dist"/cumemctl_*_amd64.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { echo "gpu-package-check: no cumemctl_*_amd64.deb in $dist" >&2; exit 1; }
export VERIFY_PROBE=${VERIFY_PROBE:-build/tests/gpu/verify_probe}
[[ -x $VERIFY_PROBE ]] || { echo "gpu-package-check: no verify probe at $VERIFY_PROBE (scripts/build.sh build)" >&2; exit 1; }
export BENCH_COPY_BANDWIDTH=${BENCH_COPY_BANDWIDTH:-$PWD/build/bench/bench_copy_bandwidth}
[[ -x $BENCH_COPY_BANDWIDTH ]] ||
  { echo "gpu-package-check: no copy benchmark at $BENCH_COPY_BANDWIDTH (scripts/build.sh build)" >&2; exit 1; }
dpkg -i "$deb" || exit 1
trap 'dpkg -r cumemctl >/dev/null' EXIT
cmp -s /usr/bin/cumemctl "$dist/bin/amd64/cumemctl" || { echo "gpu-package-check: /usr/bin/cumemctl is not $dist/bin/amd64/cumemctl" >&2; exit 1; }
echo "package: $(dpkg-query -W -f='${Package} ${Version} ${Architecture}' cumemctl); $(/usr/bin/cumemctl --version)"
echo "glibc here: $(ldd --version | head -1)"
CUMEMCTL_GPU_ALLOW_MKNOD=1 CUMEMCTL=/usr/bin/cumemctl bash scripts/gpu-check.sh "$out"
