#!/usr/bin/python3
"""Writes a fake driver profile whose devices answer NVML's fabric info as a named kind of node does, so
that a test case says "degraded" rather than a health mask (the fake NVML reads "nvml": {"fabric"}).

    fabric_profile.py BASE OUT KIND[@N]...

BASE is a profile name (gb200x4) or file; KIND applies to every device, KIND@N to device N only (later
ones win). The kinds and where their figures come from (../shared/mnnvl-facts.md):"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakecuda"))
from make_profile import load_profile  # noqa: E402 (a base profile is read as the fakes read it)

UUID = "dc6e40c4a1b24c3d9e8f0123456789ab"  # one rack's cluster UUID
OTHER_UUID = "5e1f00d2b3c44a5b8c7d6e5f40312011"  # another rack's, with the same default clique
HEALTHY = 0x11AA  # the four older fields FALSE (no problem), configuration NONE, partition assigned (§1.3)

KINDS = {
    # GB200 NVL72 attached and healthy: completed, success, a cluster UUID, the default partition's clique
    # 32766 (§1.5), summary HEALTHY.
    "healthy": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "health_mask": HEALTHY, "health_summary": 1},
    # Attached, bandwidth degraded (DEGRADED_BW = 1 TRUE), summary LIMITED_CAPACITY.
    "degraded": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "health_mask": (HEALTHY & ~0x3) | 0x1, "health_summary": 3},
    # Attached, summary UNHEALTHY and ROUTE_UNHEALTHY TRUE (the GB200 of dra-driver #626 showed Summary Unhealthy).
    "unhealthy": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "health_mask": (HEALTHY & ~0x30) | 0x10, "health_summary": 2},
    # Attached, INCORRECT_CONFIGURATION = 4 NO_PARTITION.
    "no-partition": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "health_mask": (HEALTHY & ~0xF00) | 0x400, "health_summary": 2},
    # HGX H100/H200 under the fabric manager: completed with a zero UUID and clique 0 (NCCL #1584's log).
    "zero-uuid": {"state": 3, "status": 0, "cluster_uuid": "0" * 32, "clique_id": 0, "health_mask": 0, "health_summary": 0},
    # Completed with Insufficient Resources (23), zero UUID, clique 0 (azhpc-images #506).
    "completed-error": {"state": 3, "status": 23, "cluster_uuid": "0" * 32, "clique_id": 0, "health_mask": 0, "health_summary": 0},
    # Registration not done: IN_PROGRESS (gpu-operator #2511).
    "in-progress": {"state": 2, "status": 0, "cluster_uuid": "0" * 32, "clique_id": 0, "health_mask": 0, "health_summary": 0},
    # The standalone H200 (the probe): success, state NOT_SUPPORTED, zeros.
    "not-supported": {"state": 0},
    # Another rack with the same clique 32766 (torchcomms #3612).
    "other-rack": {"state": 3, "status": 0, "cluster_uuid": OTHER_UUID, "clique_id": 32766, "health_mask": HEALTHY, "health_summary": 1},
    # Same rack, another partition.
    "other-clique": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 7, "health_mask": HEALTHY, "health_summary": 1},
    # A 12.x library: nvmlDeviceGetGpuFabricInfoV takes v2 only (no health summary); healthy mask 0xaa.
    "v2-only": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "health_mask": 0xAA, "api": "v2"},
    # An R525-era library: only nvmlDeviceGetGpuFabricInfo (v1), no health at all.
    "v1-only": {"state": 3, "status": 0, "cluster_uuid": UUID, "clique_id": 32766, "api": "v1"},
}
__doc__ += "".join(f"\n    {k}" for k in KINDS)


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    base, out, kinds = argv[0], argv[1], argv[2:]
    if not os.path.exists(base):
        base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakecuda", "profiles", base + ".json")
    profile = load_profile(base)
    for spec in kinds:
        kind, _, index = spec.partition("@")
        if kind not in KINDS:
            raise SystemExit(f"fabric_profile: unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")
        targets = [profile["devices"][int(index)]] if index else profile["devices"]
        for d in targets:
            d.setdefault("nvml", {})["fabric"] = KINDS[kind]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(profile, f)


if __name__ == "__main__":
    main(sys.argv[1:])
