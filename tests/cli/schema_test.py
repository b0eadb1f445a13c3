#!/usr/bin/python3
"""The report schema refuses what scripts must not meet: a check's status, an error's kind or a fleet
failure's status outside their closed sets, "" where "none" is null's, and a check with a key the
schema does not name. A report that holds each of them, made by hand, is first shown to validate, so
that each refusal is the one change's. ctest: schema-enums (well under a second)."""
import copy
import json
import os
import sys

import jsonschema

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "..", "schema", "report.schema.json"), encoding="utf-8") as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

CHECK = {"check": "vmm", "device": 0, "uuid": "GPU-5f0a6b1c-2d3e-4f50-6172-839405a6b7c8",
         "pci_bus_id": "00000000:19:00.0", "nvml_index": 0, "status": "pass",
         "reason": "2 MiB created, mapped and checked", "remedy": None, "seconds": 0.01, "details": {}}
PROBLEM = {"message": "no such device", "cause": None, "remedy": "give an index below 1", "exit_code": 2,
           "kind": "usage"}
DOCTOR = {"schema": "cumemctl.report", "schema_version": 1, "command": "doctor", "host": "n1",
          "timestamp": "2026-12-01T12:00:00Z", "tool": {"name": "cumemctl", "version": "1.0.0", "commit": "x"},
          "driver": {"library": "libcuda.so.1", "loaded": True, "version": 13000, "version_string": "13.0"},
          "results": {"status": "pass", "summary": {"pass": 1}, "checks": [CHECK]},
          "errors": [], "warnings": [PROBLEM], "ok": True, "exit_code": 0}
FLEET_FAILURE = {"host": "n1", "status": "fail", "check": "vmm", "device": 0, "uuid": None, "pci_bus_id": None,
                 "nvml_index": None, "reason": "r", "remedy": None}

failures = []


def errors_of(doc):
    return [e.message for e in validator.iter_errors(doc)]


def changed(path, value, base=DOCTOR):
    doc = copy.deepcopy(base)
    *parents, last = path
    target = doc
    for p in parents:
        target = target[p]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return doc


def accepted(what, doc):
    if errors_of(doc):
        failures.append(f"{what}: refused: {errors_of(doc)[:2]}")


def refused(what, doc, contains):
    errs = errors_of(doc)
    if not any(contains in e for e in errs):
        failures.append(f"{what}: {'accepted' if not errs else 'refused for another reason: ' + str(errs[:2])}")


check = ["results", "checks", 0]
accepted("the hand-made doctor report", DOCTOR)
accepted("a check with a remedy", changed(check + ["remedy"], "run cumemctl imex-setup"))
refused("a check with status banana", changed(check + ["status"], "banana"), "'banana' is not one of")
refused("a check whose remedy is \"\" (none is null)", changed(check + ["remedy"], ""), "is too short")
refused("a warning whose cause is \"\"", changed(["warnings", 0, "cause"], ""), "is too short")
refused("a check whose remedy is a number", changed(check + ["remedy"], 5), "is not of type")
refused("a check with a key the schema does not name", changed(check + ["extra"], 1), "'extra' was unexpected")
refused("a check without a remedy key", changed(check + ["remedy"], KeyError), "'remedy' is a required property")
refused("a warning of kind banana", changed(["warnings", 0, "kind"], "banana"), "'banana' is not one of")
accepted("doctor --list-checks' entries are no check results",
         changed(["results"], {"checks": [{"check": "vmm", "scope": "device", "summary": "s", "quick": True}]}))
fleet = changed(["command"], "fleet")
fleet["results"] = {"failures": [FLEET_FAILURE]}
accepted("a fleet failure", fleet)
refused("a fleet failure with status banana", changed(["results", "failures", 0, "status"], "banana", fleet),
        "'banana' is not one of")

for f in failures:
    print("FAIL", f)
print(f"schema-enums: {'failed' if failures else 'passed'}")
sys.exit(1 if failures else 0)
