#!/usr/bin/python3
"""Predict every measured decentralised iteration with ddlsim and compare (docs/validation.md,
"Results: decentralised").

    analysis/validate_decentralised.py docs/data/lab_decentralised.csv [--profiles FOLDER] \
        [--networks ideal,tcp,software,calibrated] [--calibration FILE] [--out FILE] [--plot FILE]

For every lab row of a CSV written by tools/measure_decentralised.py and every network model, the
script writes one ddlsim scenario and runs `ddlsim run` on it:

* workload: the row's model at the row's batch size, from `<model>_b<batch>.json` in --profiles
  (default docs/data/profiles_paired: two ranks share the VM's cores; docs/validation.md), or in
  the folder --profiles-for gives for the row's rank count, checked to be that model at that
  batch; `iterations` as measured;
* platform: a `star` of `ranks` workers at the row's rate with link latency half the row's one-way
  delay (analysis/validate_ddp.py's convention);
* training: `dpsgd` rows: `gossip` on a `ring`, `synchronous` (two sends per worker and iteration,
  also on 2 ranks, as the lab does); `local_sgd` rows: `local_sgd` with the row's
  `period_iterations`, no warm-up, the `gloo_ring` all-reduce (gloo's own ring, which the lab's
  torch.distributed.all_reduce runs) and one bucket (the lab all-reduces its flat model at once); `event` rows: `event_triggered` replaying the row's `trace` (decisions:
  trace, puts: sequential);
* network: analysis/validate_ddp.py's models (`ideal`, `tcp`, `software` = the `gloo` preset,
  `calibrated` = a calibration file's "network" object), flow fidelity.

Compared: for `dpsgd`, summary.json's `iteration_time_median_s` with the row's
`iteration_s_median` (both over every worker's iterations); for `local_sgd` and `event`, whose
iterations differ by design (a period's averaging, the trace's decisions), `iteration_time_s` with
`iteration_s_mean` (local_sgd: last end / iterations; event: the mean over every worker's
iterations). error =
predicted / measured - 1 (negative: too fast). A table per network model gives, per algorithm and
model and over all rows, the median and largest |error|, the mean signed error and the signs.

Exit status: 0, or 2 with one line on bad input.
"""

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import lab_runs  # noqa: E402
import measure_decentralised  # noqa: E402  (its HEADER; importing it starts nothing)
import validate_ddp  # noqa: E402  (network models, profiles, calibration files, statistics)
from validate_ddp import UsageError  # noqa: E402

PROG = "validate_decentralised.py"
PREDICTION_HEADER = ["network", "algorithm", "model", "ranks", "batch_size", "period_iterations", "bandwidth_bps",
                     "latency_s", "measured_s", "predicted_s", "error"]


def read_rows(path):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        raw = lab_runs.read_table(path, measure_decentralised.HEADER)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a text CSV file") from None
    rows, skipped = [], 0
    for number, r in enumerate(raw, start=1):
        if not r["bandwidth_bps"] or not r["latency_s"]:
            skipped += 1
            continue
        try:
            algorithm = r["algorithm"]
            if algorithm not in measure_decentralised.ALGORITHMS:
                raise ValueError(algorithm)
            row = {"algorithm": algorithm, "model": r["model"], "ranks": int(r["ranks"]),
                   "batch_size": int(r["batch_size"]),
                   "period_iterations": int(r["period_iterations"]) if algorithm == "local_sgd" else None,
                   "bandwidth_bps": float(r["bandwidth_bps"]), "latency_s": float(r["latency_s"]),
                   "measured_s": float(r["iteration_s_median" if algorithm == "dpsgd" else "iteration_s_mean"]),
                   "iterations": int(r["iterations"]),
                   "trace": os.path.join(ROOT, r["trace"]) if algorithm == "event" else None}
        except (ValueError, KeyError):
            raise UsageError(f"{path}: data row {number} has a malformed value: {r}") from None
        if row["ranks"] < 2 or row["batch_size"] < 1 or row["iterations"] < 1 or row["bandwidth_bps"] <= 0 \
                or row["latency_s"] < 0 or not row["measured_s"] > 0 \
                or (algorithm == "local_sgd" and row["period_iterations"] < 1):
            raise UsageError(f"{path}: data row {number} has an impossible value: {r}")
        if algorithm == "event" and not os.path.isfile(row["trace"]):
            raise UsageError(f"{path}: data row {number}: its trace {r['trace']} does not exist")
        rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no row with a known bandwidth and latency (lab rows) to predict")
    return rows, skipped


def scenario_for(row, network, profile, name):
    if row["algorithm"] == "dpsgd":
        training = {"sync": {"name": "gossip", "params": {"graph": "ring", "variant": "synchronous"}}}
    elif row["algorithm"] == "event":
        training = {"sync": {"name": "event_triggered",
                             "params": {"decisions": "trace", "trace": row["trace"], "puts": "sequential"}}}
    else:
        training = {"sync": {"name": "local_sgd", "params": {"period_iterations": row["period_iterations"],
                                                            "warmup_bsp_iterations": 0}},
                    "collective": {"name": "gloo_ring"},
                    "bucketing": {"bucket_bytes": "1GB", "max_inflight": 1, "overlap": False}}
    return {
        "name": name,
        "description": f"measured {row['algorithm']} row: {row['model']} N={row['ranks']} batch {row['batch_size']} "
                       f"at {row['bandwidth_bps']:g} bit/s, {row['latency_s']:g} s one-way",
        "seed": 1,
        "platform": {"topology": "star", "workers": row["ranks"],
                     "link": {"bandwidth": f"{row['bandwidth_bps']:.17g}bps", "latency": row["latency_s"] / 2}},
        "network": network,
        "workload": {"profile": profile, "batch_size": row["batch_size"], "iterations": row["iterations"]},
        "training": training,
        "output": {"timeline": False},
    }


