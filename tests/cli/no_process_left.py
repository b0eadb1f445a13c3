#!/usr/bin/python3
"""Exits 1 (naming them) when processes other than this one and its parent have NAME=VALUE in their
environment: the second processes a case started (its ENV marks them) that were not killed and reaped.

    no_process_left.py NAME=VALUE
"""
import os
import sys


def main(mark):
    needle = mark.encode() + b"\0"
    skip = {os.getpid(), os.getppid()}
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read() + b"\0":
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
            left.append(f"{entry}: {command}")
        except OSError:
            continue
    for line in left:
        print(f"left running: {line}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
