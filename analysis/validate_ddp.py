#!/usr/bin/python3
"""Predict every measured DDP iteration with ddlsim and compare (docs/validation.md).

    analysis/validate_ddp.py docs/data/lab_ddp.csv [--profiles docs/data/profiles] \
        [--networks ideal,tcp,software,calibrated] [--calibration FILE] [--plot FILE] [--out FILE]

For every row of a DDP iteration CSV written by tools/measure_ddp.py in the lab (bandwidth and
latency known) and every network model, the script writes one ddlsim scenario and runs
`ddlsim run` on it:

* workload: the row's model at the row's batch size, from the profile `<model>_b<batch>.json` in
  --profiles (or --profile MODEL=FILE), checked to be that model at that batch; `iterations` as
  measured;
* platform: a `star` of `ranks` workers whose links run at the row's rate and whose link latency is
  half the row's one-way delay (a host-to-host path crosses two links);
* training: `bsp` with the `ring` all-reduce, `bucketing.policy: ddp` with the row's bucket cap
  (MiB, as DDP reads `bucket_cap_mb`) and overlap; `max_inflight` 2 with overlap (DDP's reducer
  launches each bucket asynchronously and gloo's process group runs 2 worker threads), 1 without
  (tools/measure_ddp.py's --no-overlap all-reduces its buckets one after the other, blocking);
* network, by --networks: `ideal` (CM02 alpha-beta, no software cost), `tcp` (SimGrid's LV08),
  `software` (alpha-beta with the `gloo` software preset, uncalibrated), `calibrated` (the
  "network" object of a calibration file, merged into the scenario's network object);
  `flow` fidelity for all (stepwise: every ring step is messages; a 2- or 3-worker star is cheap).

The predicted iteration is summary.json's `iteration_time_median_s`, compared with the row's
measured median: error = predicted / measured - 1 (negative: the prediction is too fast). A table
per network model gives, per DNN model and over all rows: rows, the median and largest |error|, the
mean signed error and how many points are predicted too fast and too slow. --out writes every
prediction as CSV, --plot a predicted-against-measured scatter plot (log-log, the line y = x).

--framework CSV (repeatable) reads one-rank DDP rows (tools/measure_ddp.py --local --ranks 1, e.g. two
processes at once, one per core, as the ranks run): for each model, batch, cap and overlap, the
framework's compute per iteration is the one-rank iteration measured (the files' mean) minus ddlsim's
prediction of that one-worker run from the same profile, and every row with that key runs with it as
workload.framework_overhead_s (0 where it is negative). It is measured without the network and
without the rows being predicted.

--set PATH=VALUE (repeatable) is passed to every `ddlsim run` (e.g. a measured
training.bucketing.copy_bandwidth); --set-model MODEL:PATH=VALUE only to that model's rows (e.g. its
workload.framework_overhead_s). Corrections of compute must come from measurements independent of
the DDP rows being predicted.

Exit status: 0, or 2 with one line on bad input (a missing or malformed file, a wrong header, a
profile of another model or batch, an unknown network model, a failed ddlsim run).
Standard library, plus matplotlib for --plot (Debian: python3-matplotlib).
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
import lab_runs  # noqa: E402  (tools/lab_runs.py: the CSV reader)
import measure_ddp  # noqa: E402  (its HEADER; importing it starts nothing)

PROG = "validate_ddp.py"
NETWORKS = ["ideal", "tcp", "software", "calibrated"]
MIB = 1024 * 1024
PREDICTION_HEADER = ["network", "model", "ranks", "batch_size", "bucket_cap_mb", "overlap", "bandwidth_bps",
                     "latency_s", "measured_s", "predicted_s", "error"]


class UsageError(Exception):
    """Bad input: reported on one line, exit 2."""


# ---- inputs ----

def read_rows(path):
    """The DDP CSV's rows that can be predicted (lab rows: bandwidth and latency known), typed, and
    how many were left out."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        raw = lab_runs.read_table(path, measure_ddp.HEADER)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a text CSV file") from None
    rows, skipped = [], 0
    for number, r in enumerate(raw, start=1):
        if not r["bandwidth_bps"] or not r["latency_s"]:
            skipped += 1  # --local or torchrun: the network is unknown
            continue
        try:
            row = {"model": r["model"], "ranks": int(r["ranks"]), "batch_size": int(r["batch_size"]),
                   "bucket_cap_mb": float(r["bucket_cap_mb"]), "overlap": {"true": True, "false": False}[r["overlap"]],
                   "backend": r["backend"], "bandwidth_bps": float(r["bandwidth_bps"]),
                   "latency_s": float(r["latency_s"]), "measured_s": float(r["iteration_s_median"]),
                   "iterations": int(r["iterations"])}
        except (ValueError, KeyError):
            raise UsageError(f"{path}: data row {number} has a malformed value: {r}") from None
        if row["ranks"] < 1 or row["batch_size"] < 1 or row["iterations"] < 1 or row["bucket_cap_mb"] <= 0 \
                or row["bandwidth_bps"] <= 0 or row["latency_s"] < 0 or not row["measured_s"] > 0:
            raise UsageError(f"{path}: data row {number} has an impossible value: {r}")
        rows.append(row)
    if not rows:
        raise UsageError(f"{path}: no row with a known bandwidth and latency (lab rows) to predict")
    return rows, skipped


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise UsageError(f"{what} {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{what} {path}: malformed JSON: {e}") from None


