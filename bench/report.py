#!/usr/bin/python3
"""report.py - turn a bench/sweep.py results directory into a Markdown
report with ratio tables and PNG plots.

  bench/report.py DIR                    writes DIR/report.md and DIR/fig*.png
  bench/report.py DIR --copy-to docs/    also copies it to docs/benchmarks.md,
                                         images to docs/benchmarks/*.png

Ratio columns compare each lunar stack with the kernel: throughput is
lunar/kernel and latency is kernel/lunar, so a ratio above 1 always means
lunar is better.

"lunar memif vs raw memif" compares lunar with the floor, the raw memif
ping-pong (knb --stack raw: the same frames, no stack): it is lunar's time
as a multiple of the raw one (latency lunar/raw, throughput raw/lunar), so
1.00x would mean the stack costs nothing and lower is better.
"""
import argparse
import json
import os
import re
import shutil
import sys

FIGURES = ["9", "10", "11", "12"]
COLORS = {"lunar-memif": "C0", "lunar-afxdp": "C1", "kernel": "C2", "kernel-blocking": "C3", "raw-memif": "k"}
MARKERS = {"lunar-memif": "o", "lunar-afxdp": "s", "kernel": "^", "kernel-blocking": "v", "raw-memif": "x"}
PNGS = {
    "9": ["fig9_throughput.png", "fig9_rpc.png"],
    "10": ["fig10_throughput.png"],
    "11": ["fig11_cdf.png"],
    "12": ["fig12_cores.png"],
}
SUMMARY_MSG = 4096
SUMMARY_DEPTHS = (1, 16)


# ---------------------------------------------------------------- helpers


