#!/usr/bin/python3
"""What staleness and compression cost in samples, co-simulated, and a one-parameter penalty fitted to
it with its error -- a MODEL for training that cannot be co-simulated (docs/convergence.md, "Beyond
co-simulation").

    analysis/relaxation_penalty.py SCENARIO (--workers 1,2,4,8 | --ratios 1,0.1,0.01) [--epochs E]
        [--target T] [--set KEY=VALUE ...] [--ddlsim PATH] [--model-out JSON] [--out CSV] [--keep DIR]

--workers (staleness): SCENARIO is an asp or ssp scenario with training.convergence. Every worker count
N runs it, and its staleness is the mean lag of the updates the servers applied (summary.json's
`staleness.mean`, in updates: about N - 1 for asp). The penalty of staleness tau is
P = samples to the target with one worker (plain SGD, tau = 0) / samples to it here, so 1 includes 1.
--ratios (compression): SCENARIO is a bsp scenario with training.convergence and a compressor with a
`ratio`; every ratio c runs it, and P = dense bsp's samples to the target / the compressed run's (the
co-simulation's own bsp baseline: summary.json's statistical_efficiency.relative_to_bsp).

The fitted form is P(x) = 1 / (1 + a x), with x = tau for staleness and x = 1/c - 1 for compression
(the dropped entries per kept one), P(0) = 1; `a` minimises the squared log error over the points that
reached the target. The script prints every point's measured and fitted penalty and the fit's relative
errors (median, largest), and with --model-out writes them as JSON for analysis/
time_to_accuracy_model.py --penalty. Every fitted number is labelled a model.

Runs get enough iterations for --epochs epochs of data (default 3) at every N (per worker: E D / (N b)),
and with --workers an evaluation every as many samples as the scenario's (its evaluate_every_iterations
scaled by its workers / N).

Exit status: 0, or 2 with one line on bad input (also when fewer than two points reach the target).
"""

import argparse
import csv
import json
import math
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from batch_scaling import UsageError, positive_ints, run  # noqa: E402

PROG = "relaxation_penalty.py"
HEADER = ["kind", "workers", "ratio", "x", "iterations", "epochs_to_target", "time_to_target_s", "penalty",
          "model_penalty", "model_relative_error"]
FORM = "P(x) = 1 / (1 + a x)"


def fit_a(points):
    """a >= 0 minimising sum (ln P + ln(1 + a x))^2 over (x, P) pairs: a golden-section search on
    ln(1 + a), the error being unimodal in it."""
    if len(points) < 2 or len({x for x, _ in points}) < 2:
        raise UsageError("fewer than two points reached the target: nothing to fit (more --epochs, or a lower --target)")

    def error(u):  # u = ln(1 + a)
        a = math.expm1(u)
        return sum((math.log(p) + math.log1p(a * x)) ** 2 for x, p in points)

    lo, hi = 0.0, math.log1p(1e6)
    g = (math.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    for _ in range(200):
        if error(c) < error(d):
            hi = d
        else:
            lo = c
        c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    return math.expm1((lo + hi) / 2)


def read_scenario(path, kind, sets):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}") from None
    training = doc.get("training") if isinstance(doc, dict) else None
    if not isinstance(training, dict) or not isinstance(training.get("convergence"), dict):
        raise UsageError(f"{path}: needs training.convergence (a co-simulated scenario, docs/convergence.md)")
    sync = (training.get("sync") or {}).get("name", "bsp")
    if kind == "staleness" and sync not in ("asp", "ssp"):
        raise UsageError(f"{path}: --workers measures staleness on asp or ssp; this scenario's sync model is {sync!r}")
    if kind == "compression":
        if sync != "bsp":
            raise UsageError(f"{path}: --ratios measures compression on bsp; this scenario's sync model is {sync!r}")
        named = [v.split("=", 1)[1] for v in sets if v.startswith("training.compressor.name=")]
        if (named[-1] if named else (training.get("compressor") or {}).get("name", "none")) == "none":
            raise UsageError(f"{path}: --ratios needs a compressor with a ratio (training.compressor, e.g. topk)")
    return doc


