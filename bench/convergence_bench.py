#!/usr/bin/env python3
"""Benchmark: the cost of co-simulated training at hundreds of workers (docs/performance.md,
"Co-simulated training").

Runs `ddlsim run` on the bundled co-simulated scenarios scenarios/convergence_fashion_<sync>.json
(softmax regression on Fashion-MNIST, batch 32 per worker, 100 Mbit/s star, flow fidelity) for
--iterations iterations, evaluated every 10, for each sync model of --syncs (bsp: one union-batch
step per iteration; local_sgd: H = 8, N copies; gossip: D-PSGD on a ring, N copies mixed live) at every worker count of --workers, one process per
run, and prints a Markdown table: wall time, peak RSS, the work estimate's wall time and its
co-simulated training term (`ddlsim run --estimate`), the estimate's ratio to the measured wall
time, the simulated time, and the outcome (ok, refused, failed or "> T s" when killed at --timeout).

Goal (issue "Time to accuracy"): co-simulation of hundreds of workers on a small model runs in
minutes on the 2-core development machine.

usage: bench/convergence_bench.py [--ddlsim build/ddlsim] [--workers 8,64,256,512]
                                  [--syncs bsp,local_sgd,gossip] [--iterations 100] [--timeout 900]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from measure import run_status

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SCENARIOS = {sync: os.path.join(ROOT, "scenarios", f"convergence_fashion_{sync}.json")
             for sync in ("bsp", "local_sgd", "gossip")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"))
    ap.add_argument("--workers", default="8,64,256,512")
    ap.add_argument("--syncs", default="bsp,local_sgd,gossip")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    print("| sync | workers | wall (s) | peak RSS (MiB) | estimate (s) | of it co-simulated (s) | estimate / wall | "
          "simulated (s) | outcome |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for sync in args.syncs.split(","):
            for n in [int(x) for x in args.workers.split(",")]:
                if sync not in SCENARIOS:
                    raise SystemExit(f"--syncs: unknown {sync!r} (valid: {', '.join(SCENARIOS)})")
                scenario = SCENARIOS[sync]
                extra = ["--set", f"platform.workers={n}", "--set", f"workload.iterations={args.iterations}",
                                       "--set", "output.timeline=false", "--force"]
                est = subprocess.run([args.ddlsim, "run", scenario, "--estimate", *extra], capture_output=True, text=True)
                wall_est = term = None
                if est.returncode == 0:
                    e = json.loads(est.stdout)
                    wall_est = e["wall_s"]
                    term = next((t["wall_s"] for t in e["terms"] if t["what"] == "co-simulated training"), None)
                out = os.path.join(tmp, f"{sync}-{n}")
                code, wall, rss, _, err = run_status([args.ddlsim, "run", scenario, *extra, "--out", out, "-q",
                                                      "--progress", "none"], args.timeout)
                simulated = outcome = None
                if code is None:
                    outcome = f"> {args.timeout:g} s"
                elif code == 0:
                    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
                        simulated = json.load(f)["makespan_s"]
                    outcome = "ok"
                else:
                    outcome = ("refused: " if code == 2 else f"failed ({code}): ") + (err.strip().splitlines() or [""])[-1]
                cell = lambda v, f="{:.3g}": "—" if v is None else f.format(v)  # noqa: E731
                print(f"| {sync} | {n} | {wall:.2f} | {rss:.0f} | {cell(wall_est)} | {cell(term)} | "
                      f"{cell(wall_est / wall if wall_est else None, '{:.2f}')} | {cell(simulated)} | {outcome} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
