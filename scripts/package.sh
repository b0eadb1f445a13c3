#!/usr/bin/env bash
# Writes the packages of both architectures into OUTDIR (docs/platforms.md):
#   cumemctl_VERSION_amd64.deb  cumemctl_VERSION_arm64.deb          (dpkg-deb)
#   cumemctl-VERSION.x86_64.rpm cumemctl-VERSION.aarch64.rpm        (rpmbuild, Debian's rpm package)
#   cumemctl-VERSION-linux-x86_64.tar.gz cumemctl-VERSION-linux-aarch64.tar.gz, and SHA256SUMS of all six
#   bin/amd64/cumemctl bin/arm64/cumemctl                           (the stripped binaries they hold)
#   cumemctl-VERSION-oci-amd64.tar cumemctl-VERSION-oci-arm64.tar   (the container images: scripts/image.sh)
# from the release binaries (scripts/release.sh, which it runs: root the first time). Each holds the
# stripped binary, the manual pages, the bash and zsh completions, the Slurm prolog, epilog, health check
# and settings, the NHC check, the node-problem-detector configuration and the systemd service and timer
# (lib/systemd/system), laid out by the build's own install rules (cmake --install), and depends on libc alone.
#   package.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 1 ]] || { echo "usage: scripts/package.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(realpath "$1")
scripts/release.sh amd64 arm64
version=$(sed -n 's/^project(cumemctl VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[[ -n $version ]] || { echo "package.sh: no version in CMakeLists.txt" >&2; exit 1; }
# Reproducible: every file's time is the commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The install tree, prefix /usr: the amd64 build's (CMakeLists.txt's install rules strip the binary);
# the arm64 tree is the same with its own binary, stripped the same way (the manual pages and the
# completion scripts, which the amd64 binary writes from the same command definitions, are the same).
stage() { # ARCH DIR PREFIX
  DESTDIR=$2 cmake --install build-release/amd64 --prefix "$3" >/dev/null
  if [[ $1 == arm64 ]]; then
    install -m 0755 build-release/arm64/cmd/cumemctl "$2$3/bin/cumemctl"
    "$(sed -n 's/^CMAKE_STRIP:FILEPATH=//p' build-release/arm64/CMakeCache.txt)" --strip-all "$2$3/bin/cumemctl"
  fi
  find "$2" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}
# The man pages compressed, as both distributions install them.
gzip_man() { gzip -9n "$1"/usr/share/man/man1/*.1; }

rm -f "$out"/cumemctl[_-]"$version"* "$out/SHA256SUMS"
for arch in amd64 arm64; do
  case $arch in amd64) rpm_arch=x86_64 ;; arm64) rpm_arch=aarch64 ;; esac
  mkdir -p "$out/bin/$arch"

  # .deb: Debian's zsh reads packages' completions from vendor-completions.
  root=$work/deb-$arch
  stage "$arch" "$root" /usr
  gzip_man "$root"
  mkdir -p "$root/usr/share/zsh/vendor-completions" "$root/usr/share/doc/cumemctl" "$root/DEBIAN"
  mv "$root/usr/share/zsh/site-functions/_cumemctl" "$root/usr/share/zsh/vendor-completions/"
  rmdir "$root/usr/share/zsh/site-functions"
  install -m 0644 packaging/deb/copyright "$root/usr/share/doc/cumemctl/copyright"
  printf 'cumemctl (%s) unstable; urgency=medium\n\n  * Release %s (git %s).\n\n -- cumemctl developers <cumemctl@example.org>  %s\n' \
    "$version" "$version" "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
    "$(date -R -u -d "@$SOURCE_DATE_EPOCH")" | gzip -9n >"$root/usr/share/doc/cumemctl/changelog.gz"
  size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" packaging/deb/control >"$root/DEBIAN/control"
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  chmod -R u=rwX,go=rX "$root"
  chmod 0755 "$root/usr/bin/cumemctl" "$root"/usr/share/cumemctl/slurm/{imex-channel,imex-prolog,imex-epilog,healthcheck}
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out/cumemctl_${version}_$arch.deb" >/dev/null

  # .rpm
  root=$work/rpm-$arch
  stage "$arch" "$root" /usr
  gzip_man "$root"
  rpmbuild -bb --quiet --target "$rpm_arch-linux" --define "_topdir $work/rpmbuild" \
    --define "version $version" --define "stage $root" --define "_build_id_links none" \
    --define "use_source_date_epoch_as_buildtime 1" --define "clamp_mtime_to_source_date_epoch 1" \
    packaging/rpm/cumemctl.spec >"$work/rpmbuild-$arch.log" 2>&1 ||
    { cat "$work/rpmbuild-$arch.log" >&2; echo "package.sh: rpmbuild failed ($arch)" >&2; exit 1; }
  mv "$work/rpmbuild/RPMS/$rpm_arch/cumemctl-$version-1.$rpm_arch.rpm" "$out/cumemctl-$version.$rpm_arch.rpm"

  # .tar.gz: the install tree under one folder, with its prefix there (the prolog finds
  # ../../../bin/cumemctl beside it).
  name=cumemctl-$version-linux-$rpm_arch
  stage "$arch" "$work/tar-$arch" "/$name"
  tar -C "$work/tar-$arch" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -cf - "$name" | gzip -9n >"$out/$name.tar.gz"

  cp "$work/deb-$arch/usr/bin/cumemctl" "$out/bin/$arch/cumemctl"
done
(cd "$out" && sha256sum cumemctl_"$version"_*.deb cumemctl-"$version".*.rpm cumemctl-"$version"-linux-*.tar.gz >SHA256SUMS)
scripts/image.sh "$out"
echo "package.sh: $out:"
(cd "$out" && ls -l cumemctl[_-]"$version"* SHA256SUMS bin/*/cumemctl | awk '{print "  " $5 "\t" $9}')
