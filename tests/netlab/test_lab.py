#!/usr/bin/python3
"""A small real measurement over the one-machine lab (CTest label `netlab`; docs/validation.md).

    sudo /usr/bin/python3 tests/netlab/test_lab.py [path/to/ddlsim]

Runs tools/measure_collectives.py --lab for 2 and 3 workers, 64 KiB and 1 MiB, library / ring / tree /
ps, at 100 Mbit/s per direction and 1 ms one-way delay, and checks that the measurements are sane:
every row is there with the lab's rate and delay; no time beats the pure serialisation of what the
algorithm moves (its closed form with zero latency, from `ddlsim schedule`); every time is within a
loose factor of the alpha-beta closed form (the machine may be busy); the lab is gone afterwards.
Agreement with ddlsim's predictions is `ddlsim calibrate`'s business, not this test's.

Exit 77 (CTest's skip) with the reason when the lab cannot run here: not root, no network
namespaces, no iptables or NFQUEUE, or the delay line does not build (tools/netlab/setup.sh --check).
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import lab_runs  # noqa: E402
import measure_collectives as mc  # noqa: E402

SKIP = 77
RATE, RATE_BPS = "100Mbps", 1e8
DELAY, DELAY_S = "1ms", 1e-3
SLACK_FACTOR, SLACK_S = 4.0, 0.05  # upper bound: 4 x the closed form + 50 ms


def closed_form(ddlsim, algorithm, workers, servers, nbytes, latency):
    argv = [ddlsim, "schedule", "--algorithm", "ring" if algorithm == "library" else algorithm,
            "--workers", str(workers), "--bytes", str(nbytes), "--bandwidth", RATE, "--latency", latency]
    if servers:
        argv += ["--servers", str(servers)]
    return json.loads(subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True).stdout)["analytic_time_s"]


def main():
    ddlsim = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ddlsim")
    available, message = lab_runs.lab_check()
    if not available:
        print(f"SKIP: the lab cannot run here: {message}")
        return SKIP
    if not os.path.exists(ddlsim):
        print(f"FAIL: no ddlsim binary at {ddlsim}")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "lab.csv")
        argv = [lab_runs.PYTHON, os.path.join(ROOT, "tools", "measure_collectives.py"), "--lab", "--ddlsim", ddlsim,
                "--rate", RATE, "--delay", DELAY, "--ranks", "2,3", "--bytes", "64KiB,1MiB",
                "--algorithms", "library,ring,tree,ps", "--repeat", "3", "--warmup", "1", "--out", out]
        result = subprocess.run(argv, timeout=900)
        if result.returncode != 0:
            print(f"FAIL: measure_collectives.py exited {result.returncode}")
            return 1
        rows = lab_runs.read_table(out, mc.HEADER)
        if len(rows) != 2 * 4 * 2:
            failures.append(f"{len(rows)} rows, expected 16")
        print(f"{'row':<34} {'measured':>10} {'serialise':>10} {'alpha-beta':>10} {'ratio':>6}")
        for row in rows:
            workers, servers, nbytes = int(row["ranks"]), int(row["servers"]), int(row["bytes"])
            seconds = float(row["seconds"])
            label = f"{row['algorithm']} N={workers}" + (f"+{servers}" if servers else "") + f" {nbytes} B"
            if float(row["bandwidth_bps"]) != RATE_BPS or float(row["latency_s"]) != DELAY_S:
                failures.append(f"{label}: the row says {row['bandwidth_bps']} bit/s, {row['latency_s']} s")
            if not row["source"].startswith("lab:") or row["repeats"] != "3":
                failures.append(f"{label}: source {row['source']}, repeats {row['repeats']}")
            serialise = closed_form(ddlsim, row["algorithm"], workers, servers, nbytes, "0")
            estimate = closed_form(ddlsim, row["algorithm"], workers, servers, nbytes, DELAY)
            print(f"{label:<34} {seconds * 1e3:>8.2f}ms {serialise * 1e3:>8.2f}ms {estimate * 1e3:>8.2f}ms "
                  f"{seconds / estimate:>6.2f}")
            if seconds < serialise:
                failures.append(f"{label}: {seconds:.6f} s beats the pure serialisation time {serialise:.6f} s")
            if seconds > SLACK_FACTOR * estimate + SLACK_S:
                failures.append(f"{label}: {seconds:.6f} s is more than {SLACK_FACTOR} x the alpha-beta "
                                f"estimate {estimate:.6f} s + {SLACK_S} s")
    if lab_runs.read_lab_config() is not None:
        failures.append("the lab was not torn down (/run/ddlsim-netlab/config remains)")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
