#!/usr/bin/python3
"""Plot a column of a sweep.csv (analysis/sweep.py) against another, one line per series.

    analysis/plot_speedup.py out/sweep/resnet50/sweep.csv --series platform.link.bandwidth \
        --output docs/img/resnet50_speedup.png

Defaults: --y speedup, --x workers, --series every grid column (those before the summary columns)
that varies, other than x. When x is the worker count, the ideal line is drawn too (speedup = workers,
or scaling efficiency = 1). The output format follows the --output extension: .png, .svg or .pdf.
Needs matplotlib (Debian: python3-matplotlib; hence /usr/bin/python3). See docs/analysis.md.
"""

import argparse
import csv
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator, FixedLocator  # noqa: E402

SUMMARY_FIELDS_START = "workers"  # sweep.csv: grid columns first, then the summary fields from "workers" on

# column -> (axis label with unit, scale the values are divided by)
LABELS = {
    "workers": ("workers", 1),
    "platform.workers": ("workers", 1),
    "iteration_time_s": ("iteration time (ms)", 1e-3),
    "compute_time_per_iteration_s": ("compute time per iteration (ms)", 1e-3),
    "exposed_comm_time_per_iteration_s": ("exposed communication per iteration (ms)", 1e-3),
    "throughput_samples_per_s": ("throughput (samples/s)", 1),
    "speedup": ("speedup (× one worker's throughput)", 1),
    "scaling_efficiency": ("scaling efficiency (speedup / workers)", 1),
    "overlap_fraction": ("communication overlapped with compute (fraction)", 1),
    "comm_bytes_per_iteration": ("bytes sent per iteration, all ranks (GB)", 1e9),
}

