#!/usr/bin/env python3
"""Finds include cycles between folders of src/ and cmd/: a folder that includes (through #include "...")
a header of a folder that includes it back, directly or through others. Prints each cycle with the include
lines that make it and exits 1; prints nothing and exits 0 when the folders form no circle.

A folder is a file's directory below src/ (gpu/importer, ipc, base) or cmd. An include is found next to
the including file first, then below src/ (how the compiler finds it). Reads text only: about 0.1 s.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.MULTILINE)


def folder(path: pathlib.Path) -> str:
    if path.is_relative_to(SRC):
        return str(path.parent.relative_to(SRC)) or "."
    return str(path.parent.relative_to(ROOT))


def edges():
    """{from folder: {to folder: [(file, line number, included), ...]}}"""
    out = {}
    files = [p for d in ("src", "cmd") for p in (ROOT / d).rglob("*") if p.suffix in (".cpp", ".hpp", ".cuh", ".cu")]
    for path in sorted(files):
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            target = next((c for c in (path.parent / name, SRC / name) if c.is_file()), None)
            if target is None:
                continue
            a, b = folder(path), folder(target.resolve())
            if a != b:
                line = text.count("\n", 0, m.start()) + 1
                out.setdefault(a, {}).setdefault(b, []).append((path.relative_to(ROOT), line, name))
    return out


def cycles(graph):
    """The strongly connected components of more than one folder (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    graph = edges()
    found = cycles(graph)
    for component in found:
        members = set(component)
        print(f"include cycle between folders: {', '.join(component)}")
        for a in component:
            for b, sites in sorted(graph.get(a, {}).items()):
                if b in members:
                    for path, line, name in sites:
                        print(f"  {a} -> {b}: {path}:{line} includes \"{name}\"")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
