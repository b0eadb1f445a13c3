#!/usr/bin/python3
"""Compares two --dump folders of run_cases.py case by case (keyed by file and case name), after
normalising what differs from run to run: times, durations, pids, seeds, commit ids, addresses, measured
figures, temporary names, the build folder, runs of spaces (a table's widths follow its times):

    run_cases.py --binary OLD/cmd/cumemctl ... --dump before tests/cli/cases
    run_cases.py --binary NEW/cmd/cumemctl ... --dump after tests/cli/cases
    compare_outputs.py before after      # each case that differs, with the lines that do

What still differs between two runs of one binary (a doctor run's fd numbers, a rank that a SIGTERM
stopped before or after it wrote its card, the kernel log's record count) is noise to read past."""
import os, re, sys, difflib
RULES = [
    (re.compile(r"/work/[\w.-]+/build/|(?<![\w/])build/"), "<build>/"),
    (re.compile(r"/work/[\w.-]+/tests/"), "<source>/tests/"),
    (re.compile(r"0x[0-9a-f]{6,}"), "<addr>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{12}\b"), "<commit>"),
    (re.compile(r"(pid|PID) \d+"), r"\1 <pid>"),
    (re.compile(r'"(pid)": \d+'), r'"\1": <pid>'),
    (re.compile(r"\b\d+(\.\d+)?( ?)(s|ms|us|µs|ns)\b"), r"<dur>\2\3"),
    (re.compile(r"\d+\.\d+"), "<num>"),
    (re.compile(r'("seed": |seed )\d+'), r"\1<seed>"),
    (re.compile(r"cumemctl-[a-z-]*[0-9a-z_]{8}"), "<tmpname>"),
    (re.compile(r"/tmp/tmp[0-9a-z_]{8}"), "<tmpdir>"),
    (re.compile(r"\b\d{6,}\b"), "<big>"),
    (re.compile(r"<num>e[-+]\d+"), "<num>"),
    (re.compile(r"process \d+"), "process <pid>"),
    (re.compile(r'"fabric_handle": "[0-9a-f]+"'), '"fabric_handle": <handle>'),
    (re.compile(r"[0-9a-f]{32,}"), "<hex>"),
    (re.compile(r"\b\d+e[-+]\d+"), "<num>"),
    (re.compile(r"(to|then:|child) [\d ]+"), r"\1 <pids>"),
    (re.compile(r'"records": \d+|\d+ records'), "<records>"),
    (re.compile(r" {2,}"), "  "),
]
def norm(text):
    for r, s in RULES:
        text = r.sub(s, text)
    return text
def load(folder):
    out = {}
    for n in os.listdir(folder):
        t = open(os.path.join(folder, n), encoding="utf-8", errors="replace").read()
        name = t.splitlines()[0]
        out[(n.split("-")[0], name)] = norm(t)
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
same = diff = 0
for k in sorted(set(a) | set(b)):
    if k not in a:
        print(f"== only after: {k[0]} {k[1]}"); continue
    if k not in b:
        print(f"== only before: {k[0]} {k[1]}"); continue
    if a[k] == b[k]:
        same += 1; continue
    diff += 1
    print(f"== differs: {k[0]} {k[1]}")
    for l in list(difflib.unified_diff(a[k].splitlines(), b[k].splitlines(), lineterm="", n=0))[2:40]:
        print("   " + l[:220])
print(f"{same} the same, {diff} differ")
