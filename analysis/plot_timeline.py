#!/usr/bin/python3
"""Render a ddlsim timeline.json (Chrome trace format) as a Gantt chart, without a browser.

    analysis/plot_timeline.py out/default/timeline.json -o timeline.png [--workers 4] \
        [--start 0 --end 120] [--servers 2]

One row per thread: for each of the first --workers workers a compute row (io, forward, backward,
optimizer) and a communication row (allreduce, push_pull), and an update row per parameter server
(the first --servers of them). Bars are coloured by category; the x axis is simulated time in ms,
limited to [--start, --end] (default: the whole trace). Where a communication bar lies under a
backward bar of the same worker, the communication is overlapped; where it lies under a gap in the
compute row, it is exposed. The format follows the --output extension: .png, .svg or .pdf.
Needs matplotlib (Debian: python3-matplotlib; hence /usr/bin/python3). See docs/analysis.md.
"""

import argparse
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLORS = {
    "io": "#9e9e9e",
    "forward": "#4c78a8",
    "backward": "#f58518",
    "optimizer": "#54a24b",
    "update": "#b279a2",
    "allreduce": "#e45756",
    "push_pull": "#8c564b",
}
EXTRA_COLORS = ["#17becf", "#bcbd22", "#7f7f7f", "#ff9da6", "#72b7b2"]
ORDER = ["io", "forward", "backward", "optimizer", "update", "allreduce", "push_pull"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="plot_timeline.py",
                                 description="Draw a ddlsim timeline.json as a Gantt chart (one row per thread).")
    ap.add_argument("timeline", help="timeline.json written by ddlsim run")
    ap.add_argument("-o", "--output", required=True, help="output file: .png, .svg or .pdf")
    ap.add_argument("--workers", type=int, default=4, metavar="K", help="show workers 0..K-1 (default 4)")
    ap.add_argument("--servers", type=int, default=None, metavar="S",
                    help="show parameter servers 0..S-1 (default: as many as --workers)")
    ap.add_argument("--start", type=float, default=None, metavar="MS", help="window start, ms (default: first event)")
    ap.add_argument("--end", type=float, default=None, metavar="MS", help="window end, ms (default: last event)")
    ap.add_argument("--title", help="plot title (default: the file's directory name)")
    ap.add_argument("--width", type=float, default=12, help="figure width in inches (default 12)")
    ap.add_argument("--dpi", type=int, default=150)
    return ap.parse_args(argv)


def fail(msg):
    raise SystemExit(f"plot_timeline.py: error: {msg}")


