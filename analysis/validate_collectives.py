#!/usr/bin/python3
"""Score ddlsim's network models against measured collectives (docs/validation.md, "Results").

    analysis/validate_collectives.py MEASUREMENTS.csv --holdout bandwidth_bps=200Mbps \\
        [--ddlsim build/ddlsim] [--plot FILE.png] [--markdown]

MEASUREMENTS.csv is the measurement CSV of tools/measure_collectives.py. Every row is predicted by

* `ideal`: the closed form, alpha-beta with the default 10 us call cost (what an uncalibrated
  scenario predicts), from `ddlsim calibrate`'s report;
* `tcp`: SimGrid's LV08 model, simulated at flow fidelity (`ddlsim collectives --model tcp` on a
  star whose links have the row's rate and half its one-way latency: a path crosses two links);
* `gloo`: the closed form under the gloo software preset, uncalibrated;
* `calibrated (one fit)`: one `ddlsim calibrate` over all algorithms;
* `calibrated (per algorithm)`: `ddlsim calibrate --select algorithm=A` for each algorithm A,

the calibrations fitted on the rows not matched by --holdout and scored on those that are. The
script prints the error table (median and max of |predicted / measured - 1|, mean signed error,
rows too fast / too slow) for the held-out rows and, separately, the fitted ones; --plot writes a
predicted-vs-measured scatter of the held-out rows (log-log, with the y = x line). Bad input exits 2
with one line.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PROG = "validate_collectives.py"
LIBRARY = {"allreduce": "ring", "allgather": "ring_allgather", "broadcast": "binomial_broadcast",
           "reduce_scatter": "ring_reduce_scatter"}


def library_algorithm(row):
    """The collective that models a library row, as ddlsim calibrate's default --library."""
    if row["op"] == "allreduce" and row.get("backend") == "gloo":
        return "gloo_ring"
    return LIBRARY[row["op"]]


def fail(message):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(2)


def run(argv):
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(argv[:3])} ... exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def calibrate(ddlsim, measurements, holdout, folder, select=None):
    """Runs ddlsim calibrate; returns {line: row of the snippet's fit.rows} and the snippet."""
    out = os.path.join(folder, f"calibration_{select or 'all'}.json")
    # --force: the validation scores every calibration, also one its cross-validation would not write
    # (calibrate refuses those for a scenario's use; the report below shows why).
    argv = [ddlsim, "calibrate", measurements, "--holdout", holdout, "--out", out, "--force"]
    if select:
        argv += ["--select", f"algorithm={select}"]
    run(argv)
    with open(out) as f:
        snippet = json.load(f)
    return {row["line"]: row for row in snippet["fit"]["rows"]}, snippet


def read_rows(path):
    """The measurement rows with their line numbers (as ddlsim calibrate counts them)."""
    rows = []
    with open(path) as f:
        lines = f.read().splitlines()
    header = None
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if header is None:
            header = next(csv.reader([line]))
            continue
        row = dict(zip(header, next(csv.reader([line]))))
        row["line"] = number
        rows.append(row)
    if header is None:
        fail(f"{path}: no header line")
    return rows


def tcp_time(ddlsim, row):
    algorithm = library_algorithm(row) if row["algorithm"] == "library" else row["algorithm"]
    argv = [ddlsim, "collectives", "--model", "tcp", "--fidelity", "flow", "-n", row["ranks"],
            "-m", row["bytes"], "-b", f"{float(row['bandwidth_bps'])}bps",
            "-l", f"{float(row['latency_s']) / 2}s", "--algorithms", algorithm, "--csv", "--call-cost", "10us"]
    if int(row["servers"]) > 0:
        argv += ["--servers", row["servers"]]
    lines = run(argv).splitlines()
    table = list(csv.DictReader(lines))
    return float(table[0]["simulated_time_s"])


