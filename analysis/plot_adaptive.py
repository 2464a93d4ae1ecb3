#!/usr/bin/python3
"""Plot adaptive compression over a run: the bandwidth it probed, the compression ratio it ran and the
iteration time, against simulated time.

    analysis/plot_adaptive.py out/resnet50_adaptive_fluctuating_10gbps --output docs/img/adaptive.png

Reads RUN_DIR/summary.json (adaptive_compression.network: the network probe, from the iteration where it
changed) and RUN_DIR/iterations.csv (worker 0's rows: start_s, duration_s, cr, exploring, collective).
Three panels share the time axis: the probed bottleneck bandwidth (Gbps); the ratio each iteration ran
(log scale; exploring iterations shaded, each exploration's reason written at its start); the iteration
time (ms), coloured by the gradient collective the iteration ran. The output format follows the --output
extension (.png, .svg, .pdf). Needs matplotlib (Debian: python3-matplotlib) to draw; series() does not.
Errors: one line on stderr, exit code 2.
"""

import argparse
import csv
import json
import os
import sys

PROG = "plot_adaptive.py"


class PlotError(Exception):
    pass


def series(run_dir):
    """Worker 0's iterations and the probed network, from a run's output folder."""
    summary_file = os.path.join(run_dir, "summary.json")
    csv_file = os.path.join(run_dir, "iterations.csv")
    try:
        with open(summary_file, encoding="utf-8") as f:
            summary = json.load(f)
        with open(csv_file, encoding="utf-8", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("worker") == "0"]
    except OSError as e:
        raise PlotError(f"cannot read the run in {run_dir!r}: {e.strerror}: {e.filename}")
    except json.JSONDecodeError as e:
        raise PlotError(f"{summary_file}: malformed JSON: {e}")
    adaptive = summary.get("adaptive_compression")
    if adaptive is None:
        raise PlotError(f"{summary_file}: the run has no adaptive compression (training.adaptive_compression)")
    needed = {"start_s", "duration_s", "cr", "exploring", "collective"}
    if not rows or not needed <= set(rows[0]):
        raise PlotError(f"{csv_file}: expected worker 0's rows with columns {', '.join(sorted(needed))}")
    its = [{"start_s": float(r["start_s"]), "duration_s": float(r["duration_s"]), "cr": float(r["cr"]),
            "exploring": r["exploring"] == "1", "collective": r["collective"]} for r in rows]
    network = []
    for seg in adaptive["network"]:
        i = int(seg["from_iteration"])
        if i < len(its):
            bw = seg["bandwidth_Bps"]
            network.append((its[i]["start_s"], None if bw is None else 8 * bw / 1e9))
    explorations = [(its[e["start_iteration"]]["start_s"], e["reason"])
                    for e in adaptive["explorations"] if e["start_iteration"] < len(its)]
    return its, network, explorations


def plot(run_dir, output, title):
    its, network, explorations = series(run_dir)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    end = its[-1]["start_s"] + its[-1]["duration_s"]
    fig, (ax_bw, ax_cr, ax_t) = plt.subplots(3, 1, sharex=True, figsize=(9, 7))
    xs = [t for t, _ in network] + [end]
    ys = [b for _, b in network]
    ax_bw.step(xs, ys + ys[-1:], where="post", color="tab:blue")
    ax_bw.set_ylabel("probed bandwidth (Gbps)")
    ax_bw.set_ylim(bottom=0)
    starts = [r["start_s"] for r in its]
    ax_cr.step(starts + [end], [r["cr"] for r in its] + [its[-1]["cr"]], where="post", color="tab:green")
    ax_cr.set_yscale("log")
    ax_cr.set_ylabel("compression ratio (k / n)")
    for r in its:
        if r["exploring"]:
            for ax in (ax_cr, ax_t):
                ax.axvspan(r["start_s"], r["start_s"] + r["duration_s"], color="0.9", lw=0)
    for t, reason in explorations:
        ax_cr.annotate(reason, (t, 1), xycoords=("data", "axes fraction"), va="top", fontsize=8, rotation=90)
    colours = {}
    for name in sorted({r["collective"] for r in its}):
        colours[name] = f"C{len(colours) % 10}"
        pts = [r for r in its if r["collective"] == name]
        ax_t.scatter([r["start_s"] for r in pts], [1e3 * r["duration_s"] for r in pts], s=8, color=colours[name],
                     label=name)
    ax_t.set_ylabel("iteration time (ms)")
    ax_t.set_xlabel("simulated time (s); shaded: exploring")
    ax_t.set_ylim(bottom=0)
    ax_t.legend(title="gradient collective", fontsize=8)
    fig.suptitle(title or f"adaptive compression: {os.path.basename(os.path.normpath(run_dir))}")
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="a run's output folder (ddlsim run --out DIR)")
    p.add_argument("--output", required=True, help="the figure file (.png, .svg or .pdf)")
    p.add_argument("--title", default="")
    args = p.parse_args(argv)
    try:
        plot(args.run_dir, args.output, args.title)
    except PlotError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
