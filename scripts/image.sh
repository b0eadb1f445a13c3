#!/usr/bin/env bash
# Writes the container images of both architectures into DIST, beside the packages (README.md, "Install";
# docs/fleet.md, "The image"):
#   cumemctl-VERSION-oci-amd64.tar  cumemctl-VERSION-oci-arm64.tar   (their lines added to SHA256SUMS)
# Each is one uncompressed layer: DIST/bin/ARCH/cumemctl (the packages' stripped binary, byte for byte)
# as /usr/bin/cumemctl, the glibc libraries that it, dash and the CUDA driver and NVML need (ld.so,
# libc, libm, libdl, libpthread, librt), dash as /bin/sh (the manifests' loops), cat and chmod (the
# node-problem-detector pod's init container copies the binary with them), minimal /etc/passwd and
# /etc/group (root, cumemctl 65532 and nobody), and the copyright files of what it holds: all from the Debian 11 root of that architecture
# (scripts/debian11-root.sh, build-release/root-ARCH), no base image. Entry point /usr/bin/cumemctl
# (command doctor), NVIDIA_VISIBLE_DEVICES=all and NVIDIA_DRIVER_CAPABILITIES=compute,utility for the
# NVIDIA container toolkit, the org.opencontainers.image.* labels.
# The archive has both layouts over the same blobs, as `docker save` (Docker 25 and later) writes it:
# OCI's (oci-layout, index.json: `skopeo copy oci-archive:...`, `ctr image import`, `podman load`) and
# Docker's (manifest.json: `docker load`), named cumemctl:VERSION. Reproducible: every time is the
# commit's (SOURCE_DATE_EPOCH), owners are 0, entries sorted, so a commit gives the same digests.
# tests/release/image_test.sh runs the amd64 image with runc.
#   image.sh DIST
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 1 ]] || { echo "usage: scripts/image.sh DIST" >&2; exit 2; }
dist=$(realpath "$1")
version=$(sed -n 's/^project(cumemctl VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[[ -n $version ]] || { echo "image.sh: no version in CMakeLists.txt" >&2; exit 1; }
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The libraries NEEDED by FILE..., transitively, as files of ROOT (their real files and the links
# named by their sonames), printed as paths inside ROOT, one a line.
needed() { # ROOT TRIPLET FILE...
  local root=$1 triplet=$2 queue=("${@:3}") seen=" " file name dir
  while ((${#queue[@]})); do
    file=${queue[0]}
    queue=("${queue[@]:1}")
    for name in $(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [[ $seen == *" $name "* ]] && continue
      seen+="$name "
      for dir in lib/$triplet usr/lib/$triplet; do
        if [[ -e $root/$dir/$name ]]; then
          echo "$dir/$name"
          echo "${dir}/$(basename "$(realpath "$root/$dir/$name")")"
          queue+=("$root/$dir/$name")
          continue 2
        fi
      done
      echo "image.sh: $name (needed by $file) is not in $root" >&2
      return 1
    done
  done
}

# The image's file system in DIR: merged /usr, everything from ROOT under usr/.
rootfs() { # ARCH DIR
  local arch=$1 dir=$2 root=build-release/root-$1 triplet interp f
  case $arch in amd64) triplet=x86_64-linux-gnu ;; arm64) triplet=aarch64-linux-gnu ;; esac
  local binary=$dist/bin/$arch/cumemctl
  [[ -f $binary ]] || { echo "image.sh: no $binary (scripts/package.sh writes it)" >&2; return 1; }
  scripts/debian11-root.sh "$arch" "$root" >/dev/null
  mkdir -p "$dir"/usr/bin "$dir/usr/lib/$triplet" "$dir"/etc "$dir"/tmp "$dir"/usr/share/doc/{cumemctl,libc6,dash,coreutils}
  install -m 0755 "$binary" "$dir/usr/bin/cumemctl"
  for f in dash cat chmod; do install -m 0755 "$root/bin/$f" "$dir/usr/bin/$f"; done
  ln -s dash "$dir/usr/bin/sh"
  ln -s usr/bin "$dir/bin"
  ln -s usr/lib "$dir/lib"
  # The libraries: what the binary, dash, cat and chmod need, and what the NVIDIA driver's libcuda and
  # NVML need (their NEEDED: libc, libm, libdl, libpthread, librt), which the container toolkit mounts.
  local libs=$work/libs-$arch
  { needed "$root" "$triplet" "$dir/usr/bin/cumemctl" "$dir/usr/bin/dash" "$dir/usr/bin/cat" "$dir/usr/bin/chmod"
    for f in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
      echo "lib/$triplet/$f"
      echo "lib/$triplet/$(basename "$(realpath "$root/lib/$triplet/$f")")"
    done
  } | sort -u >"$libs"
  while IFS= read -r f; do
    if [[ -L $root/$f ]]; then
      ln -sfn "$(basename "$(realpath "$root/$f")")" "$dir/usr/lib/$triplet/$(basename "$f")"
    else
      install -m 0755 "$root/$f" "$dir/usr/lib/$triplet/$(basename "$f")"
    fi
  done <"$libs"
  # The program interpreter (/lib64/ld-linux-x86-64.so.2, /lib/ld-linux-aarch64.so.1) at its path.
  interp=$(readelf -l "$binary" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  local loader
  loader=$(basename "$(realpath "$root$interp")")
  [[ -f $dir/usr/lib/$triplet/$loader ]] || install -m 0755 "$root$interp" "$dir/usr/lib/$triplet/$loader"
  if [[ $interp == /lib64/* ]]; then
    mkdir -p "$dir/usr/lib64"
    ln -s usr/lib64 "$dir/lib64"
    ln -s "../lib/$triplet/$loader" "$dir/usr$interp"
  elif [[ ! -e $dir/usr$interp ]]; then
    ln -s "$triplet/$loader" "$dir/usr$interp"
  fi
  # cumemctl (65532): a numbered user of its own for pods that run as no one in particular
  # (runAsUser: 65532, runAsNonRoot); the manifests that need root say why.
  printf 'root:x:0:0:root:/root:/bin/sh\ncumemctl:x:65532:65532:cumemctl:/nonexistent:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$dir/etc/passwd"
  printf 'root:x:0:\ncumemctl:x:65532:\nnogroup:x:65534:\n' >"$dir/etc/group"
  install -m 0644 packaging/deb/copyright "$dir/usr/share/doc/cumemctl/copyright"
  for f in libc6 dash coreutils; do install -m 0644 "$root/usr/share/doc/$f/copyright" "$dir/usr/share/doc/$f/copyright"; done
  chmod 0755 "$dir" && find "$dir" -type d -exec chmod 0755 {} + && chmod 1777 "$dir/tmp"
  chmod 0644 "$dir"/etc/passwd "$dir"/etc/group
  find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# A blob: FILE moved to blobs/sha256/ of LAYOUT; prints its digest (hex).
blob() { # LAYOUT FILE
  local hex
  hex=$(sha256sum "$2" | cut -d' ' -f1)
  mv "$2" "$1/blobs/sha256/$hex"
  echo "$hex"
}
size() { stat -c %s "$1"; }

# Compact JSON from jq's ARGS... and FILTER, written to FILE (keys in the filter's order).
json() { # FILE FILTER ARGS...
  local file=$1 filter=$2
  shift 2
  jq -n -c -j "$@" "$filter" >"$file"
}

image() { # ARCH
  local arch=$1 dir=$work/rootfs-$1 layout=$work/layout-$1 platform
  platform=$(jq -n -c --arg arch "$arch" '{architecture: $arch, os: "linux"} + if $arch == "arm64" then {variant: "v8"} else {} end')
  rootfs "$arch" "$dir"
  mkdir -p "$layout/blobs/sha256"
  (cd "$dir" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort) >"$work/top"
  tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --format=ustar -cf "$work/layer" -T "$work/top"
  local layer layer_size config config_size manifest manifest_size
  layer_size=$(size "$work/layer")
  layer=$(blob "$layout" "$work/layer")
  # The config: what a runtime runs and the labels. Licenses: cumemctl's own (packaging/deb/copyright)
  # with the GCC runtime, {fmt}, nlohmann/json and CLI11 linked in; glibc; dash; cat and chmod.
  json "$work/config" '$platform + {
      config: {Cmd: ["doctor"], Entrypoint: ["/usr/bin/cumemctl"],
        Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"],
        Labels: ({created: $created, description: "CUDA memory checks and provisioning for GPU nodes",
          licenses: ("LicenseRef-cumemctl AND GPL-3.0-or-later WITH GCC-exception-3.1 AND MIT AND "
            + "BSD-3-Clause AND LGPL-2.1-or-later AND GPL-3.0-or-later"),
          revision: $revision, source: "https://example.org/cumemctl", title: "cumemctl", version: $version}
          | with_entries(.key |= "org.opencontainers.image." + .)),
        WorkingDir: "/"},
      created: $created,
      history: [{created: $created,
        created_by: "scripts/image.sh: cumemctl \($version) with glibc, dash, cat and chmod of Debian 11"}],
      rootfs: {diff_ids: ["sha256:" + $layer], type: "layers"}}' \
    --argjson platform "$platform" --arg created "$created" --arg revision "$revision" --arg version "$version" \
    --arg layer "$layer"
  config_size=$(size "$work/config")
  config=$(blob "$layout" "$work/config")
  json "$work/manifest" '{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: ("sha256:" + $config), size: $config_size},
      layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: ("sha256:" + $layer), size: $layer_size}]}' \
    --arg config "$config" --argjson config_size "$config_size" --arg layer "$layer" --argjson layer_size "$layer_size"
  manifest_size=$(size "$work/manifest")
  manifest=$(blob "$layout" "$work/manifest")
  # OCI's index, its entry named as `docker save` names it (containerd's name, and the tag).
  json "$layout/index.json" '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: ("sha256:" + $manifest),
        size: $manifest_size, annotations: {"io.containerd.image.name": ("docker.io/library/cumemctl:" + $version),
          "org.opencontainers.image.ref.name": $version}, platform: $platform}]}' \
    --arg manifest "$manifest" --argjson manifest_size "$manifest_size" --arg version "$version" --argjson platform "$platform"
  json "$layout/oci-layout" '{imageLayoutVersion: "1.0.0"}'
  # Docker's manifest.json, over the same blobs.
  json "$layout/manifest.json" '[{Config: ("blobs/sha256/" + $config), RepoTags: ["cumemctl:" + $version],
      Layers: ["blobs/sha256/" + $layer]}]' --arg config "$config" --arg version "$version" --arg layer "$layer"
  find "$layout" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    --mode=u=rwX,go=rX --format=ustar -cf "$dist/cumemctl-$version-oci-$arch.tar" blobs index.json manifest.json oci-layout
  echo "image.sh: cumemctl-$version-oci-$arch.tar: image sha256:$manifest, layer $((layer_size / 1024)) KiB"
}

for arch in amd64 arm64; do image "$arch"; done
# SHA256SUMS: the packages' lines (scripts/package.sh) and the two archives'.
sums=$dist/SHA256SUMS
touch "$sums"
{ grep -v -- "-oci-" "$sums" || true
  (cd "$dist" && sha256sum cumemctl-"$version"-oci-amd64.tar cumemctl-"$version"-oci-arm64.tar); } >"$work/sums"
cp "$work/sums" "$sums"
