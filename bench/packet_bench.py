#!/usr/bin/env python3
"""Benchmark: packet fidelity (ns-3) against flow fidelity, wall time and simulated time (docs/performance.md).

Rows (one process per run; wall time and peak RSS of the child; the median of --repeat runs):
  * ring: bsp, one ring all-reduce of a 100 MB model in one bucket, --ring-workers workers on one 10 Gbps
    star (1 us links), one iteration, no compute;
  * ps: bsp on one parameter server, the same model, --ps-workers workers pushing to it at once (incast
    at the server's link) and pulling back, one iteration;
each at flow fidelity and at packet fidelity with 1,448-byte (MTU 1500) and 8,948-byte (MTU 9000)
segments, with the work estimate's prediction of the wall time beside.

Goal (issue "packet fidelity", this 2-core machine): the 16-worker ring of 100 MB in under a minute.

usage: bench/packet_bench.py [--ddlsim build/ddlsim] [--ring-workers 4,16] [--ps-workers 8]
                             [--segments 1448,8948] [--repeat 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from measure import run_measured

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def scenario(workers, servers):
    training = {"sync": {"name": "bsp", "params": {"aggregation": "parameter_server"}}} if servers else \
        {"sync": {"name": "bsp"}, "collective": {"name": "ring"}}
    training["bucketing"] = {"bucket_bytes": "100MB"}
    return {
        "name": "packet_bench",
        "seed": 1,
        "platform": {"topology": "star", "workers": workers, "parameter_servers": servers,
                     "link": {"bandwidth": "10Gbps", "latency": "1us"}},
        "network": {"fidelity": "flow"},
        "workload": {"synthetic": {"layers": 1, "forward_s": "0s", "backward_s": "0s", "grad_bytes": "100MB"},
                     "iterations": 1},
        "training": training,
        "output": {"dir": "out"},
    }


def one(ddlsim, path, fidelity, segment, repeat, tmp):
    out = os.path.join(tmp, "out")
    sets = ["--set", f"network.fidelity={fidelity}", "--set", "output.timeline=false"]
    if fidelity == "packet":
        sets += ["--set", f"network.packet.segment_bytes={segment}"]
    estimate = subprocess.run([ddlsim, "run", path, "--estimate"] + sets, stdout=subprocess.PIPE, text=True, check=True)
    estimated = f"{json.loads(estimate.stdout)['wall_s']:.2f}"
    cmd = [ddlsim, "run", path, "--quiet", "--force", "--out", out] + sets
    runs = [run_measured(cmd) for _ in range(repeat)]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return {"wall_s": statistics.median(r[0] for r in runs), "rss_mib": statistics.median(r[1] for r in runs),
            "iteration_s": summary["iteration_time_s"], "estimated": estimated}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"))
    ap.add_argument("--ring-workers", default="4,16")
    ap.add_argument("--ps-workers", default="8")
    ap.add_argument("--segments", default="1448,8948")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    counts = lambda text: [int(x) for x in text.split(",") if x.strip()]
    print("| case | workers | fidelity | segment (B) | wall (s) | estimated | peak RSS (MiB) | simulated iteration (s) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("ring, 100 MB", n, 0) for n in counts(args.ring_workers)]
        cases += [("1 parameter server, 100 MB", n, 1) for n in counts(args.ps_workers)]
        for name, workers, servers in cases:
            path = os.path.join(tmp, "scenario.json")
            with open(path, "w") as f:
                json.dump(scenario(workers, servers), f)
            runs = [("flow", 0)] + [("packet", s) for s in counts(args.segments)]
            for fidelity, segment in runs:
                r = one(args.ddlsim, path, fidelity, segment, args.repeat, tmp)
                print(f"| {name} | {workers} | {fidelity} | {segment or '—'} | {r['wall_s']:.2f} | {r['estimated'] or '?'} "
                      f"| {r['rss_mib']:.0f} | {r['iteration_s']:.6f} |", flush=True)


if __name__ == "__main__":
    main()
