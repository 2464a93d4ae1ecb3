#!/usr/bin/env python3
"""Benchmark: peak memory of long runs (soak), 10^4 to 10^6 simulated iterations.

Runs a small scenario (2 workers on a 25 Gbps star, 4 synthetic layers, BSP + ring all-reduce at
analytic fidelity) for each --iterations count, one process per run, and prints the median wall
time and median peak RSS of --repeat runs, and the RSS growth over the first count. With
`--outputs off` (the default) no per-iteration output is written (output.iterations_csv and
output.timeline false): memory must not grow with the iterations. `--outputs csv` streams
iterations.csv to disk as the run goes (timeline off). Results: docs/performance.md, "Soak";
what keeps memory flat: docs/reliability.md, "Soak".

usage: bench/soak_bench.py [--ddlsim build/ddlsim] [--iterations 10000,100000,1000000] [--repeat 3]
                           [--outputs off|csv]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from measure import run_measured

SCENARIO = {
    "name": "soak",
    "description": "2 workers, 4 layers, analytic: a small scenario run for many iterations",
    "platform": {"topology": "star", "workers": 2, "link": {"bandwidth": "25Gbps", "latency": "1us"}},
    "network": {"fidelity": "analytic"},
    "workload": {"synthetic": {"layers": 4, "forward_s": "1ms", "backward_s": "2ms", "grad_bytes": "1MB",
                               "optimizer_s": "1ms"},
                 "batch_size": 32, "iterations": 10},
    "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}},
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddlsim", default="build/ddlsim")
    ap.add_argument("--iterations", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--outputs", choices=["off", "csv"], default="off",
                    help="off: no per-iteration outputs; csv: iterations.csv streamed to disk")
    args = ap.parse_args()
    counts = [int(x) for x in args.iterations.split(",")]
    print(f"soak: 2 workers, 4 layers, bsp + ring, analytic fidelity; per-iteration outputs {args.outputs}; "
          f"median of {args.repeat} runs")
    print(f"{'iterations':>11} {'wall_s':>8} {'us_per_iteration':>17} {'peak_rss_MiB':>13} {'rss_growth_MiB':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "soak.json")
        with open(scenario, "w") as f:
            json.dump(SCENARIO, f)
        first = None
        for n in counts:
            cmd = [args.ddlsim, "run", scenario, "--quiet", "--out", os.path.join(tmp, "out"),
                   "--set", f"workload.iterations={n}", "--set", "output.timeline=false"]
            if args.outputs == "off":
                cmd += ["--set", "output.iterations_csv=false"]
            runs = [run_measured(cmd) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs)
            first = rss if first is None else first
            print(f"{n:>11} {wall:>8.2f} {wall / n * 1e6:>17.2f} {rss:>13.1f} {rss - first:>15.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
