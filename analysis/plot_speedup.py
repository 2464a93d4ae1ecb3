#!/usr/bin/python3
"""Plot a column of a sweep.csv (analysis/sweep.py) against another, one line per series.

    analysis/plot_speedup.py out/sweep/resnet50/sweep.csv --series platform.link.bandwidth \
        --output docs/img/resnet50_speedup.png

Defaults: --y speedup, --x workers, --series every grid column (those before the summary columns)
that varies, other than x. When x is the worker count, the ideal line is drawn too (speedup = workers,
or scaling efficiency = 1). A column whose values carry units (10Gbps, 2us, 25MB; analysis/units.py,
as models/units.cpp reads them) can be the x axis: bandwidths are drawn in Gbps, times in ns/us/ms/s,
sizes in MB. --where COLUMN=VALUE compares values, not spellings (25Gbps = 25000Mbps = 3.125GBps,
8 = 8.0 = "8", true = True). The default title says what is plotted against what, what is constant
and what the series are (build_labels). The output format follows the --output extension: .png,
.svg or .pdf. Needs matplotlib (Debian: python3-matplotlib; hence /usr/bin/python3) to draw; the
label and matching functions do not. See docs/analysis.md.
"""

import argparse
import collections
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import units  # noqa: E402  (analysis/units.py)

PROG = "plot_speedup.py"
# sweep.csv's co-simulation columns that are empty where a point did not reach its target (docs/convergence.md).
TARGET_COLUMNS = {"time_to_target_s", "iterations_to_target", "epochs_to_target"}
SUMMARY_FIELDS_START = "workers"  # sweep.csv: grid columns first, then the summary fields from "workers" on
REL_TOL = 1e-9  # numbers (after unit parsing) within this relative tolerance are equal

# Summary columns: column -> (axis label with unit, scale the values are divided by)
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

# Column (dotted scenario path or summary field) -> words, for titles, legends and axis labels.
NAMES = {
    "workers": "workers",
    "time_to_target_s": "time to target accuracy",
    "iterations_to_target": "iterations to target accuracy",
    "epochs_to_target": "epochs to target accuracy",
    "final_test_accuracy": "final test accuracy",
    "platform.workers": "workers",
    "platform.parameter_servers": "parameter servers",
    "platform.topology": "topology",
    "platform.link.bandwidth": "link bandwidth",
    "platform.link.latency": "link latency",
    "network.fidelity": "fidelity",
    "fidelity": "fidelity",
    "network.model": "network model",
    "network_model": "network model",
    "network.collective_granularity": "collective granularity",
    "collective_granularity": "collective granularity",
    "workload.profile": "profile",
    "workload.batch_size": "batch size per worker",
    "workload.iterations": "iterations",
    "training.sync.name": "sync model",
    "sync_model": "sync model",
    "training.sync.params.aggregation": "aggregation",
    "training.collective.name": "collective",
    "collective": "collective",
    "training.compressor.name": "compressor",
    "training.bucketing.bucket_bytes": "bucket size",
    "training.bucketing.overlap": "overlap with backward",
    "training.stragglers.distribution": "straggler distribution",
    "training.stragglers.sigma": "straggler sigma",
    "iteration_time_s": "iteration time",
    "compute_time_per_iteration_s": "compute time per iteration",
    "exposed_comm_time_per_iteration_s": "exposed communication per iteration",
    "throughput_samples_per_s": "throughput",
    "speedup": "speedup",
    "scaling_efficiency": "scaling efficiency",
    "overlap_fraction": "overlap fraction",
    "comm_bytes_per_iteration": "bytes sent per iteration",
}

# Columns whose constant value goes into the title as "bsp/ring" (the first present of each group).
SYNC_COLUMNS = [("training.sync.name", "sync_model"), ("training.collective.name", "collective")]
MODEL_COLUMNS = ("model", "workload.synthetic.model")

# Display unit of a quantity kind on an axis: kind -> [(unit, size of one unit in the base unit, used when
# the largest magnitude is below this many base units)], first that fits.
DISPLAY_UNITS = {
    "bandwidth": [("Gbps", 1e9 / 8, math.inf)],
    "time": [("ns", 1e-9, 1e-6), ("us", 1e-6, 1e-3), ("ms", 1e-3, 1.0), ("s", 1.0, math.inf)],
    "bytes": [("MB", 1e6, math.inf)],
}
BASE_UNITS = {kind: base for kind, (_, _, base) in units.KINDS.items()}


