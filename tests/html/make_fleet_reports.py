#!/usr/bin/python3
"""Writes a synthetic fleet of doctor reports (one JSON document each, one after another), made from real
reports of the fake driver, so that every field stays exactly the binary's: only host names, the
timestamp and a few check results change. For the report pages (tests/html/html_test.py).

    make_fleet_reports.py PASS WARN FAIL OLD_DRIVER COUNT > reports.json

PASS, WARN, FAIL, OLD_DRIVER: doctor reports of a passing node (with a memory-health check), a node that
warns, a node that fails and a node on another driver. Of COUNT nodes (gpu0001...): every 50th warns,
every 200th fails, every 100th runs the other driver, and every 250th (from the 7th) has a GPU whose
memory-health check fails with a row remap failure; the rest pass.
"""
import copy
import json
import sys


def main(paths, count):
    docs = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            docs.append(json.load(f))
    passing, warning, failing, old_driver = docs
    out = []
    for i in range(1, count + 1):
        if i % 200 == 0:
            doc = copy.deepcopy(failing)
        elif i % 100 == 0:
            doc = copy.deepcopy(old_driver)
        elif i % 50 == 0:
            doc = copy.deepcopy(warning)
        else:
            doc = copy.deepcopy(passing)
        doc["host"] = f"gpu{i:04d}"
        if i % 250 == 7:
            for c in doc["results"]["checks"]:
                if c.get("check") == "memory-health":
                    c.update(status="fail", reason="row remap failed: uncorrectable errors with no spare row left",
                             remedy="drain the node and have the GPU replaced (RMA): remapping failed")
                    doc["results"]["status"] = "fail"
                    doc["ok"] = False
                    doc["exit_code"] = 1
        out.append(json.dumps(doc))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:5], int(sys.argv[5]))