def find_profile(model, batch, explicit, folder):
    """The profile for (model, batch): --profile MODEL=FILE, else <folder>/<model>_b<batch>.json;
    refused unless it says it is that model, measured at that batch."""
    path = explicit.get(model) or os.path.join(folder, f"{model}_b{batch}.json")
    if not os.path.isfile(path):
        raise UsageError(f"no profile for {model} at batch {batch}: {path} does not exist "
                         "(measure it with tools/profile_torch.py, or give --profile MODEL=FILE)")
    profile = load_json(path, "profile")
    if not isinstance(profile, dict) or profile.get("model") != model:
        raise UsageError(f"profile {path}: its model is {profile.get('model') if isinstance(profile, dict) else None!r}, "
                         f"the row's is {model!r}")
    batches = [profile.get("batch_size")] + [b.get("batch_size") for b in profile.get("batch_profiles", [])]
    if batch not in batches:
        raise UsageError(f"profile {path}: measured at batch {batches}, the row's batch is {batch}")
    return os.path.abspath(path)


def load_calibration(path):
    """The "network" object of a calibration file ({"format": "ddlsim-calibration", "version": 1,
    "network": {...}, "fit": {...}})."""
    doc = load_json(path, "calibration")
    if not isinstance(doc, dict) or doc.get("format") != "ddlsim-calibration":
        raise UsageError(f"calibration {path}: not a ddlsim calibration (expected \"format\": \"ddlsim-calibration\")")
    if doc.get("version") != 1:
        raise UsageError(f"calibration {path}: version {doc.get('version')!r}, this script reads version 1")
    if not isinstance(doc.get("network"), dict):
        raise UsageError(f"calibration {path}: \"network\" must be an object")
    return doc["network"]


# ---- scenarios ----

def network_object(name, calibration):
    network = {"fidelity": "flow", "collective_granularity": "stepwise"}
    if name == "ideal":
        network["model"] = "ideal"
    elif name == "tcp":
        network["model"] = "tcp"
    elif name == "software":
        network.update({"model": "ideal", "software": "gloo"})
    else:
        network["model"] = "ideal"
        network.update(calibration)  # what network.calibration: FILE does
    return network


def scenario_for(row, network, profile, name):
    overlap = row["overlap"]
    return {
        "name": name,
        "description": f"measured DDP row: {row['model']} N={row['ranks']} batch {row['batch_size']} "
                       f"cap {row['bucket_cap_mb']:g} MiB overlap {str(overlap).lower()} at "
                       f"{row['bandwidth_bps']:g} bit/s, {row['latency_s']:g} s one-way",
        "seed": 1,
        "platform": {"topology": "star", "workers": row["ranks"],
                     "link": {"bandwidth": f"{row['bandwidth_bps']:.17g}bps", "latency": row["latency_s"] / 2}},
        "network": network,
        "workload": {"profile": profile, "batch_size": row["batch_size"], "iterations": row["iterations"]},
        "training": {
            "sync": {"name": "bsp", "params": {"aggregation": "allreduce"}},
            "collective": {"name": "ring"},
            "bucketing": {"policy": "ddp", "bucket_bytes": int(round(row["bucket_cap_mb"] * MIB)),
                          "max_inflight": 2 if overlap else 1, "overlap": overlap},
        },
        "output": {"timeline": False},
    }


