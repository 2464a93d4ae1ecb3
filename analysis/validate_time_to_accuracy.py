#!/usr/bin/python3
"""Predict every measured time to accuracy with ddlsim's co-simulation and compare (docs/validation.md,
"Results: time to accuracy").

    analysis/validate_time_to_accuracy.py tta.csv [--network software] [--compute profile|measured [--draws K]]
        [--forward-s S --backward-s S --optimizer-s S] [--ddlsim PATH] [--keep DIR] [--quiet]

For every lab row of a CSV written by tools/measure_time_to_accuracy.py the script writes one ddlsim
scenario with `training.convergence` (the row's data, shards, seed, learning rate, batch, target and
evaluation interval) and runs `ddlsim run` on it:

* platform: a `star` of `ranks` workers at the row's rate with link latency half the row's one-way
  delay (analysis/validate_ddp.py's convention);
* workload: softmax 784-10 as one synthetic layer of 31,400 gradient bytes (fp32; --dtype float64
  rows are refused: the scenario's dtypes are fp32 and fp16), forward, backward and the SGD step
  from --forward-s, --backward-s and --optimizer-s (default the bundled scenarios' own, measured at
  batch 32: 0.46 ms, 0.26 ms, 0.056 ms), the row's iterations. With --compute measured, the compute
  each rank measured in that run instead (bsp: forward and backward; the others: with the step),
  as a lognormal with the measured median and mean: the three scaled together to the row's
  `compute_s_mean`, and `training.stragglers` lognormal noise of sigma sqrt(2 ln(mean / median))
  (the noise has mean 1 and median exp(-sigma^2 / 2)); nothing fitted to the iteration or training
  times; --draws K predicts each such row as the median of K draws of that noise (its
  `training.stragglers.seed` 1 to K, the data order unchanged), as repeated lab runs are compared
  by their medians. Ranks that share two cores compute in bursts with stalls (their mean well above their
  median), and do not compute in lockstep, where identical simulated workers would
  (docs/validation.md);
* training: `bsp` rows: `bsp` with the `gloo_ring` all-reduce (gloo's own ring, which
  torch.distributed.all_reduce runs) and one bucket, no overlap (the lab all-reduces its flat
  gradient after the backward pass); `local_sgd`: `local_sgd` with the row's period, no warm-up,
  the same all-reduce and bucket; `dpsgd`: `gossip` on a `ring`, `synchronous`; `asp`: `asp` with
  one parameter server (the star's one more host, as the lab's server has its own link) and one
  bucket; `ssp`: `ssp` with the row's `staleness_bound`, the same server and bucket;
* network: analysis/validate_ddp.py's models (`ideal`, `tcp`, `software` = the `gloo` preset;
  default `software`), flow fidelity.

Rows of the same settings (every column but the measured ones) are repeats: they are predicted once
and compared by their medians (a run that did not reach the target counts as the slowest), the table
giving how many runs and the range of their times to target. Asynchronous training reaches a target
at an iteration that the arrival order decides, so one run of it is one draw.

Compared per row: the time to the target (summary.json's `convergence.time_to_target_s` against the
row's `time_to_target_s`; error = predicted / measured - 1, negative: too fast), the iterations to
it, and the mean iteration time (`iteration_time_s` against `iteration_s_mean`). Then, per group of
rows on the same network, ranks and shards, whether ddlsim ranks the set-ups in the measured order
of time to target (a set-up that never reached the target ranks last), and, since set-ups measured
within 10 % of each other are a tie at the goal's tolerance, how many of the pairs measured more than
10 % apart the prediction orders the same way.

Exit status: 0, or 2 with one line on bad input.
"""

import argparse
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
sys.path.insert(0, os.path.join(ROOT, "tools"))
import lab_runs  # noqa: E402
import measure_time_to_accuracy  # noqa: E402  (its HEADER; importing it starts nothing)
import validate_ddp  # noqa: E402  (network models, ddlsim lookup)
from validate_ddp import UsageError  # noqa: E402

