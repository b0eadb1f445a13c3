#!/usr/bin/python3
"""The case runner's own checks can fail: steps and checks matched by name (a wrong one fails, an
element written for matching by position is refused with how to write it), a key that is not
snake_case and a "" outside the places where it is a value are found, and a case without EXIT is an
error of its file. ctest: cli-runner."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_cases as rc  # noqa: E402

STEPS = {"steps": [{"step": "context", "ok": True}, {"step": "snapshot", "ok": True},
                   {"step": "create", "call": "cuMemCreate", "ok": True}, {"step": "reserve", "ok": False},
                   {"step": "snapshot", "ok": True, "process": "importer"}]}
failures = []


def expect(what, got, want_none):
    if (got is None) != want_none:
        failures.append(f"{what}: {'matched' if got is None else 'did not match: ' + got}")


def expect_exit(what, fn, contains):
    try:
        fn()
    except SystemExit as e:
        if contains not in str(e):
            failures.append(f"{what}: the message {str(e)!r} lacks {contains!r}")
        return
    failures.append(f"{what}: accepted")


m = lambda steps: rc.matches({"steps": steps}, STEPS)
expect("a step by name", m([{"step": "reserve", "ok": False}]), True)
expect("a step by call", m([{"call": "cuMemCreate"}]), True)
expect("a step with another result", m([{"step": "reserve", "ok": True}]), False)
expect("a step that is not there", m([{"step": "map"}]), False)
expect("steps out of order", m([{"step": "reserve"}, {"step": "create"}]), False)
expect("the second of two names", m([{"step": "create"}, {"step": "snapshot", "process": "importer"}]), True)
expect("a name narrowed by process", m([{"step": "snapshot", "process": "exporter"}]), False)
expect("[] is no steps", m([]), False)
expect("[] matches none", rc.matches({"steps": []}, {"steps": []}), True)
expect("checks by check and device",
       rc.matches({"checks": [{"device": 1, "ok": False}]}, {"checks": [{"device": 0, "ok": True}, {"device": 1, "ok": True}]}),
       False)
mistake = rc.by_name_mistake({"results": {"steps": [{}, {}, {"step": "reserve", "ok": False}]}})
if not mistake or 'is [{"step": "reserve", "ok": false}]' not in mistake:
    failures.append(f"a positional fragment: {mistake!r}")
if rc.by_name_mistake({"results": {"steps": [{"step": "reserve"}], "other": [{}, {"x": 1}]}}) is not None:
    failures.append("a list that is no steps or checks is still matched by position")

if rc.not_snake_case({"results": {"checks": [{"details": {"host-numa": {}, "host_numa": {"freeBytes": 1}}}]}}) != [
        ("$.results.checks[0].details", "host-numa"), ("$.results.checks[0].details.host_numa", "freeBytes")]:
    failures.append("a key with a hyphen or a capital is not found")
if rc.not_snake_case({"results": {"nodes": [{"properties": {"kernel module": "x"}}]}}) != [
        ("$.results.nodes[0].properties", "kernel module")]:
    failures.append("fleet's node properties are exempted from the snake_case check")

if rc.empty_strings({"results": {"steps": [{"step": "a", "detail": "", "process": None}], "remedy": ""}}) != [
        "$.results.steps[0].detail", "$.results.remedy"]:
    failures.append('"" for none is not found')
if rc.empty_strings({"driver": {"library": None, "error": None}, "results": {"checks": [{"check": "devices"}]}}):
    failures.append("null is taken for \"\"")
if rc.empty_strings({"results": {"checks": [{"details": {"cuda_visible_devices": ""}}]}}):
    failures.append("CUDA_VISIBLE_DEVICES set empty, a value, is refused")
if rc.empty_strings({"results": {"devices": [{"cuda_visible_devices": ""}]}}) != ["$.results.devices[0].cuda_visible_devices"]:
    failures.append("the exemption reaches beyond its one place")

with tempfile.TemporaryDirectory() as tmp:
    def case_file(text):
        path = os.path.join(tmp, "x.case")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path
    expect_exit("a case without EXIT", lambda: rc.parse_cases(case_file("NAME no exit\nRUN true\n")), "has no EXIT")
    expect_exit("a positional JSON line",
                lambda: rc.parse_cases(case_file('NAME old\nRUN true --json\nEXIT 0\nJSON {"steps": [{}, {"step": "a"}]}\n')),
                "x.case:4: $.steps[0] is {}, which names no step")
    if len(rc.parse_cases(case_file("NAME good\nRUN true\nEXIT 0\n\nNAME two\nRUN false\nEXIT 1\n"))) != 2:
        failures.append("two good cases are not two cases")

for f in failures:
    print("FAIL", f)
print(f"{'FAILED' if failures else 'ok'}: the case runner's checks")
sys.exit(1 if failures else 0)
