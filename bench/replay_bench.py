#!/usr/bin/env python3
"""Benchmark: trace replay of ResNet-50, BSP + ring all-reduce, 25 MB buckets, 100 iterations.

Runs `ddlsim run scenarios/resnet50_bsp_ring_25gbps.json` at N workers for each fidelity
(flow/pipelined, flow/stepwise up to --max-stepwise, analytic), one process per run,
and prints wall time (median of --repeat runs), peak RSS and the simulated iteration time.
Goals (docs/performance.md): N = 1024, flow pipelined under 10 s and 2 GB; analytic under 1 s.

usage: bench/replay_bench.py [--ddlsim build/ddlsim] [--workers 64,256,1024] [--iterations 100]
"""
import argparse
import json
import os
import statistics
import tempfile

from measure import run_measured

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "resnet50_bsp_ring_25gbps.json")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddlsim", default="build/ddlsim")
    ap.add_argument("--workers", default="64,256,1024")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--max-stepwise", type=int, default=64, help="largest N run with stepwise collectives")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"ResNet-50 BSP ring, 25 MB buckets, {args.iterations} iterations, star 25 Gbps / 2 us, ideal network model")
    print(f"{'workers':>8} {'fidelity':>19} {'wall_s':>8} {'peak_rss_MiB':>13} {'iteration_time_s':>17} {'speedup':>9}")
    modes = [("flow", "pipelined"), ("flow", "stepwise"), ("analytic", "pipelined")]
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.workers.split(",")]:
            for fidelity, granularity in modes:
                label = fidelity if fidelity == "analytic" else f"{fidelity}/{granularity}"
                if granularity == "stepwise" and n > args.max_stepwise:
                    continue
                out = os.path.join(tmp, f"{n}-{fidelity}-{granularity}")
                cmd = [args.ddlsim, "run", SCENARIO, "--quiet", "--out", out, "--set", f"platform.workers={n}",
                       "--set", f"workload.iterations={args.iterations}", "--set", f"network.fidelity={fidelity}",
                       "--set", f"network.collective_granularity={granularity}", "--set", "output.timeline=false"]
                runs = [run_measured(cmd) for _ in range(args.repeat)]
                with open(os.path.join(out, "summary.json")) as f:
                    summary = json.load(f)
                wall = statistics.median(r[0] for r in runs)
                rss = max(r[1] for r in runs)
                print(f"{n:>8} {label:>19} {wall:>8.3f} {rss:>13.1f} {summary['iteration_time_s']:>17.6f} "
                      f"{summary['speedup']:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
