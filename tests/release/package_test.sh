#!/usr/bin/env bash
# Checks the packages that scripts/package.sh wrote into DIR (root: dpkg -i on this machine):
# - the amd64 .deb installs with dpkg -i; cumemctl --version runs, man cumemctl shows the manual, and
#   bash completes `cumemctl doc` to doctor through bash-completion's own loader; dpkg -r then leaves
#   none of its files or folders behind;
# - lintian finds no error or warning in either .deb (what it says at info level is listed below);
# - each .rpm names itself, its architecture and its requirements (libc alone) right, holds the files of
#   the .deb (zsh's completion in site-functions instead of vendor-completions), installs into a
#   temporary root with rpm --root and is erased from it;
# - the arm64 and aarch64 packages hold an aarch64 ELF, the amd64 and x86_64 ones an x86-64 one; the
#   .tar.gz of each architecture holds the install tree; SHA256SUMS matches, and lists the six packages
#   and the two image archives (scripts/image.sh; tests/release/image_test.sh checks those).
#   package_test.sh DIR
set -euo pipefail
dir=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n 's/^project(cumemctl VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deb_amd64=$dir/cumemctl_${version}_amd64.deb deb_arm64=$dir/cumemctl_${version}_arm64.deb
rpm_x86=$dir/cumemctl-$version.x86_64.rpm rpm_arm=$dir/cumemctl-$version.aarch64.rpm
for f in "$deb_amd64" "$deb_arm64" "$rpm_x86" "$rpm_arm" "$dir/cumemctl-$version-linux-x86_64.tar.gz" \
  "$dir/cumemctl-$version-linux-aarch64.tar.gz" "$dir/SHA256SUMS"; do
  [[ -f $f ]] || fail "no $f"
done
(cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
[[ $(grep -vc -- -oci- "$dir/SHA256SUMS") -eq 6 ]] || fail "SHA256SUMS does not list the six packages"

# The machine of an ELF file, as readelf names it.
machine() { readelf -h "$1" | sed -n 's/^ *Machine: *//p'; }
expect_machine() { # FILE ARCH(amd64|arm64) WHAT
  local want
  case $2 in amd64) want="Advanced Micro Devices X86-64" ;; arm64) want=AArch64 ;; esac
  [[ $(machine "$1") == "$want" ]] || fail "$3: $1 is $(machine "$1"), not $want"
}

