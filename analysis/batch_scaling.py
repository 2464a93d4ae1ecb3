#!/usr/bin/python3
"""How the batch size trades steps for samples, co-simulated: McCandlish et al.'s model fitted, with
its error (docs/convergence.md, "Batch size and the gradient noise scale").

    analysis/batch_scaling.py SCENARIO --batches 4,16,64 [--lr-rule linear|constant] [--max-lr LR]
        [--epochs E] [--target T] [--set KEY=VALUE ...] [--ddlsim PATH] [--out CSV] [--keep DIR]

SCENARIO is a bsp scenario with training.convergence. For every per-worker batch b of --batches the
script runs it (global batch M = N b) with the gradient noise scale measured
(training.convergence.noise_scale), the learning rate scaled with the batch (--lr-rule linear:
lr x b / the scenario's batch, Goyal et al. 2017, at most --max-lr; constant: the scenario's) and
enough iterations for --epochs epochs (a synthetic workload's forward and backward times scaled with
the batch, b / the scenario's batch: its times are per batch; the optimizer step's kept: it is per
parameter), and reads: the steps S and epochs to the target, the time to
it (simulated, so the batch's compute and communication count), and B_simple at the target.

Then it fits the empirical model of large-batch training (McCandlish et al., "An empirical model of
large-batch training", 2018, eq. 2.11): S = S_min (1 + B_crit / M), equivalently the samples
E = S M = E_min (1 + M / B_crit) with E_min = S_min B_crit, by least squares on the relative error of
S over the batches that reached the target. It prints each batch's measured and fitted steps, the
fit's relative errors (median, largest), B_crit beside the measured B_simple (the paper finds them of
the same order), and the statistical efficiency the model gives relative to the smallest batch,
(B_crit + M0) / (B_crit + M) (Pollux, OSDI 2021), beside the measured one, E(M0) / E(M). Every
number of the fit is labelled a model: it is one, fitted here, not co-simulated.

Exit status: 0, or 2 with one line on bad input (also when fewer than two batches reach the target:
nothing to fit).
"""

import argparse
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import units  # noqa: E402

PROG = "batch_scaling.py"
HEADER = ["batch_per_worker", "global_batch", "learning_rate", "iterations", "steps_to_target", "epochs_to_target",
          "time_to_target_s", "throughput_samples_per_s", "gradient_noise_scale_at_target", "model_steps_to_target",
          "model_relative_error"]


class UsageError(Exception):
    """Bad input: one line, exit 2."""


def fit(points):
    """Least squares of S = a + c / M on the relative error, over (M, S) pairs: (S_min, B_crit) =
    (a, c / a). Minimises sum ((a + c/M - S) / S)^2, linear in (a, c)."""
    if len(points) < 2 or len({m for m, _ in points}) < 2:
        raise UsageError("fewer than two batch sizes reached the target: nothing to fit (more --epochs, or a lower "
                         "--target)")
    # Normal equations of the weighted problem with rows (1/S, 1/(M S)) and right-hand side 1.
    s11 = sum(1 / s ** 2 for m, s in points)
    s12 = sum(1 / (m * s ** 2) for m, s in points)
    s22 = sum(1 / (m * s) ** 2 for m, s in points)
    r1 = sum(1 / s for m, s in points)
    r2 = sum(1 / (m * s) for m, s in points)
    det = s11 * s22 - s12 * s12
    if det <= 0:
        raise UsageError("the batches reached the target in steps that no S = S_min (1 + B_crit / M) fits")
    a = (r1 * s22 - r2 * s12) / det
    c = (s11 * r2 - s12 * r1) / det
    if a <= 0 or c <= 0:
        raise UsageError(f"the fit gives S_min = {a:.4g} and S_min B_crit = {c:.4g}; both must be positive: the steps do "
                         "not fall with the batch as the model says (a learning rate too large for the largest batches?)")
    return a, c / a


