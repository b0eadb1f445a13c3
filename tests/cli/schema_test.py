#!/usr/bin/python3
"""The report schema refuses what scripts must not meet, command by command. For every command (and
each form of one whose results differ: create --pool, doctor --list-checks, fabric-matrix's modes, the
report of a command line that did not parse) a report that the command wrote is first shown to
validate, then changed in one place: a key the schema does not name, a value outside a closed set
("banana"), a wrong type. Each change must be refused, and refused for that change (the error names
the change), so that no refusal is another's. A few changes must be accepted: what the schema leaves
open on purpose (fleet's node properties, doctor's check details).

The reports are fixtures/schema/VARIANT.json, captured from the CLI cases' output (tests/cli/cases);
after a deliberate change of a command's JSON, capture the variant again (any case's --json output of
that form will do) and check that this test still passes. ctest: schema-enums (about a second)."""
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
fixtures = os.path.join(here, "fixtures", "schema")

failures = []


def load(variant):
    with open(os.path.join(fixtures, variant + ".json"), encoding="utf-8") as f:
        return json.load(f)


def flat(errors):
    """Every error, those of the alternatives of a oneOf or an if included (a nullable $ref's refusal
    is a oneOf's, its reason one level down)."""
    out = []
    for e in errors:
        out.append(e)
        out += flat(e.context)
    return out


def changed(doc, path, value):
    """doc with the value at path (keys and indexes; the last may be new) replaced; KeyError deletes."""
    doc = copy.deepcopy(doc)
    target = doc
    for p in path[:-1]:
        target = target[p]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


def accepted(what, doc):
    errs = flat(validator.iter_errors(doc))
    if errs:
        failures.append(f"{what}: refused: {[e.message for e in errs[:2]]}")
        return False
    return True


# A key the schema does not name, or one it requires, is refused at the object that holds it; any
# other change at the value itself.
AT_PARENT = {"additionalProperties", "required"}


def refused(what, doc, path, keyword):
    """doc must be refused by the schema keyword (enum, type, ...) at path, the place of the change:
    the keyword names the rule, not the wording, which differs between versions of jsonschema."""
    where = path[:-1] if keyword in AT_PARENT else path
    errs = flat(validator.iter_errors(doc))
    if not any(e.validator == keyword and list(e.absolute_path) == where for e in errs):
        why = [f"{'/'.join(map(str, e.absolute_path))}: {e.validator}: {e.message[:80]}" for e in errs[:3]]
        failures.append(f"{what}: {'accepted' if not errs else 'refused for another reason: ' + str(why)}")


R = ["results"]
# Per form of a command's results: (path under results, value, what the refusal says). Every form also
# gets a key its results do not name.
CHANGES = {
    "devices": [(["devices", 0, "free_source"], "banana", "enum"),
                (["devices", 0, "total_bytes"], "80 GiB", "type"),
                (["devices", 0, "fabric", "state"], "banana", "pattern"),
                (["devices", 0, "capabilities", "pool_handle_types", 0], "banana", "enum"),
                (["devices", 0, "made_up"], 1, "additionalProperties")],
    "granularity": [(["rows", 0, "status"], "banana", "enum"),
                    (["rows", 0, "minimum_bytes"], "2 MiB", "type"),
                    (["rows", 0, "location"], "banana", "pattern")],
    "create": [(["access", 0, "access"], "banana", "enum"),
               (["requested", "location"], "banana", "pattern"),
               (["size_bytes"], "2 MiB", "type"),
               (["steps", 0, "ok"], "yes", "type"),
               (["steps", 0, "detail"], "", "minLength"),
               (["steps", 0, "process"], "", "minLength"),
               (["steps"], KeyError, "required")],
    "create-pool": [(["devices", 0, "pool", "allocation_type"], "banana", "enum"),
                    (["statistics_scope"], "node", "enum"),
                    (["devices", 0, "size_bytes"], None, "type")],
    "pool-stats": [(["devices", 0, "pools", 0, "allocation_type"], "banana", "enum"),
                   (["devices", 0, "selected", "exercise", "allocations"], 1.5, "type")],
    "trim": [(["devices", 0, "pool", "location"], "banana", "pattern"),
             (["devices", 0, "returned"], "yes", "type")],
    "imex-setup": [(["channels", 0, "action"], "banana", "enum"),
                   (["channels", 0, "detail"], "", "minLength"),
                   (["channels", 0, "mode"], "rw-rw-rw-", "pattern"),
                   (["major"], "511", "type"),
                   (["verify", "made_up"], 1, "additionalProperties")],
    "le-bind": [(["request", "type"], "banana", "enum"),
                (["bindings", 0, "method"], "banana", "enum"),
                (["request", "size_bytes"], "2 MiB", "type")],
    "doctor": [(["checks", 0, "status"], "banana", "enum"),
               (["checks", 0, "check"], "banana", "enum"),
               (["checks", 0, "remedy"], "", "minLength"),
               (["checks", 0, "remedy"], 5, "type"),
               (["checks", 0, "made_up"], 1, "additionalProperties"),
               (["checks", 0, "remedy"], KeyError, "required"),
               (["status"], "banana", "enum"),
               (["level"], "banana", "enum"),
               (["summary", "pass"], "1", "type"),
               (["summary", "banana"], 1, "additionalProperties"),
               (["gpus", 0, "uuid"], 5, "type")],
    "doctor-list-checks": [(["checks", 0, "scope"], "banana", "enum"), (["checks", 0, "check"], "banana", "enum"),
                           (["checks", 0, "quick"], "yes", "type")],
    "fleet": [(["nodes", 0, "status"], "banana", "enum"),
              (["nodes", 0, "commands", 0], "memtest", "enum"),
              (["failures", 0, "status"], "banana", "enum"),
              (["failures", 0, "reason"], "", "minLength"),
              (["statuses", "pass"], "1", "type"),
              (["bandwidth", "slow", 0, "path"], "banana", "enum"),
              (["nodes", 0, "bandwidth", 0, "gbps"], "55", "type")],
    "bandwidth": [(["figures", 0, "path"], "banana", "enum"),
                  (["figures", 0, "memory"], "banana", "pattern"),
                  (["figures", 0, "gbps"], "55", "type"),
                  (["devices", 0, "limits", "host", "link"], "banana", "enum"),
                  (["devices", 0, "link", "pcie", "generation"], "5", "type")],
    "memtest": [(["devices", 0, "verdict", "status"], "banana", "enum"),
                (["devices", 0, "patterns", 0, "pattern"], "banana", "enum"),
                (["memtest", "patterns", 0], "banana", "enum"),
                (["memtest", "passes"], "2", "type")],
    "fabric-matrix-local": [(["matrix", "cells", 0, 0, "status"], "banana", "enum"),
                            (["matrix", "cells", 0, 0, "diagnosis"], "banana", "enum"),
                            (["ranks", 0, "pid"], "1", "type")],
    "fabric-matrix-rank": [(["rendezvous", "kind"], "banana", "enum"),
                           (["card", "handle_type"], "banana", "enum"),
                           (["rank"], "0", "type")],
    "fabric-matrix-summary": [(["matrix", "rank_info", 0, "state"], "banana", "enum"),
                              (["matrix", "rank_info", 0, "made_up"], 1, "additionalProperties"),
                              (["mode"], "banana", "enum")],
    "completion": [(["shell"], "fish", "enum"), (["script"], 5, "type")],
    "version": [(["version"], "banana", "pattern"), (["commit"], 1, "type")],
    "usage": [],
}

