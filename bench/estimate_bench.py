#!/usr/bin/env python3
"""Benchmark: the work estimate (scenario/work_estimate.cpp) against measured runs.

For each case, `ddlsim run --estimate` gives the estimated wall time and memory; the run itself
(--force, --progress none, no timeline) is then measured, one process per run, median wall time
of --repeat runs and the peak RSS. The cases are small (seconds) but each stresses one term of the
model: trace replay, analytic collectives, collective flows, parameter-server flows, point-to-point
messages, hosts and actors, links. The table is the model's calibration (docs/reliability.md,
"Work estimate"): run it after changing the engine or the model's constants.

usage: bench/estimate_bench.py [--ddlsim build/ddlsim] [--repeat 3] [--cases NAME,...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from measure import run_measured

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT = os.path.join(ROOT, "scenarios", "default.json")
RESNET = os.path.join(ROOT, "scenarios", "resnet50_bsp_ring_25gbps.json")

ANALYTIC = ["network.fidelity=analytic"]
PS = ['training={"sync": {"name": "bsp", "params": {"aggregation": "parameter_server"}}}']
# name -> (scenario, --set overrides)
CASES = {
    "iterations": (DEFAULT, ANALYTIC + ["workload.iterations=20000"]),
    "layers": (DEFAULT, ANALYTIC + ["workload.synthetic.layers=20000", "workload.iterations=20"]),
    "resnet_analytic": (RESNET, ANALYTIC + ["platform.workers=256", "workload.iterations=50"]),
    "ring_stepwise": (DEFAULT, ["platform.workers=64", "workload.iterations=3"]),
    "ring_pipelined": (RESNET, ["platform.workers=256", "workload.iterations=10",
                                "network.collective_granularity=pipelined"]),
    "tree_segments": (DEFAULT, ["training.collective.name=tree", "training.collective.params.segments=4096",
                                "workload.iterations=2"]),
    "parameter_servers": (DEFAULT, PS + ["platform.workers=256", "platform.parameter_servers=4",
                                         "workload.iterations=2"]),
    "asp": (DEFAULT, ['training={"sync": {"name": "asp"}}', "platform.workers=256", "platform.parameter_servers=4",
                      "workload.iterations=2"]),
    "gossip": (DEFAULT, ['training={"sync": {"name": "gossip", "params": {"graph": "ring"}}}',
                         "platform.workers=256", "workload.iterations=20"]),
    "hosts": (DEFAULT, ANALYTIC + ["platform.workers=4000", "workload.iterations=1"]),
    "links": (DEFAULT, ANALYTIC + ["platform.topology=full", "platform.workers=600", "workload.iterations=1"]),
    "timeline": (DEFAULT, ANALYTIC + ["workload.synthetic.layers=20000", "workload.iterations=3",
                                      "output.timeline=true"]),
}


def command(ddlsim, scenario, overrides, out):
    cmd = [ddlsim, "run", scenario, "--quiet", "--out", out, "--set", "output.timeline=false"]
    for o in overrides:
        cmd += ["--set", o]
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddlsim", default="build/ddlsim")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of: {', '.join(CASES)}")
    args = ap.parse_args()
    names = args.cases.split(",")
    for name in names:
        if name not in CASES:
            ap.error(f"--cases: unknown \"{name}\"; valid: {', '.join(CASES)}")
    print(f"{'case':>18} {'events':>10} {'est_wall_s':>10} {'wall_s':>8} {'ratio':>6} {'est_MiB':>8} "
          f"{'rss_MiB':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            scenario, overrides = CASES[name]
            out = os.path.join(tmp, name)
            cmd = command(args.ddlsim, scenario, overrides, out)
            est = json.loads(subprocess.run(cmd + ["--estimate"], check=True, capture_output=True, text=True).stdout)
            runs = [run_measured(cmd + ["--force", "--progress", "none"]) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs)
            est_mib = est["memory_bytes"] / 2**20
            print(f"{name:>18} {est['events']:>10.3g} {est['wall_s']:>10.3f} {wall:>8.3f} {est['wall_s'] / wall:>6.2f} "
                  f"{est_mib:>8.1f} {rss:>8.1f} {est_mib / rss:>6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