def ratios(text):
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated ratios, got {text!r}") from None
    if not values or min(values) <= 0 or max(values) > 1 or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected distinct ratios in (0, 1], got {text!r}")
    return sorted(values, reverse=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("scenario", help="an asp/ssp (--workers) or compressed bsp (--ratios) scenario with training.convergence")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--workers", type=positive_ints, help="worker counts (staleness), comma-separated, including 1")
    what.add_argument("--ratios", type=ratios, help="compression ratios, comma-separated")
    ap.add_argument("--epochs", type=float, default=3, help="epochs of data each run may use (default 3)")
    ap.add_argument("--target", type=float, help="target test accuracy (default: the scenario's)")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE passed to every ddlsim run")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim)")
    ap.add_argument("--model-out", help="JSON: the fitted penalty, for time_to_accuracy_model.py --penalty")
    ap.add_argument("--out", help="CSV of every point")
    ap.add_argument("--keep", help="keep the runs' outputs in this folder")
    args = ap.parse_args(argv)
    if not args.epochs > 0:
        raise UsageError(f"--epochs: expected a number > 0, got {args.epochs:g}")
    if args.target is not None and not 0 < args.target <= 1:
        raise UsageError(f"--target: expected a fraction in (0, 1], got {args.target:g}")
    if args.workers is not None and args.workers[0] != 1:
        raise UsageError("--workers: include 1 (plain SGD: the staleness-free reference)")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    kind = "staleness" if args.workers is not None else "compression"
    doc = read_scenario(args.scenario, kind, args.set)
    ddlsim = args.ddlsim or os.path.join(ROOT, "build", "ddlsim")
    if not (os.path.isfile(ddlsim) and os.access(ddlsim, os.X_OK)):
        raise UsageError(f"{ddlsim}: not an executable file (build ddlsim, or pass --ddlsim)")
    batch = int(doc.get("workload", {}).get("batch_size", 32))
    base_workers = int(doc.get("platform", {}).get("workers", 1))
    evaluate = int(doc["training"]["convergence"].get("evaluate_every_iterations", 1))
    sets = list(args.set)
    if args.target is not None:
        sets.append(f"training.convergence.target_accuracy={args.target!r}")
    work = args.keep or tempfile.mkdtemp(prefix="ddlsim-relaxation-")
    rows = []
    try:
        train = run(ddlsim, args.scenario, sets + ["workload.iterations=1"], os.path.join(work, "size"))
        train = train["convergence"]["train_samples"]
        for value in args.workers or args.ratios:
            n = value if kind == "staleness" else base_workers
            iterations = max(1, math.ceil(args.epochs * train / (n * batch)))
            point = sets + [f"workload.iterations={iterations}"]
            if kind == "staleness":  # the same samples between evaluations at every N
                every = max(1, round(evaluate * base_workers / n))
                point += [f"platform.workers={n}", f"training.convergence.evaluate_every_iterations={every}"]
            else:
                point += [f"training.compressor.params.ratio={value!r}"]
            s = run(ddlsim, args.scenario, point, os.path.join(work, f"p{len(rows)}"))
            c = s["convergence"]
            row = {"kind": kind, "workers": n, "ratio": value if kind == "compression" else "", "iterations": iterations,
                   "epochs_to_target": c["epochs_to_target"], "time_to_target_s": c["time_to_target_s"]}
            if kind == "staleness":
                row["x"] = (s.get("staleness") or {}).get("mean", 0.0)
            else:
                row["x"] = 1 / value - 1
                row["penalty"] = (c.get("statistical_efficiency") or {}).get("relative_to_bsp")
            rows.append(row)
            print(f"{PROG}: " + (f"N={n}: staleness {row['x']:.3g}" if kind == "staleness" else f"ratio {value:g}")
                  + (f", {c['epochs_to_target']:.4g} epochs to the target" if c["reached_target"] else ", target not reached"),
                  file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if kind == "staleness":
        ref = rows[0]["epochs_to_target"]
        if ref is None:
            raise UsageError("one worker did not reach the target: no reference (more --epochs, or a lower --target)")
        for r in rows:
            r["penalty"] = ref / r["epochs_to_target"] if r["epochs_to_target"] else None
    points = [(r["x"], r["penalty"]) for r in rows if r["penalty"]]
    a = fit_a(points)
    for r in rows:
        r["model_penalty"] = 1 / (1 + a * r["x"])
        r["model_relative_error"] = r["model_penalty"] / r["penalty"] - 1 if r["penalty"] else None
    errors = [abs(r["model_relative_error"]) for r in rows if r["model_relative_error"] is not None]
    target = args.target if args.target is not None else doc["training"]["convergence"].get("target_accuracy", 0.8)
    what = "staleness tau (updates)" if kind == "staleness" else "1/c - 1"
    print(f"{args.scenario}: {kind}, target {100 * target:g} % test accuracy")
    print()
    print(f"| workers | {'staleness tau' if kind == 'staleness' else 'ratio c'} | epochs to target | time to target | "
          "penalty P (measured) | model | error |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        hit = r["penalty"] is not None
        print(f"| {r['workers']} | {r['x'] if kind == 'staleness' else r['ratio']:.4g} | "
              + (f"{r['epochs_to_target']:.4g} | {r['time_to_target_s']:.4g} s | {r['penalty']:.3g} | "
                 f"{r['model_penalty']:.3g} | {100 * r['model_relative_error']:+.1f} % |" if hit
                 else f"not reached | — | — | {r['model_penalty']:.3g} | — |"))
    print()
    print(f"model (fitted, not co-simulated): {FORM}, x = {what}, a = {a:.4g}; relative error over {len(errors)} "
          f"points: median {100 * statistics.median(errors):.1f} %, largest {100 * max(errors):.1f} %")
    if args.model_out:
        model = {"model": FORM, "kind": kind, "x": what, "a": a, "scenario": os.path.basename(args.scenario),
                 "target_accuracy": target,
                 "fit_error": {"median": statistics.median(errors), "largest": max(errors)},
                 "points": [{"x": r["x"], "penalty": r["penalty"], "model_penalty": r["model_penalty"]} for r in rows]}
        with open(args.model_out, "w", encoding="utf-8") as f:
            json.dump(model, f, indent=2)
            f.write("\n")
    if args.out:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=HEADER)
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r[k]) for k in HEADER})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
