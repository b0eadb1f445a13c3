#!/usr/bin/env bash
# Tests what ships (docs/platforms.md), as root:
#   1. builds the release binaries, the fakes and the tests for both architectures against their Debian
#      11 roots (scripts/release.sh --tests), checks their glibc floor (scripts/check-glibc.sh), and packages them
#      (scripts/package.sh build-release/dist);
#   2. runs the end-to-end case files that only the shipped binary can show (packaged_files below) with
#      the packaged, stripped amd64 binary inside the Debian 11 amd64 root (glibc 2.31), and with the
#      aarch64 binary, fake driver and fake NVML inside the Debian 11 arm64 root under qemu-user
#      (binfmt_misc, so that second processes start too), and the aarch64 unit tests there;
#   3. checks the packages (tests/release/package_test.sh);
#   4. checks the container images and runs the amd64 one with runc, the fake driver mounted as the
#      NVIDIA container toolkit mounts the driver (tests/release/image_test.sh).
#   run.sh [STEP...]      STEP: build, amd64, arm64, packages, image (default all, in that order)
# The roots see /proc, /dev, /sys, /tmp and the source tree at their own paths, mounted in a mount
# namespace of this script's own (unshare), which goes with it.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
out=build-release
steps=("$@")
((${#steps[@]})) || steps=(build amd64 arm64 packages image)
[[ $(id -u) -eq 0 ]] || { echo "tests/release/run.sh: needs root (debootstrap, chroot, binfmt_misc, dpkg -i)" >&2; exit 1; }
jobs=$(nproc)

timed() { # NAME COMMAND...: runs it and says how long it took
  local start=$SECONDS status=0
  "${@:2}" || status=$?
  echo "release stage: $1: $((SECONDS - start)) s (exit $status)"
  return "$status"
}

# qemu-user for aarch64 programs, through binfmt_misc: the kernel starts every aarch64 executable with
# it, a second process too, and inside a root (flag F: the interpreter is opened at registration).
binfmt() {
  local dir=/proc/sys/fs/binfmt_misc
  [[ -e $dir/register ]] || mount -t binfmt_misc binfmt_misc "$dir"
  [[ -e $dir/qemu-aarch64 ]] || grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf >"$dir/register"
  grep -qx enabled "$dir/qemu-aarch64" || { echo "binfmt_misc: qemu-aarch64 is not enabled" >&2; return 1; }
}

# Cases left out where the binary runs in a root: ARCH (both, arm64), file, case, why. A case that drops
# to another user (setpriv) runs the binary with the root's loader rather than in a chroot
# (tests/release/in-root.sh), where a second process, which re-executes /proc/self/exe, cannot start.
why_user="its second process runs as another user, who cannot chroot (tests/release/in-root.sh)"
leave_out=(
  both imex_setup_verify.case "--verify as a user who cannot open the channel fails, and says so" "$why_user"
  both imex_setup_verify.case "--verify --owner needs root to become that user" "$why_user"
  arm64 devices.case "the toolkit's stub library is named as such"
  "the CUDA toolkit here is x86-64's: its stub libcuda.so is no aarch64 library"
)
# The case files the packaged binaries run in their roots, the aarch64 one under qemu: what only the
# shipped binary can show. It starts and explains itself without a driver (usage_before_driver), loads
# a driver through its seam (devices), embeds and launches its own verify kernels (verify_kernels: the
# fatbin goes in through assembly of each architecture's own), makes device nodes with its system
# calls (imex_setup: aarch64 has mknodat but no mknod), starts, talks to and reaps second processes
# (create's import check, imex_setup_verify, doctor's checks in doctor_matrix), and stops cleanly on a
# signal (signals). The other case files test the same code, parsing and rendering: they run in the
# sanitizer build (ASan and UBSan, natively), where they find more than a second run of the optimised
# binary would, at a fraction of the CPU (all of them took about 35 minutes of one core under qemu; the
# amd64 binary's run of all of them in its root about 9 CPU-minutes). create_pool's pool IPC and
# fabric_matrix's ranks start their second processes through the same code as create's import check
# (src/ipc), which stays.
packaged_files=()
for f in usage_before_driver devices verify_kernels imex_setup create imex_setup_verify doctor_matrix signals; do
  packaged_files+=("tests/cli/cases/$f.case")
done

# The end-to-end cases against one architecture's binary and fakes, each case file a process of its own
# (as ctest runs them), `jobs` at a time; the logs are in build-release/in-root-ARCH/. {cumemctl} is a
# script there that runs the binary in the root.
cases() { # ARCH BINARY [CASE-FILE...]
  local arch=$1 binary=$2 root=$src/$out/root-$1 fakes=$src/$out/$1/tests
  shift 2
  local dir=$src/$out/in-root-$arch
  mkdir -p "$dir"
  printf '#!/bin/sh\nCUMEMCTL_IN_ROOT_BINARY=%q exec %q %q "$@"\n' "$(realpath "$binary")" \
    "$src/tests/release/in-root.sh" "$root" >"$dir/cumemctl"
  chmod +x "$dir/cumemctl"
  local files=("$@")
  ((${#files[@]})) || files=(tests/cli/cases/*.case)
  local file i status=0 running=0
  local -A pids=()
  for file in "${files[@]}"; do
    local extra=()
    for ((i = 0; i < ${#leave_out[@]}; i += 4)); do
      [[ ${leave_out[i]} == both || ${leave_out[i]} == "$arch" ]] || continue
      [[ ${leave_out[i + 1]} == "$(basename "$file")" ]] && extra+=(--leave-out "${leave_out[i + 2]}" "${leave_out[i + 3]}")
    done
    if ((running >= jobs)); then
      wait -n || status=1
      running=$((running - 1))
    fi
    /usr/bin/python3 tests/cli/run_cases.py --binary "$dir/cumemctl" --fake "$fakes/libfakecuda.so" \
      --not-a-driver "$fakes/libnot_a_driver.so" --fake-nvml "$fakes/libfakenvml.so" \
      --fake-nvml-minimal "$fakes/libfakenvml_minimal.so" --profiles tests/fakecuda/profiles \
      --schema schema/report.schema.json "${extra[@]}" "$file" >"$dir/$(basename "$file").log" 2>&1 &
    pids[$!]=$file
    running=$((running + 1))
  done
  while ((running > 0)); do
    wait -n || status=1
    running=$((running - 1))
  done
  # What each file gave, and the failures in full.
  for file in "${files[@]}"; do
    local log=$dir/$(basename "$file").log
    echo "$arch $(basename "$file"): $(tail -1 "$log")"
    grep -q '^FAIL' "$log" && grep -v '^ok ' "$log" | head -100
  done
  grep -h '^skip' "$dir"/*.case.log | sed "s/^/$arch /"
  return "$status"
}

# The mounts every root needs, in this process's own mount namespace.
mount_roots() {
  local a root cuda=${CUDA_HOME:-/usr/local/cuda}
  for a in amd64 arm64; do
    root=$src/$out/root-$a
    mkdir -p "$root/proc" "$root/dev" "$root/sys" "$root/tmp" "$root$src" "$root$cuda"
    mount --rbind /proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mount --bind /tmp "$root/tmp"
    mount --bind "$src" "$root$src"
    mount --bind -o ro "$(realpath "$cuda")" "$root$cuda"
  done
}

for step in "${steps[@]}"; do
  case $step in
    build)
      # The floor check itself fails where it should: on a program of this machine's glibc that uses
      # a 2.34 call, and on one that needs libstdc++'s symbol versions.
      probe=$(mktemp -d)
      printf '#define _GNU_SOURCE\n#include <spawn.h>\nint main(void) { posix_spawn_file_actions_t a; posix_spawn_file_actions_init(&a);\n  return posix_spawn_file_actions_addclosefrom_np(&a, 3); }\n' >"$probe/new.c"
      printf '#include <string>\n#include <iostream>\nint main(int argc, char**) { std::cout << std::to_string(argc); }\n' >"$probe/cxx.cpp"
      cc -o "$probe/new" "$probe/new.c" && c++ -o "$probe/cxx" "$probe/cxx.cpp"
      for p in new cxx; do
        if scripts/check-glibc.sh "$probe/$p" >/dev/null 2>&1; then
          echo "scripts/check-glibc.sh passes $probe/$p, which needs more than it allows" >&2
          exit 1
        fi
      done
      rm -rf "$probe"
      timed "release binaries, fakes, tests" scripts/release.sh --tests
      timed "packages" scripts/package.sh "$out/dist"
      ;;
    amd64 | arm64 | packages | image) ;;
    *) echo "tests/release/run.sh: unknown step $step" >&2; exit 2 ;;
  esac
done
# The steps that need the roots' mounts run in a mount namespace of their own.
if [[ -z ${CUMEMCTL_RELEASE_NS:-} ]]; then
  for step in "${steps[@]}"; do
    if [[ $step != build ]]; then
      binfmt
      rest=()
      for s in "${steps[@]}"; do [[ $s == build ]] || rest+=("$s"); done
      exec env CUMEMCTL_RELEASE_NS=1 unshare --mount --propagation private "$src/tests/release/run.sh" "${rest[@]}"
    fi
  done
  exit 0
fi
mount_roots
failed=()
# The amd64 cases and the aarch64 tests run side by side: under qemu the cases wait more than they
# compute (measured here: 2 of 4 minutes on the CPU).
has_step() { [[ " ${steps[*]} " == *" $1 "* ]]; }
amd64_stage() {
  echo "== the packaged amd64 binary: the end-to-end cases in the Debian 11 root"
  timed "amd64 cases (Debian 11 root)" cases amd64 "$out/dist/bin/amd64/cumemctl" "${packaged_files[@]}"
}
if has_step amd64; then
  amd64_stage >"$out/amd64-stage.log" 2>&1 &
  amd64_pid=$!
fi
if has_step arm64; then
  echo "== the aarch64 binary: unit tests and end-to-end cases under qemu-user in the Debian 11 arm64 root"
  # Left out: the two tests of a program that cannot start. qemu-user runs posix_spawn's
  # clone(CLONE_VM | CLONE_VFORK) as a fork, so the child's failed exec is not seen by the parent
  # (the child exits 127 instead; natively posix_spawn returns the error). The test of children
  # started at once from several threads: on the root's glibc 2.31 a descriptor without close-on-exec
  # that another thread opens while a child starts can cross (src/ipc/process.cpp: glibc 2.34's
  # posix_spawn_file_actions_addclosefrom_np closes it where the binary runs on 2.34 or later). And the
  # bounded run of the stand-in nvidia-imex-ctl: a Python script, and the root has no Python.
  timed "arm64 unit tests (qemu)" tests/release/in-root.sh "$src/$out/root-arm64" \
    "$out/arm64/tests/unit_tests" --no-intro --minimal \
    '--test-case-exclude=a connected child that cannot start leaves no socket open,an exit status comes back*,children started at once from several threads*,nvidia-imex-ctl runs bounded*' ||
    failed+=("arm64 unit tests")
  timed "arm64 cases (qemu)" cases arm64 "$out/dist/bin/arm64/cumemctl" "${packaged_files[@]}" || failed+=("arm64 cases")
fi
if has_step amd64; then
  wait "$amd64_pid" || failed+=("amd64 cases")
  cat "$out/amd64-stage.log"
fi
if has_step packages; then
  timed "package checks" tests/release/package_test.sh "$out/dist" || failed+=("package checks")
fi
if has_step image; then
  timed "image (runc)" tests/release/image_test.sh "$out/dist" || failed+=("image")
fi
if ((${#failed[@]})); then
  echo "tests/release/run.sh: failed: ${failed[*]}" >&2
  exit 1
fi
