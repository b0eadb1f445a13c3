#!/usr/bin/python3
"""The report pages (--format html of fabric-matrix and fleet) in a real browser: Debian's chromium,
headless. Pages of a 4-rank --local run on the fake driver, a synthetic 72-rank matrix with one bad node
(make_matrix_reports.py) and a synthetic fleet of 1,000 nodes (make_fleet_reports.py), each checked in
the DOM that chromium built (one cell per pair, the colours of a failed, a slow and a good pair, the
legend, the statuses and host lists) and in a screenshot (the pixels at those cells). Prints each page's
size. Outside CI it skips (exit 0, saying so) where chromium is missing.

    html_test.py --binary CUMEMCTL --fake LIBFAKECUDA --fake-nvml LIBFAKENVML --profiles DIR [--docs DIR]

--docs DIR also keeps the screenshots there (docs/images: the ones docs/fleet.md shows) and measures
how long chromium takes to load each page beyond an empty page (the figures docs/fleet.md gives: a
measurement for the docs, never judged, and twelve browser starts that the test itself does not need).
"""
import argparse
import html.parser
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAIL_COLOUR = (0xD7, 0x19, 0x1C)  # html_parts.hpp kFailColour
MAX_PAGE_BYTES = 4 << 20
BODY_MARGIN = 24  # the page's body margin (1.5em of 16 px), where the heat map starts on the left


