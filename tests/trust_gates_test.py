#!/usr/bin/python3
"""Root's trust is decided in one place each, and nothing in src/ or cmd/ goes around it.

Each rule names a call or a variable and the only files that may spell it: the gate. A file elsewhere that
loads a library, runs a program, asks whether it is root or reads a test's system root by its variable
would skip the gate's checks (the holes that review found were all such callers). Comments do not count.
Prints each line that breaks a rule; exit 1.
    trust_gates_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

RULES = [
    # (what the line does, its pattern, the files that may do it, the gate that others must call)
    ("loads a library", r"\bdlopen\s*\(", {"src/util/trusted_file.cpp"}, "load_library"),
    ("runs a program", r"\b(posix_spawnp?|execve?|execvpe?|execl[ep]?|fexecve|execveat|system|popen|v?fork)\s*\(",
     {"src/ipc/process.cpp"}, "ipc::Process (its executable_fd)"),
    ("decides by the effective user alone whether it is root",
     r"\bgete?uid\s*\(\s*\)\s*[!=]=\s*0|\b0\s*[!=]=\s*(::)?gete?uid\s*\(|!\s*(::)?gete?uid\s*\(",
     {"src/util/trusted_file.cpp"}, "judged_as_root()"),
    ("reads the test's system root by its variable", r"CUMEMCTL_SYSROOT\"|getenv\s*\(\s*kSysrootVariable",
     {"src/util/system_root.hpp", "src/util/system_root.cpp"}, "system_root()"),
    ("names the memtest state folder's variable", r"\"CUMEMCTL_STATE_DIR\"", {"src/gpu/memtest/memtest_record.cpp"},
     "memtest_state_path()"),
]


def code_lines(text):
    """The lines with comments and string-free comment tails blanked, line numbers kept."""
    out, block = [], False
    for line in text.splitlines():
        if block:
            end = line.find("*/")
            if end < 0:
                out.append("")
                continue
            line, block = line[end + 2:], False
        line = re.sub(r"/\*.*?\*/", "", line)
        start = line.find("/*")
        if start >= 0:
            line, block = line[:start], True
        stripped = line.lstrip()
        out.append("" if stripped.startswith("//") else re.sub(r"\s//\s.*$", "", line))
    return out


def main(source):
    root = pathlib.Path(source)
    broken = 0
    files = sorted(p for d in ("src", "cmd") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp", ".cu"))
    if not files:
        print(f"no source files under {root}/src or {root}/cmd")
        return 1
    for path in files:
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(code_lines(path.read_text(errors="replace")), 1):
            for what, pattern, allowed, gate in RULES:
                if rel not in allowed and re.search(pattern, line):
                    print(f"{rel}:{number}: {what} outside its gate ({', '.join(sorted(allowed))}); call {gate}")
                    print(f"    {line.strip()}")
                    broken += 1
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
