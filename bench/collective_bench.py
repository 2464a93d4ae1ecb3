#!/usr/bin/env python3
"""Benchmark: simulating a ring all-reduce of 1 GB at N = 64 .. 4096 ranks.

Runs `ddlsim collectives --algorithms ring` once per (N, granularity) in its own
process and prints one row each: wall time, SimGrid flows simulated, flows per
wall second, and peak resident memory (from the child's rusage). Timing goals
(docs/performance.md): pipelined N=4096 under 2 s, stepwise N=1024 under 10 s.

usage: bench/collective_bench.py [--ddlsim build/ddlsim] [--sizes 64,256,1024,4096]
                                 [--max-stepwise 4096] [--repeat 3] [--solver auto|simgrid]
"""
import argparse
import csv
import io
import statistics

from measure import run_measured


def run_once(ddlsim, n, granularity, solver):
    cmd = [ddlsim, "collectives", "--csv", "-n", str(n), "-m", "1GB", "-b", "25Gbps", "-l", "1us",
           "--servers", "0", "--algorithms", "ring", "--granularity", granularity, "--solver", solver]
    wall, rss, text = run_measured(cmd)
    row = next(csv.DictReader(io.StringIO(text)))
    return wall, int(row["flows"]), float(row["simulated_time_s"]), rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddlsim", default="build/ddlsim")
    ap.add_argument("--sizes", default="64,256,1024,4096")
    ap.add_argument("--max-stepwise", type=int, default=4096, help="largest N run stepwise")
    ap.add_argument("--repeat", type=int, default=3, help="runs per point; the median wall time is shown")
    ap.add_argument("--solver", default="auto", choices=["auto", "simgrid"],
                    help="ddlsim collectives --solver: auto replays the uncontended ring without SimGrid's actors")
    args = ap.parse_args()
    print(f"ring all-reduce, 1 GB per rank, star, 25 Gbps / 1 us links, ideal network model, --solver {args.solver}")
    print(f"{'N':>6} {'granularity':>11} {'wall_s':>9} {'flows':>11} {'flows_per_s':>12} {'peak_rss_MiB':>13} "
          f"{'simulated_s':>12}")
    for n in [int(x) for x in args.sizes.split(",")]:
        for granularity in ("pipelined", "stepwise"):
            if granularity == "stepwise" and n > args.max_stepwise:
                print(f"{n:>6} {granularity:>11} {'skipped (--max-stepwise)':>48}")
                continue
            runs = [run_once(args.ddlsim, n, granularity, args.solver) for _ in range(args.repeat if n <= 1024 else 1)]
            wall = statistics.median(r[0] for r in runs)
            flows, sim, rss = runs[0][1], runs[0][2], max(r[3] for r in runs)
            print(f"{n:>6} {granularity:>11} {wall:>9.3f} {flows:>11} {flows / wall:>12.0f} {rss:>13.1f} "
                  f"{sim:>12.6f}", flush=True)


if __name__ == "__main__":
    main()