# The files a package holds, as paths from /, sorted; folders left out.
expected_files() { # ZSH_DIR
  {
    echo /usr/bin/cumemctl
    for page in "$src"/man/*.1; do echo "/usr/share/man/man1/$(basename "$page").gz"; done
    echo /usr/share/bash-completion/completions/cumemctl
    echo "/usr/share/zsh/$1/_cumemctl"
    for f in imex-channel imex-prolog imex-epilog imex-channels.conf healthcheck healthcheck.conf settings.bash; do
      echo "/usr/share/cumemctl/slurm/$f"
    done
    echo /usr/share/cumemctl/nhc/cumemctl.nhc
    echo /usr/share/cumemctl/k8s/cumemctl-monitor.json
    echo /usr/share/cumemctl/prometheus/cumemctl-alerts.yaml
    echo /usr/share/cumemctl/schema/report.schema.json
    echo /usr/lib/systemd/system/cumemctl-doctor.service
    echo /usr/lib/systemd/system/cumemctl-doctor.timer
  } | sort
}

# dpkg, waiting while another dpkg or apt holds its lock (the machine may be busy installing).
dpkg_waiting() {
  local out i
  for ((i = 0; i < 120; i++)); do
    out=$(dpkg "$@" 2>&1) && { [[ -z $out ]] || echo "$out"; return 0; }
    grep -qi 'lock' <<<"$out" || { echo "$out" >&2; return 1; }
    sleep 1
  done
  echo "$out" >&2
  return 1
}

echo "== .deb"
for arch in amd64 arm64; do
  deb=$dir/cumemctl_${version}_$arch.deb
  [[ $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ') == "Package: cumemctl Version: $version Architecture: $arch " ]] ||
    fail "$deb: $(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')"
  # libc alone: nothing NVIDIA, nothing else.
  [[ $(dpkg-deb -f "$deb" Depends) == "libc6 (>= 2.31)" ]] || fail "$deb depends on $(dpkg-deb -f "$deb" Depends)"
  dpkg-deb -f "$deb" Pre-Depends Recommends Suggests | grep -q . && fail "$deb has Pre-Depends, Recommends or Suggests"
  diff <({ expected_files vendor-completions; echo /usr/share/doc/cumemctl/changelog.gz; echo /usr/share/doc/cumemctl/copyright; } | sort) \
    <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort) >"$work/diff" ||
    { cat "$work/diff" >&2; fail "$deb does not hold the expected files"; }
  rm -rf "$work/x" && mkdir "$work/x" && dpkg-deb -x "$deb" "$work/x"
  expect_machine "$work/x/usr/bin/cumemctl" "$arch" "$deb"
  readelf -S "$work/x/usr/bin/cumemctl" | grep -Eq '\.(symtab|debug_info)' && fail "$deb: the binary is not stripped"
done
# lintian: no errors and no warnings. What it says at info level is shown and kept: the binary is
# not linked with -z now (hardening-no-bindnow) and not compiled with _FORTIFY_SOURCE
# (hardening-no-fortify-functions), as CMake's Release flags build it.
lintian_out=$(lintian --fail-on error,warning -L '>=info' "$deb_amd64" "$deb_arm64" 2>&1) ||
  { echo "$lintian_out" >&2; fail "lintian found errors or warnings"; }
grep -v 'running with root privileges' <<<"$lintian_out" || true
echo "lintian: no errors, no warnings"

# dpkg -i on this machine, then dpkg -r.
if dpkg-query -W -f='${Status}' cumemctl 2>/dev/null | grep -q "install ok installed"; then
  fail "cumemctl is installed on this machine already (dpkg): the install test would change it"
fi
dpkg_waiting -i "$deb_amd64" >/dev/null
trap 'dpkg_waiting -r cumemctl >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
installed=$(dpkg -L cumemctl)
/usr/bin/cumemctl --version | grep -q "^cumemctl $version " || fail "cumemctl --version: $(/usr/bin/cumemctl --version)"
# Without a driver it starts and explains itself (exit 3).
status=0
CUMEMCTL_LIBCUDA=/nonexistent/libcuda.so.1 /usr/bin/cumemctl devices >/dev/null 2>"$work/err" || status=$?
[[ $status -eq 3 ]] && grep -q "no usable CUDA driver" "$work/err" || fail "cumemctl devices without a driver: exit $status, $(cat "$work/err")"
MANPAGER=cat MANWIDTH=80 man cumemctl 2>&1 | grep -q '^NAME' || fail "man cumemctl shows no manual page"
MANPAGER=cat man -w cumemctl-doctor | grep -q '^/usr/share/man/man1/cumemctl-doctor.1.gz$' || fail "man -w cumemctl-doctor: $(man -w cumemctl-doctor 2>&1)"
# bash-completion finds the script by the command's name, as an interactive bash does on the first Tab.
words=$(bash --norc --noprofile -c '
  source /usr/share/bash-completion/bash_completion
  __load_completion cumemctl || exit 1
  fn=$(complete -p cumemctl | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
  COMP_WORDS=(cumemctl doc) COMP_CWORD=1 COMP_LINE="cumemctl doc" COMP_POINT=12
  "$fn" cumemctl doc cumemctl
  printf "%s\n" "${COMPREPLY[@]}"') || fail "bash-completion does not load the cumemctl completion"
[[ $words == doctor ]] || fail "bash completes 'cumemctl doc' to '$words', not doctor"
echo "dpkg -i: cumemctl --version, devices without a driver (exit 3), man cumemctl, bash completion: ok"
dpkg_waiting -r cumemctl >/dev/null
trap 'rm -rf "$work"' EXIT
dpkg-query -W -f='${Status}' cumemctl 2>/dev/null | grep -q "install ok installed" && fail "dpkg -r left cumemctl installed"
left=()
while IFS= read -r path; do
  case $path in /. | /usr | /usr/bin | /usr/share | /usr/share/man | /usr/share/man/man1 | /usr/share/doc | \
    /usr/share/bash-completion | /usr/share/bash-completion/completions | /usr/share/zsh | /usr/share/zsh/vendor-completions | \
    /usr/lib | /usr/lib/systemd | /usr/lib/systemd/system) continue ;; esac
  [[ -e $path || -L $path ]] && left+=("$path")
done <<<"$installed"
((${#left[@]} == 0)) || fail "dpkg -r left ${left[*]}"
echo "dpkg -r: nothing of the package is left"

echo "== .rpm"
for rpm_arch in x86_64 aarch64; do
  rpm=$dir/cumemctl-$version.$rpm_arch.rpm
  case $rpm_arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
  info=$(rpm -qip "$rpm" 2>/dev/null)
  grep -Eq "^Name *: cumemctl$" <<<"$info" && grep -Eq "^Version *: $version$" <<<"$info" &&
    grep -Eq "^Architecture: $rpm_arch$" <<<"$info" || fail "rpm -qip $rpm:"$'\n'"$info"
  requires=$(rpm -qp --requires "$rpm" 2>/dev/null | grep -v '^rpmlib(' | tr '\n' ' ')
  [[ $requires == "glibc >= 2.31 " ]] || fail "$rpm requires $requires"
  diff <(expected_files site-functions) <(rpm -qlp "$rpm" 2>/dev/null | grep -Ev '^/usr/share/cumemctl(/slurm|/nhc|/k8s|/prometheus|/schema)?$' | sort) >"$work/diff" ||
    { cat "$work/diff" >&2; fail "rpm -qlp $rpm: not the expected files"; }
  # Into a temporary root: this machine's rpm database is not the root's, so --nodeps (glibc is there
  # as a Debian package); --ignorearch for the aarch64 one.
  root=$work/rpm-root-$rpm_arch
  rpm --root "$root" --initdb
  rpm --force-debian --root "$root" -i --nodeps --ignorearch "$rpm"
  rpm --root "$root" -q cumemctl >/dev/null || fail "rpm --root did not install $rpm"
  expect_machine "$root/usr/bin/cumemctl" "$arch" "$rpm"
  [[ -x $root/usr/share/cumemctl/slurm/imex-prolog && -f $root/usr/share/man/man1/cumemctl.1.gz ]] || fail "rpm --root: files missing"
  [[ $rpm_arch == x86_64 ]] && { "$root/usr/bin/cumemctl" --version | grep -q "^cumemctl $version " || fail "the rpm's cumemctl does not run"; }
  rpm --force-debian --root "$root" -e --nodeps cumemctl
  [[ -z $(find "$root/usr" -type f 2>/dev/null) ]] || fail "rpm -e left $(find "$root/usr" -type f)"
  echo "$rpm: name, version, architecture, requirements, files; installed into and erased from a root: ok"
done

echo "== .tar.gz"
for rpm_arch in x86_64 aarch64; do
  case $rpm_arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
  name=cumemctl-$version-linux-$rpm_arch
  rm -rf "$work/t" && mkdir "$work/t" && tar -C "$work/t" -xzf "$dir/$name.tar.gz"
  expect_machine "$work/t/$name/bin/cumemctl" "$arch" "$name.tar.gz"
  for f in share/man/man1/cumemctl.1 share/bash-completion/completions/cumemctl share/zsh/site-functions/_cumemctl \
    share/cumemctl/slurm/imex-prolog share/cumemctl/slurm/imex-epilog share/cumemctl/slurm/imex-channel share/cumemctl/slurm/imex-channels.conf \
    share/cumemctl/slurm/healthcheck share/cumemctl/slurm/settings.bash share/cumemctl/nhc/cumemctl.nhc share/cumemctl/k8s/cumemctl-monitor.json \
    share/cumemctl/prometheus/cumemctl-alerts.yaml share/cumemctl/schema/report.schema.json \
    lib/systemd/system/cumemctl-doctor.service lib/systemd/system/cumemctl-doctor.timer; do
    [[ -f $work/t/$name/$f ]] || fail "$name.tar.gz lacks $name/$f"
  done
  cmp -s "$work/t/$name/bin/cumemctl" "$dir/bin/$arch/cumemctl" || fail "$name.tar.gz's binary is not $dir/bin/$arch/cumemctl"
  echo "$name.tar.gz: the install tree, an $(machine "$work/t/$name/bin/cumemctl") binary: ok"
done
