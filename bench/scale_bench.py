#!/usr/bin/env python3
"""Benchmark: how far ddlsim scales in workers (docs/performance.md, "Scale").

Runs `ddlsim run` on ResNet-50, BSP + ring all-reduce, 25 MB buckets overlapped with backward, one
100 Gbps star (scenarios/resnet50_bsp_ring_100gbps.json), --iterations iterations, at every worker
count of --analytic (analytic fidelity), --noisy (analytic fidelity with 5 % normal compute-time
noise, so that every worker is its own class and is simulated one by one), --sharded (analytic
fidelity, the same model under FSDP FULL_SHARD with one unit per layer: 3 collectives and 2 waits
per layer and iteration) and --flow (flow fidelity, pipelined collectives), one process per run, and prints a Markdown table: wall time, peak
RSS, the workers simulated one by one and the engine events the work estimate counts (`ddlsim run
--estimate`), events per second of wall time, the simulated iteration time, and the outcome: ok,
refused (exit 2, with ddlsim's message), failed (another exit status) or "> T s" (killed at
--timeout).

Goals (issue "Scale", on the 2-core development machine): analytic 16,384 workers <= 1 s and
<= 500 MB, 100,000 workers <= 10 s; flow pipelined 16,384 workers <= 60 s; (issue "Flow fidelity at
scale") analytic with noise, 100,000 workers <= 30 s.

usage: bench/scale_bench.py [--ddlsim build/ddlsim] [--analytic 1024,4096,16384,100000]
                            [--noisy 1024,4096,16384,100000] [--sharded 1024,16384,100000]
                            [--flow 1024,4096,16384] [--iterations 100]
                            [--timeout 600]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from measure import run_status

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SCENARIO = os.path.join(ROOT, "scenarios", "resnet50_bsp_ring_100gbps.json")
NOISE = ["--set", 'training.stragglers={"distribution":"normal","sigma":0.05}']


def sharded_scenario(tmp):
    """The scenario under FSDP FULL_SHARD: its units replace the buckets (training.bucketing removed)."""
    with open(SCENARIO) as f:
        sc = json.load(f)
    sc["training"].pop("bucketing", None)
    sc["training"]["sharding"] = {"strategy": "fsdp_full_shard"}
    sc["workload"]["profile"] = os.path.join(os.path.dirname(SCENARIO), sc["workload"]["profile"])
    path = os.path.join(tmp, "sharded.json")
    with open(path, "w") as f:
        json.dump(sc, f)
    return path


def counts(text):
    return [int(x) for x in text.split(",") if x.strip()] if text else []


def estimate(ddlsim, scenario, args):
    """The work estimate (events, simulated_workers), or Nones when the estimate itself refuses the scenario."""
    proc = subprocess.run([ddlsim, "run", scenario, "--estimate", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, None
    e = json.loads(proc.stdout)
    return e["events"], e["simulated_workers"]


def one(ddlsim, kind, workers, iterations, timeout_s, tmp):
    out = os.path.join(tmp, f"{kind.replace(' ', '_')}-{workers}")
    fidelity = "flow" if kind == "flow" else "analytic"
    args = ["--set", f"platform.workers={workers}", "--set", f"network.fidelity={fidelity}",
            "--set", f"workload.iterations={iterations}", "--set", "output.timeline=false", "--force"]
    if kind == "noisy":
        args += NOISE
    scenario = sharded_scenario(tmp) if kind == "sharded" else SCENARIO
    events, simulated = estimate(ddlsim, scenario, args)
    code, wall, rss, _, err = run_status([ddlsim, "run", scenario, *args, "--out", out, "-q", "--progress", "none"],
                                         timeout_s)
    row = {"kind": kind, "workers": workers, "wall_s": wall, "rss_mib": rss, "events": events,
           "simulated": simulated, "iteration_s": None}
    if code is None:
        row["outcome"] = f"> {timeout_s:g} s (killed)"
    elif code == 0:
        with open(os.path.join(out, "summary.json")) as f:
            row["iteration_s"] = json.load(f)["iteration_time_s"]
        row["outcome"] = "ok"
    else:
        last = (err.strip().splitlines() or ["(nothing on stderr)"])[-1]
        row["outcome"] = ("refused: " if code == 2 else f"failed (exit {code}): ") + last
    return row


def cell(value, fmt):
    return "" if value is None else format(value, fmt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"))
    ap.add_argument("--analytic", default="1024,4096,16384,100000", help="worker counts at analytic fidelity")
    ap.add_argument("--noisy", default="1024,4096,16384,100000",
                    help="worker counts at analytic fidelity with compute-time noise (every worker simulated)")
    ap.add_argument("--sharded", default="1024,16384,100000",
                    help="worker counts at analytic fidelity under FSDP FULL_SHARD (one unit per layer)")
    ap.add_argument("--flow", default="1024,4096,16384", help="worker counts at flow fidelity (pipelined)")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=600.0, help="kill a run after this many seconds")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        points = ([("analytic", n) for n in counts(args.analytic)] + [("noisy", n) for n in counts(args.noisy)] +
                  [("sharded", n) for n in counts(args.sharded)] + [("flow", n) for n in counts(args.flow)])
        for kind, workers in points:
            row = one(args.ddlsim, kind, workers, args.iterations, args.timeout, tmp)
            print(f"scale_bench: {kind} N={workers}: {row['outcome']}, {row['wall_s']:.1f} s", file=sys.stderr)
            rows.append(row)
    print(f"ResNet-50, BSP + ring, 25 MB buckets, {args.iterations} iterations ({os.path.basename(SCENARIO)}); "
          "one run each")
    print()
    print("| fidelity | workers | wall (s) | peak RSS (MiB) | simulated one by one | engine events (estimated) | "
          "events/s | simulated iteration (s) | outcome |")
    print("|---|---|---|---|---|---|---|---|---|")
    names = {"analytic": "analytic", "noisy": "analytic, 5 % noise", "sharded": "analytic, FSDP FULL_SHARD",
             "flow": "flow, pipelined"}
    for r in rows:
        rate = r["events"] / r["wall_s"] if r["events"] and r["outcome"] == "ok" else None
        simulated = "" if r["simulated"] is None else f"{r['simulated']:,.0f}"
        print(f"| {names[r['kind']]} | {r['workers']:,} | {r['wall_s']:.2f} | {r['rss_mib']:.0f} | {simulated} | "
              f"{cell(r['events'], '.3g')} | {cell(rate, '.3g')} | {cell(r['iteration_s'], '.4f')} | {r['outcome']} |")


if __name__ == "__main__":
    main()
