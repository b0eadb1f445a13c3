#!/bin/sh
# Runs a program with a Debian 11 root's C library and loader (tests/release/run.sh made the mounts
# that the root needs: /proc, /dev, /sys, /tmp, the CUDA toolkit and the source tree at their own
# paths), in the current folder, with the environment as it is. An aarch64 program runs through
# binfmt_misc and qemu-user, so that its second processes do too.
#   in-root.sh ROOT PROGRAM [ARG...]
# As the tests' {cumemctl} (CUMEMCTL_IN_ROOT_BINARY names the binary): in-root.sh ROOT ARG...
# As root it chroots into ROOT. Another user (a case that drops to one with setpriv) cannot: the
# program then runs here with the root's loader and libraries instead (aarch64: qemu's
# QEMU_LD_PREFIX), the same C library but this machine's files; its own second processes, which
# re-execute /proc/self/exe (the loader there), would not start that way, and these cases start none.
root=$1
shift
if [ -n "${CUMEMCTL_IN_ROOT_BINARY:-}" ]; then set -- "$CUMEMCTL_IN_ROOT_BINARY" "$@"; fi
if [ "$(id -u)" = 0 ]; then
  exec chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' in-root "$PWD" "$@"
fi
if [ -e "$root/lib64/ld-linux-x86-64.so.2" ]; then
  exec "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" "$@"
fi
QEMU_LD_PREFIX=$root exec "$@"
