#!/usr/bin/env python3
"""What-if for compressed gradient traffic: compression ratio against bandwidth (or latency), fastest marked.

    analysis/compression_whatif.py --workers 16 --gradient-bytes 102.2MB --bandwidths 1Gbps,10Gbps,100Gbps
    analysis/compression_whatif.py --workers 64 --gradient-bytes 553.4MB --latencies 1us,10us,100us --bandwidth 10Gbps

For a model of --gradient-bytes of fp32 gradients (n = bytes / 4 elements) on --workers N behind one switch
(ddlsim collectives' star, every link the given bandwidth and latency), each cell times seed 002's three ways
to move top-k gradients at compression ratio c, k = ceil(c n), M_c = 4 k bytes (one worker's values):

  artopk_ring   AR-Topk: the root's indices broadcast, the values all-reduced over a ring (M_c);
  artopk_tree   the same with a binomial-tree reduce and broadcast (M_c);
  allgather     Bruck's all-gather of every worker's values and indices (2 N M_c in all);

by running `ddlsim collectives` (flow fidelity, pipelined, no per-call cost by default), and marks the fastest
with `*`. The row "dense ring" is the uncompressed ring all-reduce of the whole gradient (4 n bytes), what
compression has to beat before its encode and decode costs (not included here: see docs/compression_costs.md).
A cell reads "ring 3.97*": the fastest option and its time in ms; with --all, every option. Where seed 002's
alpha-beta inequalities (models/artopk_choice.hpp; alpha = the path latency, two links, beta = 1 / bandwidth)
pick another option than the simulation, the cell says "(seed: tree)". Exactly one of --bandwidths and
--latencies varies; the other is --bandwidth or --latency. Output: a Markdown table (default) or --csv (one row
per cell and option). Errors: one line on stderr, exit code 2.
"""

import argparse
import csv
import io
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import units  # noqa: E402  (analysis/units.py)

PROG = "compression_whatif.py"
SEED_RATIOS = "0.1,0.033,0.011,0.004,0.001"
OPTIONS = ["artopk_ring", "artopk_tree", "allgather"]
SHORT = {"artopk_ring": "ring", "artopk_tree": "tree", "allgather": "AG", "dense": "dense"}


class WhatIfError(Exception):
    pass


def seed_pick(n_workers, alpha_s, beta_s_per_byte, mc):
    """Seed 002's choice among AR-Topk ring, tree and all-gather: the smallest of its closed forms."""
    L = math.ceil(math.log2(n_workers)) if n_workers > 1 else 0
    costs = {
        "artopk_ring": alpha_s * (2 * (n_workers - 1) + L) + mc * beta_s_per_byte * (2 * (n_workers - 1) / n_workers + L),
        "artopk_tree": 3 * alpha_s * L + 3 * mc * beta_s_per_byte * L,
        "allgather": alpha_s * L + 2 * (n_workers - 1) * mc * beta_s_per_byte,
    }
    return min(OPTIONS, key=lambda o: (costs[o], OPTIONS.index(o)))


def collectives(ddlsim, workers, nbytes, bandwidth, latency, algorithms, fidelity, call_cost):
    cmd = [ddlsim, "collectives", "-n", str(workers), "-m", str(int(round(nbytes))), "-b", bandwidth, "-l", latency,
           "--algorithms", ",".join(algorithms), "--fidelity", fidelity, "--call-cost", call_cost, "--csv"]
    if fidelity == "flow":
        cmd += ["--granularity", "pipelined"]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    except OSError as e:
        raise WhatIfError(f"cannot run {ddlsim!r}: {e.strerror}")
    if proc.returncode != 0:
        raise WhatIfError(f"{' '.join(cmd)}: {proc.stderr.strip() or 'exit code %d' % proc.returncode}")
    column = "simulated_time_s" if fidelity == "flow" else "analytic_time_s"
    return {r["algorithm"]: float(r[column]) for r in csv.DictReader(io.StringIO(proc.stdout))}


def whatif(args):
    n = args.gradient_bytes / 4
    varying = "bandwidth" if args.bandwidths else "latency"
    values = args.bandwidths or args.latencies
    cells = []
    for value in values:
        bw = value if varying == "bandwidth" else args.bandwidth
        lat = value if varying == "latency" else args.latency
        alpha = 2 * units.parse_time_s(lat)
        beta = 1 / units.parse_bandwidth_Bps(bw)
        dense = collectives(args.ddlsim, args.workers, 4 * n, bw, lat, ["ring"], args.fidelity, args.call_cost)["ring"]
        cells.append({"value": value, "ratio": None, "times": {"dense": dense}, "fastest": "dense", "seed": None})
        for c in args.ratios:
            mc = 4 * max(1, math.ceil(c * n - 1e-9))
            t = collectives(args.ddlsim, args.workers, mc, bw, lat, ["artopk_ring", "artopk_tree"], args.fidelity,
                            args.call_cost)
            t["allgather"] = collectives(args.ddlsim, args.workers, 2 * args.workers * mc, bw, lat,
                                         ["bruck_allgather"], args.fidelity, args.call_cost)["bruck_allgather"]
            fastest = min(OPTIONS, key=lambda o: (t[o], OPTIONS.index(o)))
            cells.append({"value": value, "ratio": c, "times": t, "fastest": fastest,
                          "seed": seed_pick(args.workers, alpha, beta, mc), "mc": mc})
    return varying, values, cells