def find_ddlsim(explicit):
    for candidate in ([explicit] if explicit else [os.path.join(ROOT, "build", "ddlsim"), shutil.which("ddlsim")]):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    if explicit:
        raise UsageError(f"--ddlsim {explicit}: not an executable file")
    raise UsageError("cannot find build/ddlsim: build it, or pass --ddlsim")


def run_ddlsim(ddlsim, scenario, folder, sets, key="iteration_time_median_s"):
    """Writes the scenario into folder, runs it, returns summary.json's `key` (the median iteration time)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "scenario.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f, indent=1)
    out = os.path.join(folder, "out")
    command = [ddlsim, "run", path, "--quiet", "--out", out]
    for s in sets:
        command += ["--set", s]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UsageError(f"ddlsim run {path} failed (exit {result.returncode}): {last}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)[key]


def framework_costs(paths, ddlsim, profile_of, work):
    """(model, batch, cap MiB, overlap) -> the framework's compute per iteration: the one-rank DDP
    iteration measured (mean of the files' medians) minus ddlsim's one-worker prediction of it from the
    same profile (which has no communication to make), measured independently of the rows predicted."""
    measured = {}
    for path in paths:
        if not os.path.isfile(path):
            raise UsageError(f"--framework {path}: no such file")
        try:
            raw = lab_runs.read_table(path, measure_ddp.HEADER)
        except (ValueError, UnicodeDecodeError) as e:
            raise UsageError(f"--framework {e}") from None
        for number, r in enumerate(raw, start=1):
            if r["ranks"] != "1":
                raise UsageError(f"--framework {path}: data row {number} has {r['ranks']} ranks; one-rank rows only "
                                 "(tools/measure_ddp.py --ranks 1)")
            try:
                key = (r["model"], int(r["batch_size"]), float(r["bucket_cap_mb"]), r["overlap"] == "true")
                measured.setdefault(key, []).append(float(r["iteration_s_median"]))
            except ValueError:
                raise UsageError(f"--framework {path}: data row {number} has a malformed value: {r}") from None
    costs = {}
    for index, (key, values) in enumerate(sorted(measured.items())):
        model, batch, cap, overlap = key
        row = {"model": model, "ranks": 1, "batch_size": batch, "bucket_cap_mb": cap, "overlap": overlap,
               "bandwidth_bps": 1e9, "latency_s": 0.0, "iterations": 10}
        name = f"framework{index}"
        predicted = run_ddlsim(ddlsim, scenario_for(row, network_object("ideal", None), profile_of(model, batch), name),
                               os.path.join(work, name), [])
        costs[key] = statistics.fmean(values) - predicted
    return costs


# ---- statistics ----

def relative_error(predicted, measured):
    return predicted / measured - 1.0


def summarise(errors):
    """rows, median |error|, max |error|, mean signed error, too fast (< 0), too slow (> 0)."""
    absolute = [abs(e) for e in errors]
    return {"rows": len(errors), "median_abs": statistics.median(absolute), "max_abs": max(absolute),
            "mean_signed": statistics.fmean(errors), "too_fast": sum(1 for e in errors if e < 0),
            "too_slow": sum(1 for e in errors if e > 0)}


def print_tables(predictions, networks, out=sys.stdout):
    models = sorted({p["model"] for p in predictions})
    for network in networks:
        mine = [p for p in predictions if p["network"] == network]
        print(f"\nnetwork model: {network}", file=out)
        print(f"  {'model':<16} {'rows':>5} {'median |err|':>13} {'max |err|':>10} {'mean signed':>12} "
              f"{'too fast / too slow':>20}", file=out)
        for label in models + ["all"]:
            errors = [p["error"] for p in mine if label in ("all", p["model"])]
            if not errors:
                continue
            s = summarise(errors)
            print(f"  {label:<16} {s['rows']:>5} {100 * s['median_abs']:>12.1f}% {100 * s['max_abs']:>9.1f}% "
                  f"{100 * s['mean_signed']:>+11.1f}% {s['too_fast']:>9} / {s['too_slow']:<8}", file=out)


def write_predictions(path, predictions):
    table = lab_runs.CsvTable(path, PREDICTION_HEADER)
    table.append([{k: p[k] for k in PREDICTION_HEADER} for p in predictions],
                 [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + sys.argv[1:])])


def plot(path, predictions, networks):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({p["model"] for p in predictions})
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    colours = {n: c for n, c in zip(NETWORKS, ["tab:blue", "tab:orange", "tab:green", "tab:red"])}
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    values = []
    for network in networks:
        for i, model in enumerate(models):
            points = [p for p in predictions if p["network"] == network and p["model"] == model]
            if not points:
                continue
            xs = [p["measured_s"] * 1e3 for p in points]
            ys = [p["predicted_s"] * 1e3 for p in points]
            values += xs + ys
            ax.scatter(xs, ys, marker=markers[i % len(markers)], color=colours.get(network), alpha=0.75,
                       label=f"{model}, {network}", edgecolors="none" if markers[i % len(markers)] != "X" else None)
    low, high = min(values) / 1.3, max(values) * 1.3
    ax.plot([low, high], [low, high], color="black", linewidth=1, label="predicted = measured")
    for factor, style in ((1.1, ":"), (1.25, "--")):
        ax.plot([low, high], [low * factor, high * factor], color="grey", linewidth=0.8, linestyle=style)
        ax.plot([low, high], [low / factor, high / factor], color="grey", linewidth=0.8, linestyle=style,
                label=f"±{round(100 * (factor - 1))} %")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_aspect("equal")
    ax.set_xlabel("measured median iteration (ms)")
    ax.set_ylabel("ddlsim predicted median iteration (ms)")
    ax.set_title("PyTorch DDP (gloo) in the lab: ddlsim against measurement", fontsize=10)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


# ---- main ----

def choose_networks(text, calibration):
    """The --networks list: every model (calibrated only with a calibration file) when not given."""
    if text is None:
        return NETWORKS if calibration else NETWORKS[:3]
    networks = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in networks if n not in NETWORKS]
    if unknown or not networks:
        raise UsageError(f"--networks: unknown network model {unknown[0] if unknown else networks!r}; "
                         f"valid: {','.join(NETWORKS)}")
    if "calibrated" in networks and not calibration:
        raise UsageError("--networks calibrated needs --calibration FILE")
    return networks


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("csv", help="DDP iteration CSV (tools/measure_ddp.py --lab)")
    ap.add_argument("--profiles", default=os.path.join(ROOT, "docs", "data", "profiles"),
                    help="folder of profiles named <model>_b<batch>.json (default docs/data/profiles)")
    ap.add_argument("--profile", action="append", default=[], metavar="MODEL=FILE",
                    help="the profile for MODEL (repeatable; replaces the --profiles lookup)")
    ap.add_argument("--networks", default=None,
                    help="network models among ideal,tcp,software,calibrated (default: all; calibrated "
                         "only with --calibration)")
    ap.add_argument("--calibration", help="calibration file whose \"network\" object the calibrated runs use")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="passed to every ddlsim run (repeatable)")
    ap.add_argument("--set-model", action="append", default=[], metavar="MODEL:PATH=VALUE",
                    help="passed to the ddlsim runs of MODEL's rows (repeatable)")
    ap.add_argument("--framework", action="append", default=[], metavar="CSV",
                    help="one-rank DDP rows (tools/measure_ddp.py --local --ranks 1; repeatable, averaged): "
                         "each row's workload.framework_overhead_s is the one-rank iteration measured for its "
                         "model, batch, cap and overlap minus ddlsim's one-worker prediction")
    ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim, then PATH)")
    ap.add_argument("--out", help="write every prediction to this CSV (appended to)")
    ap.add_argument("--plot", help="write the predicted-against-measured plot (.png, .svg, .pdf)")
    ap.add_argument("--keep", help="keep the scenarios and ddlsim outputs in this folder")
    ap.add_argument("--quiet", action="store_true", help="no per-row lines on stderr")
    args = ap.parse_args(argv)
    args.networks = choose_networks(args.networks, args.calibration)
    explicit = {}
    for item in args.profile:
        model, sep, path = item.partition("=")
        if not sep or not model or not path:
            raise UsageError(f"--profile: expected MODEL=FILE, got {item!r}")
        explicit[model] = path
    args.explicit_profiles = explicit
    per_model = {}
    for item in args.set_model:
        model, sep, assignment = item.partition(":")
        if not sep or not model or "=" not in assignment:
            raise UsageError(f"--set-model: expected MODEL:PATH=VALUE, got {item!r}")
        per_model.setdefault(model, []).append(assignment)
    args.per_model_sets = per_model
    for s in args.set:
        if "=" not in s:
            raise UsageError(f"--set: expected PATH=VALUE, got {s!r}")
    if args.plot and os.path.splitext(args.plot)[1].lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--plot {args.plot}: the extension must be .png, .svg or .pdf")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rows, skipped = read_rows(args.csv)
    calibration = load_calibration(args.calibration) if args.calibration else None
    ddlsim = find_ddlsim(args.ddlsim)
    profiles = {}
    for row in rows:
        key = (row["model"], row["batch_size"])
        if key not in profiles:
            profiles[key] = find_profile(row["model"], row["batch_size"], args.explicit_profiles, args.profiles)
    if skipped:
        print(f"{PROG}: {skipped} row(s) without a lab bandwidth and latency left out", file=sys.stderr)
    work = args.keep or tempfile.mkdtemp(prefix="ddlsim-validate-")
    predictions = []
    try:
        costs = None
        if args.framework:
            def profile_of(model, batch):
                return profiles.get((model, batch)) or find_profile(model, batch, args.explicit_profiles, args.profiles)
            costs = framework_costs(args.framework, ddlsim, profile_of, work)
            print("framework compute per iteration (one-rank DDP measured - ddlsim's one worker):")
            for (model, batch, cap, overlap), cost in sorted(costs.items()):
                print(f"  {model} batch {batch} cap {cap:g} MiB overlap {str(overlap).lower()}: {cost * 1e3:+.2f} ms"
                      + ("  (negative: none charged)" if cost < 0 else ""))
        for index, row in enumerate(rows):
            for network in args.networks:
                name = f"ddp_row{index}_{network}"
                scenario = scenario_for(row, network_object(network, calibration),
                                        profiles[(row["model"], row["batch_size"])], name)
                sets = args.set + args.per_model_sets.get(row["model"], [])
                if costs is not None:
                    key = (row["model"], row["batch_size"], row["bucket_cap_mb"], row["overlap"])
                    if key not in costs:
                        raise UsageError(f"--framework: no one-rank row for {row['model']} batch {row['batch_size']} "
                                         f"cap {row['bucket_cap_mb']:g} overlap {str(row['overlap']).lower()}")
                    sets = sets + [f"workload.framework_overhead_s={max(0.0, costs[key])!r}"]
                predicted = run_ddlsim(ddlsim, scenario, os.path.join(work, name), sets)
                p = dict(row, network=network, predicted_s=predicted,
                         error=relative_error(predicted, row["measured_s"]))
                p["overlap"] = "true" if row["overlap"] else "false"
                p["bucket_cap_mb"] = f"{row['bucket_cap_mb']:g}"
                predictions.append(p)
                if not args.quiet:
                    print(f"{PROG}: row {index} {row['model']} N={row['ranks']} cap {row['bucket_cap_mb']:g} "
                          f"overlap {p['overlap']} {row['bandwidth_bps'] / 1e6:g} Mbit/s "
                          f"{row['latency_s'] * 1e3:g} ms, {network}: measured {row['measured_s'] * 1e3:.2f} ms, "
                          f"predicted {predicted * 1e3:.2f} ms ({100 * p['error']:+.1f} %)", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{len(rows)} measured rows from {args.csv}; error = predicted / measured - 1 "
          "(negative: predicted too fast)")
    print_tables(predictions, args.networks)
    if args.out:
        write_predictions(args.out, predictions)
    if args.plot:
        plot(args.plot, predictions, args.networks)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
