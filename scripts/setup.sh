#!/usr/bin/env bash
# Installs what building and testing cumemctl needs, from Debian's packages (the fleet stage of
# scripts/test.sh runs a Slurm cluster, pdsh, munged (fleet --require-signed) and Prometheus' node exporter and promtool from them; they
# are installed, never started: tests/slurm starts what it needs and stops it; the release stage,
# tests/release/run.sh, builds with clang and lld against Debian 11 roots that debootstrap makes, runs
# the aarch64 binary under qemu-user, packs and checks .deb and .rpm files, and writes the container
# images (jq) and runs one with runc, unpacked by umoci and read by skopeo; the k8s-manifests test
# renders packaging/k8s with kubectl). Idempotent: when every
# package is there it changes nothing and says so. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git
  libcli11-dev libfmt-dev nlohmann-json3-dev doctest-dev
  python3 python3-jsonschema python3-prometheus-client
  groff-base man-db bash-completion zsh
  clang libclang-rt-14-dev clang-tidy clang-format
  python3-yaml python3-kubernetes python3-lxml python3-junitparser strace
  chromium python3-pil fonts-dejavu-core
  libpmix-dev libpmix2 openmpi-bin
  slurm-wlm pdsh prometheus-node-exporter prometheus munge libmunge2
  lld llvm debootstrap qemu-user-static rpm lintian
  runc umoci skopeo jq
)
# kubectl: Debian's kubernetes-client, unless a kubectl is there already (another package's, such as the
# Google Cloud SDK's, which has the same path).
command -v kubectl >/dev/null || packages+=(kubernetes-client)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  # The daemons among them (slurmctld, slurmd, munge, prometheus, prometheus-node-exporter) are not to
  # be started by their packages' scripts: where no policy-rc.d says so already (Docker images have
  # one), one refuses every start for the time of the install.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    "${sudo_cmd[@]}" sh -c "printf '#!/bin/sh\\n# cumemctl scripts/setup.sh: no service starts during its apt-get install\\nexit 101\\n' >$policy && chmod 0755 $policy"
    trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

# The CUDA toolkit (headers, and nvcc for the verification kernels) is not a Debian package here.
if [[ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cuda.h" ]]; then
  echo "setup: the CUDA toolkit is missing: install it so that ${CUDA_HOME:-/usr/local/cuda}/include/cuda.h exists" >&2
  exit 1
fi
# nvcc builds the verify kernels that the binary embeds (src/gpu/verify/verify_kernels.cu).
if [[ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]] && ! command -v nvcc >/dev/null; then
  echo "setup: nvcc is missing: install the CUDA toolkit's compiler (cuda-nvcc) in ${CUDA_HOME:-/usr/local/cuda}" >&2
  exit 1
fi
