"""The figures of nvbandwidth's JSON and of `cumemctl bandwidth --json`, keyed alike, for the GPU
scripts that set the two side by side (scripts/bandwidth_compare.py, scripts/gpu-bidir-probe.sh):
(nvbandwidth test, row, column) -> GB/s, cumemctl's figures named as nvbandwidth names the same copies
and counted as it counts them (bytes copied, per direction: the "copied" of cumemctl's JSON)."""
import json


def load(path):
    """A JSON file, or None where it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def nvb_figures(doc):
    """(test, row, column) -> GB/s from nvbandwidth's JSON (nvbandwidth.testcases[].bandwidth_matrix)."""
    figures = {}
    for t in ((doc or {}).get("nvbandwidth") or {}).get("testcases") or []:
        for i, row in enumerate(t.get("bandwidth_matrix") or []):
            for j, v in enumerate(row):
                try:
                    figures[(t["name"], i, j)] = float(v)
                except (TypeError, ValueError):
                    pass
        if "sum" in t and t["name"] in ("all_to_host_memcpy_ce", "host_to_all_memcpy_ce"):
            figures[(t["name"], "sum", None)] = float(t["sum"])
    return figures


def cm_figures(doc):
    """(test, row, column) -> GB/s from cumemctl's JSON, named as nvbandwidth names the same copies."""
    figures = {}
    results = (doc or {}).get("results") or {}
    for f in results.get("figures") or []:
        dev, path, copied = f["device"], f["path"], f.get("copied") or []
        byd = {c["direction"]: c["gbps"] for c in copied}
        if f.get("concurrent"):
            continue
        if path == "h2d" and f["memory"] == "pinned":
            figures[("host_to_device_memcpy_ce", 0, dev)] = byd["h2d"]
        elif path == "d2h" and f["memory"] == "pinned":
            figures[("device_to_host_memcpy_ce", 0, dev)] = byd["d2h"]
        elif path == "both":
            figures[("host_to_device_bidirectional_memcpy_ce", 0, dev)] = byd["h2d"]
            figures[("device_to_host_bidirectional_memcpy_ce", 0, dev)] = byd["d2h"]
        elif path == "d2d":
            figures[("device_local_copy", 0, dev)] = byd["d2d"]
        elif path == "peer":
            figures[("device_to_device_memcpy_write_ce", dev, f["peer"])] = byd["peer"]
    for s in results.get("sums") or []:
        name = {"h2d": "host_to_all_memcpy_ce", "d2h": "all_to_host_memcpy_ce"}.get(s.get("path"))
        if name:
            figures[(name, "sum", None)] = s["gbps"]
    return figures