def fmt(v):
    """A number for a table: about three significant digits, thousands
    separated; '-' for nothing."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def ratio(lunar, kernel, higher_better):
    """>1 means lunar is better: lunar/kernel for throughput, kernel/lunar
    for latency."""
    if lunar is None or kernel is None or lunar <= 0 or kernel <= 0:
        return None
    return lunar / kernel if higher_better else kernel / lunar


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


def over_floor(lunar, raw, higher_better):
    """lunar's time as a multiple of the raw floor's: lunar/raw for latency,
    raw/lunar for throughput (time per RPC or per byte). 1 = no stack cost."""
    if lunar is None or raw is None or lunar <= 0 or raw <= 0:
        return None
    return raw / lunar if higher_better else lunar / raw


def floor_pairs(doc):
    """(lunar stack, raw stack) on the same wire: lunar-memif (and its
    variants, lunar-memif-*) with raw-memif."""
    stacks = doc.get("stacks", {})
    out = []
    for s, d in stacks.items():
        if d.get("kind") == "raw" and s.startswith("raw-"):
            wire = "lunar-" + s[4:]
            out += [(l, s) for l in stacks if l == wire or l.startswith(wire + "-")]
    return out


def floor_label(doc, lunar, raw):
    return f"{label(doc, lunar)} vs {label(doc, raw)} (x the raw time)"


FLOOR_NOTE = (
    "lunar's round trip (p50, p99) and its time per RPC and per byte (from RPC/s and Gbit/s) as a multiple of the raw "
    "memif ping-pong's (knb --stack raw: the same frames, no stack); 1.00x would mean the stack costs nothing, "
    "lower is better."
)


def size_label(n):
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def stacks_of(doc):
    return list(doc.get("stacks", {}).keys())


def label(doc, s):
    return doc["stacks"].get(s, {}).get("label", s)


def lunar_stacks(doc):
    return [s for s in stacks_of(doc) if doc["stacks"][s].get("kind") == "lunar"]


def reference(doc):
    ref = doc.get("reference")
    return ref if ref in doc.get("stacks", {}) else None


def config(doc, stack, msg, iodepth, threads=1):
    for c in doc.get("configs", []):
        if c["stack"] == stack and c["msg_size"] == msg and c["iodepth"] == iodepth and c["threads"] == threads:
            return c
    return None


def md_table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------- 4 KiB summary (the demo table)


def summary_data(doc):
    """Per stack: p50, p99 (iodepth 1), RPC/s (iodepth 1), Gbit/s (iodepth
    16) at 4 KiB, one thread; None where not measured or failed."""
    out = {}
    for s in stacks_of(doc):
        c1 = config(doc, s, SUMMARY_MSG, SUMMARY_DEPTHS[0])
        c16 = config(doc, s, SUMMARY_MSG, SUMMARY_DEPTHS[1])
        m1 = (c1 or {}).get("median") or {}
        m16 = (c16 or {}).get("median") or {}
        out[s] = {
            "p50_us": m1.get("p50_us"),
            "p99_us": m1.get("p99_us"),
            "rpc_per_s": m1.get("rpc_per_s"),
            "gbps": m16.get("gbps"),
            "measured": bool(c1 or c16),
        }
    return out


SUMMARY_COLS = [
    ("p50_us", "p50 us", False),
    ("p99_us", "p99 us", False),
    ("rpc_per_s", "RPC/s (iodepth 1)", True),
    ("gbps", "Gbit/s (iodepth 16)", True),
]


def summary_text(doc):
    """The plain-text table sweep.py --demo prints."""
    data = summary_data(doc)
    ref = reference(doc)
    rows = [[s] + [fmt(data[s][k]) for k, _, _ in SUMMARY_COLS] for s in stacks_of(doc) if data[s]["measured"]]
    rows = [[label(doc, r[0])] + r[1:] for r in rows]
    ratio_rows = []
    if ref and data[ref]["measured"]:
        for s in lunar_stacks(doc):
            if data[s]["measured"]:
                ratio_rows.append(
                    [f"ratio {label(doc, s)} vs {label(doc, ref)}"]
                    + [fmt_ratio(ratio(data[s][k], data[ref][k], hb)) for k, _, hb in SUMMARY_COLS]
                )
    floor_rows = []
    for lunar, raw in floor_pairs(doc):
        if data[lunar]["measured"] and data[raw]["measured"]:
            floor_rows.append(
                [floor_label(doc, lunar, raw)]
                + [fmt_ratio(over_floor(data[lunar][k], data[raw][k], hb)) for k, _, hb in SUMMARY_COLS]
            )
    mtu = doc.get("settings", {}).get("mtu") or 1500
    head = ["4 KiB RPC" + (f", MTU {mtu}" if mtu != 1500 else "")] + [h for _, h, _ in SUMMARY_COLS]
    all_rows = [head] + rows + ratio_rows + floor_rows
    w0 = max(len(r[0]) for r in all_rows)
    ws = [max(len(r[i]) for r in all_rows) for i in range(1, len(head))]
    lines = []
    for i, r in enumerate(all_rows):
        lines.append(r[0].ljust(w0) + "".join("   " + c.rjust(w) for c, w in zip(r[1:], ws)))
    if ratio_rows:
        lines.append(
            "ratio rows: p50 and p99 columns are kernel/lunar latency, RPC/s and Gbit/s columns are lunar/kernel"
            " throughput; so above 1.00x means lunar is better, below 1.00x means the kernel is better."
        )
    elif not ref:
        lines.append("(no kernel series, no ratios)")
    if floor_rows:
        lines.append("x the raw time: " + FLOOR_NOTE)
    runs = doc.get("settings", {}).get("runs")
    # Rounds left out as a slow host phase's (sweep.py --slow-phase) leave fewer runs behind a median.
    kept = sorted({(c.get("median") or {}).get("runs_ok") for c in doc.get("configs", [])} - {None})
    if kept and kept != [runs]:
        runs = f"{kept[0]}-{kept[-1]}" if kept[0] != kept[-1] else kept[0]
    lines.append(
        f"(median of {runs} run{'s' if runs != 1 else ''} of {doc.get('settings', {}).get('duration_s'):g} s each; "
        f"latency and RPC/s at iodepth 1, Gbit/s = one-way payload at iodepth 16; one connection, one thread per side)"
    )
    return "\n".join(lines)


def summary_md(doc):
    data = summary_data(doc)
    if not any(d["measured"] for d in data.values()):
        return None
    ref = reference(doc)
    header = ["stack"] + [h for _, h, _ in SUMMARY_COLS]
    rows = [[label(doc, s)] + [fmt(data[s][k]) for k, _, _ in SUMMARY_COLS] for s in stacks_of(doc) if data[s]["measured"]]
    if ref and data[ref]["measured"]:
        for s in lunar_stacks(doc):
            if data[s]["measured"]:
                rows.append(
                    [f"**ratio {label(doc, s)} vs kernel** (>1 = lunar better)"]
                    + [fmt_ratio(ratio(data[s][k], data[ref][k], hb)) for k, _, hb in SUMMARY_COLS]
                )
    floors = [(lu, rw) for lu, rw in floor_pairs(doc) if data[lu]["measured"] and data[rw]["measured"]]
    for lunar, raw in floors:
        rows.append(
            [f"**{floor_label(doc, lunar, raw)}** (lower = closer to the wire)"]
            + [fmt_ratio(over_floor(data[lunar][k], data[raw][k], hb)) for k, _, hb in SUMMARY_COLS]
        )
    text = md_table(header, rows)
    if ref:
        text += (
            "\n\nRatio rows: the latency columns are kernel/lunar and the throughput columns are lunar/kernel,"
            " so above 1 means lunar is better in every column."
        )
    if floors:
        text += "\n\nx the raw time: " + FLOOR_NOTE
    return text


# ---------------------------------------------------------------- figure tables


def series_points(doc, fig, stack):
    f = doc.get("figures", {}).get(fig, {})
    return {p["x"]: p for p in f.get("series", {}).get(stack, [])}


def cell(p, key):
    if p is None:
        return "-"
    if p.get(key) is None:
        return dead(p)
    star = "*" if p.get("runs_ok", 0) < p.get("runs", 0) else ""
    return fmt(p[key]) + star


def dead(p):
    """The cell of a point without a value: every run skipped, failed, or none."""
    if not p.get("runs", 0):
        return "-"
    return "skipped" if p.get("runs_skipped", 0) == p["runs"] else "failed"


def xy_table(doc, fig, key, xname, xfmt, higher_better, unit):
    stacks = [s for s in stacks_of(doc) if series_points(doc, fig, s)]
    if not stacks:
        return None, False
    ref = reference(doc)
    xs = sorted({x for s in stacks for x in series_points(doc, fig, s)})
    ratio_stacks = [s for s in lunar_stacks(doc) if s in stacks] if ref in stacks else []
    floors = [(lu, rw) for lu, rw in floor_pairs(doc) if lu in stacks and rw in stacks]
    header = [xname] + [f"{label(doc, s)} {unit}" for s in stacks]
    if higher_better:
        header += [f"ratio {label(doc, s)} / kernel" for s in ratio_stacks]
    else:
        header += [f"ratio kernel / {label(doc, s)}" for s in ratio_stacks]
    header += [floor_label(doc, lu, rw) for lu, rw in floors]
    rows = []
    partial = False
    for x in xs:
        row = [xfmt(x)]
        for s in stacks:
            p = series_points(doc, fig, s).get(x)
            row.append(cell(p, key))
            if p and p.get(key) is not None and p.get("runs_ok", 0) < p.get("runs", 0):
                partial = True
        kp = series_points(doc, fig, ref).get(x) if ref else None
        for s in ratio_stacks:
            p = series_points(doc, fig, s).get(x)
            row.append(fmt_ratio(ratio((p or {}).get(key), (kp or {}).get(key), higher_better)))
        for lu, rw in floors:
            lp, rp = series_points(doc, fig, lu).get(x), series_points(doc, fig, rw).get(x)
            row.append(fmt_ratio(over_floor((lp or {}).get(key), (rp or {}).get(key), higher_better)))
        rows.append(row)
    return md_table(header, rows), partial


def cdf_table(doc):
    f = doc.get("figures", {}).get("11", {})
    ser = f.get("series", {})
    stacks = [s for s in stacks_of(doc) if ser.get(s, {}).get("config")]
    if not stacks:
        return None
    ref = reference(doc)
    ratio_stacks = [s for s in lunar_stacks(doc) if s in stacks] if ref in stacks else []
    header = ["latency"] + [f"{label(doc, s)} us" for s in stacks] + [f"ratio kernel / {label(doc, s)}" for s in ratio_stacks]
    rows = []
    for key, name in [("min_us", "min"), ("p50_us", "p50"), ("p90_us", "p90"), ("p99_us", "p99"), ("p999_us", "p99.9"), ("max_us", "max"), ("mean_us", "mean")]:
        row = [name] + [fmt(ser[s].get(key)) if ser[s].get("runs_ok") else dead(ser[s]) for s in stacks]
        for s in ratio_stacks:
            row.append(fmt_ratio(ratio(ser[s].get(key), ser[ref].get(key), False)))
        rows.append(row)
    return md_table(header, rows)


# ---------------------------------------------------------------- plots


def plots(doc, out):
    """Write the PNGs of every figure with data; return the names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    written = []
    runs = doc.get("settings", {}).get("runs")
    cpu = (doc.get("machine", {}).get("cpu_model") or "").strip()
    sub = f"median of {runs} run{'s' if runs != 1 else ''}" + (f"; {cpu}" if cpu else "")

    def finish(fig, ax, name, title):
        ax.set_title(f"{title}\n{sub}", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=120)
        plt.close(fig)
        written.append(name)

    def xy(fig_id, key, name, title, xlabel, ylabel, log2x=True, logy=False, xfmt=str):
        stacks = [s for s in stacks_of(doc) if any(p.get(key) is not None for p in series_points(doc, fig_id, s).values())]
        if not stacks:
            return
        fig, ax = plt.subplots(figsize=(7, 4.5))
        allx = set()
        for s in stacks:
            pts = sorted((x, p[key]) for x, p in series_points(doc, fig_id, s).items() if p.get(key) is not None)
            allx.update(x for x, _ in pts)
            raw = doc["stacks"].get(s, {}).get("kind") == "raw"
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker=MARKERS.get(s, "o"), color=COLORS.get(s),
                    linestyle="--" if raw else "-", label=label(doc, s) + (" (floor: no stack)" if raw else ""))
        allx = sorted(allx)
        if log2x:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(allx))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: xfmt(int(round(v)))))
        else:
            ax.set_xticks(allx)
            ax.set_xlim(min(allx) - 0.5, max(allx) + 0.5)
        if logy:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        finish(fig, ax, name, title)

    def short_size(n):
        return f"{n // 1024}K" if n >= 1024 else str(n)

    figs = doc.get("figures", {})
    if "9" in figs:
        xy("9", "gbps", "fig9_throughput.png", "Fig 9: throughput vs message size (RPC, iodepth 1)", "message size (bytes)", "Gbit/s (one-way payload, log)", logy=True, xfmt=short_size)
        xy("9", "rpc_per_s", "fig9_rpc.png", "Fig 9: RPC rate vs message size (iodepth 1)", "message size (bytes)", "RPC/s", xfmt=short_size)
    if "10" in figs:
        xy("10", "gbps", "fig10_throughput.png", "Fig 10: throughput vs iodepth (RPC, 4 KiB)", "iodepth (requests in flight)", "Gbit/s (one-way payload)")
    if "12" in figs:
        xy("12", "gbps", "fig12_cores.png", "Fig 12: throughput vs threads per side (RPC, 4 KiB, iodepth 16)", "client threads = server threads", "Gbit/s (one-way payload)", log2x=False)
    if "11" in figs:
        ser = figs["11"].get("series", {})
        stacks = [s for s in stacks_of(doc) if ser.get(s, {}).get("cdf")]
        if stacks:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for s in stacks:
                pts = ser[s]["cdf"]
                ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=COLORS.get(s), label=f"{label(doc, s)} (p50 {fmt(ser[s].get('p50_us'))} us)")
            ax.set_xscale("log")
            ax.set_ylim(0, 1.01)
            ax.set_xlabel("latency (us, log)")
            ax.set_ylabel("fraction of RPCs")
            finish(fig, ax, "fig11_cdf.png", "Fig 11: latency CDF (RPC, 4 KiB, iodepth 1; the run with the median p50)")
    return written


