#!/usr/bin/python3
"""analysis/validate_collectives.py on rows generated from the ring all-reduce's time by hand.

Under gloo's software (1 MiB segments, each waiting for the receiver's "ready": two latencies per
step while M/N <= 1 MiB; wire bytes M/N / eta) with latency factor 1.5, bandwidth factor 0.9, a
per-step overhead of 60 us and a call cost of 200 us, the ring takes

    c + 2 (N - 1) (o + 2 x 1.5 alpha + (M / N) x 8 / (rate x 0.9 x eta)).

Fitted at 100 Mbit/s, the 200 Mbit/s rows must be predicted exactly by both calibrations, alpha-beta
must be too fast on every row, and bad input must exit 2 with one line.

    /usr/bin/python3 tests/analysis/test_validate_collectives.py build/ddlsim
"""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "analysis", "validate_collectives.py")
ETA = 1448.0 / 1538.0  # the gloo preset's protocol efficiency (models/software_cost.cpp)
HEADER = "op,algorithm,ranks,servers,bytes,seconds,repeats,backend,bandwidth_bps,latency_s,source"


def ring_s(n, nbytes, alpha, rate):
    return 200e-6 + 2 * (n - 1) * (60e-6 + 2 * 1.5 * alpha + nbytes / n * 8 / (rate * 0.9 * ETA))


def main():
    ddlsim = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ddlsim")
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "m.csv")
        with open(path, "w") as f:
            f.write(HEADER + "\n")
            for rate in (1e8, 2e8):
                for alpha in (1e-3, 5e-3):
                    for n in (2, 3):
                        for nbytes in (65536, 1048576):
                            f.write(f"allreduce,ring,{n},0,{nbytes},{ring_s(n, nbytes, alpha, rate)!r},5,gloo,"
                                    f"{rate},{alpha},lab:test\n")
        plot = os.path.join(folder, "scatter.png")
        result = subprocess.run([sys.executable, SCRIPT, path, "--holdout", "bandwidth_bps=200Mbps", "--ddlsim", ddlsim,
                                 "--plot", plot], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        print(result.stdout, end="")
        if result.returncode != 0:
            return print(f"FAIL: exit {result.returncode}: {result.stderr}") or 1
        held = result.stdout.split("fitted rows")[0]
        lines = {line[:28].strip(): line[28:].split() for line in held.splitlines() if line[:1].isalpha()}
        for model in ("calibrated, one fit", "calibrated per algorithm"):
            cells = lines.get(model)
            if not cells or cells[0] != "8" or cells[1:3] != ["0.0", "%"] or cells[3:5] != ["0.0", "%"]:
                failures.append(f"{model}: expected 8 held-out rows with 0.0 % median and max, got {cells}")
        ideal = lines.get("ideal (alpha-beta)")
        if not ideal or ideal[-3:] != ["8", "/", "0"]:
            failures.append(f"alpha-beta: expected too fast on all 8 held-out rows, got {ideal}")
        if not os.path.getsize(plot) > 10000:
            failures.append("no scatter plot written")
        bad = subprocess.run([sys.executable, SCRIPT, os.path.join(folder, "none.csv"), "--holdout", "every=2",
                              "--ddlsim", ddlsim], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        expected = f"validate_collectives.py: error: {os.path.join(folder, 'none.csv')}: no such file\n"
        if bad.returncode != 2 or bad.stderr != expected:
            failures.append(f"missing file: exit {bad.returncode}, stderr {bad.stderr!r}")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