PROG = "validate_time_to_accuracy.py"
PARAMETERS = 7850  # softmax 784-10
NETWORKS = ["ideal", "tcp", "software"]


def number(text, row, key, number_of_row, path, allow_empty=False):
    if allow_empty and text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{path}: data row {number_of_row}: {key} {text!r} is not a number") from None


def read_rows(path):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        raw = lab_runs.read_table(path, measure_time_to_accuracy.HEADER)
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(str(e)) from None
    rows = []
    for n, r in enumerate(raw, start=1):
        if r["algorithm"] not in measure_time_to_accuracy.ALGORITHMS:
            raise UsageError(f"{path}: data row {n}: unknown algorithm {r['algorithm']!r} (valid: "
                             f"{', '.join(measure_time_to_accuracy.ALGORITHMS)})")
        if r["dtype"] != "float32":
            raise UsageError(f"{path}: data row {n}: dtype {r['dtype']!r}; only float32 rows are predicted (the "
                             "scenario's gradients are fp32)")
        if not r["bandwidth_bps"] or not r["latency_s"]:
            raise UsageError(f"{path}: data row {n} has no lab bandwidth and latency (a --local row): nothing to "
                             "predict it on")
        row = dict(r)
        for key in ("ranks", "batch_size", "iterations", "evaluate_every", "train_samples", "test_samples", "seed"):
            value = number(r[key], r, key, n, path)
            if value != int(value) or value < 0:
                raise UsageError(f"{path}: data row {n}: {key} {r[key]!r} is not a whole number >= 0")
            row[key] = int(value)
        for key in ("learning_rate", "bandwidth_bps", "latency_s", "target_accuracy", "iteration_s_mean",
                    "compute_s_median"):
            row[key] = number(r[key], r, key, n, path)
        # empty in rows measured before the tool recorded it
        row["compute_s_mean"] = number(r["compute_s_mean"], r, "compute_s_mean", n, path, True)
        row["compute_log_sd"] = number(r["compute_log_sd"], r, "compute_log_sd", n, path, True)
        row["period_iterations"] = int(number(r["period_iterations"], r, "period_iterations", n, path)) \
            if r["algorithm"] == "local_sgd" else None
        row["staleness_bound"] = int(number(r["staleness_bound"], r, "staleness_bound", n, path)) \
            if r["algorithm"] == "ssp" else None
        row["time_to_target_s"] = number(r["time_to_target_s"], r, "time_to_target_s", n, path, True)
        row["iterations_to_target"] = number(r["iterations_to_target"], r, "iterations_to_target", n, path, True)
        rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no data rows")
    return rows


MEASURED = ("time_to_target_s", "iterations_to_target", "final_test_accuracy", "iteration_s_mean", "compute_s_median",
            "compute_s_mean", "compute_log_sd", "compute_rank_factors", "source")