# ---------------------------------------------------------------- report


def report_md(doc, written, out):
    m = doc.get("machine", {})
    st = doc.get("settings", {})
    ref = reference(doc)
    L = []
    demo = doc.get("kind") == "demo"
    L.append("# lunar benchmarks: " + ("4 KiB RPC demo" if demo else "the LUNA paper's figures 9-12 on this machine"))
    L.append("")
    if doc.get("status") not in (None, "complete"):
        L.append(f"**Status: {doc['status']}** (see Failures at the end).")
        L.append("")
    L.append(
        "Generated by `bench/sweep.py` with knb; every number is the median of "
        f"{st.get('runs')} run{'s' if st.get('runs') != 1 else ''} of {st.get('duration_s'):g} s (after {st.get('warmup_s'):g} s warm-up), pattern rpc, "
        "one connection per thread, client pinned from core 0 and server from the next core after the client's, "
        f"MTU {st.get('mtu') or 1500} on every link."
    )
    L.append("")
    L.append("## Machine")
    L.append("")
    commit = m.get("commit") or "unknown"
    if m.get("commit_dirty"):
        commit += " (with uncommitted changes)"
    rows = [
        ["CPU", m.get("cpu_model") or "unknown"],
        ["CPUs", str(m.get("cpus"))],
        ["kernel", m.get("kernel") or "unknown"],
        ["lunar commit", commit],
        ["knb JSON version", str(m.get("knb_version"))],
        ["date (UTC)", m.get("date_utc") or ""],
    ]
    L.append(md_table(["", ""], rows, ["l", "l"]))
    L.append("")
    L.append("Command:")
    L.append("")
    L.append("```")
    L.append(doc.get("command", ""))
    L.append("```")
    L.append("")
    L.append("## Stacks")
    L.append("")
    desc = {
        "lunar-memif": "lunar to lunar over memif (shared memory, two processes)",
        "lunar-afxdp": "lunar to lunar over AF_XDP on a veth pair between namespaces lunar-a and lunar-b",
        "kernel": "Linux TCP sockets over the same veth pair",
        "kernel-blocking": "Linux TCP sockets over the same veth pair, blocking mode",
        "raw-memif": "no stack: knb --stack raw ping-pongs the frames a TCP RPC of the same size puts on the wire "
        "(54-byte headers, MSS = MTU - 40) between two processes over memif; the floor lunar memif is compared with "
        "(Fig 9 and the summary only)",
    }
    for s in stacks_of(doc):
        extra = ""
        km = doc["stacks"][s].get("kernel_mode")
        if km:
            extra = f" (`--kernel-mode {km}`)"
        L.append(f"- **{label(doc, s)}** (`{s}`): {desc.get(s, s)}{extra}")
    L.append("")
    if ref:
        L.append(
            f"**How to read the ratios:** each ratio column compares a lunar stack with the kernel ({label(doc, ref)}). "
            "Throughput ratios are lunar / kernel and latency ratios are kernel / lunar, "
            "so **a ratio above 1 always means lunar is better** (2.00x: twice the throughput, or half the latency)."
        )
    else:
        L.append("No kernel series was measured, so there are no ratios.")
    if floor_pairs(doc):
        L.append("")
        L.append("**lunar memif vs raw memif (x the raw time):** " + FLOOR_NOTE)
    L.append("")
    gen = doc.get("notes", {}).get("general", [])
    if gen:
        L.append("Notes:")
        L.append("")
        for n in gen:
            L.append(f"- {n}")
        L.append("")

    sm = summary_md(doc)
    if sm:
        L.append("## Summary: 4 KiB RPC")
        L.append("")
        L.append("p50, p99 and RPC/s at iodepth 1; Gbit/s (one-way payload) at iodepth 16.")
        L.append("")
        L.append(sm)
        L.append("")

    figs = doc.get("figures", {})
    any_partial = False

    def img(name, alt):
        if name in written:
            L.append(f"![{alt}]({name})")
            L.append("")

    def notes(fig):
        for n in figs.get(fig, {}).get("notes", []):
            L.append(f"Note: {n}")
            L.append("")

    def skipped(fig, title):
        L.append(f"## {title}")
        L.append("")
        why = "not part of the demo (run `bench/sweep.py` for every figure)" if demo else "no data (not selected with --figures, or every run failed)"
        L.append(f"Skipped: {why}.")
        L.append("")

    titles = {
        "9": "Figure 9: throughput vs message size",
        "10": "Figure 10: throughput vs iodepth",
        "11": "Figure 11: latency CDF",
        "12": "Figure 12: throughput vs cores",
    }
    # Figure 9
    t1, p1 = xy_table(doc, "9", "gbps", "message size", size_label, True, "Gbit/s") if "9" in figs else (None, False)
    t2, p2 = xy_table(doc, "9", "rpc_per_s", "message size", size_label, True, "RPC/s") if "9" in figs else (None, False)
    if t1:
        any_partial |= p1 or p2
        L.append(f"## {titles['9']}")
        L.append("")
        L.append("RPC (request and response of the same size), one connection, iodepth 1. Gbit/s is the one-way payload rate.")
        L.append("")
        notes("9")
        img("fig9_throughput.png", "Fig 9: Gbit/s vs message size")
        img("fig9_rpc.png", "Fig 9: RPC/s vs message size")
        floor = ""
        if any(series_points(doc, "9", lu) and series_points(doc, "9", rw) for lu, rw in floor_pairs(doc)):
            floor = "; vs raw memif: x the raw time, lower = closer to the wire"
        L.append(f"Gbit/s (ratio: lunar / kernel, >1 = lunar better{floor}):")
        L.append("")
        L.append(t1)
        L.append("")
        L.append(f"RPC/s (ratio: lunar / kernel, >1 = lunar better{floor}):")
        L.append("")
        L.append(t2)
        L.append("")
    else:
        skipped("9", titles["9"])
    # Figure 10
    t1, p1 = xy_table(doc, "10", "gbps", "iodepth", str, True, "Gbit/s") if "10" in figs else (None, False)
    t2, p2 = xy_table(doc, "10", "p50_us", "iodepth", str, False, "p50 us") if "10" in figs else (None, False)
    if t1:
        any_partial |= p1 or p2
        L.append(f"## {titles['10']}")
        L.append("")
        L.append("RPC of 4 KiB, one connection, iodepth requests in flight.")
        L.append("")
        notes("10")
        img("fig10_throughput.png", "Fig 10: Gbit/s vs iodepth")
        L.append("Gbit/s (ratio: lunar / kernel, >1 = lunar better):")
        L.append("")
        L.append(t1)
        L.append("")
        L.append("p50 latency in us (ratio: kernel / lunar, >1 = lunar better):")
        L.append("")
        L.append(t2)
        L.append("")
    else:
        skipped("10", titles["10"])
    # Figure 11
    t = cdf_table(doc) if "11" in figs else None
    if t:
        ser = figs["11"]["series"]
        L.append(f"## {titles['11']}")
        L.append("")
        L.append(
            "RPC of 4 KiB, one connection, iodepth 1. The plot is the CDF of the run with the median p50; "
            "the table gives the median over the runs of each percentile."
        )
        L.append("")
        notes("11")
        img("fig11_cdf.png", "Fig 11: latency CDF")
        L.append("Latency in us (ratio: kernel / lunar, >1 = lunar better):")
        L.append("")
        L.append(t)
        L.append("")
        used = [f"{label(doc, s)}: run {ser[s]['cdf_run']}" for s in stacks_of(doc) if ser.get(s, {}).get("cdf_run")]
        if used:
            L.append("CDF plotted from " + "; ".join(used) + ".")
            L.append("")
    else:
        skipped("11", titles["11"])
    # Figure 12
    t1, p1 = xy_table(doc, "12", "gbps", "threads per side", str, True, "Gbit/s") if "12" in figs else (None, False)
    if t1:
        any_partial |= p1
        L.append(f"## {titles['12']}")
        L.append("")
        L.append(
            "RPC of 4 KiB at iodepth 16 per connection; N client threads (cores 0..N-1) against N server threads "
            "(cores N..2N-1), one connection per client thread."
        )
        L.append("")
        notes("12")
        img("fig12_cores.png", "Fig 12: Gbit/s vs threads")
        L.append("Gbit/s (ratio: lunar / kernel, >1 = lunar better):")
        L.append("")
        L.append(t1)
        L.append("")
    else:
        skipped("12", titles["12"])
        notes("12")

    if any_partial:
        L.append("\\* median of fewer runs than asked: some runs of that point failed (see Failures).")
        L.append("")
    failed = [(c, r) for c in doc.get("configs", []) for r in c.get("runs", []) if not r.get("ok") and not r.get("skipped")]
    skipped = {}
    for c in doc.get("configs", []):
        for r in c.get("runs", []):
            if r.get("skipped"):
                skipped[c["stack"]] = skipped.get(c["stack"], 0) + 1
    if failed or skipped:
        L.append("## Failures")
        L.append("")
        for c, r in failed[:30]:
            L.append(f"- `{c['id']}` run {r['run']}: {r.get('error')}")
        if len(failed) > 30:
            L.append(f"- ... and {len(failed) - 30} more (results.json)")
        for s, n in skipped.items():
            L.append(f"- {label(doc, s)}: {n} later run(s) skipped after {s} failed several runs in a row")
        L.append("")
        L.append("Each run's server and client logs are in `raw/` (`*.server.log`, `*.client.log`).")
        L.append("")
    L.append("## Raw data")
    L.append("")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    where = os.path.relpath(out, root) if out.startswith(root + os.sep) else out
    L.append(
        f"`results.json` (every median, every run) and `raw/` (each run's knb client JSON and both processes' logs) "
        f"in `{where}`."
    )
    L.append("")
    return "\n".join(L)