def markdown(args, varying, values, cells):
    fixed = f"latency {args.latency}" if varying == "bandwidth" else f"bandwidth {args.bandwidth}"
    out = [f"{args.workers} workers on a star, {args.gradient_bytes / 1e6:.4g} MB "
           f"of fp32 gradients, {fixed}, {args.fidelity} fidelity; ms per call, * fastest of ring, tree, AG", ""]
    out.append("| ratio | " + " | ".join(f"{varying} {v}" for v in values) + " |")
    out.append("|---|" + "---|" * len(values))
    rows = [None] + args.ratios
    for c in rows:
        line = ["dense ring" if c is None else f"{c:g}"]
        for v in values:
            cell = next(x for x in cells if x["value"] == v and x["ratio"] == c)
            t = cell["times"]
            if c is None:
                line.append(f"{1e3 * t['dense']:.3g}")
                continue
            if args.all:
                text = ", ".join(f"{SHORT[o]} {1e3 * t[o]:.3g}{'*' if o == cell['fastest'] else ''}" for o in OPTIONS)
            else:
                text = f"{SHORT[cell['fastest']]} {1e3 * t[cell['fastest']]:.3g}*"
            if cell["seed"] != cell["fastest"]:
                text += f" (seed: {SHORT[cell['seed']]})"
            line.append(text)
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out) + "\n"


def to_csv(varying, cells):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([varying, "ratio", "option", "time_s", "fastest", "seed_pick"])
    for cell in cells:
        for option, t in cell["times"].items():
            w.writerow([cell["value"], "" if cell["ratio"] is None else cell["ratio"], option, f"{t:.9g}",
                        1 if option == cell["fastest"] else 0, cell["seed"] or ""])
    return buf.getvalue()


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--ddlsim", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "ddlsim"))
    p.add_argument("--workers", "-n", type=int, default=16)
    p.add_argument("--gradient-bytes", default="102.2MB", help="fp32 gradient bytes of the model (ResNet-50: 102.2MB)")
    p.add_argument("--ratios", default=SEED_RATIOS, help=f"compression ratios k/n, comma separated (default {SEED_RATIOS})")
    p.add_argument("--bandwidths", help="bandwidths to compare, comma separated, e.g. 1Gbps,10Gbps,100Gbps")
    p.add_argument("--latencies", help="link latencies to compare, comma separated, e.g. 1us,10us,100us")
    p.add_argument("--bandwidth", default="10Gbps", help="the bandwidth when --latencies varies (default 10Gbps)")
    p.add_argument("--latency", default="5us", help="the link latency when --bandwidths varies (default 5us)")
    p.add_argument("--fidelity", choices=["flow", "analytic"], default="flow")
    p.add_argument("--call-cost", default="0s", help="fixed cost of each collective call (default 0s)")
    p.add_argument("--all", action="store_true", help="every option's time in each cell, not only the fastest")
    p.add_argument("--csv", action="store_true", help="CSV: one row per cell and option")
    args = p.parse_args(argv)
    if (args.bandwidths is None) == (args.latencies is None):
        p.error("give exactly one of --bandwidths and --latencies")
    if args.workers < 2:
        p.error("--workers must be at least 2")
    try:
        args.gradient_bytes = units.parse_bytes(args.gradient_bytes)
        args.ratios = [float(r) for r in args.ratios.split(",")]
        for b in (args.bandwidths.split(",") if args.bandwidths else [args.bandwidth]):
            units.parse_bandwidth_Bps(b)
        for lat in (args.latencies.split(",") if args.latencies else [args.latency]):
            units.parse_time_s(lat)
    except ValueError as e:
        p.error(str(e))
    if any(not 0 < r <= 1 for r in args.ratios):
        p.error("--ratios: every ratio must be in (0, 1]")
    if args.gradient_bytes <= 0:
        p.error("--gradient-bytes must be above 0")
    args.bandwidths = args.bandwidths.split(",") if args.bandwidths else None
    args.latencies = args.latencies.split(",") if args.latencies else None
    return args


def main(argv):
    args = parse_args(argv)
    try:
        varying, values, cells = whatif(args)
    except WhatIfError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(to_csv(varying, cells) if args.csv else markdown(args, varying, values, cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