def middle(values):
    """The median, a value of None (not reached) counting as the largest; None if the median is."""
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    n = len(ordered)
    low, high = ordered[(n - 1) // 2], ordered[n // 2]
    if low is None or high is None:
        return None
    return low if low == high else (low + high) / 2


def merge_repeats(rows):
    """Rows of the same settings (every column but the measured ones) are repeats of one run: one row
    with the medians, `runs` and the range of the times to target."""
    groups = {}
    for row in rows:
        key = tuple((k, row[k]) for k in sorted(row) if k not in MEASURED)
        groups.setdefault(key, []).append(row)
    merged = []
    for members in groups.values():
        row = dict(members[0], runs=len(members))
        for key in ("time_to_target_s", "iterations_to_target", "iteration_s_mean", "compute_s_median",
                    "compute_s_mean", "compute_log_sd"):
            row[key] = middle([m[key] for m in members])
        reached = [m["time_to_target_s"] for m in members if m["time_to_target_s"] is not None]
        row["time_range"] = (min(reached), max(reached), len(reached)) if len(members) > 1 and reached else None
        merged.append(row)
    return merged


def measured_compute(row, profile):
    """(forward, backward, step) seconds and the lognormal sigma: the row's own compute times as a
    lognormal of their median and mean."""
    median, mean = row["compute_s_median"], row["compute_s_mean"]
    if mean is None:
        raise UsageError(f"row {row['algorithm']} N={row['ranks']} {row['shards']} has no compute_s_mean (measured "
                         "before the tool recorded it): use --compute profile")
    if not median > 0 or not mean > 0:
        raise UsageError(f"row {row['algorithm']} N={row['ranks']} {row['shards']}: compute_s_median {median!r} and "
                         f"compute_s_mean {mean!r} must be > 0 for --compute measured")
    covered = profile[0] + profile[1] + (0 if row["algorithm"] == "bsp" else profile[2])
    sigma = math.sqrt(2 * math.log(mean / median)) if mean > median else 0.0
    return tuple(mean / covered * c for c in profile), sigma


def scenario_for(row, network, compute, name, sigma=0.0):
    servers = 0
    if row["algorithm"] == "dpsgd":
        training = {"sync": {"name": "gossip", "params": {"graph": "ring", "variant": "synchronous"}}}
    elif row["algorithm"] in ("asp", "ssp"):
        sync = {"name": "asp"} if row["algorithm"] == "asp" else \
            {"name": "ssp", "params": {"staleness_bound": row["staleness_bound"]}}
        training = {"sync": sync, "bucketing": {"bucket_bytes": "1GB", "overlap": False}}
        servers = 1
    else:
        training = {"sync": {"name": "bsp"} if row["algorithm"] == "bsp" else
                    {"name": "local_sgd", "params": {"period_iterations": row["period_iterations"],
                                                     "warmup_bsp_iterations": 0}},
                    "collective": {"name": "gloo_ring"},
                    "bucketing": {"bucket_bytes": "1GB", "max_inflight": 1, "overlap": False}}
    if sigma > 0:
        training["stragglers"] = {"distribution": "lognormal", "sigma": sigma}
    training["convergence"] = {
        "dataset": "fashion_mnist", "model": "softmax", "learning_rate": row["learning_rate"],
        "shards": row["shards"], "target_accuracy": row["target_accuracy"],
        "evaluate_every_iterations": row["evaluate_every"], "train_samples": row["train_samples"],
        "test_samples": row["test_samples"], "bsp_baseline": False}
    return {
        "name": name,
        "description": f"measured time-to-accuracy row: {row['algorithm']} N={row['ranks']} batch {row['batch_size']} "
                       f"{row['shards']} at {row['bandwidth_bps']:g} bit/s, {row['latency_s']:g} s one-way",
        "seed": row["seed"],
        "platform": {"topology": "star", "workers": row["ranks"], "parameter_servers": servers,
                     "link": {"bandwidth": f"{row['bandwidth_bps']:.17g}bps", "latency": row["latency_s"] / 2}},
        "network": network,
        "workload": {"synthetic": {"model": "softmax 784-10", "layers": 1, "forward_s": compute[0],
                                   "backward_s": compute[1], "optimizer_s": compute[2], "grad_bytes": 4 * PARAMETERS},
                     "batch_size": row["batch_size"], "iterations": row["iterations"]},
        "training": training,
        "output": {"timeline": False, "iterations_csv": False},
    }


def run(ddlsim, scenario, folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "scenario.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f, indent=1)
    out = os.path.join(folder, "out")
    result = subprocess.run([ddlsim, "run", path, "--quiet", "--out", out], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UsageError(f"ddlsim run {path} failed (exit {result.returncode}): {last}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def ranking(items, key):
    """Set-up names ordered by `key` (None: not reached, last; ties by name)."""
    return [name for name, _ in sorted(items, key=lambda it: (key(it[1]) is None, key(it[1]) or 0, it[0]))]


TIE = 0.10  # set-ups measured closer than this are not ranked: the goal's tolerance on a time


def ordered_pairs(members):
    """(pairs of set-ups whose measured times to target differ by more than TIE, of them those the
    prediction orders the same way); not reached is slower than any time."""
    def key(value):
        return math.inf if value is None else value

    resolved = agreed = 0
    for i, a in enumerate(members):
        for b in members[i + 1:]:
            ta, tb = key(a["time_to_target_s"]), key(b["time_to_target_s"])
            if ta == tb or (math.isfinite(ta) and math.isfinite(tb) and max(ta, tb) <= (1 + TIE) * min(ta, tb)):
                continue
            resolved += 1
            pa, pb = key(a["predicted_s"]), key(b["predicted_s"])
            agreed += (pa < pb) == (ta < tb) and pa != pb
    return resolved, agreed


def runs_cell(row):
    """1, or the runs and the range of their times to target (how many reached it, if not all)."""
    if row["runs"] == 1:
        return "1"
    if row["time_range"] is None:
        return f"{row['runs']}, none reached"
    low, high, reached = row["time_range"]
    return f"{row['runs']}: {low:.3f}–{high:.3f} s" + ("" if reached == row["runs"] else f" ({reached} reached)")


def fmt_s(value):
    return "not reached" if value is None else f"{value:.3f} s"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("csv", help="rows of tools/measure_time_to_accuracy.py")
    ap.add_argument("--network", default="software", choices=NETWORKS, help="network model (default software)")
    ap.add_argument("--compute", default="profile", choices=["profile", "measured"],
                    help="profile: the --forward-s, --backward-s and --optimizer-s for every row (default); "
                         "measured: each row's own compute median and mean (see above)")
    ap.add_argument("--draws", type=int, default=1,
                    help="with --compute measured, predict each set-up as the median of this many draws of its compute "
                         "noise (training.stragglers.seed 1, 2, ...; the data order stays the row's; default 1)")
    ap.add_argument("--forward-s", type=float, default=0.46e-3, help="forward with the loss per iteration (s)")
    ap.add_argument("--backward-s", type=float, default=0.26e-3, help="backward per iteration (s)")
    ap.add_argument("--optimizer-s", type=float, default=0.056e-3, help="the SGD step per iteration (s)")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim)")
    ap.add_argument("--keep", help="keep the scenarios and outputs in this folder")
    ap.add_argument("--quiet", action="store_true", help="no line per row on stderr")
    args = ap.parse_args(argv)
    if not 1 <= args.draws <= 100:
        raise UsageError(f"--draws: expected a whole number in [1, 100], got {args.draws}")
    if args.draws > 1 and args.compute != "measured":
        raise UsageError("--draws: only with --compute measured (the profile's compute draws no noise)")
    for name in ("forward_s", "backward_s", "optimizer_s"):
        if not getattr(args, name) >= 0:
            raise UsageError(f"--{name.replace('_', '-')}: expected seconds >= 0, got {getattr(args, name)}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rows = merge_repeats(read_rows(args.csv))
    ddlsim = validate_ddp.find_ddlsim(args.ddlsim)
    network = validate_ddp.network_object(args.network, None)
    compute = (args.forward_s, args.backward_s, args.optimizer_s)
    work = args.keep or tempfile.mkdtemp(prefix="ddlsim-validate-tta-")
    results = []
    try:
        for index, row in enumerate(rows):
            name = f"tta_row{index}"
            own, sigma = measured_compute(row, compute) if args.compute == "measured" else (compute, 0.0)
            draws = []
            for draw in range(args.draws if sigma > 0 else 1):
                scenario = scenario_for(row, network, own, name, sigma)
                if sigma > 0:
                    scenario["training"]["stragglers"]["seed"] = draw + 1
                summary = run(ddlsim, scenario, os.path.join(work, name, f"draw{draw + 1}"))
                draws.append((summary["convergence"]["time_to_target_s"], summary["convergence"]["iterations_to_target"],
                              summary["iteration_time_s"]))
            r = dict(row, predicted_s=middle([d[0] for d in draws]), predicted_iterations=middle([d[1] for d in draws]),
                     predicted_iteration_s=middle([d[2] for d in draws]))
            results.append(r)
            if not args.quiet:
                print(f"{PROG}: row {index} {row['algorithm']} N={row['ranks']} {row['shards']}: measured "
                      f"{fmt_s(row['time_to_target_s'])}, predicted {fmt_s(r['predicted_s'])}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    runs = sum(r["runs"] for r in rows)
    draws = f", the median of {args.draws} draws of its noise" if args.draws > 1 else ""
    print(f"{runs} measured rows ({len(rows)} set-ups) from {args.csv}; network {args.network}; compute {args.compute}"
          f"{draws}; "
          "error = predicted / measured - 1 "
          "(negative: predicted too fast)")
    print()
    print("| set-up | ranks | shards | time to target: measured | predicted | error | iterations to it: measured "
          "| predicted | iteration time: measured | predicted | error | runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    for r in results:
        both = r["time_to_target_s"] is not None and r["predicted_s"] is not None
        error = r["predicted_s"] / r["time_to_target_s"] - 1 if both else None
        if both:
            errors.append(error)
        it_error = r["predicted_iteration_s"] / r["iteration_s_mean"] - 1
        label = r["algorithm"] + (f" H={r['period_iterations']}" if r["period_iterations"] else "")
        print(f"| {label} | {r['ranks']} | {r['shards']} | {fmt_s(r['time_to_target_s'])} | {fmt_s(r['predicted_s'])} | "
              f"{'—' if error is None else f'{100 * error:+.1f} %'} | "
              f"{'—' if r['iterations_to_target'] is None else int(r['iterations_to_target'])} | "
              f"{'—' if r['predicted_iterations'] is None else format(r['predicted_iterations'], 'g')} | "
              f"{r['iteration_s_mean'] * 1e3:.2f} ms | {r['predicted_iteration_s'] * 1e3:.2f} ms | {100 * it_error:+.1f} % | "
              f"{runs_cell(r)} |")
    print()
    if errors:
        print(f"time to target: {len(errors)} rows reached by both, median |error| "
              f"{100 * statistics.median(abs(e) for e in errors):.1f} %, max {100 * max(abs(e) for e in errors):.1f} %, "
              f"mean {100 * statistics.fmean(errors):+.1f} %")
    groups = {}
    for r in results:
        groups.setdefault((r["bandwidth_bps"], r["latency_s"], r["ranks"], r["shards"], r["learning_rate"],
                           r["target_accuracy"], r["batch_size"]), []).append(r)
    resolved_total, agreed_total = 0, 0
    for (bandwidth, latency, ranks, shards, lr, target, batch), members in sorted(groups.items()):
        label = [(m["algorithm"], m) for m in members]
        measured = ranking(label, lambda m: m["time_to_target_s"])
        predicted = ranking(label, lambda m: m["predicted_s"])
        resolved, agreed = ordered_pairs(members)
        resolved_total += resolved
        agreed_total += agreed
        print(f"ranking at {bandwidth / 1e6:g} Mbit/s {latency * 1e3:g} ms, N={ranks}, {shards}, lr {lr:g}, "
              f"batch {batch}, {target:.0%}: measured {' < '.join(measured)}; predicted {' < '.join(predicted)}: "
              f"{'the same' if measured == predicted else 'DIFFERENT'}; pairs measured more than "
              f"{100 * TIE:g} % apart: {agreed} of {resolved} in the measured order")
    print(f"pairs of set-ups measured more than {100 * TIE:g} % apart: {agreed_total} of {resolved_total} predicted "
          "in the measured order (closer pairs are ties within the goal's tolerance)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
