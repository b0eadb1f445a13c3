#!/usr/bin/env bash
# Makes a Debian 11 (bullseye, glibc 2.31) root for one architecture in DIR: the system root that the
# release binaries are compiled against (scripts/release.sh, cmake/toolchain-*.cmake), and the root in
# which the tests run them (tests/release/). Root (debootstrap).
#   debian11-root.sh amd64|arm64 DIR
# debootstrap's first stage only (--foreign, which needs no emulator): it unpacks the base system; the
# compiler's packages (libc6-dev, libstdc++-10-dev and what they need) are fetched and unpacked here.
# Nothing is configured, which compiling and running programs do not need. Absolute symbolic links are
# made relative, so that the linker, given the root as its system root, does not follow them into this
# machine's own /. The header-only libraries come from this machine (Debian 12's, which scripts/setup.sh
# installs: Debian 11's nlohmann-json and fmt are older than cumemctl needs, and it has no CLI11) and go
# to DIR/usr/local. The mirror is the one apt uses here (DEBIAN_MIRROR overrides it). When DIR holds a
# finished root of the same recipe, nothing is done.
set -euo pipefail
arch=$1 root=$2
case $arch in
  amd64 | arm64) ;;
  *) echo "debian11-root.sh: architecture $arch: amd64 or arm64" >&2; exit 2 ;;
esac
recipe="cumemctl debian11-root 2 $arch"
stamp=$root/.cumemctl-root
if [[ -f $stamp && $(cat "$stamp") == "$recipe" ]]; then
  echo "debian11-root: $root is ready ($arch)"
  exit 0
fi
mirror=${DEBIAN_MIRROR:-$(apt-cache policy | sed -n 's#^ *[0-9]* \(https\?://[^ ]*\) [a-z-]*/main .*#\1#p' |
  grep -v security | head -1)}
[[ -n $mirror ]] || { echo "debian11-root: no Debian mirror in apt's sources: set DEBIAN_MIRROR" >&2; exit 1; }
rm -rf "$root"
mkdir -p "$root"
debootstrap --foreign --variant=minbase --arch="$arch" \
  --include=libc6-dev,libstdc++-10-dev,libgcc-10-dev bullseye "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -20 "$root.log" >&2; echo "debian11-root: debootstrap failed ($root.log)" >&2; exit 1; }
for deb in "$root"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$root"; done
rm -f "$root"/var/cache/apt/archives/*.deb
# Absolute links (lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/..., the libraries' .so links)
# become relative ones inside the root.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
done < <(find "$root" -type l -lname '/*' -print0)
# The users and groups that base-passwd would have installed when configured (root's name, for one).
cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
# The header-only libraries and their CMake packages, as Debian 12 installs them here.
local_dir=$root/usr/local
mkdir -p "$local_dir/include" "$local_dir/share/cmake" "$local_dir/lib/cmake"
for d in fmt nlohmann CLI doctest; do cp -r "/usr/include/$d" "$local_dir/include/"; done
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$local_dir/share/cmake/"
cp -r /usr/lib/cmake/doctest "$local_dir/lib/cmake/"
echo "$recipe" >"$stamp"
echo "debian11-root: $root ($arch, glibc $(ls "$root"/usr/lib/*-linux-gnu/libc-*.so | sed 's/.*libc-\(.*\)\.so/\1/'))"