_SI = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def sort_key(text):
    """Orders values like 10Gbps < 25Gbps < 100Gbps, 500us < 2ms, 4 < 16, then text."""
    m = re.match(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([numkKMGT]?)(i?)([A-Za-z/]*)\s*$", text)
    if m:
        number, prefix, binary, unit = m.groups()
        if unit == "" and prefix in ("m", "n", "u"):  # "5m" is not a unit we know: keep the number
            prefix, unit = "", prefix
        scale = _SI.get(prefix, 1)
        if binary and prefix:
            scale = 1024 ** " KMGT".index(prefix.upper())
        return (0, unit, float(number) * scale, text)
    return (1, "", 0.0, text)


def number(text, column, row_no):
    try:
        return float(text)
    except ValueError:
        raise SystemExit(f"plot_speedup.py: error: row {row_no}: column {column!r} is not a number: {text!r}")


def label_for(column):
    if column in LABELS:
        return LABELS[column]
    if column.endswith("_s"):
        return (f"{column} (s)", 1)
    if column.endswith("_bytes") or column.endswith("_B"):
        return (f"{column} (B)", 1)
    return (column, 1)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="plot_speedup.py",
                                 description="Plot sweep.csv columns: --y against --x, one line per --series.")
    ap.add_argument("csv", help="sweep.csv written by analysis/sweep.py")
    ap.add_argument("-o", "--output", required=True, help="output file: .png, .svg or .pdf")
    ap.add_argument("--x", default="workers", help="x column (default: workers)")
    ap.add_argument("--y", default="speedup", help="y column (default: speedup)")
    ap.add_argument("--series", action="append", metavar="COLUMN",
                    help="one line per value of COLUMN (repeatable: one line per combination); "
                         "default: every varying grid column other than x; 'none' for a single line")
    ap.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                    help="keep only rows where COLUMN equals VALUE (repeatable)")
    ap.add_argument("--title", help="plot title (default: the scenario name from sweep.json, and the fidelity)")
    ap.add_argument("--xscale", choices=["auto", "linear", "log"], default="auto",
                    help="auto: log base 2 when x is the worker count spanning 8x or more")
    ap.add_argument("--yscale", choices=["auto", "linear", "log"], default="auto",
                    help="auto: log base 2 for speedup or throughput when the x axis is logarithmic")
    ap.add_argument("--no-ideal", action="store_true", help="do not draw the ideal-scaling line")
    ap.add_argument("--dpi", type=int, default=150)
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    ext = os.path.splitext(args.output)[1].lower().lstrip(".")
    if ext not in ("png", "svg", "pdf"):
        raise SystemExit(f"plot_speedup.py: error: --output {args.output}: extension must be .png, .svg or .pdf")
    try:
        with open(args.csv, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as e:
        raise SystemExit(f"plot_speedup.py: error: {e}")
    if not header:
        raise SystemExit(f"plot_speedup.py: error: {args.csv} is empty")
    grid = header[:header.index(SUMMARY_FIELDS_START)] if SUMMARY_FIELDS_START in header else []
    for col in [args.x, args.y] + [s for s in (args.series or []) if s != "none"]:
        if col not in header:
            raise SystemExit(f"plot_speedup.py: error: no column {col!r} in {args.csv}; columns: {', '.join(header)}")
    for w in args.where:
        col, sep, val = w.partition("=")
        if not sep or col not in header:
            raise SystemExit(f"plot_speedup.py: error: --where {w!r}: expected COLUMN=VALUE with a column of the csv")
        rows = [r for r in rows if r[col] == val]
    if not rows:
        raise SystemExit(f"plot_speedup.py: error: {args.csv} has no rows to plot")

    x_is_workers = args.x in ("workers", "platform.workers")
    if args.series is None:
        skip = {args.x} | ({"workers", "platform.workers"} if x_is_workers else set())
        series_cols = [c for c in grid if c not in skip and len({r[c] for r in rows}) > 1]
    elif args.series == ["none"]:
        series_cols = []
    else:
        series_cols = [s for s in args.series if s != "none"]

    # series key -> {x: y}
    lines = {}
    for i, r in enumerate(rows, start=2):
        key = tuple(r[c] for c in series_cols)
        x = number(r[args.x], args.x, i)
        y = number(r[args.y], args.y, i)
        pts = lines.setdefault(key, {})
        if x in pts:
            others = [c for c in grid if c not in series_cols and c != args.x
                      and not (x_is_workers and c == "platform.workers")]
            raise SystemExit(f"plot_speedup.py: error: two rows have {args.x}={r[args.x]:s}"
                             + (f" in series {', '.join(key)}" if key else "")
                             + f"; split them with --series or pick one with --where (grid columns: {', '.join(others) or 'none'})")
        pts[x] = y

    xlabel, xdiv = label_for(args.x)
    ylabel, ydiv = label_for(args.y)
    fig, ax = plt.subplots(figsize=(7, 4.6), layout="constrained")
    markers = "osD^v<>ph*"
    all_x = sorted({x for pts in lines.values() for x in pts})
    for n, key in enumerate(sorted(lines, key=lambda k: [sort_key(v) for v in k])):
        pts = lines[key]
        xs = sorted(pts)
        label = ", ".join(key) if len(series_cols) == 1 else ", ".join(f"{c}={v}" for c, v in zip(series_cols, key))
        ax.plot([x / xdiv for x in xs], [pts[x] / ydiv for x in xs], marker=markers[n % len(markers)],
                label=label or None, linewidth=1.6, markersize=5)
    if x_is_workers and not args.no_ideal and args.y in ("speedup", "scaling_efficiency"):
        ideal = all_x if args.y == "speedup" else [1.0] * len(all_x)
        ax.plot(all_x, ideal, linestyle="--", color="0.45", linewidth=1.2, label="ideal (linear scaling)", zorder=0)

    xscale = args.xscale
    if xscale == "auto":
        xscale = "log" if x_is_workers and all_x[0] > 0 and all_x[-1] / all_x[0] >= 8 else "linear"
    if xscale == "log":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator([x / xdiv for x in all_x]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    yscale = args.yscale
    if yscale == "auto":
        all_y = [y for pts in lines.values() for y in pts.values()]
        yscale = "log" if (xscale == "log" and args.y in ("speedup", "throughput_samples_per_s")
                           and min(all_y) > 0) else "linear"
    if yscale == "log":
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif args.y in ("speedup", "scaling_efficiency", "throughput_samples_per_s", "overlap_fraction"):
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)

    title = args.title
    if title is None:
        meta_path = os.path.join(os.path.dirname(os.path.abspath(args.csv)), "sweep.json")
        name = None
        try:
            with open(meta_path) as f:
                name = json.load(f).get("scenario_name")
        except (OSError, ValueError, AttributeError):
            pass
        fid = sorted({r.get("fidelity", "") for r in rows} - {""})
        title = " — ".join(t for t in [name, f"{'/'.join(fid)} fidelity" if fid else None] if t)
    if title:
        ax.set_title(title)
    if len(lines) > 1 or ax.get_legend_handles_labels()[1]:
        legend_title = ", ".join(series_cols) if len(series_cols) == 1 else None
        ax.legend(title=legend_title, loc="best", fontsize=9, title_fontsize=9)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    fig.savefig(args.output, format=ext, dpi=args.dpi)
    print(f"plot_speedup.py: wrote {args.output} ({len(lines)} line(s), {len(rows)} point(s))", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
