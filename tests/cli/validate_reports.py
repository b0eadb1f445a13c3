#!/usr/bin/python3
"""Validates the cumemctl reports in files (one or several JSON documents each, as --json writes them
and fleet reads them) against schema/report.schema.json: one line per file, the first errors of a
report that does not validate, exit 1 if any does not. A document that is not a report (no
"schema": "cumemctl.report") is named and left out. scripts/gpu-session.sh runs it over every report
of a session on a real node, where the driver and NVML give values the fake driver does not.
    validate_reports.py [--schema FILE] FILE..."""
import argparse
import json
import os
import sys

import jsonschema


def documents(text):
    """The JSON documents of text, one after another (whitespace between them)."""
    decoder, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        doc, i = decoder.raw_decode(text, i)
        out.append(doc)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schema", default=os.path.join(here, "..", "..", "schema", "report.schema.json"))
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    with open(args.schema, encoding="utf-8") as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    bad = reports = 0
    for path in args.files:
        try:
            with open(path, encoding="utf-8") as f:
                docs = documents(f.read())
        except (OSError, ValueError) as e:
            print(f"skip  {path}: not JSON ({e})")
            continue
        for n, doc in enumerate(docs, 1):
            where = path if len(docs) == 1 else f"{path} (document {n})"
            if not isinstance(doc, dict) or doc.get("schema") != "cumemctl.report":
                print(f"skip  {where}: not a cumemctl report")
                continue
            reports += 1
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            if errors:
                bad += 1
                print(f"FAIL  {where} ({doc.get('command')})")
                for e in errors[:5]:
                    print(f"      {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
            else:
                print(f"ok    {where} ({doc.get('command')})")
    print(f"{reports - bad} of {reports} reports valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
