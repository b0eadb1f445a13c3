#!/usr/bin/python3
"""README.md's sample output of `cumemctl doctor` (between its readme-sample markers: its first LINES lines,
then a line `...`) is what the binary prints first on the fake driver's h200 profile, in a made-up system root (tests/cli/sysroot.sh: IMEX channel 0,
owner root, mode 0600) with the node named gpu01, except for times: each duration (`0.02 s`, `12 ms`)
and timestamp is compared as a placeholder, so the sample does not go stale when the output changes.
    readme_sample_test.py BINARY FAKECUDA FAKENVML PROFILES README [--update]
(--update writes the binary's output into README.md, for a change that means to change it.)
"""
import os
import re
import subprocess
import sys
import tempfile

LINES = 10
MARK = re.compile(r"(<!-- readme-sample: [^\n]*-->\n```\n)(.*?)(```\n<!-- end readme-sample -->)", re.S)


def normalise(text):
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIMESTAMP", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms|us|µs)\b", "TIME", text)
    return [line.rstrip() for line in text.splitlines()]


def main():
    binary, fakecuda, fakenvml, profiles, readme = sys.argv[1:6]
    update = "--update" in sys.argv[6:]
    with tempfile.TemporaryDirectory() as root:
        subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli/sysroot.sh"), root,
                        "--channel", "0:0600"], check=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CUMEMCTL_LIBCUDA": fakecuda,
               "CUMEMCTL_LIBNVML": fakenvml, "FAKECUDA_PROFILE": os.path.join(profiles, "h200.json"),
               "CUMEMCTL_SYSROOT": root, "CUMEMCTL_HOST": "gpu01", "NO_COLOR": "1",
               "FAKECUDA_IMEX_DIR": os.path.join(root, "dev/nvidia-caps-imex-channels")}
        p = subprocess.run([binary, "doctor"], env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"FAIL: cumemctl doctor on the h200 profile exits {p.returncode}, not 0 (the sample's):\n"
                 f"{p.stdout}{p.stderr}")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    m = MARK.search(text)
    if not m:
        sys.exit("FAIL: README.md has no readme-sample block")
    if update:
        with open(readme, "w", encoding="utf-8") as f:
            f.write(text[:m.start(2)] + "".join(p.stdout.splitlines(True)[:LINES]) + "...\n" + text[m.end(2):])
        print(f"README.md: the sample is now the first {LINES} lines of the binary's output")
        return
    want, got = normalise(m.group(2)), normalise(p.stdout)
    if len(want) != LINES + 1 or want[-1] != "...":
        sys.exit(f"FAIL: README.md's sample should be {LINES} lines of the output and a line '...': {want}")
    want, got = want[:LINES], got[:LINES]
    if want != got:
        diff = [f"line {i + 1}:\n  README: {w}\n  binary: {g}"
                for i, (w, g) in enumerate(zip(want + [""] * len(got), got + [""] * len(want))) if w != g]
        sys.exit("FAIL: README.md's sample of `cumemctl doctor` is not what the binary prints (run "
                 "tests/readme_sample_test.py ... --update if the change means it):\n" + "\n".join(diff[:10]))
    print(f"ok: README.md's sample ({len(want)} lines) is what `cumemctl doctor` prints on the h200 profile")


if __name__ == "__main__":
    main()
