#!/usr/bin/python3
"""Time to accuracy for models too large to co-simulate: a sweep's iteration times priced with the
empirical model of large-batch training -- a MODEL, labelled so in every output (docs/convergence.md,
"Beyond co-simulation").

    analysis/time_to_accuracy_model.py sweep.csv --b-crit B (--s-min S | --reference EPOCHS@BATCH
        --dataset-samples D) [--penalty PENALTY.json [--ratio C]] [--out CSV]

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
the output repeats it. It assumes the learning rate is tuned to each batch (as the model does).

Staleness and compression (--penalty, a JSON of analysis/relaxation_penalty.py --model-out): the
samples to the target are divided by the fitted penalty P(x) = 1 / (1 + a x), with its own fit error
repeated. A staleness penalty prices asp and ssp rows: x is the row's staleness_mean_updates (sweep.csv
has it for parameter-server points) and the batch of an update is one worker's, M / workers, so the
samples are E_min (1 + (M / N) / B_crit) / P(tau) (E_min = S_min B_crit); bsp rows as without it. A
compression penalty prices every bsp row at x = 1/c - 1, c the row's training.compressor.params.ratio
(a sweep axis) or --ratio. Without --penalty, rows of other sync models are refused.

Exit status: 0, or 2 with one line on bad input.
"""

import argparse
import csv
import json
import os
import sys

PROG = "time_to_accuracy_model.py"
# analysis/batch_scaling.py scenarios/convergence_fashion_bsp.json --batches 2,4,8,16,32,64,128 --target 0.78
#   --epochs 3 --set training.convergence.evaluate_every_iterations=5 (docs/convergence.md)
FIT_ERROR = {"median": 0.129, "largest": 0.212}
MODEL_FIELDS = ["model_global_batch", "model_steps_to_target", "model_epochs_to_target", "model_time_to_target_s",
                "model_statistical_efficiency", "model_penalty"]
RATIO_COLUMN = "training.compressor.params.ratio"


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


def read_penalty(path):
    try:
        with open(path, encoding="utf-8") as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"--penalty {path}: {e}") from None
    if not isinstance(p, dict) or p.get("kind") not in ("staleness", "compression") \
            or not isinstance(p.get("a"), (int, float)) or p["a"] < 0 or not isinstance(p.get("fit_error"), dict):
        raise UsageError(f"--penalty {path}: not a penalty of analysis/relaxation_penalty.py --model-out (kind "
                         "staleness or compression, a >= 0, fit_error)")
    return p


def read_sweep(path, penalty=None, ratio=None):
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
    kind = penalty["kind"] if penalty else None
    for n, r in enumerate(rows, start=1):
        stale = r["sync_model"] in ("asp", "ssp") and kind == "staleness"
        if r["sync_model"] != "bsp" and not stale:
            raise UsageError(f"{path}: row {n} is sync model {r['sync_model']!r}; the batch-size model covers bsp, and "
                             "asp and ssp with a staleness --penalty (analysis/relaxation_penalty.py)")
        r["_t"] = positive(r["iteration_time_s"], f"{path}: row {n} iteration_time_s")
        r["_m"] = positive(r["throughput_samples_per_s"], f"{path}: row {n} throughput_samples_per_s") * r["_t"]
        r["_x"] = 0.0
        if stale:
            if not r.get("staleness_mean_updates"):
                raise UsageError(f"{path}: row {n} ({r['sync_model']}) has no staleness_mean_updates (a sweep.csv of "
                                 "analysis/sweep.py has it for parameter-server points)")
            r["_x"] = float(r["staleness_mean_updates"])
            r["_m"] /= positive(r.get("workers") or "", f"{path}: row {n} workers")  # one worker's batch per update
        elif kind == "compression":
            c = r.get(RATIO_COLUMN) or ratio
            if c is None:
                raise UsageError(f"{path}: row {n} has no {RATIO_COLUMN} column: give --ratio for a compression penalty")
            c = positive(c, f"{path}: row {n} compression ratio")
            if c > 1:
                raise UsageError(f"{path}: row {n} compression ratio: expected a kept fraction in (0, 1], got {c:g}")
            r["_x"] = 1 / c - 1
    return rows, fields


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("sweep", help="a sweep.csv of a bsp scenario")
    ap.add_argument("--b-crit", type=float, required=True, help="the critical batch B_crit (samples)")
    ap.add_argument("--s-min", help="the fewest steps to the target (at an infinite batch)")
    ap.add_argument("--reference", help="EPOCHS@BATCH: a run that reached the target in EPOCHS at global BATCH")
    ap.add_argument("--dataset-samples", type=float, help="the training set's size (for --reference and epochs)")
    ap.add_argument("--penalty", help="JSON of analysis/relaxation_penalty.py --model-out: a staleness or compression penalty")
    ap.add_argument("--ratio", help="the compression ratio of every row, for a compression --penalty (when sweep.csv "
                                    f"has no {RATIO_COLUMN} column)")
    ap.add_argument("--out", help="CSV: the sweep's rows and the model's columns (default: standard output)")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.b_crit > 0:
        raise UsageError(f"--b-crit: expected samples > 0, got {args.b_crit:g}")
    if args.dataset_samples is not None and not args.dataset_samples > 0:
        raise UsageError(f"--dataset-samples: expected a number > 0, got {args.dataset_samples:g}")
    s_min = s_min_of(args)
    penalty = read_penalty(args.penalty) if args.penalty else None
    if args.ratio is not None and (penalty is None or penalty["kind"] != "compression"):
        raise UsageError("--ratio goes with a compression --penalty")
    rows, fields = read_sweep(args.sweep, penalty, args.ratio)
    m0 = min(r["_m"] for r in rows)
    label = (f"# MODEL, not simulated: S = S_min (1 + B_crit / M) (McCandlish et al. 2018) with S_min = {s_min:.6g} "
             f"steps, B_crit = {args.b_crit:.6g} samples; its form fitted on co-simulated training missed the steps by "
             f"{100 * FIT_ERROR['median']:.1f} % at the median, {100 * FIT_ERROR['largest']:.1f} % at most "
             "(docs/convergence.md, \"Beyond co-simulation\")")
    if penalty:
        label += (f"; {penalty['kind']} penalty P(x) = 1 / (1 + a x), x = {penalty.get('x', '?')}, a = {penalty['a']:.6g}, "
                  f"fitted on co-simulated {penalty.get('scenario', '?')} (analysis/relaxation_penalty.py): missed by "
                  f"{100 * penalty['fit_error'].get('median', float('nan')):.1f} % at the median, "
                  f"{100 * penalty['fit_error'].get('largest', float('nan')):.1f} % at most")
    a = penalty["a"] if penalty else 0.0
    out = open(args.out, "w", encoding="utf-8", newline="") if args.out else sys.stdout
    try:
        out.write(label + "\n")
        writer = csv.DictWriter(out, fieldnames=fields + MODEL_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            p = 1 / (1 + a * r["_x"])
            steps = s_min * (1 + args.b_crit / r["_m"]) / p  # of batch M: an update's for asp and ssp
            samples = steps * r["_m"]
            r.update({"model_global_batch": f"{r['_m']:.6g}", "model_steps_to_target": f"{steps:.6g}",
                      "model_epochs_to_target": f"{samples / args.dataset_samples:.6g}" if args.dataset_samples else "",
                      "model_time_to_target_s": f"{samples / float(r['throughput_samples_per_s']):.6g}",
                      "model_statistical_efficiency": f"{s_min * (args.b_crit + m0) / samples:.6g}",
                      "model_penalty": f"{p:.6g}" if penalty else ""})
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