def read_scenario(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("training"), dict) \
            or not isinstance(doc["training"].get("convergence"), dict):
        raise UsageError(f"{path}: needs training.convergence (a co-simulated scenario, docs/convergence.md)")
    if doc["training"].get("sync", {}).get("name", "bsp") != "bsp":
        raise UsageError(f"{path}: the batch-size model is fitted on bsp; this scenario's sync model is "
                         f"{doc['training']['sync'].get('name')!r}")
    return doc


def scaled_compute(doc, factor):
    """--set arguments scaling a synthetic workload's forward and backward times by `factor`."""
    synthetic = doc.get("workload", {}).get("synthetic")
    if not isinstance(synthetic, dict):
        return []
    out = []
    for key in ("forward_s", "backward_s"):
        if key in synthetic:
            value = synthetic[key]
            try:
                seconds = float(value) if isinstance(value, (int, float)) else units.parse_time_s(value)
            except ValueError as e:
                raise UsageError(f"/workload/synthetic/{key}: {e}") from None
            out.append(f"workload.synthetic.{key}={seconds * factor!r}")
    return out


def run(ddlsim, scenario, sets, folder):
    out = os.path.join(folder, "out")
    command = [ddlsim, "run", scenario, "--quiet", "--out", out]
    for s in sets:
        command += ["--set", s]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UsageError(f"ddlsim run {scenario} {' '.join(sets)} failed (exit {result.returncode}): {last}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def positive_ints(text):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or min(values) < 1 or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected distinct whole numbers >= 1, got {text!r}")
    return sorted(values)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("scenario", help="a bsp scenario with training.convergence")
    ap.add_argument("--batches", type=positive_ints, required=True, help="per-worker batch sizes, comma-separated")
    ap.add_argument("--lr-rule", choices=["linear", "constant"], default="linear",
                    help="learning rate per batch (default linear: scaled with the batch)")
    ap.add_argument("--max-lr", type=float, help="linear: the largest learning rate used")
    ap.add_argument("--epochs", type=float, default=3, help="epochs of data each run may use (default 3)")
    ap.add_argument("--target", type=float, help="target test accuracy (default: the scenario's)")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE passed to every ddlsim run")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim)")
    ap.add_argument("--out", help="CSV of every batch's row")
    ap.add_argument("--keep", help="keep the runs' outputs in this folder")
    args = ap.parse_args(argv)
    if not args.epochs > 0:
        raise UsageError(f"--epochs: expected a number > 0, got {args.epochs:g}")
    if args.max_lr is not None and not args.max_lr > 0:
        raise UsageError(f"--max-lr: expected a number > 0, got {args.max_lr:g}")
    if args.target is not None and not 0 < args.target <= 1:
        raise UsageError(f"--target: expected a fraction in (0, 1], got {args.target:g}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    doc = read_scenario(args.scenario)
    ddlsim = args.ddlsim or os.path.join(ROOT, "build", "ddlsim")
    if not (os.path.isfile(ddlsim) and os.access(ddlsim, os.X_OK)):
        raise UsageError(f"{ddlsim}: not an executable file (build ddlsim, or pass --ddlsim)")
    workers = int(doc.get("platform", {}).get("workers", 1))
    base_batch = int(doc.get("workload", {}).get("batch_size", 32))
    base_lr = float(doc["training"]["convergence"].get("learning_rate", 0.1))
    work = args.keep or tempfile.mkdtemp(prefix="ddlsim-batch-scaling-")
    rows = []
    try:
        first = None
        for b in args.batches:
            lr = base_lr * b / base_batch if args.lr_rule == "linear" else base_lr
            if args.max_lr is not None:
                lr = min(lr, args.max_lr)
            sets = [f"workload.batch_size={b}", f"training.convergence.learning_rate={lr!r}",
                    "training.convergence.noise_scale=true"] + scaled_compute(doc, b / base_batch) + args.set
            if args.target is not None:
                sets.append(f"training.convergence.target_accuracy={args.target!r}")
            if first is None:  # the split's size, from a first run of one iteration
                first = run(ddlsim, args.scenario, sets + ["workload.iterations=1"], os.path.join(work, "size"))
            train = first["convergence"]["train_samples"]
            iterations = max(1, math.ceil(args.epochs * train / (workers * b)))
            s = run(ddlsim, args.scenario, sets + [f"workload.iterations={iterations}"], os.path.join(work, f"b{b}"))
            c = s["convergence"]
            rows.append({"batch_per_worker": b, "global_batch": workers * b, "learning_rate": lr, "iterations": iterations,
                         "steps_to_target": c["iterations_to_target"], "epochs_to_target": c["epochs_to_target"],
                         "time_to_target_s": c["time_to_target_s"],
                         "throughput_samples_per_s": s["throughput_samples_per_s"],
                         "gradient_noise_scale_at_target": c["gradient_noise_scale"]["at_target"]})
            print(f"{PROG}: b={b} (M={workers * b}, lr {lr:g}): "
                  + (f"{c['iterations_to_target']} steps, {c['time_to_target_s']:.4g} s to the target"
                     if c["reached_target"] else "target not reached"), file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    points = [(r["global_batch"], r["steps_to_target"]) for r in rows if r["steps_to_target"] is not None]
    s_min, b_crit = fit(points)
    for r in rows:
        r["model_steps_to_target"] = s_min * (1 + b_crit / r["global_batch"])
        r["model_relative_error"] = (r["model_steps_to_target"] / r["steps_to_target"] - 1
                                     if r["steps_to_target"] is not None else None)
    errors = [abs(r["model_relative_error"]) for r in rows if r["model_relative_error"] is not None]
    noise = [r["gradient_noise_scale_at_target"] for r in rows if r["gradient_noise_scale_at_target"] is not None]
    reached = [r for r in rows if r["steps_to_target"] is not None]
    m0 = reached[0]
    target = args.target if args.target is not None else doc["training"]["convergence"].get("target_accuracy", 0.8)
    print(f"{args.scenario}: {workers} workers, bsp, target {100 * target:g} % test accuracy, learning rate "
          f"{args.lr_rule}" + (f" (at most {args.max_lr:g})" if args.max_lr is not None else ""))
    print()
    print("| batch per worker | global batch M | learning rate | steps to target | model (fitted) | error | "
          "epochs to target | time to target | B_simple at target | efficiency vs smallest M: measured | model |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        hit = r["steps_to_target"] is not None
        model_eff = (b_crit + m0["global_batch"]) / (b_crit + r["global_batch"])
        noise_cell = "—" if r["gradient_noise_scale_at_target"] is None else f"{r['gradient_noise_scale_at_target']:.3g}"
        if hit:
            cells = [str(r["steps_to_target"]), f"{r['model_steps_to_target']:.0f}", f"{100 * r['model_relative_error']:+.1f} %",
                     f"{r['epochs_to_target']:.3g}", f"{r['time_to_target_s']:.4g} s", noise_cell,
                     f"{m0['epochs_to_target'] / r['epochs_to_target']:.3g}"]
        else:
            cells = ["not reached", f"{r['model_steps_to_target']:.0f}", "—", "—", "—", noise_cell, "—"]
        print(f"| {r['batch_per_worker']} | {r['global_batch']} | {r['learning_rate']:.4g} | " + " | ".join(cells)
              + f" | {model_eff:.3g} |")
    print()
    print(f"model (fitted, not co-simulated): S = S_min (1 + B_crit / M) with S_min = {s_min:.4g} steps, "
          f"B_crit = {b_crit:.4g} samples (E_min = {s_min * b_crit:.4g} samples); relative error over "
          f"{len(errors)} batches: median {100 * statistics.median(errors):.1f} %, largest {100 * max(errors):.1f} %")
    if noise:
        print(f"measured gradient noise scale B_simple at the target: median {statistics.median(noise):.3g} samples "
              f"({min(noise):.3g} to {max(noise):.3g}); B_crit / B_simple = {b_crit / statistics.median(noise):.3g}")
    if args.out:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=HEADER)
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r[k] is None else r[k]) for k in HEADER})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
