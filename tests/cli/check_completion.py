#!/usr/bin/python3
"""Checks a generated completion script against the program's own --help, in the real shell: every
subcommand that `cumemctl --help` lists is offered after `cumemctl `, and every long option that
`cumemctl CMD --help` lists is offered after `cumemctl CMD --`; every {a,b} choice of an option is
offered after the option.

    check_completion.py CUMEMCTL bash|zsh TMPDIR
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def help_of(binary, *args):
    """(subcommands, {long option: [choices]}) from `binary ARGS --help`."""
    text = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, check=True).stdout
    text = text.split("\nExamples:\n")[0]  # the footer: example command lines, not the lists
    subs = re.findall(r"^  ([a-z][a-z0-9-]*) ", text.split("Commands:")[1], re.M) if "Commands:" in text else []
    options = {}
    for m in re.finditer(r"^  (?:-\w,)?(--[a-z][a-z0-9-]*)(?: (\S+))?", text, re.M):
        choices = re.search(r"\{([^}]*)\}", m.group(2) or "")
        options[m.group(1)] = choices.group(1).split(",") if choices else []
    return subs, options


def main(binary, shell, tmp):
    binary = os.path.abspath(binary)
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    link = os.path.join(bindir, "cumemctl")
    if not os.path.exists(link):
        os.symlink(binary, link)
    script = subprocess.run([binary, "completion", shell], capture_output=True, text=True, check=True).stdout
    if shell == "bash":
        path = os.path.join(tmp, "cumemctl.bash")
        helper = lambda line: [os.path.join(HERE, "bash_complete.sh"), path, line]
    else:
        fdir = os.path.join(tmp, "zfunc")
        os.makedirs(fdir, exist_ok=True)
        path = os.path.join(fdir, "_cumemctl")
        helper = lambda line: ["zsh", "-f", os.path.join(HERE, "zsh_complete.zsh"), fdir, bindir, line]
        # compinit scans the completion functions once and keeps the scan for the later runs.
        os.environ["ZCOMPDUMP"] = os.path.join(tmp, "zcompdump")
    with open(path, "w", encoding="utf-8") as f:
        f.write(script)

    failures = []

    def offered(line):
        r = subprocess.run(helper(line), capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append(f"{line!r}: the completion helper failed: {r.stderr.strip()}")
        return set(r.stdout.split())

    def expect(line, words):
        got = offered(line)
        missing = [w for w in words if w not in got]
        if missing:
            failures.append(f"{line!r}: {missing} not offered (got {sorted(got)})")
        else:
            print(f"ok  {line!r}: {len(words)} offered")

    subs, global_options = help_of(binary)
    expect("cumemctl ", subs)
    expect("cumemctl --", list(global_options))
    for opt, choices in global_options.items():
        if choices:
            expect(f"cumemctl {opt} ", choices)
    for sub in subs:
        _, options = help_of(binary, sub)
        expect(f"cumemctl {sub} --", list(options))
        for opt, choices in options.items():
            if choices:
                expect(f"cumemctl {sub} {opt} ", choices)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures or not subs else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
