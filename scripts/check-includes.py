#!/usr/bin/env python3
"""Every file of src/ and cmd/ compiles on its own: it includes what it uses.

The builds compile in unity batches with precompiled headers, where a file that leaves out an include
still compiles because a file before it in the batch, or the precompiled header, brought it in. Here
each file is compiled alone, without either, with the flags and warnings (-Werror) of a Debug
configuration, but only as far as the compiler's front end (-fsyntax-only): a missing declaration,
a template that does not instantiate and every front-end warning show there, and no code is
generated, optimised or written.

    check-includes.py BUILD_DIR     BUILD_DIR: a CMake folder configured with -DCUMEMCTL_UNITY=OFF
                                    -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON (its compile_commands.json)
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import time


def syntax_only(command):
    """The compile command as a front-end run: no object, no dependency file."""
    words = shlex.split(command)
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if w in ("-c", "-MD", "-MMD"):
            continue
        out.append(w)
    return out + ["-fsyntax-only"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    mine = [
        e for e in entries
        if os.path.relpath(e["file"], source).split(os.sep)[0] in ("src", "cmd") and e["file"].endswith(".cpp")
    ]
    if not mine:
        sys.exit(f"check-includes: no file of src/ or cmd/ in {build}/compile_commands.json")

    def compile_one(entry):
        r = subprocess.run(syntax_only(entry["command"]), cwd=entry["directory"], capture_output=True, text=True)
        return entry["file"], r.returncode, r.stderr

    start = time.monotonic()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for path, code, err in pool.map(compile_one, mine):
            if code != 0:
                failed += 1
                print(f"check-includes: {os.path.relpath(path, source)} does not compile alone:\n{err}", file=sys.stderr)
    print(f"check-includes: {len(mine) - failed} of {len(mine)} files compile alone "
          f"({time.monotonic() - start:.0f} s)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
