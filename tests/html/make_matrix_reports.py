#!/usr/bin/python3
"""Writes a synthetic fabric-matrix run as its ranks' reports (one JSON document each, one after another),
made from one real rank report of the fake driver: the card and row formats stay exactly the binary's,
only hosts, ranks, GPUs and the cells' results change. For the report pages (tests/html/html_test.py).

    make_matrix_reports.py RANK_REPORT NODES GPUS_PER_NODE BAD_NODE > reports.json

Every pair reads at about 400 GB/s (+-5%, a fixed seed), except on node BAD_NODE (0-based): its GPUs read
and are read at about 40 GB/s (a slow node), and its first GPU's reads of the next node's first GPU fail
with the diagnosis imex-domain.
"""
import copy
import json
import random
import sys


def main(path, nodes, gpus, bad):
    with open(path, encoding="utf-8") as f:
        template = json.load(f)
    ranks = nodes * gpus
    rng = random.Random(7)
    node_of = [r // gpus for r in range(ranks)]
    out = []
    for r in range(ranks):
        doc = copy.deepcopy(template)
        host = f"gb{node_of[r] + 1:03d}"
        doc["host"] = host
        res = doc["results"]
        res.update(rank=r, ranks=ranks, device=r % gpus, run="synthetic")
        card = res["card"]
        card.update(rank=r, ranks=ranks, host=host, device=r % gpus, run="synthetic",
                    gpu_uuid=f"GPU-5e000000-0000-0000-{node_of[r]:04x}-{r:012x}")
        cells = []
        for peer in range(ranks):
            slow = node_of[r] == bad or node_of[peer] == bad
            gbps = (40.0 if slow else 400.0) * rng.uniform(0.95, 1.05)
            cell = {"peer": peer, "status": "pass", "diagnosis": "", "gbps": gbps, "seconds": 2097152 / gbps / 1e9,
                    "problem": None}
            if r == bad * gpus and peer == ((bad + 1) % nodes) * gpus:
                cell.update(status="fail", diagnosis="imex-domain", gbps=None, seconds=None,
                            problem={"message": f"rank {r} ({host}) reading rank {peer}: cuMemImportFromShareableHandle "
                                                "failed: CUDA_ERROR_NOT_PERMITTED", "kind": "permission",
                                     "cause": "the two nodes are not in one IMEX domain",
                                     "remedy": "check the IMEX service and its node list on both nodes",
                                     "exit_code": 4})
            cells.append(cell)
        res["row"] = {"format": template["results"]["row"]["format"],
                      "format_version": template["results"]["row"]["format_version"],
                      "run": "synthetic", "rank": r, "host": host, "cells": cells}
        res.pop("matrix", None)
        out.append(json.dumps(doc))
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
