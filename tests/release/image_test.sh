#!/usr/bin/env bash
# Tests the container images that scripts/image.sh writes into DIST, as root:
#   - both archives are in SHA256SUMS; each blob is what its name says; OCI's index.json and Docker's
#     manifest.json name the same manifest's config and layer; the config has the entry point, the
#     NVIDIA container toolkit's variables and the org.opencontainers.image.* labels; skopeo reads the
#     archive both as oci-archive: and as docker-archive: (what podman load and docker load read);
#   - the image's /usr/bin/cumemctl is DIST/bin/ARCH/cumemctl byte for byte (an aarch64 ELF in the
#     arm64 image), and scripts/image.sh run again gives the same archives (the same digests);
#   - the amd64 image runs in runc, unpacked by umoci (the image's entry point and environment become
#     the container's), as the NVIDIA container toolkit would give it a GPU: the fake driver and fake
#     NVML (build-release/amd64/tests, built against Debian 11) bind-mounted read-only at
#     /usr/lib/x86_64-linux-gnu/libcuda.so.1 and libnvidia-ml.so.1, found by the loader's own search
#     (the fakes, C++, also need Debian 11's libstdc++ and libgcc_s, mounted beside them: the image
#     holds what the real driver and NVML need, glibc, which this test checks by name),
#     the fake's profile (tests/fakecuda/profiles) named by FAKECUDA_PROFILE, the root file system
#     read-only as the doctor DaemonSet has it: doctor --json, doctor --quick --format prometheus
#     --output into a mounted folder (the DaemonSet's textfile folder), devices, exit 1 on a profile with
#     a failed row remap, exit 3 without a driver, the node-problem-detector pod's init container
#     command (packaging/k8s) copying the binary into a mounted folder, and the doctor DaemonSet's pod as
#     its manifest has it (tests/release/pod_to_runc.py: its host mounts from a made-up node, its user,
#     its capabilities, no new privileges, a read-only root, its loop once).
#   image_test.sh [DIST]     (default build-release/dist)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
dist=$(realpath "${1:-build-release/dist}")
version=$(sed -n 's/^project(cumemctl VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
fakes=$src/build-release/amd64/tests
[[ $(id -u) -eq 0 ]] || { echo "image_test.sh: needs root (runc)" >&2; exit 1; }
for tool in runc umoci skopeo jq readelf python3; do
  command -v "$tool" >/dev/null || { echo "image_test.sh: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
containers=()
cleanup() {
  local id
  for id in "${containers[@]}"; do runc delete -f "$id" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# The archives: layouts, digests, config, the binary.
(cd "$dist" && grep -- "-oci-" SHA256SUMS | sha256sum --quiet -c -) || fail "SHA256SUMS does not match the archives"
[[ $(grep -c -- "-oci-" "$dist/SHA256SUMS") -eq 2 ]] || fail "SHA256SUMS does not list the two archives"
for arch in amd64 arm64; do
  tar=$dist/cumemctl-$version-oci-$arch.tar
  layout=$work/layout-$arch
  mkdir -p "$layout"
  tar -C "$layout" -xf "$tar"
  for b in "$layout"/blobs/sha256/*; do
    [[ $(sha256sum "$b" | cut -d' ' -f1) == "$(basename "$b")" ]] || fail "$arch: blob $(basename "$b") is not what its name says"
  done
  manifest=$(jq -r '.manifests[0].digest | ltrimstr("sha256:")' "$layout/index.json")
  config=$(jq -r '.config.digest | ltrimstr("sha256:")' "$layout/blobs/sha256/$manifest")
  layer=$(jq -r '.layers[0].digest | ltrimstr("sha256:")' "$layout/blobs/sha256/$manifest")
  [[ $(jq -r '.[0].Config' "$layout/manifest.json") == "blobs/sha256/$config" &&
     $(jq -r '.[0].Layers | join(" ")' "$layout/manifest.json") == "blobs/sha256/$layer" &&
     $(jq -r '.[0].RepoTags | join(" ")' "$layout/manifest.json") == "cumemctl:$version" ]] ||
    fail "$arch: manifest.json does not name the OCI manifest's config and layer as cumemctl:$version"
  c=$layout/blobs/sha256/$config
  jq -e --arg arch "$arch" --arg version "$version" --arg layer "sha256:$layer" '
    .architecture == $arch and .os == "linux" and .rootfs.diff_ids == [$layer]
    and .config.Entrypoint == ["/usr/bin/cumemctl"]
    and (.config.Env | index("NVIDIA_VISIBLE_DEVICES=all") != null)
    and (.config.Env | index("NVIDIA_DRIVER_CAPABILITIES=compute,utility") != null)
    and .config.Labels["org.opencontainers.image.version"] == $version
    and ([.config.Labels["org.opencontainers.image." + ("revision", "source", "licenses")]] | all(. != null and . != ""))' \
    "$c" >/dev/null || fail "$arch: the image's config: $(cat "$c")"
  for transport in oci-archive docker-archive; do
    skopeo inspect "$transport:$tar" >"$work/inspect" 2>"$work/inspect.err" &&
      jq -e --arg arch "$arch" --arg layer "sha256:$layer" '.Architecture == $arch and .Layers == [$layer]' \
        "$work/inspect" >/dev/null ||
      fail "$arch: skopeo inspect $transport: $(cat "$work/inspect" "$work/inspect.err")"
  done
  tar -xOf "$layout/blobs/sha256/$layer" usr/bin/cumemctl >"$work/cumemctl-$arch"
  [[ $(sha256sum <"$work/cumemctl-$arch") == "$(sha256sum <"$dist/bin/$arch/cumemctl")" ]] ||
    fail "$arch: the image's /usr/bin/cumemctl is not $dist/bin/$arch/cumemctl"
  case $arch in amd64) machine="Advanced Micro Devices X86-64" ;; arm64) machine=AArch64 ;; esac
  readelf -h "$work/cumemctl-$arch" | grep -q "Machine: *$machine" || fail "$arch: the image's binary is no $machine ELF"
  ok "$arch: $(basename "$tar"), $(($(stat -c %s "$tar") / 1024)) KiB, image sha256:$manifest ($(tar -tf "$layout/blobs/sha256/$layer" | wc -l) entries), /usr/bin/cumemctl the package's"
done

# The same commit gives the same archives.
mkdir -p "$work/again/bin"
cp -r "$dist/bin/amd64" "$dist/bin/arm64" "$work/again/bin/"
scripts/image.sh "$work/again" >/dev/null
if cmp -s "$dist/cumemctl-$version-oci-amd64.tar" "$work/again/cumemctl-$version-oci-amd64.tar" &&
  cmp -s "$dist/cumemctl-$version-oci-arm64.tar" "$work/again/cumemctl-$version-oci-arm64.tar"; then
  ok "scripts/image.sh again: the same archives"
else
  fail "scripts/image.sh wrote different archives the second time (or $dist's are of another commit)"
fi

# The amd64 image in runc.
bundle=$work/bundle
umoci unpack --image "$work/layout-amd64:$version" "$bundle" >/dev/null
mkdir -p "$work/textfile" "$work/npd-bin" "$work/profiles"
cp tests/fakecuda/profiles/h200.json "$work/profiles/"
python3 tests/fakecuda/make_profile.py h200 "$work/profiles/remap.json" 'devices[0].nvml.remapped_rows={"failure": 1}'
base=$work/config.base.json
cp "$bundle/config.json" "$base"
lib=/usr/lib/x86_64-linux-gnu
# What the real driver and NVML need (their NEEDED): the image's glibc.
for f in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
  [[ -e $bundle/rootfs$lib/$f ]] || fail "the image has no $lib/$f, which the NVIDIA driver needs"
done
# What the fakes need beyond glibc: the C++ runtime of the Debian 11 root they were built against.
fake_runtime=()
for f in $(readelf -d "$fakes/libfakecuda.so" "$fakes/libfakenvml.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  [[ -e $bundle/rootfs$lib/$f ]] && continue
  found=$(find "$src/build-release/root-amd64/lib/x86_64-linux-gnu" "$src/build-release/root-amd64/usr/lib/x86_64-linux-gnu" -name "$f" | head -1)
  [[ -n $found ]] || { fail "the fakes need $f, which the Debian 11 root does not have"; continue; }
  fake_runtime+=("$found")
done
bind() { printf '{"destination":"%s","type":"bind","source":"%s","options":["rbind","%s"]}' "$1" "$2" "$3"; }
# runs the image: NAME DRIVER(yes|no) PROFILE EXPECTED-EXIT ARG... (the image's entry point first,
# unless ARG starts with --command: then ARG... is the whole command line); stdout in $work/NAME.out.
n=0
run() {
  local name=$1 driver=$2 profile=$3 expected=$4 mounts env args
  shift 4
  mounts=$(bind /profiles "$work/profiles" ro),$(bind /textfile "$work/textfile" rw),$(bind /npd-bin "$work/npd-bin" rw)
  if [[ $driver == yes ]]; then
    mounts+=,$(bind "$lib/libcuda.so.1" "$fakes/libfakecuda.so" ro),$(bind "$lib/libnvidia-ml.so.1" "$fakes/libfakenvml.so" ro)
    for f in "${fake_runtime[@]}"; do mounts+=,$(bind "$lib/$(basename "$f")" "$(realpath "$f")" ro); done
  fi
  env="[\"FAKECUDA_PROFILE=/profiles/$profile.json\",\"CUMEMCTL_HOST=image-test\"]"
  if [[ $1 == --command ]]; then
    args=$(printf '%s\n' "${@:2}" | jq -R . | jq -s .)
  else
    args=$(printf '%s\n' "$@" | jq -R . | jq -s . | jq -c --slurpfile base "$base" '$base[0].process.args[:-1] + .')
  fi
  jq --argjson mounts "[$mounts]" --argjson env "$env" --argjson args "$args" \
    '.process.terminal = false | .root.readonly = true | .process.args = $args
     | .process.env += $env | .mounts += $mounts' "$base" >"$bundle/config.json"
  # $pod: MANIFEST CONTAINER NODE, the container as that manifest runs it (tests/release/pod_to_runc.py).
  # shellcheck disable=SC2086
  [[ -z ${pod:-} ]] || python3 tests/release/pod_to_runc.py --once $pod "$bundle/config.json" >/dev/null
  n=$((n + 1))
  local id=cumemctl-image-test-$$-$n status=0
  containers+=("$id")
  runc run --bundle "$bundle" "$id" </dev/null >"$work/$name.out" 2>"$work/$name.err" || status=$?
  runc delete -f "$id" >/dev/null 2>&1 || true
  if [[ $status -ne $expected ]]; then
    fail "runc: $name: exit $status, expected $expected: $(jq -r '.process.args | join(" ")' "$bundle/config.json")"
    sed 's/^/  stdout: /' "$work/$name.out" | head -20 >&2
    sed 's/^/  stderr: /' "$work/$name.err" | head -20 >&2
    return 1
  fi
}
jq -e '.process.args == ["/usr/bin/cumemctl", "doctor"]' "$base" >/dev/null ||
  fail "umoci's container does not run the image's entry point: $(jq -c .process.args "$base")"

# First, before runc has made the driver's mount points in the bundle's root: no driver, exit 3.
if run no-driver no h200 3 doctor --quick --json; then
  jq -e '.driver.loaded == false' "$work/no-driver.out" >/dev/null &&
    ok "runc: no driver mounted: exit 3 ($(jq -r .driver.error "$work/no-driver.out"))" ||
    fail "runc: no driver mounted: $(cat "$work/no-driver.out")"
fi
if run doctor-json yes h200 0 doctor --json; then
  [[ -s $work/doctor-json.out ]] &&
    jq -e '.ok == true and .driver.loaded == true and .results.device_count > 0' "$work/doctor-json.out" >/dev/null &&
    ok "runc: doctor --json: ok, the driver loaded from $lib/libcuda.so.1 ($(jq .results.device_count "$work/doctor-json.out") device)" ||
    fail "runc: doctor --json: $(head -c 2000 "$work/doctor-json.out")"
fi
# The doctor DaemonSet's line (packaging/k8s/cumemctl-doctor.yaml), through the image's /bin/sh.
if run doctor-prometheus yes h200 0 --command sh -c \
  'cumemctl doctor --quick --format prometheus --output /textfile/cumemctl-doctor.prom'; then
  prom=$work/textfile/cumemctl-doctor.prom
  if [[ -s $prom ]] && grep -q '^cumemctl_' "$prom"; then
    ok "runc: doctor --quick --format prometheus --output /textfile/cumemctl-doctor.prom: $(grep -c '^cumemctl_' "$prom") samples"
  else
    fail "runc: no metrics in $prom"
  fi
fi
if run devices yes h200 0 devices; then
  if grep -q H200 "$work/devices.out"; then
    ok "runc: devices: $(grep -c H200 "$work/devices.out") line names the H200"
  else
    fail "runc: devices: $(cat "$work/devices.out")"
  fi
fi
run doctor-failing yes remap 1 doctor --quick && ok "runc: doctor --quick on a failed row remap: exit 1"
# node-problem-detector's init container: its command as packaging/k8s has it, into the shared folder.
init=$(python3 -c 'import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"]
(c,) = docs[0]["spec"]["template"]["spec"]["initContainers"]
mount = c["volumeMounts"][0]["mountPath"]
print(json.dumps([a.replace(mount, "/npd-bin") for a in c["command"]]))' packaging/k8s/node-problem-detector-cumemctl.yaml)
mapfile -t init_args < <(jq -r '.[]' <<<"$init")
if run npd-init no h200 0 --command "${init_args[@]}"; then
  copied=$(find "$work/npd-bin" -type f)
  if [[ -n $copied && -x $copied ]] && cmp -s "$copied" "$dist/bin/amd64/cumemctl"; then
    ok "runc: the node-problem-detector init container copied the binary ($(stat -c %A "$copied"))"
  else
    fail "runc: the node-problem-detector init container: $(ls -l "$work/npd-bin")"
  fi
fi
# The doctor DaemonSet as packaging/k8s/cumemctl-doctor.yaml runs it: its host mounts, each from a
# made-up node (tests/cli/sysroot.sh) rather than this machine; root with every capability dropped
# but the one it adds back (SYSLOG), no new privileges, a read-only root; its env, and its loop once.
node=$work/node
tests/cli/sysroot.sh "$node" >/dev/null
if pod="packaging/k8s/cumemctl-doctor.yaml doctor $node" run daemonset yes h200 0 --command true; then
  prom=$node/var/lib/prometheus/node-exporter/cumemctl-doctor.prom
  if jq -e '.ok == true and .driver.loaded == true' "$work/daemonset.out" >/dev/null && grep -q '^cumemctl_' "$prom"; then
    ok "runc: the doctor DaemonSet's pod (uid $(jq .process.user.uid "$bundle/config.json"), capabilities $(jq -c .process.capabilities.effective "$bundle/config.json"), read-only root, its host mounts): its report ok, its metrics in the host's textfile folder"
  else
    fail "runc: the doctor DaemonSet's pod: $(head -c 2000 "$work/daemonset.out") $(ls -l "$(dirname "$prom")")"
  fi
fi
if ((failures)); then
  echo "image_test.sh: $failures failed" >&2
  exit 1
fi
