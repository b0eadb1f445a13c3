#!/usr/bin/env bash
# GPU tier: the verify kernels on a real GPU (tests/gpu/verify_probe, built beside the binary named by
# $1, e.g. build/cmd/cumemctl -> build/tests/gpu/verify_probe). For 1 GiB and 16 GiB buffers: the
# kernels write exactly the pattern of src/gpu/verify/verify_pattern.hpp (which the fake driver emulates),
# a changed byte is found at its word's offset, a clean buffer has no mismatch, and the fill and the
# check each reach at least 90% of the device-to-device copy bandwidth measured on the same bytes
# (verify: bytes written, or read, per second; copy: bytes read plus written per second).
# VERIFY_SIZES (default "1GiB 16GiB") and VERIFY_MIN_RATIO (default 0.90) change the test; VERIFY_PROBE
# names the probe (default: beside the binary, as above).
# Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
binary=${1:-build/cmd/cumemctl}
probe=${VERIFY_PROBE:-$(dirname "$(dirname "$binary")")/tests/gpu/verify_probe}
min_ratio=${VERIFY_MIN_RATIO:-0.90}
if [[ ! -x $probe ]]; then
  echo "FAIL: $probe is missing: build with the tests (CUMEMCTL_TESTS=ON, the default)"
  exit 1
fi
status=0
for size in ${VERIFY_SIZES:-1GiB 16GiB}; do
  echo "== verify_probe --size $size"
  out=$("$probe" --size "$size" --repeat 5)
  rc=$?
  echo "$out"
  if ((rc == 125)); then echo "SKIP: no GPU"; exit 125; fi
  if ((rc != 0)); then echo "FAIL: verify_probe --size $size exited $rc"; status=1; continue; fi
  python3 - "$min_ratio" "$out" <<'PY' || status=1
import json, sys
ratio, doc = float(sys.argv[1]), json.loads(sys.argv[2])
ok = True
for key in ("fill", "check"):
    r = doc[f"{key}_gbps"] / doc["copy_gbps"]
    verdict = "ok" if r >= ratio else "FAIL"
    print(f"{verdict}: {key} {doc[key + '_gbps']:.0f} GB/s = {r:.1%} of copy {doc['copy_gbps']:.0f} GB/s"
          f" (need {ratio:.0%})")
    ok &= r >= ratio
sys.exit(0 if ok and doc["ok"] and doc["mismatches"] == 0 else 1)
PY
done
exit $status
