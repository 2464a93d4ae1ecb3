#!/usr/bin/python3
"""Published scaling efficiencies against ddlsim's predictions (docs/validation.md, "Published scaling").

    analysis/published_scaling.py [docs/data/published_scaling.csv] [--set PATH=VALUE ...] [--out FILE]

Every row of the table (name, scenario, baseline, published_efficiency, source; `#` lines are
comments, paths relative to the repository) names a bundled scenario that reproduces a published
set-up. The script runs `ddlsim run` on it and reads summary.json's `scaling_efficiency` (throughput
on N workers / (N x one worker's throughput alone)). With a baseline scenario (a published figure
relative to, say, one 8-GPU server) the predicted efficiency is the scenario's scaling_efficiency
divided by the baseline's: (X_N / N) / (X_B / B). It prints, per row, the predicted and published
efficiency and the gap in points (predicted - published; positive: ddlsim too optimistic), and the
median and largest |gap|.

--set PATH=VALUE (repeatable) is passed to every ddlsim run (what-ifs: a network factor, compute
noise, another collective); --out writes the rows as CSV.

Exit status: 0, or 2 with one line on bad input (a missing file, a wrong header, a bad efficiency, a
failed ddlsim run).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import lab_runs  # noqa: E402  (the CSV reader and writer)
sys.path.insert(0, HERE)
from validate_ddp import UsageError, find_ddlsim  # noqa: E402

PROG = "published_scaling.py"
HEADER = ["name", "scenario", "baseline", "published_efficiency", "source"]
OUT_HEADER = ["name", "workers", "baseline_workers", "predicted_efficiency", "published_efficiency", "gap_points"]


def read_rows(path):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        raw = lab_runs.read_table(path, HEADER)
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(str(e)) from None
    rows = []
    for number, r in enumerate(raw, start=1):
        try:
            published = float(r["published_efficiency"])
        except ValueError:
            raise UsageError(f"{path}: row {number} ({r['name']}): published_efficiency {r['published_efficiency']!r} "
                             "is not a number") from None
        if not 0 < published <= 1:
            raise UsageError(f"{path}: row {number} ({r['name']}): published_efficiency must be in (0, 1], "
                             f"got {published:g}")
        for key in ("scenario", "baseline"):
            if r[key] and not os.path.isfile(os.path.join(ROOT, r[key])):
                raise UsageError(f"{path}: row {number} ({r['name']}): {key} {r[key]} does not exist")
        if not r["scenario"]:
            raise UsageError(f"{path}: row {number} ({r['name']}): scenario is empty")
        rows.append(dict(r, published_efficiency=published))
    if not rows:
        raise UsageError(f"{path}: no rows")
    return rows


def summary(ddlsim, scenario, out, sets):
    command = [ddlsim, "run", os.path.join(ROOT, scenario), "--quiet", "--out", out]
    for s in sets:
        command += ["--set", s]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UsageError(f"ddlsim run {scenario} failed (exit {result.returncode}): {last}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def predict(ddlsim, row, work, sets):
    """(predicted efficiency, workers, baseline workers or None)."""
    s = summary(ddlsim, row["scenario"], os.path.join(work, row["name"]), sets)
    if not row["baseline"]:
        return s["scaling_efficiency"], s["workers"], None
    b = summary(ddlsim, row["baseline"], os.path.join(work, row["name"] + "_baseline"), sets)
    return s["scaling_efficiency"] / b["scaling_efficiency"], s["workers"], b["workers"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("table", nargs="?", default=os.path.join(ROOT, "docs", "data", "published_scaling.csv"),
                    help="the published results (default docs/data/published_scaling.csv)")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="passed to every ddlsim run")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim, then PATH)")
    ap.add_argument("--out", help="write the rows to this CSV (appended to)")
    args = ap.parse_args(argv)
    for s in args.set:
        if "=" not in s:
            raise UsageError(f"--set: expected PATH=VALUE, got {s!r}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rows = read_rows(args.table)
    ddlsim = find_ddlsim(args.ddlsim)
    work = tempfile.mkdtemp(prefix="ddlsim-published-")
    results = []
    try:
        for row in rows:
            predicted, workers, baseline = predict(ddlsim, row, work, args.set)
            results.append({"name": row["name"], "workers": workers, "baseline_workers": baseline or 1,
                            "predicted_efficiency": predicted, "published_efficiency": row["published_efficiency"],
                            "gap_points": 100 * (predicted - row["published_efficiency"])})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'row':<28} {'GPUs':>5} {'vs':>4} {'predicted':>10} {'published':>10} {'gap (points)':>13}")
    for r in results:
        print(f"{r['name']:<28} {r['workers']:>5} {r['baseline_workers']:>4} {100 * r['predicted_efficiency']:>9.1f}% "
              f"{100 * r['published_efficiency']:>9.1f}% {r['gap_points']:>+13.1f}")
    gaps = [abs(r["gap_points"]) for r in results]
    print(f"median |gap| {statistics.median(gaps):.1f} points, largest {max(gaps):.1f}"
          + (f"; with --set {' --set '.join(args.set)}" if args.set else ""))
    if args.out:
        lab_runs.CsvTable(args.out, OUT_HEADER).append(
            results, [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + (argv or sys.argv[1:]))])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