class PlotError(Exception):
    pass


Quantity = collections.namedtuple("Quantity", "kind value")  # value in the kind's base unit (B/s, s, B)


def canonical(column):
    """Dotted form of a column named as a JSON pointer (/platform/link/bandwidth -> platform.link.bandwidth)."""
    if column.startswith("/"):
        return ".".join(p.replace("~1", "/").replace("~0", "~") for p in column[1:].split("/"))
    return column


def column_words(column):
    """'platform.link.bandwidth' -> 'link bandwidth'; unknown paths: the last component (the one before
    a final 'name'), underscores as spaces."""
    c = canonical(column)
    if c in NAMES:
        return NAMES[c]
    parts = [p for p in c.split(".") if p]
    if len(parts) >= 2 and parts[-1] == "name":
        parts = parts[:-1]
    return (parts[-1] if parts else c).replace("_", " ")


def path_kind(column):
    """The quantity kind a column's bare numbers are in, from its name (ddlsim reads bare numbers as
    seconds and bytes; bandwidths always need a unit); None when unknown."""
    last = canonical(column).split(".")[-1]
    if last == "bandwidth" or last.endswith("_bandwidth"):
        return "bandwidth"
    if last == "latency" or last.endswith("_latency") or last.endswith("_s") or last == "period":
        return "time"
    if last.endswith("bytes") or last.endswith("_B"):
        return "bytes"
    return None


def decode(text):
    """A csv cell or a --where value -> a comparable value.

    JSON first (8 -> 8.0, true -> True, "ring" -> 'ring', [..] and {..} as such), else the plain string, as
    ddlsim run --set reads values. A string is then read as a boolean (true/True/false/False), a number
    ("8", "8.0") or a quantity with a unit (Quantity('bandwidth', 3.125e9) for "25Gbps"); otherwise it
    stays a string. Numbers become floats; strings inside arrays and objects are decoded the same way.
    """
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return _normalise(value)


