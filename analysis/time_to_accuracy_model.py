#!/usr/bin/python3
"""Time to accuracy for models too large to co-simulate: a sweep's iteration times priced with the
empirical model of large-batch training -- a MODEL, labelled so in every output (docs/convergence.md,
"Beyond co-simulation").

    analysis/time_to_accuracy_model.py sweep.csv --b-crit B (--s-min S | --reference EPOCHS@BATCH
        --dataset-samples D) [--out CSV]

For every row of a sweep.csv (analysis/sweep.py) of a bsp scenario, the global batch is
M = throughput_samples_per_s x iteration_time_s (N b), and McCandlish et al.'s model ("An empirical
model of large-batch training", 2018, eq. 2.11) gives the steps to a target, S = S_min (1 + B_crit / M),
hence `model_time_to_target_s` = S x iteration_time_s, `model_epochs_to_target` = S M / D and
`model_statistical_efficiency` = (B_crit + M0) / (B_crit + M) relative to the row of smallest batch M0
(Pollux, OSDI 2021). B_crit (samples) is the critical batch of the model and target, which
McCandlish et al. measure per task; S_min is given, or derived from a reference run that reached the
target in EPOCHS epochs of D samples at global batch BATCH: S_min = EPOCHS D / BATCH / (1 + B_crit /
BATCH). The model's form fitted on co-simulated training (analysis/batch_scaling.py on
scenarios/convergence_fashion_bsp.json) missed the co-simulated steps by 12.9 % at the median and
21.2 % at most (FIT_ERROR);
the output repeats it. It assumes the learning rate is tuned to each batch (as the model does), and it
says nothing about relaxed sync models or compressors: rows of other sync models are refused.

Exit status: 0, or 2 with one line on bad input.
"""

import argparse
import csv
import os
import sys

PROG = "time_to_accuracy_model.py"
# analysis/batch_scaling.py scenarios/convergence_fashion_bsp.json --batches 2,4,8,16,32,64,128 --target 0.78
#   --epochs 3 --set training.convergence.evaluate_every_iterations=5 (docs/convergence.md)
FIT_ERROR = {"median": 0.129, "largest": 0.212}
MODEL_FIELDS = ["model_global_batch", "model_steps_to_target", "model_epochs_to_target", "model_time_to_target_s",
                "model_statistical_efficiency"]


class UsageError(Exception):
    """Bad input: one line, exit 2."""


def positive(text, what):
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what}: expected a number > 0, got {text!r}") from None
    if not value > 0:
        raise UsageError(f"{what}: expected a number > 0, got {text!r}")
    return value


def s_min_of(args):
    if args.s_min is not None:
        if args.reference is not None:
            raise UsageError("give --s-min or --reference, not both")
        return positive(args.s_min, "--s-min")
    if args.reference is None:
        raise UsageError("give --s-min, or --reference EPOCHS@BATCH with --dataset-samples")
    if args.dataset_samples is None:
        raise UsageError("--reference needs --dataset-samples (the training set's size)")
    epochs, sep, batch = args.reference.partition("@")
    if not sep:
        raise UsageError(f"--reference: expected EPOCHS@BATCH (e.g. 90@256), got {args.reference!r}")
    epochs, batch = positive(epochs, "--reference epochs"), positive(batch, "--reference batch")
    return epochs * args.dataset_samples / batch / (1 + args.b_crit / batch)


def read_sweep(path):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        rows = list(reader)
        fields = reader.fieldnames or []
    for need in ("iteration_time_s", "throughput_samples_per_s", "sync_model"):
        if need not in fields:
            raise UsageError(f"{path}: no {need} column (a sweep.csv of analysis/sweep.py)")
    if not rows:
        raise UsageError(f"{path}: no rows")
    for n, r in enumerate(rows, start=1):
        if r["sync_model"] != "bsp":
            raise UsageError(f"{path}: row {n} is sync model {r['sync_model']!r}; the batch-size model covers bsp only "
                             "(relaxed models are co-simulated: docs/convergence.md)")
        r["_t"] = positive(r["iteration_time_s"], f"{path}: row {n} iteration_time_s")
        r["_m"] = positive(r["throughput_samples_per_s"], f"{path}: row {n} throughput_samples_per_s") * r["_t"]
    return rows, fields


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("sweep", help="a sweep.csv of a bsp scenario")
    ap.add_argument("--b-crit", type=float, required=True, help="the critical batch B_crit (samples)")
    ap.add_argument("--s-min", help="the fewest steps to the target (at an infinite batch)")
    ap.add_argument("--reference", help="EPOCHS@BATCH: a run that reached the target in EPOCHS at global BATCH")
    ap.add_argument("--dataset-samples", type=float, help="the training set's size (for --reference and epochs)")
    ap.add_argument("--out", help="CSV: the sweep's rows and the model's columns (default: standard output)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.b_crit > 0:
        raise UsageError(f"--b-crit: expected samples > 0, got {args.b_crit:g}")
    if args.dataset_samples is not None and not args.dataset_samples > 0:
        raise UsageError(f"--dataset-samples: expected a number > 0, got {args.dataset_samples:g}")
    s_min = s_min_of(args)
    rows, fields = read_sweep(args.sweep)
    m0 = min(r["_m"] for r in rows)
    label = (f"# MODEL, not simulated: S = S_min (1 + B_crit / M) (McCandlish et al. 2018) with S_min = {s_min:.6g} "
             f"steps, B_crit = {args.b_crit:.6g} samples; its form fitted on co-simulated training missed the steps by "
             f"{100 * FIT_ERROR['median']:.1f} % at the median, {100 * FIT_ERROR['largest']:.1f} % at most "
             "(docs/convergence.md, \"Beyond co-simulation\")")
    out = open(args.out, "w", encoding="utf-8", newline="") if args.out else sys.stdout
    try:
        out.write(label + "\n")
        writer = csv.DictWriter(out, fieldnames=fields + MODEL_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            steps = s_min * (1 + args.b_crit / r["_m"])
            r.update({"model_global_batch": f"{r['_m']:.6g}", "model_steps_to_target": f"{steps:.6g}",
                      "model_epochs_to_target": f"{steps * r['_m'] / args.dataset_samples:.6g}"
                      if args.dataset_samples else "",
                      "model_time_to_target_s": f"{steps * r['_t']:.6g}",
                      "model_statistical_efficiency": f"{(args.b_crit + m0) / (args.b_crit + r['_m']):.6g}"})
            writer.writerow(r)
    finally:
        if args.out:
            out.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