def stats(errors):
    if not errors:
        return None
    absolute = sorted(abs(e) for e in errors)
    n = len(absolute)
    median = absolute[n // 2] if n % 2 else (absolute[n // 2 - 1] + absolute[n // 2]) / 2
    return {"rows": n, "median": median, "max": absolute[-1], "mean": sum(errors) / n,
            "fast": sum(1 for e in errors if e < 0), "slow": sum(1 for e in errors if e > 0)}


def format_table(title, models, markdown):
    out = [title]
    if markdown:
        out += ["", "| model | rows | median abs error | max | mean | too fast / too slow |", "|---|---|---|---|---|---|"]
    else:
        out.append(f"{'model':<28} {'rows':>5} {'median':>8} {'max':>8} {'mean':>8} {'fast/slow':>10}")
    for name, s in models:
        if s is None:
            continue
        cells = (s["rows"], f"{100 * s['median']:.1f} %", f"{100 * s['max']:.1f} %", f"{100 * s['mean']:+.1f} %",
                 f"{s['fast']} / {s['slow']}")
        if markdown:
            out.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
        else:
            out.append(f"{name:<28} {cells[0]:>5} {cells[1]:>8} {cells[2]:>8} {cells[3]:>8} {cells[4]:>10}")
    return "\n".join(out) + "\n"


def plot(path, points):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    low, high = float("inf"), 0.0
    for index, ((name, measured, predicted), marker) in enumerate(zip(points, ["x", "+", "o", "s", "^"])):
        color = f"C{index}"
        style = {"facecolors": "none", "edgecolors": color} if marker in "os^" else {"color": color}
        ax.scatter([1e3 * m for m in measured], [1e3 * p for p in predicted], label=name, marker=marker, s=22,
                   linewidths=1, **style)
        low = min(low, *measured, *predicted)
        high = max(high, *measured, *predicted)
    line = [1e3 * low / 1.2, 1e3 * high * 1.2]
    ax.plot(line, line, color="black", linewidth=0.8, label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (ms)")
    ax.set_ylabel("predicted (ms)")
    ax.set_title("Real gloo collectives in the lab, held-out rows")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("measurements", help="measurement CSV (tools/measure_collectives.py)")
    ap.add_argument("--holdout", required=True, help="held-out rows, as ddlsim calibrate --holdout")
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"), help="the ddlsim binary")
    ap.add_argument("--plot", help="write the predicted-vs-measured scatter here (PNG)")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = ap.parse_args(argv)
    if not os.path.exists(args.ddlsim):
        fail(f"--ddlsim: no ddlsim binary at {args.ddlsim}")
    if not os.path.exists(args.measurements):
        fail(f"{args.measurements}: no such file")
    rows = read_rows(args.measurements)
    with tempfile.TemporaryDirectory() as folder:
        one, _ = calibrate(args.ddlsim, args.measurements, args.holdout, folder)
        per = {}
        for algorithm in sorted({r["algorithm"] for r in rows}):
            fitted, _ = calibrate(args.ddlsim, args.measurements, args.holdout, folder, algorithm)
            per.update(fitted)
    predictions = {"ideal (alpha-beta)": {}, "tcp (SimGrid LV08, flow)": {}, "gloo preset, uncalibrated": {},
                   "calibrated, one fit": {}, "calibrated per algorithm": {}}
    held = {}
    for row in rows:
        line = row["line"]
        measured = float(row["seconds"])
        held[line] = one[line]["held_out"]
        predictions["ideal (alpha-beta)"][line] = (measured, one[line]["ideal_s"])
        predictions["tcp (SimGrid LV08, flow)"][line] = (measured, tcp_time(args.ddlsim, row))
        predictions["gloo preset, uncalibrated"][line] = (measured, one[line]["base_s"])
        predictions["calibrated, one fit"][line] = (measured, one[line]["predicted_s"])
        predictions["calibrated per algorithm"][line] = (measured, per[line]["predicted_s"])

    def table(which):
        return [(name, stats([p / m - 1 for line, (m, p) in values.items() if held[line] == which]))
                for name, values in predictions.items()]
    print(format_table(f"held-out rows ({args.holdout}): predicted by a fit on the other rows", table(True),
                       args.markdown))
    print(format_table("fitted rows", table(False), args.markdown))
    if args.plot:
        points = []
        for name in ["ideal (alpha-beta)", "gloo preset, uncalibrated", "calibrated per algorithm"]:
            pairs = [v for line, v in predictions[name].items() if held[line]]
            points.append((name, [m for m, _ in pairs], [p for _, p in pairs]))
        plot(args.plot, points)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
