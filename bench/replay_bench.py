#!/usr/bin/env python3
"""Benchmark: trace replay of ResNet-50, 25 MB buckets, 100 iterations, per sync model.

Runs `ddlsim run scenarios/resnet50_bsp_ring_25gbps.json` at N workers, one process per run,
and prints wall time (median of --repeat runs), peak RSS and the simulated iteration time.
bsp (ring all-reduce) runs at every fidelity (flow/pipelined, flow/stepwise up to
--max-stepwise, analytic); the other sync models at flow/pipelined, the fidelity their goal
is stated for: local_sgd (H = 8, ring), ssp (bound 3, --servers parameter servers), gossip
(ring graph, synchronous) and gossip_async (ring graph, asynchronous).
Goals (docs/performance.md): N = 1024, flow pipelined under 10 s and 2 GB; analytic under 1 s.

usage: bench/replay_bench.py [--ddlsim build/ddlsim] [--workers 64,256,1024] [--iterations 100]
                             [--sync bsp,local_sgd,ssp,gossip,gossip_async] [--servers 4]
"""
import argparse
import json
import os
import statistics
import tempfile

from measure import run_measured

SCENARIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "resnet50_bsp_ring_25gbps.json")

# The training section of each sync model's run (servers: from --servers when the model needs them).
SYNC = {
    "bsp": ({"sync": {"name": "bsp"}, "collective": {"name": "ring"}}, False),
    "local_sgd": ({"sync": {"name": "local_sgd", "params": {"period_iterations": 8}}, "collective": {"name": "ring"}}, False),
    "ssp": ({"sync": {"name": "ssp", "params": {"staleness_bound": 3}}}, True),
    "asp": ({"sync": {"name": "asp"}}, True),
    "gossip": ({"sync": {"name": "gossip", "params": {"graph": "ring"}}}, False),
    "gossip_async": ({"sync": {"name": "gossip", "params": {"graph": "ring", "variant": "asynchronous"}}}, False),
}


def scenario_for(sync, servers, tmp):
    """The bundled scenario with `sync`'s training section, written to a file in `tmp`."""
    with open(SCENARIO) as f:
        doc = json.load(f)
    training, needs_servers = SYNC[sync]
    doc["training"] = dict(training, bucketing=doc["training"].get("bucketing", {}))
    doc["platform"]["parameter_servers"] = servers if needs_servers else 0
    doc["workload"]["profile"] = os.path.join(os.path.dirname(SCENARIO), doc["workload"]["profile"])
    path = os.path.join(tmp, f"{sync}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddlsim", default="build/ddlsim")
    ap.add_argument("--workers", default="64,256,1024")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--max-stepwise", type=int, default=64, help="largest N run with stepwise collectives")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sync", default="bsp", help=f"comma-separated, of: {', '.join(SYNC)}")
    ap.add_argument("--servers", type=int, default=4, help="parameter servers for ssp and asp")
    args = ap.parse_args()
    for sync in args.sync.split(","):
        if sync not in SYNC:
            ap.error(f"--sync: unknown \"{sync}\"; valid: {', '.join(SYNC)}")
    print(f"ResNet-50, 25 MB buckets, {args.iterations} iterations, star 25 Gbps / 2 us, ideal network model")
    print(f"{'sync':>13} {'workers':>8} {'fidelity':>19} {'wall_s':>8} {'peak_rss_MiB':>13} {'iteration_time_s':>17} "
          f"{'speedup':>9}")
    all_modes = [("flow", "pipelined"), ("flow", "stepwise"), ("analytic", "pipelined")]
    with tempfile.TemporaryDirectory() as tmp:
        for sync in args.sync.split(","):
            scenario = scenario_for(sync, args.servers, tmp)
            modes = all_modes if sync == "bsp" else all_modes[:1]
            for n in [int(x) for x in args.workers.split(",")]:
                for fidelity, granularity in modes:
                    label = fidelity if fidelity == "analytic" else f"{fidelity}/{granularity}"
                    if granularity == "stepwise" and n > args.max_stepwise:
                        continue
                    out = os.path.join(tmp, f"{sync}-{n}-{fidelity}-{granularity}")
                    cmd = [args.ddlsim, "run", scenario, "--quiet", "--out", out, "--set", f"platform.workers={n}",
                           "--set", f"workload.iterations={args.iterations}", "--set", f"network.fidelity={fidelity}",
                           "--set", f"network.collective_granularity={granularity}", "--set", "output.timeline=false"]
                    runs = [run_measured(cmd) for _ in range(args.repeat)]
                    with open(os.path.join(out, "summary.json")) as f:
                        summary = json.load(f)
                    wall = statistics.median(r[0] for r in runs)
                    rss = max(r[1] for r in runs)
                    print(f"{sync:>13} {n:>8} {label:>19} {wall:>8.3f} {rss:>13.1f} {summary['iteration_time_s']:>17.6f} "
                          f"{summary['speedup']:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