def copy_to(out, dest):
    """DEST/benchmarks.md from OUT/report.md with image links rewritten to
    benchmarks/NAME.png (DEST/benchmarks/, relative to the .md), and the PNGs."""
    dest = os.path.abspath(dest)
    img_dir = os.path.join(dest, "benchmarks")
    os.makedirs(img_dir, exist_ok=True)
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
    names = sorted({n for names in PNGS.values() for n in names if os.path.exists(os.path.join(out, n))})
    for n in names:
        shutil.copy2(os.path.join(out, n), os.path.join(img_dir, n))
    text = re.sub(r"\]\((fig[0-9]+_[a-z]+\.png)\)", r"](benchmarks/\1)", text)
    md = os.path.join(dest, "benchmarks.md")
    with open(md, "w") as f:
        f.write(text)
    return md, [os.path.join(img_dir, n) for n in names]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a bench/sweep.py results directory (with results.json)")
    ap.add_argument("--copy-to", metavar="DIR", help="also write DIR/benchmarks.md and DIR/benchmarks/*.png (e.g. docs/)")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.dir)
    try:
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"report.py: cannot read {os.path.join(out, 'results.json')}: {e}", file=sys.stderr)
        return 2
    for names in PNGS.values():  # a rerun must not keep stale plots
        for n in names:
            try:
                os.remove(os.path.join(out, n))
            except FileNotFoundError:
                pass
    written = plots(doc, out)
    text = report_md(doc, written, out)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    print(f"report.py: wrote {os.path.join(out, 'report.md')} and {len(written)} plot(s)", file=sys.stderr)
    if args.copy_to:
        md, pngs = copy_to(out, args.copy_to)
        print(f"report.py: copied to {md} and {len(pngs)} image(s) in {os.path.dirname(pngs[0]) if pngs else '-'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
