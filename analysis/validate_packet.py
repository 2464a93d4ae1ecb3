#!/usr/bin/python3
"""Score packet fidelity against flow fidelity on real collectives (docs/validation.md, "Packet fidelity").

    analysis/validate_packet.py MEASUREMENTS.csv [MORE.csv ...] [--ddlsim build/ddlsim] [--markdown]
        [--csv PREDICTIONS.csv]

Every row of the measurement CSVs (tools/measure_collectives.py) is predicted by `ddlsim collectives`
on a star whose links have the row's rate and half its one-way delay (a path crosses two links), the
row's collective (gloo's own ring, `gloo_ring`, for its `library` all-reduce), at flow and at packet
fidelity, with the same software on both sides:

* `ideal`: no software cost but the 10 us call;
* `gloo, no header factor`: the gloo preset (its call, send and receive costs, its receiver-ready
  notices) without its protocol efficiency, since ns-3 sends the headers itself: at packet fidelity a
  notice waits the path's latency and TCP paces the data;
* `gloo preset` at flow fidelity alone: the whole preset, for reference.

Packet fidelity times each collective's third run, after two untimed ones (`--warmup 2`, the lab's
own protocol: its connections open and its windows grown), with the lab's 10,000-packet port queues. The script prints median and max |predicted / measured - 1|, the mean signed error and the
rows too fast / too slow, for all rows, messages of at most 64 KiB, larger ones, and the parameter-
server rows (incast at the server's link), and those with 8 or more workers pushing at once. Bad input exits 2 with one line.
"""

import argparse
import csv
import json
import os
import subprocess
import sys

from validate_collectives import format_table, stats  # the same error table

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PROG = "validate_packet.py"
LIBRARY = {"allreduce": "gloo_ring", "allgather": "ring_allgather", "broadcast": "binomial_broadcast",
           "reduce_scatter": "ring_reduce_scatter"}
GLOO_WIRELESS = json.dumps({"preset": "gloo", "protocol_efficiency": 1})
# The lab's ports: every shaped device (a host's eth0, the hub's port toward a host) queues in a pfifo
# of 10,000 packets (tools/netlab/setup.sh, shape()); ns-3's switch ports get the same.
LAB_PACKET = json.dumps({"queue_packets": 10000})
PACKET = ["--fidelity", "packet", "--warmup", "2", "--packet", LAB_PACKET]
MODELS = [
    ("flow, ideal", ["--fidelity", "flow", "--call-cost", "10us"]),
    ("packet, ideal", PACKET + ["--call-cost", "10us"]),
    ("flow, gloo, no header factor", ["--fidelity", "flow", "--software", GLOO_WIRELESS]),
    ("packet, gloo, no header factor", PACKET + ["--software", GLOO_WIRELESS]),
    ("flow, gloo preset", ["--fidelity", "flow", "--software", "gloo"]),
]
SMALL_BYTES = 64 * 1024
INCAST_WORKERS = 8


def fail(message):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    rows = []
    with open(path) as f:
        lines = [line for line in f if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        fail(f"{path}: no header line")
    for row in csv.DictReader(lines):
        for key in ("op", "algorithm", "ranks", "servers", "bytes", "seconds", "bandwidth_bps", "latency_s"):
            if not row.get(key):
                fail(f"{path}: a row has no \"{key}\"")
        rows.append(row)
    return rows


def predict(ddlsim, row, options):
    algorithm = LIBRARY[row["op"]] if row["algorithm"] == "library" else row["algorithm"]
    argv = [ddlsim, "collectives", "-n", row["ranks"], "-m", row["bytes"], "-b", f"{float(row['bandwidth_bps'])}bps",
            "-l", f"{float(row['latency_s']) / 2}s", "--algorithms", algorithm, "--csv"] + options
    if int(row["servers"]) > 0:
        argv += ["--servers", row["servers"]]
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(argv)} exited {result.returncode}: {result.stderr.strip()}")
    table = list(csv.DictReader(result.stdout.splitlines()))
    if not table:
        fail(f"{' '.join(argv)} printed no row")
    return float(table[0]["simulated_time_s"])


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("measurements", nargs="+", help="measurement CSVs (tools/measure_collectives.py)")
    ap.add_argument("--ddlsim", default=os.path.join(ROOT, "build", "ddlsim"), help="the ddlsim binary")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--csv", help="write every row's predictions here")
    args = ap.parse_args(argv)
    if not os.path.exists(args.ddlsim):
        fail(f"--ddlsim: no ddlsim binary at {args.ddlsim}")
    rows = []
    for path in args.measurements:
        if not os.path.exists(path):
            fail(f"{path}: no such file")
        rows += read_rows(path)
    errors = {name: [] for name, _ in MODELS}
    predicted = []
    for row in rows:
        measured = float(row["seconds"])
        out = dict(row)
        for name, options in MODELS:
            t = predict(args.ddlsim, row, options)
            errors[name].append((row, t / measured - 1))
            out[name] = t
        predicted.append(out)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(predicted[0].keys()))
            writer.writeheader()
            writer.writerows(predicted)
    classes = [("all rows", lambda r: True),
               (f"messages of at most {SMALL_BYTES // 1024} KiB", lambda r: float(r["bytes"]) <= SMALL_BYTES),
               (f"messages above {SMALL_BYTES // 1024} KiB", lambda r: float(r["bytes"]) > SMALL_BYTES),
               ("parameter server (incast at the server's link)", lambda r: int(r["servers"]) > 0),
               (f"parameter server with at least {INCAST_WORKERS} workers pushing at once",
                lambda r: int(r["servers"]) > 0 and int(r["ranks"]) >= INCAST_WORKERS)]
    for title, keep in classes:
        entries = [(name, stats([e for r, e in errors[name] if keep(r)])) for name, _ in MODELS]
        if any(entries_stats is not None for _, entries_stats in entries):
            print(format_table(title, entries, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