def main(argv):
    args = parse_args(argv)
    ext = os.path.splitext(args.output)[1].lower().lstrip(".")
    if ext not in ("png", "svg", "pdf"):
        fail(f"--output {args.output}: extension must be .png, .svg or .pdf")
    if args.workers < 0 or (args.servers is not None and args.servers < 0):
        fail("--workers and --servers must not be negative")
    try:
        with open(args.timeline) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.timeline}: {e}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        fail(f"{args.timeline}: no traceEvents array (is it a Chrome trace?)")

    process_names, thread_names = {}, {}
    for e in events:
        if e.get("ph") == "M" and isinstance(e.get("args"), dict):
            if e.get("name") == "process_name":
                process_names[e["pid"]] = str(e["args"].get("name", e["pid"]))
            elif e.get("name") == "thread_name":
                thread_names[(e["pid"], e.get("tid", 0))] = str(e["args"].get("name", e.get("tid", 0)))
    spans = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    if not spans:
        fail(f"{args.timeline}: no complete (ph X) events: was the run made with output.timeline=false?")

    def kind(pid):
        name = process_names.get(pid, "")
        if name.startswith("parameter server"):
            return "server", int(re.findall(r"\d+", name)[0]) if re.findall(r"\d+", name) else pid
        if name.startswith("worker"):
            return "worker", int(re.findall(r"\d+", name)[0]) if re.findall(r"\d+", name) else pid
        return "worker", pid  # unnamed: treat pid as a worker rank

    servers_shown = args.workers if args.servers is None else args.servers
    keep_pids = set()
    for pid in {e["pid"] for e in spans} | set(process_names):
        k, idx = kind(pid)
        if (k == "worker" and idx < args.workers) or (k == "server" and idx < servers_shown):
            keep_pids.add(pid)
    spans = [e for e in spans if e["pid"] in keep_pids]
    if not spans:
        fail(f"no events for the first {args.workers} worker(s)")

    t0 = min(e["ts"] for e in spans) / 1e3 if args.start is None else args.start
    t1 = max((e["ts"] + e["dur"]) for e in spans) / 1e3 if args.end is None else args.end
    if not t1 > t0:
        fail(f"empty time window [{t0:g}, {t1:g}] ms")

    # Rows: workers first (compute above communication), then servers.
    rows = []
    for pid in sorted(keep_pids, key=lambda p: (kind(p)[0] == "server", kind(p)[1])):
        k, idx = kind(pid)
        tids = sorted({e.get("tid", 0) for e in spans if e["pid"] == pid} |
                      {t for (p, t) in thread_names if p == pid})
        if k == "worker":
            tids = sorted(set(tids) | {0, 1})
        for tid in tids:
            tname = thread_names.get((pid, tid), {0: "compute", 1: "communication"}.get(tid, f"thread {tid}"))
            short = {"communication": "comm"}.get(tname, tname)
            who = f"worker {idx}" if k == "worker" else f"server {idx}"
            rows.append(((pid, tid), f"{who} {short}"))
    row_of = {key: i for i, (key, _) in enumerate(rows)}

    bars = {}  # (row, category) -> [(start_ms, width_ms)]
    for e in spans:
        s = e["ts"] / 1e3
        d = e["dur"] / 1e3
        if s + d < t0 or s > t1:
            continue
        a, b = max(s, t0), min(s + d, t1)
        row = row_of.get((e["pid"], e.get("tid", 0)))
        if row is None:
            continue
        bars.setdefault((row, e.get("cat", "other")), []).append((a, max(b - a, 0.0)))
    if not bars:
        fail(f"no events in the window [{t0:g}, {t1:g}] ms")

    cats = sorted({c for _, c in bars}, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c))
    colors = dict(COLORS)
    for i, c in enumerate(c for c in cats if c not in COLORS):
        colors[c] = EXTRA_COLORS[i % len(EXTRA_COLORS)]

    height = 1.2 + 0.32 * len(rows)
    fig, ax = plt.subplots(figsize=(args.width, height), layout="constrained")
    # Minimum visible width: one pixel-ish at this figure width, so instant events still show.
    min_w = (t1 - t0) / (args.width * args.dpi) * 0.8
    for (row, cat), segs in bars.items():
        segs = [(a, max(w, min_w)) for a, w in segs]
        # Compute rows hold many short per-layer events: no edges, so a phase reads as one bar.
        # Communication events are few (one per bucket or message): a white edge keeps them apart.
        comm = cat in ("allreduce", "push_pull") or rows[row][0][1] != 0
        ax.broken_barh(segs, (row - 0.38, 0.76), facecolors=colors[cat],
                       edgecolors="white" if comm else "none", linewidth=0.6 if comm else 0)
    # Light separators between workers.
    for i in range(1, len(rows)):
        if rows[i][0][0] != rows[i - 1][0][0]:
            ax.axhline(i - 0.5, color="0.75", linewidth=0.6)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for _, label in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(t0, t1)
    ax.set_xlabel("simulated time (ms)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    title = args.title
    if title is None:
        title = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(args.timeline))),
                             os.path.basename(args.timeline))
    ax.set_title(title, fontsize=10)
    ax.legend(handles=[Patch(facecolor=colors[c], label=c) for c in cats], loc="upper left",
              bbox_to_anchor=(1.005, 1.0), fontsize=8, frameon=False, title="category", title_fontsize=8)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    fig.savefig(args.output, format=ext, dpi=args.dpi)
    print(f"plot_timeline.py: wrote {args.output} ({len(rows)} rows, {t0:.3f}-{t1:.3f} ms)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