for variant, changes in CHANGES.items():
    doc = load(variant)
    if not accepted(f"{variant}: the captured report", doc):
        continue
    if variant == "usage":
        refused("usage: results in the report of a line that did not parse", changed(doc, R + ["devices"], []),
                R, "maxProperties")
        continue
    refused(f"{variant}: a key its results do not name", changed(doc, R + ["made_up"], 1), R + ["made_up"],
            "additionalProperties")
    for path, value, keyword in changes:
        refused(f"{variant}: results.{'.'.join(map(str, path))} = {value!r}", changed(doc, R + path, value), R + path,
                keyword)

# The envelope: the command is one of the set; results are {} only in a report of failure.
devices = load("devices")
refused("a command the tool does not have", changed(devices, ["command"], "banana"), ["command"], "enum")
refused("empty results in a report that says ok", changed(devices, ["results"], {}), ["ok"], "const")
refused("a warning of kind banana",
        changed(devices, ["warnings"], [{"message": "m", "cause": None, "remedy": None, "exit_code": 0,
                                         "kind": "banana"}]), ["warnings", 0, "kind"], "enum")
refused("an error of kind banana",
        changed(devices, ["errors"], [{"message": "m", "cause": None, "remedy": None, "exit_code": 3,
                                       "kind": "banana"}]), ["errors", 0, "kind"], "enum")
refused("a holder whose pid is text",
        changed(devices, ["errors"], [{"message": "m", "cause": None, "remedy": None, "exit_code": 3, "kind": "busy",
                                       "held_by": [{"pid": "4194242", "name": None, "used_bytes": None}]}]),
        ["errors", 0, "held_by", 0, "pid"], "type")
usage = load("usage")
refused("an error whose cause is \"\" (none is null)", changed(usage, ["errors", 0, "cause"], ""),
        ["errors", 0, "cause"], "minLength")
refused("a command of \"\" (none named is null)", changed(usage, ["command"], ""), ["command"], "enum")
refused("a driver library of \"\" (none tried is null)", changed(usage, ["driver", "library"], ""),
        ["driver", "library"], "minLength")

# What the schema leaves open on purpose.
fleet = load("fleet")
accepted("fleet: a node property of any name and form (data, keyed by the property; fleet's own)",
         changed(fleet, R + ["nodes", 0, "properties", "capability made_up"], True))
doctor = load("doctor")
accepted("doctor: a check's details hold that check's own findings",
         changed(doctor, R + ["checks", 0, "details", "made_up"], 1))

# Every command's results are reached by a captured report here.
covered = {v.split("-list-checks")[0] for v in CHANGES}
covered = {("fabric-matrix" if v.startswith("fabric-matrix") else "create" if v.startswith("create") else v)
           for v in covered}
for command in schema["properties"]["command"]["enum"]:
    # The hidden second processes report to their first process; a report of theirs has no results schema.
    name = command or "usage"  # null: a command line that named none
    if not name.startswith("__") and name not in covered:
        failures.append(f"command {command!r}: no captured report in {fixtures}")

for f in failures:
    print("FAIL", f)
print(f"schema-enums: {'failed' if failures else 'passed'}")
sys.exit(1 if failures else 0)
