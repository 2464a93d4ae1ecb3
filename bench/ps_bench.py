#!/usr/bin/env python3
"""Benchmark: parameter servers at scale, on the fluid links and on SimGrid's LMM (docs/performance.md).

Rows (one process per run, wall time and peak RSS of the child; one run each unless --repeat):
  * ssp (bound 3) on 4 parameter servers, ResNet-50, 25 MB buckets overlapped with backward, one 25 Gbps
    star (scenarios/resnet50_bsp_ring_25gbps.json with ssp), --iterations iterations, at every --workers
    count, network.push_pull_solver "auto" (the fluid links, engine/fluid_ps.hpp);
  * the same with "simgrid" (SimGrid's LMM) at --lmm-workers, --lmm-iterations iterations: its wall time
    grows as N^2, so it runs fewer, and the table gives the time per iteration of both;
  * VGG-16, bsp on 4 parameter servers (scenarios/vgg16_parameter_server.json), --vgg-workers workers,
    5 iterations, with both solvers.

Goals (issue "flow fidelity at scale", this 2-core machine): ssp N = 1,024, 100 iterations <= 30 s and
wall time linear in N; VGG-16 N = 1,024, 5 iterations <= 2 s.

usage: bench/ps_bench.py [--ddlsim build/ddlsim] [--workers 256,1024,4096] [--iterations 100]
                         [--lmm-workers 256,1024] [--lmm-iterations 10] [--vgg-workers 1024] [--repeat 1]
"""
import argparse
import json
import os
import statistics
import tempfile

from measure import run_measured

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RESNET = os.path.join(ROOT, "scenarios", "resnet50_bsp_ring_25gbps.json")
VGG = os.path.join(ROOT, "scenarios", "vgg16_parameter_server.json")
SSP = ['platform.parameter_servers=4', 'training={"sync":{"name":"ssp","params":{"staleness_bound":3}},"bucketing":{"bucket_bytes":"25MB","overlap":true}}']


def counts(text):
    return [int(x) for x in text.split(",") if x.strip()] if text else []


def one(ddlsim, scenario, extra, workers, iterations, solver, repeat, tmp):
    out = os.path.join(tmp, "out")
    cmd = [ddlsim, "run", scenario, "--quiet", "--force", "--out", out, "--set", f"platform.workers={workers}",
           "--set", f"workload.iterations={iterations}", "--set", "output.timeline=false",
           "--set", f"network.push_pull_solver={solver}"]
    for s in extra:
        cmd += ["--set", s]
    runs = [run_measured(cmd) for _ in range(repeat)]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return {"wall_s": statistics.median(r[0] for r in runs), "rss_mib": statistics.median(r[1] for r in runs),
            "iteration_s": summary["iteration_time_s"], "solver": summary["push_pull_solver"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"))
    ap.add_argument("--workers", default="256,1024,4096")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--lmm-workers", default="256,1024")
    ap.add_argument("--lmm-iterations", type=int, default=10)
    ap.add_argument("--vgg-workers", default="1024")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print("| model | workers | solver | iterations | wall (s) | wall per iteration (s) | peak RSS (MiB) | simulated iteration (s) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [("ResNet-50 ssp, 4 servers", RESNET, SSP, n, args.iterations, "auto") for n in counts(args.workers)]
        rows += [("ResNet-50 ssp, 4 servers", RESNET, SSP, n, args.lmm_iterations, "simgrid") for n in counts(args.lmm_workers)]
        for n in counts(args.vgg_workers):
            rows += [("VGG-16 bsp, 4 servers", VGG, [], n, 5, s) for s in ("auto", "simgrid")]
        for name, scenario, extra, n, iterations, solver in rows:
            r = one(args.ddlsim, scenario, extra, n, iterations, solver, args.repeat, tmp)
            print(f"| {name} | {n:,} | {r['solver']} | {iterations} | {r['wall_s']:.2f} | {r['wall_s'] / iterations:.3f} "
                  f"| {r['rss_mib']:.0f} | {r['iteration_s']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