def _normalise(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    s = value.strip(" ")
    if s in ("true", "True"):
        return True
    if s in ("false", "False"):
        return False
    n = units.parse_number(s)
    if n is not None:
        return n
    q = units.parse_quantity(s)
    if q is not None:
        return Quantity(*q)
    return value


def _is_number(v):
    return isinstance(v, float) and not isinstance(v, bool)


def _close(a, b):
    return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def same_value(a, b):
    """Equality of two decoded values: quantities of one kind and numbers within REL_TOL; a bare number
    equals a time in seconds or a size in bytes (as ddlsim reads bare numbers there; not a bandwidth);
    a boolean equals 1 or 0; arrays and objects element by element; strings exactly."""
    if isinstance(a, Quantity) or isinstance(b, Quantity):
        if isinstance(a, Quantity) and isinstance(b, Quantity):
            return a.kind == b.kind and _close(a.value, b.value)
        q, n = (a, b) if isinstance(a, Quantity) else (b, a)
        return _is_number(n) and q.kind in ("time", "bytes") and _close(q.value, n)
    if isinstance(a, bool) or isinstance(b, bool):
        if isinstance(a, bool) and isinstance(b, bool):
            return a == b
        t, n = (a, b) if isinstance(a, bool) else (b, a)
        return _is_number(n) and n == (1.0 if t else 0.0)
    if _is_number(a) and _is_number(b):
        return _close(a, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def value_matches(cell, wanted):
    """Does the csv cell hold the value written as wanted (--where COLUMN=wanted)?"""
    return same_value(decode(cell), decode(wanted))


def resolve_column(column, header):
    """A column of header named as given, or by its other spelling (dotted path / JSON pointer)."""
    if column in header:
        return column
    matches = [h for h in header if canonical(h) == canonical(column)]
    return matches[0] if len(matches) == 1 else None


def filter_rows(rows, header, wheres):
    """Keep the rows that match every 'COLUMN=VALUE' of wheres (value_matches)."""
    for w in wheres:
        col, sep, val = w.partition("=")
        column = resolve_column(col.strip(), header) if sep else None
        if column is None:
            raise PlotError(f"--where {w!r}: expected COLUMN=VALUE with a column of the csv; "
                            f"columns: {', '.join(header)}")
        rows = [r for r in rows if value_matches(r[column], val)]
    return rows


def sort_key(text):
    """Orders series values: quantities of a kind and numbers by value (10Gbps < 25Gbps < 100Gbps,
    500us < 2ms, 4 < 16), then everything else by text."""
    v = decode(text)
    if isinstance(v, Quantity):
        return (0, v.kind, v.value, text)
    if _is_number(v):
        return (0, "", v, text)
    return (1, "", 0.0, text)


Axis = collections.namedtuple("Axis", "label convert kind")  # convert(cell text, csv line number) -> float


def axis(column, rows):
    """How a column is drawn on an axis: its label with unit and the conversion of its cells.

    Summary columns use LABELS (times in ms, bytes in GB). A column whose values carry units is converted
    to one display unit (bandwidth Gbps; time ns/us/ms/s by the largest value; bytes MB), and so is a
    column of bare numbers whose name says they are seconds or bytes (path_kind). Anything else must be
    plain numbers.
    """
    c = canonical(column)
    if c in LABELS:
        label, div = LABELS[c]
        return Axis(label, lambda text, line: _number(text, column, line) / div, None)
    words = column_words(column)
    values = [decode(r[column]) for r in rows]
    kinds = sorted({v.kind for v in values if isinstance(v, Quantity)})
    if len(kinds) > 1:
        raise PlotError(f"column {column!r} mixes units of {' and '.join(kinds)}")
    kind = kinds[0] if kinds else path_kind(column)
    if kind is None:
        return Axis(words, lambda text, line: _number(text, column, line), None)

    def base(text, line):
        v = decode(text)
        if isinstance(v, Quantity):
            return v.value
        if _is_number(v) and kind != "bandwidth":
            return v
        raise PlotError(f"row {line}: column {column!r} is not a {units.KINDS[kind][1]}: {text!r}")

    top = max((abs(base(r[column], i)) for i, r in enumerate(rows, start=2)), default=0.0)
    unit, size, _ = next(u for u in DISPLAY_UNITS[kind] if top < u[2])
    return Axis(f"{words} ({unit})", lambda text, line: base(text, line) / size, kind)


def _number(text, column, line):
    v = decode(text)
    if not _is_number(v):
        raise PlotError(f"row {line}: column {column!r} is not a number: {text!r}")
    return v


def legend_title(series_cols, rows):
    """Words for the series columns, with the unit where the values are bare numbers of a known kind
    ('bucket size (B)'); values with units ('25Gbps') are shown as given."""
    names = []
    for col in series_cols:
        words = column_words(col)
        kind = path_kind(col)
        if kind and any(_is_number(decode(r[col])) for r in rows):
            words += f" ({BASE_UNITS[kind]})"
        names.append(words)
    return ", ".join(names)


def _constant(rows, column):
    values = {r[column] for r in rows}
    return values.pop() if len(values) == 1 else None


def _phrase(column, value):
    words = column_words(column)
    if words == "workers":
        return f"{value} workers"
    return f"{words} {value}"


Labels = collections.namedtuple("Labels", "title xlabel ylabel legend_title series_label")


def build_labels(header, rows, x, y, series_cols, scenario_name=None, grid=None):
    """The texts of a plot, without drawing it.

    title: '<Y> vs <x> — <scenario>, <model>, <sync>/<collective>, <other constant grid columns>,
    <fidelity> fidelity, by <series>', each part only where known; e.g.
    'Speedup vs workers — resnet50_bsp_ring_25gbps, bsp/ring, flow fidelity, by link bandwidth'.
    xlabel and ylabel with units (axis()); legend_title (legend_title()); series_label(key) for a tuple of
    series values: the values as written in the csv, joined by ', '.
    """
    if grid is None:
        grid = header[:header.index(SUMMARY_FIELDS_START)] if SUMMARY_FIELDS_START in header else []
    xc, yc = canonical(x), canonical(y)
    ywords = NAMES.get(yc) or column_words(y)
    what = f"{ywords} vs {column_words(x)}"
    what = what[:1].upper() + what[1:]

    used = {xc, yc} | {canonical(c) for c in series_cols}
    if xc in ("workers", "platform.workers"):
        used |= {"workers", "platform.workers"}
    context = [scenario_name] if scenario_name else []
    for col in MODEL_COLUMNS:
        if col in header and canonical(col) not in used and _constant(rows, col):
            context.append(_constant(rows, col))
            used.add(col)
            break
    sync = []
    for group in SYNC_COLUMNS:
        col = next((resolve_column(c, header) for c in group if resolve_column(c, header)), None)
        if col is not None and not ({canonical(c) for c in group} & used):
            value = _constant(rows, col)
            if value:
                sync.append(value)
        used |= set(group)
    if sync:
        context.append("/".join(sync))
    for col in grid:
        if canonical(col) in used or col in MODEL_COLUMNS:
            continue
        value = _constant(rows, col)
        if value is not None:
            context.append(_phrase(col, value))
    if "fidelity" in header and not ({"fidelity", "network.fidelity"} & used):
        fid = sorted({r["fidelity"] for r in rows} - {""})
        if fid:
            context.append(f"{'/'.join(fid)} fidelity")
    if series_cols:
        context.append("by " + " and ".join(column_words(c) for c in series_cols))
    title = what + (" — " + ", ".join(context) if context else "")

    def series_label(key):
        return ", ".join(key)

    return Labels(title, axis(x, rows).label, axis(y, rows).label, legend_title(series_cols, rows), series_label)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG,
                                 description="Plot sweep.csv columns: --y against --x, one line per --series.")
    ap.add_argument("csv", help="sweep.csv written by analysis/sweep.py")
    ap.add_argument("-o", "--output", required=True, help="output file: .png, .svg or .pdf")
    ap.add_argument("--x", default="workers",
                    help="x column (default: workers); may hold values with units, e.g. platform.link.bandwidth")
    ap.add_argument("--y", default="speedup", help="y column (default: speedup)")
    ap.add_argument("--series", action="append", metavar="COLUMN",
                    help="one line per value of COLUMN (repeatable: one line per combination); "
                         "default: every varying grid column other than x; 'none' for a single line")
    ap.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                    help="keep only rows whose COLUMN has this value, compared as values: 25Gbps matches "
                         "25000Mbps and 3.125GBps, 8 matches 8.0, true matches True and 1 (repeatable)")
    ap.add_argument("--title", help="plot title (default: y vs x, the constant settings and the series)")
    ap.add_argument("--xscale", choices=["auto", "linear", "log"], default="auto",
                    help="auto: logarithmic when x is the worker count or a quantity with units spanning 8x or more")
    ap.add_argument("--yscale", choices=["auto", "linear", "log"], default="auto",
                    help="auto: log base 2 for speedup or throughput when x is the worker count on a log axis")
    ap.add_argument("--no-ideal", action="store_true", help="do not draw the ideal-scaling line")
    ap.add_argument("--dpi", type=int, default=150)
    return ap.parse_args(argv)