class Failure(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failure(what)
    print(f"  ok    {what}")


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(browser, page, *args):
    """Runs headless chromium on a file; returns (stdout, seconds)."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--disable-extensions", *args, "file://" + page]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise Failure(f"chromium exited {r.returncode}: {r.stderr[-800:]}")
    return r.stdout, time.monotonic() - start


class Dom(html.parser.HTMLParser):
    """The elements of the DOM that chromium wrote: each (tag, attributes), and the text of each class."""

    def __init__(self, text):
        super().__init__()
        self.elements = []
        self.text = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text += data

    def of_class(self, tag, klass):
        return [a for t, a in self.elements if t == tag and klass in a.get("class", "").split()]


def rgb(hex_colour):
    h = hex_colour.lstrip("#")
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def load_time(browser, page, blank):
    """Median of three loads of the page less the median of three of an empty page (chromium's start)."""
    page_s = statistics.median(browse(browser, page, "--dump-dom")[1] for _ in range(3))
    blank_s = statistics.median(browse(browser, blank, "--dump-dom")[1] for _ in range(3))
    return max(0.0, page_s - blank_s)


def cumemctl(args, env, out_path=None, expect=(0, 1)):
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode not in expect:
        raise Failure(f"{' '.join(args)} exited {r.returncode}: {r.stderr[-800:]}")
    if out_path:
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(r.stdout)
    return r.stdout


def heatmap_cells(dom):
    cells = {}
    for a in dom.of_class("rect", "cell"):
        cells[(int(a["data-reader"]), int(a["data-owner"]))] = a
    return cells


def find_heatmap(shot, svg, first_colour):
    """The screenshot's y of the heat map's first row: the first pixel down the first column's centre that
    has the first cell's colour, and whose neighbours a cell further on agree."""
    cell, left, top = int(svg["data-cell"]), int(svg["data-left"]), int(svg["data-top"])
    x = BODY_MARGIN + left + cell // 2
    width, height = shot.size
    for y in range(height):
        if close(shot.getpixel((x, y))[:3], first_colour):
            y0 = y - top  # the svg's top edge, if this is the first cell's first line
            return y0, cell, left, top
    raise Failure(f"no pixel of the first cell's colour {first_colour} down x={x}")


def close(a, b, tolerance=3):
    return all(abs(p - q) <= tolerance for p, q in zip(a, b))


def pixel_at(shot, y0, cell, left, top, row, col):
    return shot.getpixel((BODY_MARGIN + left + col * cell + cell // 2, y0 + top + row * cell + cell // 2))[:3]


def run(opts):
    browser = chromium()
    if browser is None:
        if os.environ.get("CUMEMCTL_CI") == "1":
            raise Failure("chromium is not installed (scripts/setup.sh installs it); CI must run this test")
        print("skip: no chromium here (scripts/setup.sh installs it)")
        return 0
    from PIL import Image  # python3-pil, installed with chromium by scripts/setup.sh

    work = tempfile.mkdtemp(prefix="cumemctl-html.")
    try:
        env = dict(os.environ, CUMEMCTL_LIBCUDA=opts.fake, CUMEMCTL_LIBNVML=opts.fake_nvml, TMPDIR=work,
                   CUMEMCTL_IMEX_CHANNEL_DIR=os.path.join(work, "imex"), FAKECUDA_IMEX_DIR=os.path.join(work, "imex"))
        env.pop("CUMEMCTL_HOST", None)
        os.makedirs(os.path.join(work, "imex"))
        if os.geteuid() == 0:
            os.mknod(os.path.join(work, "imex", "channel0"), 0o020666, os.makedev(242, 0))
        profile = lambda name: dict(env, FAKECUDA_PROFILE=os.path.join(opts.profiles, name + ".json"))
        blank = os.path.join(work, "blank.html")
        with open(blank, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>\n")
        results = {}

        print("== 4 ranks: fabric-matrix --local 4 on the fake driver's four GPUs")
        page4 = os.path.join(work, "matrix-4.html")
        cumemctl([opts.binary, "fabric-matrix", "--local", "4", "--format", "html"], profile("gb200x4"), page4,
                 expect=(0, 1))
        dom4 = Dom(browse(browser, page4, "--dump-dom")[0])
        cells4 = heatmap_cells(dom4)
        check(len(cells4) == 16, f"one cell per pair: {len(cells4)} of 16")
        check(len(dom4.of_class("g", "legend")) == 1, "the legend is there")
        results["matrix-4"] = page4

        print("== 72 ranks: a synthetic matrix of 18 nodes x 4 GPUs, node gb006 slow, one pair failed")
        template = os.path.join(work, "rank.json")
        folder = os.path.join(work, "run")
        subprocess.run([os.path.join(HERE, "../cli/matrix_ranks.sh"), opts.binary, folder, "2"],
                       env=dict(profile("gb200x4"), MATRIX_OUT=os.path.join(work, "rank")), capture_output=True,
                       timeout=120)
        shutil.copy(os.path.join(work, "rank.1.json"), template)
        with open(os.path.join(work, "m72.json"), "w", encoding="utf-8") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "make_matrix_reports.py"), template, "18", "4", "5"],
                           stdout=f, check=True)
        page72 = os.path.join(work, "matrix-72.html")
        cumemctl([opts.binary, "fleet", os.path.join(work, "m72.json"), "--format", "html"], env, page72)
        size = os.path.getsize(page72)
        check(size < MAX_PAGE_BYTES, f"the 72-rank page is {size / 1e3:.0f} kB, under {MAX_PAGE_BYTES >> 20} MiB")
        dom72 = Dom(browse(browser, page72, "--dump-dom")[0])
        cells = heatmap_cells(dom72)
        check(len(cells) == 72 * 72, f"one cell per pair: {len(cells)} of 5184")
        failed = [k for k, a in cells.items() if "fail" in a["class"].split()]
        check(failed == [(20, 24)], f"the one failed pair is rank 20 reading rank 24: {failed}")
        check(rgb(cells[(20, 24)]["fill"]) == FAIL_COLOUR, f"the failed pair is red: {cells[(20, 24)]['fill']}")
        check(cells[(20, 24)]["data-diagnosis"] == "imex-domain", "the failed pair carries its diagnosis")
        slow, good = rgb(cells[(21, 0)]["fill"]), rgb(cells[(0, 1)]["fill"])
        check(slow[0] > 200 and slow[2] < 150, f"a slow pair (gb006 reading gb001) is orange: {slow}")
        check(good[2] > 150 and good[0] < 120, f"a good pair is blue: {good}")
        check(len(dom72.of_class("g", "legend")) == 1 and len(dom72.of_class("rect", "legend-fail")) == 1,
              "the legend, with the failed colour")
        labels = [a for t, a in dom72.elements if t == "text" and "node-label" in a.get("class", "")]
        check(len(labels) == 36, f"each node named on both axes: {len(labels)} labels")
        check("gb006" in dom72.text and "Slowest pairs" in dom72.text, "the slowest pairs name the slow node")
        shot72 = os.path.join(work, "matrix-72.png")
        browse(browser, page72, f"--screenshot={shot72}", "--window-size=1100,1500")
        svg = dom72.of_class("svg", "heatmap")[0]
        with Image.open(shot72) as img:
            shot = img.convert("RGB")
            y0, cell, left, top = find_heatmap(shot, svg, rgb(cells[(0, 0)]["fill"]))
            # The page orders rows and columns by node, then GPU: for these ranks that is rank order.
            for (reader, owner), want in (((20, 24), FAIL_COLOUR), ((21, 0), slow), ((0, 1), good), ((71, 70), None)):
                got = pixel_at(shot, y0, cell, left, top, reader, owner)
                want = want or rgb(cells[(reader, owner)]["fill"])
                check(close(got, want), f"screenshot: pixel of rank {reader} reading rank {owner} is {got}, "
                                        f"its cell's {want}")
        results["matrix-72"] = page72

        print("== 1,000 nodes: a synthetic fleet")
        r = os.path.join(work, "reports")
        os.makedirs(r)
        sysroot = os.path.join(work, "root")
        subprocess.run([os.path.join(HERE, "../cli/sysroot.sh"), sysroot, "--module", "580.159.04"], check=True)
        base = dict(env, CUMEMCTL_SYSROOT=sysroot)
        checks = "driver,devices,context,capabilities,memory-health,logical-endpoints"
        for name, prof, args in (("pass", "h200", ["--checks", checks]), ("warn", "h200", []),
                                 ("fail", "no-gpu", []), ("old", "cuda12", ["--checks", checks])):
            cumemctl([opts.binary, "doctor", "--json", *args], dict(base, FAKECUDA_PROFILE=os.path.join(
                opts.profiles, prof + ".json")), os.path.join(r, name + ".json"), expect=(0, 1, 3))
        fleet_in = os.path.join(work, "fleet.json")
        with open(fleet_in, "w", encoding="utf-8") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "make_fleet_reports.py"),
                            *[os.path.join(r, n + ".json") for n in ("pass", "warn", "fail", "old")], "1000"],
                           stdout=f, check=True)
        summary = json.loads(cumemctl([opts.binary, "fleet", fleet_in, "--json"], env))["results"]
        page_fleet = os.path.join(work, "fleet-1000.html")
        cumemctl([opts.binary, "fleet", fleet_in, "--format", "html"], env, page_fleet)
        size = os.path.getsize(page_fleet)
        check(size < MAX_PAGE_BYTES, f"the 1,000-node page is {size / 1e3:.0f} kB, under {MAX_PAGE_BYTES >> 20} MiB")
        domf = Dom(browse(browser, page_fleet, "--dump-dom")[0])
        counts = {a["data-status"]: int(a["data-count"]) for a in domf.of_class("span", "status") if "data-status" in a}
        want = {k: summary["statuses"].get(k, 0) for k in counts}
        check(counts == want and sum(counts.values()) == 1000, f"the status counts are fleet's: {counts}")
        check("gpu[0200,0400,0600,0800,1000]" in domf.text, "the failing nodes as a Slurm host list")
        check("row remap failed" in domf.text and "gpu0007" in domf.text, "the GPU whose memory failed, named")
        check(len(domf.of_class("table", "differences")) == 1, "the nodes that differ from the majority")
        shotf = os.path.join(work, "fleet-1000.png")
        browse(browser, page_fleet, f"--screenshot={shotf}", "--window-size=1100,1100")
        with Image.open(shotf) as img:
            check(img.size == (1100, 1100), "a screenshot of the fleet page")
        results["fleet-1000"] = page_fleet

        print("== sizes" + (" and load times (chromium --dump-dom, median of 3, beyond an empty page)" if opts.docs else ""))
        for name, page in results.items():
            if not opts.docs or name == "matrix-4":  # matrix-4: a few kB, nothing to measure
                print(f"  {name}: {os.path.getsize(page) / 1e3:.0f} kB")
                continue
            print(f"  {name}: {os.path.getsize(page) / 1e3:.0f} kB, {load_time(browser, page, blank):.2f} s")
        if opts.docs:
            os.makedirs(opts.docs, exist_ok=True)
            shutil.copy(shot72, os.path.join(opts.docs, "fabric-matrix-72.png"))
            shutil.copy(shotf, os.path.join(opts.docs, "fleet-1000.png"))
            shot4 = os.path.join(opts.docs, "fabric-matrix-4.png")
            browse(browser, page4, f"--screenshot={shot4}", "--window-size=900,700")
            print(f"screenshots kept in {opts.docs}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    for name in ("--binary", "--fake", "--fake-nvml", "--profiles"):
        p.add_argument(name, required=True)
    p.add_argument("--docs")
    opts = p.parse_args()
    try:
        code = run(opts)
    except Failure as e:
        print(f"  FAIL  {e}")
        print("0 passed, 1 failed")
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