def print_tables(predictions, networks, out=sys.stdout):
    groups = sorted({(p["algorithm"], p["model"]) for p in predictions})
    for network in networks:
        mine = [p for p in predictions if p["network"] == network]
        print(f"\nnetwork model: {network}", file=out)
        print(f"  {'algorithm':<10} {'model':<14} {'rows':>5} {'median |err|':>13} {'max |err|':>10} "
              f"{'mean signed':>12} {'too fast / too slow':>20}", file=out)
        for label in groups + [(a, "all") for a in sorted({g[0] for g in groups})] + [("all", "all")]:
            errors = [p["error"] for p in mine
                      if label[0] in ("all", p["algorithm"]) and label[1] in ("all", p["model"])]
            if not errors:
                continue
            s = validate_ddp.summarise(errors)
            print(f"  {label[0]:<10} {label[1]:<14} {s['rows']:>5} {100 * s['median_abs']:>12.1f}% "
                  f"{100 * s['max_abs']:>9.1f}% {100 * s['mean_signed']:>+11.1f}% "
                  f"{s['too_fast']:>9} / {s['too_slow']:<8}", file=out)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("csv", help="decentralised iteration CSV (tools/measure_decentralised.py --lab)")
    ap.add_argument("--profiles", default=os.path.join(ROOT, "docs", "data", "profiles_paired"),
                    help="folder of profiles named <model>_b<batch>.json (default docs/data/profiles_paired)")
    ap.add_argument("--profiles-for", action="append", default=[], metavar="RANKS=FOLDER",
                    help="the profiles folder for rows of RANKS ranks (repeatable; e.g. 3 ranks sharing 2 cores "
                         "compute as docs/data/lab_decentralised/tripled measured)")
    ap.add_argument("--networks", default=None,
                    help="among ideal,tcp,software,calibrated (default: all; calibrated only with --calibration)")
    ap.add_argument("--calibration", help="calibration file whose \"network\" object the calibrated runs use")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim, then PATH)")
    ap.add_argument("--out", help="write every prediction to this CSV (appended to)")
    ap.add_argument("--keep", help="keep the scenarios and ddlsim outputs in this folder")
    ap.add_argument("--quiet", action="store_true", help="no per-row lines on stderr")
    args = ap.parse_args(argv)
    args.networks = validate_ddp.choose_networks(args.networks, args.calibration)
    args.folders = {}
    for item in args.profiles_for:
        ranks, sep, folder = item.partition("=")
        if not sep or not ranks.isdigit() or not folder:
            raise UsageError(f"--profiles-for: expected RANKS=FOLDER, got {item!r}")
        args.folders[int(ranks)] = folder
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rows, skipped = read_rows(args.csv)
    calibration = validate_ddp.load_calibration(args.calibration) if args.calibration else None
    ddlsim = validate_ddp.find_ddlsim(args.ddlsim)
    profiles = {}
    for row in rows:
        key = (row["model"], row["batch_size"], row["ranks"])
        if key not in profiles:
            profiles[key] = validate_ddp.find_profile(row["model"], row["batch_size"], {},
                                                      args.folders.get(row["ranks"], args.profiles))
    if skipped:
        print(f"{PROG}: {skipped} row(s) without a lab bandwidth and latency left out", file=sys.stderr)
    work = args.keep or tempfile.mkdtemp(prefix="ddlsim-validate-")
    predictions = []
    try:
        for index, row in enumerate(rows):
            for network in args.networks:
                name = f"dec_row{index}_{network}"
                scenario = scenario_for(row, validate_ddp.network_object(network, calibration),
                                        profiles[(row["model"], row["batch_size"], row["ranks"])], name)
                key = "iteration_time_median_s" if row["algorithm"] == "dpsgd" else "iteration_time_s"
                predicted = validate_ddp.run_ddlsim(ddlsim, scenario, os.path.join(work, name), [], key)
                p = dict(row, network=network, predicted_s=predicted,
                         error=validate_ddp.relative_error(predicted, row["measured_s"]))
                p["period_iterations"] = row["period_iterations"] or ""
                predictions.append(p)
                if not args.quiet:
                    print(f"{PROG}: row {index} {row['algorithm']} {row['model']} N={row['ranks']} "
                          f"{row['bandwidth_bps'] / 1e6:g} Mbit/s {row['latency_s'] * 1e3:g} ms, {network}: "
                          f"measured {row['measured_s'] * 1e3:.2f} ms, predicted {predicted * 1e3:.2f} ms "
                          f"({100 * p['error']:+.1f} %)", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(rows)} measured rows from {args.csv}; error = predicted / measured - 1 "
          "(negative: predicted too fast)")
    print_tables(predictions, args.networks)
    if args.out:
        table = lab_runs.CsvTable(args.out, PREDICTION_HEADER)
        table.append([{k: p[k] for k in PREDICTION_HEADER} for p in predictions],
                     [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + sys.argv[1:])])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
