#!/usr/bin/python3
"""Writes a fleet of COUNT doctor reports (gpu001...), one JSON document a line, from one real report of
the fake driver, so that every field stays the binary's: only the host, and for the nodes of --fail the
memory-health check of GPU 2 (a row remap failure), and for the nodes of --old the timestamp (a year ago).

    make_fleet.py REPORT COUNT [--fail 17,203] [--old 5] [--skip 300] > all.json
"""
import argparse
import copy
import json


def numbers(text):
    return {int(x) for x in text.split(",") if x}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("count", type=int)
    ap.add_argument("--fail", type=numbers, default=set())
    ap.add_argument("--old", type=numbers, default=set())
    ap.add_argument("--skip", type=numbers, default=set())
    args = ap.parse_args()
    with open(args.report, encoding="utf-8") as f:
        base = json.load(f)
    for i in range(1, args.count + 1):
        if i in args.skip:
            continue
        doc = copy.deepcopy(base)
        doc["host"] = f"gpu{i:03d}"
        if i in args.old:
            doc["timestamp"] = "2025-12-01T00:00:00Z"
        if i in args.fail:
            for c in doc["results"]["checks"]:
                if c["check"] == "memory-health" and c["device"] == 2:
                    c.update(status="fail", reason="row remap failed: uncorrectable errors with no spare row left",
                             remedy="drain the node and have the GPU replaced (RMA)")
            doc["results"]["status"] = "fail"
            doc.update(ok=False, exit_code=1)
        print(json.dumps(doc))


if __name__ == "__main__":
    main()
