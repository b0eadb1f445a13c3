#!/usr/bin/python3
"""Every relative link of the pages a reader starts from resolves: README.md, ARCHITECTURE.md,
CONTRIBUTING.md and docs/*.md. A link [text](target) or ![alt](target) (or a reference definition
`[name]: target`) that is not a URL must name a file or folder of the source tree, relative to the page;
a `#fragment` on a Markdown page must be one of its headings, as GitHub makes their anchors. Links inside
code (fenced blocks, `spans`) are not links. Prints each broken link with its page and line; exit 1.
    docs_links_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

PAGES = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "docs/*.md"]
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def without_code(text):
    """The text with fenced blocks and code spans blanked, line numbers kept."""
    out, fenced = [], False
    for line in text.splitlines():
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"(`+)(?:(?!\1).)+?\1", "", line))
    return out


def anchors(page):
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    found, seen = set(), {}
    for line in without_code(page.read_text(encoding="utf-8")):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    # Headings are read without their code spans' text; GitHub keeps it. Add the raw form too.
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return found


def broken_links(root):
    pages = sorted({p for pattern in PAGES for p in root.glob(pattern)})
    problems = []
    for page in pages:
        for number, line in enumerate(without_code(page.read_text(encoding="utf-8")), 1):
            targets = [m.group(1) for m in INLINE.finditer(line)]
            m = REFERENCE.match(line)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if EXTERNAL.match(target):
                    continue
                path, _, fragment = target.partition("#")
                where = f"{page.relative_to(root)}:{number}: {target}"
                resolved = (page.parent / path).resolve() if path else page
                if not resolved.exists():
                    problems.append(f"{where}: no such file or folder")
                elif not resolved.is_relative_to(root):
                    problems.append(f"{where}: outside the source tree")
                elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                    problems.append(f"{where}: {resolved.name} has no heading with the anchor #{fragment}")
    return pages, problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    pages, problems = broken_links(root)
    if not pages:
        sys.exit(f"FAIL: no pages found under {root}")
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        sys.exit(f"{len(problems)} broken links in {len(pages)} pages")
    print(f"ok: every relative link of {len(pages)} pages resolves")


if __name__ == "__main__":
    main()