def _scenario_name(csv_path):
    meta_path = os.path.join(os.path.dirname(os.path.abspath(csv_path)), "sweep.json")
    try:
        with open(meta_path) as f:
            name = json.load(f).get("scenario_name")
        return name if isinstance(name, str) else None
    except (OSError, ValueError, AttributeError):
        return None


def plot(args):
    ext = os.path.splitext(args.output)[1].lower().lstrip(".")
    if ext not in ("png", "svg", "pdf"):
        raise PlotError(f"--output {args.output}: extension must be .png, .svg or .pdf")
    try:
        with open(args.csv, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as e:
        raise PlotError(str(e))
    if not header:
        raise PlotError(f"{args.csv} is empty")
    grid = header[:header.index(SUMMARY_FIELDS_START)] if SUMMARY_FIELDS_START in header else []

    def column(name):
        c = resolve_column(name, header)
        if c is None:
            raise PlotError(f"no column {name!r} in {args.csv}; columns: {', '.join(header)}")
        return c

    x, y = column(args.x), column(args.y)
    series_arg = [column(s) for s in args.series or [] if s != "none"]
    rows = filter_rows(rows, header, args.where)
    if not rows:
        raise PlotError(f"{args.csv} has no rows to plot" + (" after --where" if args.where else ""))

    x_is_workers = canonical(x) in ("workers", "platform.workers")
    if args.series is None:
        skip = {canonical(x)} | ({"workers", "platform.workers"} if x_is_workers else set())
        series_cols = [c for c in grid if canonical(c) not in skip and len({r[c] for r in rows}) > 1]
    else:
        series_cols = series_arg

    if canonical(y) in TARGET_COLUMNS:  # empty: the point did not reach the co-simulation's target
        missing = sum(1 for r in rows if r[y] == "")
        rows = [r for r in rows if r[y] != ""]
        if not rows:
            raise PlotError(f"no point reached the target accuracy: every {y} cell is empty")
        if missing:
            print(f"plot_speedup.py: note: {missing} point(s) did not reach the target accuracy ({y} empty) and are "
                  "left out", file=sys.stderr)

    xaxis, yaxis = axis(x, rows), axis(y, rows)
    lines = {}  # series key -> {x: y}
    for line_no, r in enumerate(rows, start=2):
        key = tuple(r[c] for c in series_cols)
        xv, yv = xaxis.convert(r[x], line_no), yaxis.convert(r[y], line_no)
        pts = lines.setdefault(key, {})
        if xv in pts:
            others = [c for c in grid if c not in series_cols and c != x
                      and not (x_is_workers and canonical(c) == "platform.workers")]
            raise PlotError(f"two rows have {x}={r[x]:s}" + (f" in series {', '.join(key)}" if key else "")
                            + f"; split them with --series or pick one with --where "
                              f"(grid columns: {', '.join(others) or 'none'})")
        pts[xv] = yv

    labels = build_labels(header, rows, x, y, series_cols,
                          scenario_name=None if args.title is not None else _scenario_name(args.csv), grid=grid)
    title = labels.title if args.title is None else args.title

    try:
        import matplotlib
    except ImportError as e:
        raise PlotError(f"cannot import matplotlib ({e}); on Debian: apt-get install python3-matplotlib, "
                        "and run this script with /usr/bin/python3")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullLocator, FixedLocator

    fig, ax = plt.subplots(figsize=(7, 4.6), layout="constrained")
    markers = "osD^v<>ph*"
    all_x = sorted({xv for pts in lines.values() for xv in pts})
    for n, key in enumerate(sorted(lines, key=lambda k: [sort_key(v) for v in k])):
        pts = lines[key]
        xs = sorted(pts)
        ax.plot(xs, [pts[xv] for xv in xs], marker=markers[n % len(markers)],
                label=labels.series_label(key) or None, linewidth=1.6, markersize=5)
    if x_is_workers and not args.no_ideal and canonical(y) in ("speedup", "scaling_efficiency"):
        ideal = all_x if canonical(y) == "speedup" else [1.0] * len(all_x)
        ax.plot(all_x, ideal, linestyle="--", color="0.45", linewidth=1.2, label="ideal (linear scaling)", zorder=0)

    xscale = args.xscale
    if xscale == "auto":
        spans = all_x[0] > 0 and all_x[-1] / all_x[0] >= 8
        xscale = "log" if spans and (x_is_workers or xaxis.kind is not None) else "linear"
    if xscale == "log":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(all_x))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    yscale = args.yscale
    if yscale == "auto":
        all_y = [yv for pts in lines.values() for yv in pts.values()]
        yscale = "log" if (xscale == "log" and x_is_workers
                           and canonical(y) in ("speedup", "throughput_samples_per_s")
                           and min(all_y) > 0) else "linear"
    if yscale == "log":
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif canonical(y) in ("speedup", "scaling_efficiency", "throughput_samples_per_s", "overlap_fraction"):
        ax.set_ylim(bottom=0)
    ax.set_xlabel(labels.xlabel)
    ax.set_ylabel(labels.ylabel)
    ax.grid(True, which="major", alpha=0.3)
    if title:
        # A long default title: what is plotted on the first line, the settings and series on the second.
        ax.set_title(title.replace(" — ", "\n", 1) if args.title is None and len(title) > 70 else title,
                     fontsize=10)
    if len(lines) > 1 or ax.get_legend_handles_labels()[1]:
        ax.legend(title=labels.legend_title or None, loc="best", fontsize=9, title_fontsize=9)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    fig.savefig(args.output, format=ext, dpi=args.dpi)
    plt.close(fig)
    print(f"{PROG}: wrote {args.output} ({len(lines)} line(s), {len(rows)} point(s))", file=sys.stderr)


def main(argv):
    args = parse_args(argv)
    try:
        plot(args)
    except PlotError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
