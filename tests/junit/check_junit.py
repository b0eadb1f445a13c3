#!/usr/bin/python3
"""Checks a JUnit XML file as CI systems read it: valid against tests/junit/junit.xsd (lxml), read by a
real JUnit reader (junitparser, Debian's python3-junitparser), the suite's counts those of its cases,
and each expected case's outcome.
    check_junit.py FILE [NAME=OUTCOME[:TEXT]]...
NAME is a test case's name ("memory-health nvidia0", "driver"); OUTCOME passed, failure, skipped or error;
TEXT must be in the outcome's message or text (for passed: the case's system-out)."""
import os
import sys

import junitparser
from lxml import etree


def fail(message):
    sys.exit(f"check_junit: {sys.argv[1]}: {message}")


def main():
    path = sys.argv[1]
    schema = etree.XMLSchema(etree.parse(os.path.join(os.path.dirname(os.path.abspath(__file__)), "junit.xsd")))
    document = etree.parse(path)
    if not schema.validate(document):
        fail(f"not valid against junit.xsd: {schema.error_log}")
    xml = junitparser.JUnitXml.fromfile(path)
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    cases = {}
    for suite in suites:
        outcomes = {"failure": 0, "error": 0, "skipped": 0}
        n = 0
        for case in suite:
            n += 1
            kind = type(case.result[0]).__name__.lower() if case.result else "passed"
            if kind in outcomes:
                outcomes[kind] += 1
            if case.name in cases:
                fail(f"two test cases named {case.name!r}")
            text = " ".join((r.message or "") + " " + (r.text or "") for r in case.result) if case.result else (case.system_out or "")
            cases[case.name] = (kind, text)
        if (suite.tests, suite.failures, suite.errors, suite.skipped) != (n, outcomes["failure"], outcomes["error"], outcomes["skipped"]):
            fail(f"suite {suite.name}: counts {suite.tests}/{suite.failures}/{suite.errors}/{suite.skipped}, cases {n}/{outcomes}")
    for expected in sys.argv[2:]:
        name, _, rest = expected.partition("=")
        outcome, _, text = rest.partition(":")
        if name not in cases:
            fail(f"no test case {name!r} (cases: {sorted(cases)})")
        kind, said = cases[name]
        if kind != outcome or text not in said:
            fail(f"{name}: {kind} {said!r}, expected {outcome} with {text!r}")
    print(f"check_junit: {len(cases)} cases, valid, read by junitparser {junitparser.version}")


if __name__ == "__main__":
    main()
