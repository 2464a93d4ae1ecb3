#!/usr/bin/python3
"""Tests of tools/measure_decentralised.py and analysis/validate_decentralised.py (docs/validation.md,
"Results: decentralised").

    /usr/bin/python3 tests/analysis/test_decentralised.py [PATH_TO_DDLSIM] [-v]

* The tool's timing arithmetic on hand-made end times, its ring, and its refusals (exit 2, one line).
* With PyTorch, the tool runs for real on loopback (2 ranks, every algorithm): one row each, and the
  event ring makes exactly the puts its trace decides (2 per sent tensor and iteration).
* The validator: a D-PSGD row on 2 ranks whose measured time is the closed form of ddlsim's ideal
  network (compute + path latency + 2 M / B: both messages to the one neighbour share its link) is
  predicted with error 0; local SGD and event rows are predicted as `ddlsim run` predicts the
  scenarios written out by hand here; bad rows are refused.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "measure_decentralised.py")
SCRIPT = os.path.join(ROOT, "analysis", "validate_decentralised.py")
TRACE = os.path.join(ROOT, "docs", "data", "lab_decentralised", "traces", "eventgrad_cnn_event_adaptive_{ranks}w.json")
DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    DDLSIM = os.path.abspath(sys.argv.pop(1))
HAVE_TORCH = importlib.util.find_spec("torch") is not None
sys.path.insert(0, os.path.join(ROOT, "tools"))
import measure_decentralised  # noqa: E402

HEADER = ",".join(measure_decentralised.HEADER)
M = 2_000_000  # the tiny profile's gradient (= model) bytes
PROFILE = {
    "model": "tiny", "batch_size": 4, "device": "test", "dtype": "fp32", "optimizer_s": 0.001, "io_s": 0.0002,
    "unattributed_s": 0.0,
    "layers": [
        {"name": "a", "forward_s": 0.002, "backward_s": 0.004, "parameters": 400000, "grad_bytes": 1600000},
        {"name": "b", "forward_s": 0.001, "backward_s": 0.003, "parameters": 100000, "grad_bytes": 400000},
    ],
}
COMPUTE_S = 0.0002 + 0.002 + 0.004 + 0.001 + 0.003 + 0.001  # io, forward, backward, optimizer


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


class ToolArithmeticTest(unittest.TestCase):
    def test_durations_and_summaries(self):
        self.assertEqual(measure_decentralised.durations([1.0, 3.0, 4.0], 0.0), [1.0, 2.0, 1.0])
        ends = [[1.0, 3.0, 4.0], [1.5, 2.5, 5.0]]  # durations 1, 2, 1 and 1.5, 1, 2.5
        median, mean, _ = measure_decentralised.summarise("dpsgd", ends, 0.0)
        self.assertAlmostEqual(median, 1.25)      # of 1, 1, 1, 1.5, 2, 2.5
        self.assertAlmostEqual(mean, 9.0 / 6)
        _, mean, _ = measure_decentralised.summarise("local_sgd", ends, 0.0)
        self.assertAlmostEqual(mean, 5.0 / 3)     # the latest end of the last iteration / iterations

    def test_ring(self):
        self.assertEqual(measure_decentralised.ring_peers(0, 2), (1, 1))
        self.assertEqual(measure_decentralised.ring_peers(0, 3), (2, 1))
        self.assertEqual(measure_decentralised.ring_peers(2, 3), (1, 0))

    def test_refusals(self):
        cases = [
            (["--local", "--ranks", "1", "--out", "x.csv"], "--ranks: a ring needs at least 2 ranks"),
            (["--local", "--algorithms", "gossip", "--out", "x.csv"], "unknown algorithm 'gossip'"),
            (["--local", "--iterations", "10", "--period", "4", "--out", "x.csv"],
             "--iterations (10) must be a multiple of --period (4)"),
            (["--local", "--algorithms", "event", "--out", "x.csv"], "--algorithms event needs --trace"),
            (["--local", "--algorithms", "event", "--ranks", "3", "--trace", TRACE.replace("{ranks}", "2"),
              "--out", "x.csv"], "need an event_triggered trace of eventgrad_cnn with 3 workers"),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            for args, message in cases:
                p = run([sys.executable, TOOL] + args, cwd=tmp)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertIn(message, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertFalse(os.path.exists(os.path.join(tmp, "x.csv")))


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (Debian: apt-get install python3-torch)")
class ToolOnLoopbackTest(unittest.TestCase):
    def test_every_algorithm_on_two_ranks(self):
        iterations, warmup = 8, 2
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dec.csv")
            p = run([sys.executable, TOOL, "--local", "--algorithms", "dpsgd,local_sgd,event", "--trace", TRACE,
                     "--ranks", "2", "--iterations", str(iterations), "--warmup", str(warmup), "--out", out],
                    timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                lines = f.read().splitlines()
        self.assertEqual(lines[0], HEADER)
        rows = [dict(zip(measure_decentralised.HEADER, line.split(","))) for line in lines if not line.startswith("#")][1:]
        self.assertEqual([r["algorithm"] for r in rows], ["dpsgd", "local_sgd", "event"])
        for r in rows:
            self.assertGreater(float(r["iteration_s_median"]), 0)
            self.assertGreater(float(r["iteration_s_mean"]), 0)
            self.assertEqual(r["iterations"], str(iterations))
        self.assertEqual(rows[1]["period_iterations"], "4")
        self.assertEqual(rows[2]["trace"], os.path.relpath(TRACE.replace("{ranks}", "2"), ROOT))
        with open(TRACE.replace("{ranks}", "2"), encoding="utf-8") as f:
            sent = json.load(f)["sent"]
        expected = 2 * sum(sum(sent[k][w]) for k in range(iterations) for w in range(2))
        self.assertTrue(any(f"{expected} puts timed" in line for line in lines), (expected, lines))


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER + "\n" + "\n".join(rows) + "\n")


def hand_run(tmp, tag, platform, training, network, iterations, key):
    scenario = {"name": tag, "seed": 1, "platform": platform, "network": network,
                "workload": {"profile": os.path.join(tmp, "tiny_b4.json"), "batch_size": 4, "iterations": iterations},
                "training": training, "output": {"timeline": False}}
    path = os.path.join(tmp, f"{tag}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f)
    p = run([DDLSIM, "run", path, "--quiet", "--out", os.path.join(tmp, tag)])
    assert p.returncode == 0, p.stderr
    with open(os.path.join(tmp, tag, "summary.json"), encoding="utf-8") as f:
        return json.load(f)[key]


@unittest.skipUnless(os.access(DDLSIM, os.X_OK), f"no ddlsim binary at {DDLSIM}")
class ValidateTest(unittest.TestCase):
    def test_rows_are_predicted_as_their_scenarios(self):
        bandwidth, delay = 100e6, 0.002
        closed_form = COMPUTE_S + delay + 2 * M * 8 / bandwidth
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "tiny_b4.json"), "w", encoding="utf-8") as f:
                json.dump(PROFILE, f)
            csv = os.path.join(tmp, "dec.csv")
            write_csv(csv, [
                f"dpsgd,tiny,2,4,,gloo,{bandwidth},{delay},{closed_form!r},1.0,1.0,0.0,6,,lab:test",
                f"local_sgd,tiny,3,4,3,gloo,{bandwidth},{delay},0.01,0.5,0.6,0.0,6,,lab:test",
                "dpsgd,tiny,2,4,,gloo,,,0.01,0.01,0.01,0.0,6,,local:test",
            ])
            out = os.path.join(tmp, "pred.csv")
            p = run([sys.executable, SCRIPT, csv, "--profiles", tmp, "--networks", "ideal,software", "--ddlsim", DDLSIM,
                     "--out", out, "--quiet"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("1 row(s) without a lab bandwidth and latency left out", p.stderr)
            with open(out, encoding="utf-8") as f:
                predictions = [line.split(",") for line in f.read().splitlines()[1:] if not line.startswith("#")]
            by = {(r[0], r[1]): r for r in predictions}
            self.assertAlmostEqual(float(by[("ideal", "dpsgd")][9]), closed_form, delta=1e-9)
            self.assertAlmostEqual(float(by[("ideal", "dpsgd")][10]), 0.0, delta=1e-9)
            platform3 = {"topology": "star", "workers": 3,
                         "link": {"bandwidth": f"{bandwidth:.17g}bps", "latency": delay / 2}}
            local = {"sync": {"name": "local_sgd", "params": {"period_iterations": 3, "warmup_bsp_iterations": 0}},
                     "collective": {"name": "gloo_ring"},
                     "bucketing": {"bucket_bytes": "1GB", "max_inflight": 1, "overlap": False}}
            for network, spec in (("ideal", {"fidelity": "flow", "collective_granularity": "stepwise", "model": "ideal"}),
                                  ("software", {"fidelity": "flow", "collective_granularity": "stepwise",
                                                "model": "ideal", "software": "gloo"})):
                expected = hand_run(tmp, f"local_{network}", platform3, local, spec, 6, "iteration_time_s")
                self.assertAlmostEqual(float(by[(network, "local_sgd")][9]), expected, delta=1e-12)
                self.assertAlmostEqual(float(by[(network, "local_sgd")][10]), expected / 0.5 - 1, delta=1e-12)
            # the gloo preset's messages cost more than the ideal network's
            self.assertGreater(float(by[("software", "dpsgd")][9]), closed_form)

    def test_event_rows_replay_their_trace(self):
        trace = os.path.relpath(TRACE.replace("{ranks}", "2"), ROOT)
        profiles = os.path.join(ROOT, "docs", "data", "lab_decentralised", "paired")
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "dec.csv")
            write_csv(csv, [f"event,eventgrad_cnn,2,16,,gloo,100000000.0,0.001,0.02,0.03,0.04,0.0,12,{trace},lab:test"])
            out = os.path.join(tmp, "pred.csv")
            p = run([sys.executable, SCRIPT, csv, "--profiles", profiles, "--networks", "software", "--ddlsim", DDLSIM,
                     "--out", out, "--quiet"])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                row = [line.split(",") for line in f.read().splitlines()[1:] if not line.startswith("#")][0]
            scenario = {"name": "event", "seed": 1,
                        "platform": {"topology": "star", "workers": 2,
                                     "link": {"bandwidth": "100000000bps", "latency": 0.0005}},
                        "network": {"fidelity": "flow", "collective_granularity": "stepwise", "model": "ideal",
                                    "software": "gloo"},
                        "workload": {"profile": os.path.join(profiles, "eventgrad_cnn_b16.json"), "batch_size": 16,
                                     "iterations": 12},
                        "training": {"sync": {"name": "event_triggered", "params": {
                            "decisions": "trace", "trace": os.path.join(ROOT, trace), "puts": "sequential"}}},
                        "output": {"timeline": False}}
            path = os.path.join(tmp, "event.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(scenario, f)
            p = run([DDLSIM, "run", path, "--quiet", "--out", os.path.join(tmp, "event")])
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(tmp, "event", "summary.json"), encoding="utf-8") as f:
                expected = json.load(f)["iteration_time_s"]
            self.assertAlmostEqual(float(row[9]), expected, delta=1e-12)
            self.assertAlmostEqual(float(row[10]), expected / 0.03 - 1, delta=1e-12)

    def test_bad_rows_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "dec.csv")
            for row, message in (
                    ("dpsgd,tiny,1,4,,gloo,1e8,0.001,0.01,0.01,0.01,0,6,,lab:t", "has an impossible value"),
                    ("gossip,tiny,2,4,,gloo,1e8,0.001,0.01,0.01,0.01,0,6,,lab:t", "has a malformed value"),
                    ("event,tiny,2,4,,gloo,1e8,0.001,0.01,0.01,0.01,0,6,nowhere.json,lab:t",
                     "its trace nowhere.json does not exist")):
                write_csv(csv, [row])
                p = run([sys.executable, SCRIPT, csv, "--ddlsim", DDLSIM])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
