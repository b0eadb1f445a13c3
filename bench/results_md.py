"""The results as Markdown, ready to paste into docs/benchmarks.md: a header naming the date, machine,
GPU, driver and commit, then one table per group of benchmarks."""


def ms(seconds):
    """Seconds as text: milliseconds below one second."""
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.3f} s"


def mib(kib):
    """KiB as MiB text."""
    return "-" if kib is None else f"{kib / 1024:.0f} MiB"


def met(item):
    """Whether an item met its target: yes, **no**, or nothing where it has none."""
    if "met" not in item:
        return ""
    return "yes" if item["met"] else "**no**"


def timing_cells(item):
    """median | IQR | min-max | runs | peak RSS, or the reason it was not measured."""
    if "skipped" in item:
        return ["not measured: " + item["skipped"], "", "", "", ""]
    if "seconds" not in item:
        return ["**failed**: " + item.get("error", "no run")[:200].replace("|", "/").replace("\n", " "), "", "", "", ""]
    s = item["seconds"]
    return [ms(s["median"]), f"{ms(s['q1'])} - {ms(s['q3'])}", f"{ms(s['min'])} - {ms(s['max'])}",
            str(s["n"]), mib(item["max_rss_kib"]["max"])]


def table(header, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def query_table(groups):
    """The devices and granularity groups: each program's figures and its ratio to the floor."""
    rows = []
    for g in groups:
        if "skipped" in g:
            rows.append([f"`{g['title']}`", g["skipped"], "", "", "", "", "", "", ""])
            continue
        for item in g["items"]:
            ratio = f"{item['vs_floor']:.2f}x" if "vs_floor" in item else ""
            rows.append([f"`{item['label']}`", *timing_cells(item), ratio, item.get("target", ""), met(item)])
        if not g.get("agree", True):
            rows.append(["", "**the programs' answers differ**", "", "", "", "", "", "", ""])
    return table(["command", "median", "IQR", "min - max", "runs", "peak RSS", "vs floor", "target", "met"], rows)


def doctor_table(g):
    """doctor's total, then each check's duration."""
    if "skipped" in g:
        return [f"`{g['title']}`: {g['skipped']}"]
    item = g["items"][0]
    lines = table(["command", "median", "IQR", "min - max", "runs", "peak RSS", "target", "met"],
                  [[f"`{item['label']}`", *timing_cells(item), item.get("target", ""), met(item)]])
    if g.get("checks"):
        lines += [""] + table(["check", "status (last run)", "median", "min - max"],
                              [[c["check"], c.get("status") or "", ms(c["seconds"]["median"]),
                                f"{ms(c['seconds']['min'])} - {ms(c['seconds']['max'])}"] for c in g["checks"]])
    return lines


def gbps(value):
    """10^9 bytes per second as text."""
    if value is None:
        return "-"
    return f"{value:,.0f} GB/s" if value >= 100 else f"{value:.2f} GB/s"


def create_table(g):
    """create --map --verify at each size against the copy, then where its time goes."""
    if "skipped" in g:
        return [f"`{g['title']}`: {g['skipped']}"]
    rows = []
    for r in g["rows"]:
        c = r["create"]
        cells = timing_cells(c)
        copy_note = "" if r.get("copy_bytes") in (None, r["bytes"]) else f" ({r['copy_bytes'] >> 30} GiB)"
        copy = gbps(r.get("copy_gbps")) + copy_note if "error" not in r["copy"] else "failed"
        ratio = f"{r['verify_vs_copy']:.0%}" if "verify_vs_copy" in r else "-"
        rows.append([r["size"], cells[0], cells[3], cells[4], gbps(r.get("fill_gbps")), gbps(r.get("check_gbps")),
                     gbps(r.get("verify_gbps")), copy, ratio, met(r)])
    lines = table(["size", "wall median", "runs", "peak RSS", "fill (write)", "check (read)",
                   "verify (write+read)", "copy (read+write)", "verify / copy", "met (>= 90%)"], rows)
    for r in g["rows"]:
        if r.get("probe"):
            p = r["probe"]
            lines += ["", f"verify_probe on {r['size']} (the kernels alone, best of 5): "
                      f"fill {gbps(p.get('fill_gbps'))}, check {gbps(p.get('check_gbps'))}, "
                      f"copy {gbps(p.get('copy_gbps'))}, pattern ok: {p.get('ok')}"]
        if r.get("steps"):
            lines.append("")
            lines.append(f"Where the time of `create` on {r['size']} goes (median per step): " +
                         ", ".join(f"{name} {ms(secs)}" for name, secs in r["steps"].items()))
    return lines


def imex_table(g):
    """imex-setup's first run and rerun, and what bench/imex_setup.sh said where it ran."""
    if "skipped" in g:
        return [f"`{g['title']}`: {g['skipped']}"]
    rows = []
    for item in g["items"]:
        acts = item.get("actions") or {}
        what = ", ".join(f"{n} {a}" for a, n in acts.items() if n)
        rows.append([item["label"], *timing_cells(item), what, item.get("target", ""), met(item)])
    lines = table(["command", "median", "IQR", "min - max", "runs", "peak RSS", "actions (last run)", "target",
                   "met"], rows)
    if g.get("script"):
        s = g["script"]
        lines += ["", f"`{s['command']}` said:", "", "```", s["output"] or "(nothing)", "```"]
        if s.get("error"):
            lines += ["", f"(it exited non-zero: {s['error'][:200]})"]
    return lines


def render(results):
    """The whole results as Markdown: the header naming the machine, then each group."""
    env = results["environment"]
    lines = []
    if results["smoke"]:
        lines += ["**SMOKE RUN against the fake driver: these numbers are not results.**", ""]
    gpus = ", ".join(env.get("gpus") or ["no GPU found"])
    smi = "; ".join(env.get("nvidia_smi") or [])
    # The GPU count and the commit go in the text; the machine's host name and paths do not.
    lines += [f"Measured {env['date']} on {len(env.get('gpus') or [])} GPU(s) ({env['cpus']} CPUs, Linux "
              f"{env['kernel']}): {gpus}, "
              f"driver {env.get('driver_version', 'unknown')}{' (' + smi + ')' if smi else ''}.",
              f"Binary: {env.get('cumemctl')}; tree {env.get('git') or 'unknown'}. Python {env['python'].rsplit(' ', 1)[-1]}, "
              f"cuda.bindings {env.get('cuda_bindings') or 'absent'}.",
              f"Runs: {results['settings']['warmups']} warm-up(s), then up to {results['settings']['runs']} timed "
              f"runs ({results['settings']['heavy_runs']} for doctor and create); the whole run took "
              f"{results['total_seconds']:.0f} s.", ""]
    groups = {g["id"]: g for g in results["groups"]}
    queries = [g for k, g in groups.items() if k.startswith(("devices", "granularity"))]
    if queries:
        lines += ["### Queries against the floor", ""] + query_table(queries) + [""]
    floors = [groups[k] for k in ("doctor-quick", "doctor-floor") if k in groups]
    if floors:
        lines += ["### doctor against its floors", ""] + query_table(floors) + [""]
        for g in floors:
            lines += [f"- {n}" for n in g.get("notes", [])]
        lines += [""]
    sections = (("doctor", "### doctor", doctor_table), ("create", "### create --map --verify", create_table),
                ("imex", "### imex-setup --all (2048 channels)", imex_table))
    for gid, title, fn in sections:
        if gid in groups:
            lines += [title, ""] + fn(groups[gid]) + [""]
            lines += [f"- {n}" for n in groups[gid].get("notes", [])] + ([""] if groups[gid].get("notes") else [])
    return "\n".join(lines)
