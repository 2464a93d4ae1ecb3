#!/usr/bin/python3
"""Tests of analysis/validate_ddp.py (docs/validation.md): its predictions are what `ddlsim run`
gives for the scenario the row describes, and its error arithmetic.

    /usr/bin/python3 tests/analysis/test_validate_ddp.py [PATH_TO_DDLSIM] [-v]

A two-row DDP CSV (measure_ddp.py's header) and a tiny profile written here; the scenario each row
stands for is written out by hand below, independently of the script, and run with ddlsim. The plot
is drawn only with matplotlib.
"""

import csv
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "analysis", "validate_ddp.py")
DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):  # the ddlsim binary CTest built
    DDLSIM = os.path.abspath(sys.argv.pop(1))
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None

HEADER = ("model,ranks,batch_size,bucket_cap_mb,overlap,backend,bandwidth_bps,latency_s,iteration_s_median,"
          "iteration_s_p90,iterations,source")
# Two lab rows: overlap with a 1 MiB cap at 100 Mbit/s, 2 ms; no overlap, 25 MiB, 3 ranks at 200 Mbit/s, 1 ms.
ROWS = [
    "tiny,2,4,1,true,gloo,100000000.0,0.002,0.25,0.26,5,lab:test",
    "tiny,3,4,25,false,gloo,200000000.0,0.001,0.4,0.41,5,lab:test",
    "# a --local row has no network: left out with a note",
    "tiny,2,4,25,true,gloo,,,0.01,0.011,5,local:test",
]
PROFILE = {
    "model": "tiny", "batch_size": 4, "device": "test", "dtype": "fp32", "optimizer_s": 0.001, "io_s": 0.0001,
    "unattributed_s": 0.0005,
    "layers": [
        {"name": "a", "forward_s": 0.002, "backward_s": 0.004, "parameters": 500000, "grad_bytes": 2000000},
        {"name": "b", "forward_s": 0.001, "backward_s": 0.003, "parameters": 100000, "grad_bytes": 400000},
        {"name": "c", "forward_s": 0.001, "backward_s": 0.002, "parameters": 1000, "grad_bytes": 4000},
    ],
}
CALIBRATION = {"format": "ddlsim-calibration", "version": 1,
               "network": {"model": "calibrated", "latency_factor": 1.5, "bandwidth_factor": 0.9,
                           "software": {"preset": "gloo", "send_overhead": "40us"},
                           "collective_call_cost": "200us"},
               "fit": {"note": "written by hand for this test"}}


def hand_scenario(profile, workers, bandwidth, link_latency, cap_bytes, overlap, inflight, network):
    """What row (workers, rate, delay, cap, overlap) means in ddlsim, written out independently."""
    return {"name": "hand", "seed": 1,
            "platform": {"topology": "star", "workers": workers,
                         "link": {"bandwidth": bandwidth, "latency": link_latency}},
            "network": network,
            "workload": {"profile": profile, "batch_size": 4, "iterations": 5},
            "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"},
                         "bucketing": {"policy": "ddp", "bucket_bytes": cap_bytes, "overlap": overlap,
                                       "max_inflight": inflight}},
            "output": {"timeline": False}}


def ddlsim_median(tmp, scenario, tag):
    path = os.path.join(tmp, f"hand_{tag}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f)
    out = os.path.join(tmp, f"hand_{tag}")
    p = subprocess.run([DDLSIM, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)["iteration_time_median_s"]


@unittest.skipUnless(os.access(DDLSIM, os.X_OK), f"no ddlsim binary at {DDLSIM}")
class ValidateDdpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmpdir = tempfile.TemporaryDirectory()
        tmp = cls.tmp = cls.tmpdir.name
        cls.csv = os.path.join(tmp, "ddp.csv")
        with open(cls.csv, "w", encoding="utf-8") as f:
            f.write(HEADER + "\n" + "\n".join(ROWS) + "\n")
        cls.profile = os.path.join(tmp, "tiny_b4.json")
        with open(cls.profile, "w", encoding="utf-8") as f:
            json.dump(PROFILE, f)
        cls.calibration = os.path.join(tmp, "calibration.json")
        with open(cls.calibration, "w", encoding="utf-8") as f:
            json.dump(CALIBRATION, f)
        cls.predictions = os.path.join(tmp, "predictions.csv")
        cls.plot = os.path.join(tmp, "plot.png")
        command = [sys.executable, SCRIPT, cls.csv, "--ddlsim", DDLSIM, "--profiles", tmp,
                   "--networks", "ideal,software,calibrated", "--calibration", cls.calibration,
                   "--out", cls.predictions, "--quiet"]
        if HAVE_MPL:
            command += ["--plot", cls.plot]
        cls.result = subprocess.run(command, capture_output=True, text=True, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.tmpdir.cleanup()

    def rows(self):
        with open(self.predictions, encoding="utf-8") as f:
            return list(csv.DictReader(line for line in f if not line.startswith("#")))

    def test_runs_and_leaves_out_the_local_row(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertIn("1 row(s) without a lab bandwidth and latency left out", self.result.stderr)
        self.assertEqual(len(self.rows()), 2 * 3)
        if HAVE_MPL:
            self.assertGreater(os.path.getsize(self.plot), 1000)

    def test_predictions_are_ddlsim_runs_of_the_rows(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        networks = {
            "ideal": {"fidelity": "flow", "model": "ideal"},
            "software": {"fidelity": "flow", "model": "ideal", "software": "gloo"},
            "calibrated": {"fidelity": "flow", "model": "calibrated", "latency_factor": 1.5, "bandwidth_factor": 0.9,
                           "software": {"preset": "gloo", "send_overhead": "40us"}, "collective_call_cost": "200us"},
        }
        # Row 0: 2 workers, 100 Mbit/s, one-way 2 ms = two links of 1 ms, 1 MiB cap, overlap, 2 in flight.
        # Row 1: 3 workers, 200 Mbit/s, 1 ms = two links of 0.5 ms, 25 MiB cap, no overlap, 1 in flight.
        shapes = [(2, "100Mbps", "1ms", 1048576, True, 2), (3, "200Mbps", "500us", 26214400, False, 1)]
        got = {(int(r["ranks"]), r["network"]): float(r["predicted_s"]) for r in self.rows()}
        for network, net in networks.items():
            for workers, bandwidth, latency, cap, overlap, inflight in shapes:
                want = ddlsim_median(self.tmp, hand_scenario(self.profile, workers, bandwidth, latency, cap, overlap,
                                                             inflight, net), f"{network}_{workers}")
                self.assertAlmostEqual(got[(workers, network)], want, delta=1e-12 * want,
                                       msg=f"{network}, {workers} workers")
        # The models differ: software costs and calibration slow the prediction down.
        for workers in (2, 3):
            self.assertLess(got[(workers, "ideal")], got[(workers, "software")])
            self.assertLess(got[(workers, "software")], got[(workers, "calibrated")])

    def test_error_arithmetic(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        rows = self.rows()
        for r in rows:
            self.assertAlmostEqual(float(r["error"]), float(r["predicted_s"]) / float(r["measured_s"]) - 1, places=12)
        self.assertEqual({float(r["measured_s"]) for r in rows}, {0.25, 0.4})
        # The table line of each network model over all rows.
        for network in ("ideal", "software", "calibrated"):
            errors = [float(r["error"]) for r in rows if r["network"] == network]
            section = self.result.stdout.split(f"network model: {network}\n", 1)[1].split("network model:", 1)[0]
            line = [ln for ln in section.splitlines() if ln.strip().startswith("all ")][0].split()
            self.assertEqual(line[1], "2")
            self.assertEqual(line[2], f"{100 * statistics.median(abs(e) for e in errors):.1f}%")
            self.assertEqual(line[3], f"{100 * max(abs(e) for e in errors):.1f}%")
            self.assertEqual(line[4], f"{100 * statistics.fmean(errors):+.1f}%")
            self.assertEqual(line[5], str(sum(e < 0 for e in errors)))
            self.assertEqual(line[7], str(sum(e > 0 for e in errors)))

    def test_framework_cost_from_one_rank_rows(self):
        # One-rank rows for row 0's key (tiny, batch 4, cap 1, overlap) in two files, 0.03 and 0.05 s:
        # the framework's compute is their mean minus ddlsim's one-worker prediction of that run.
        files = []
        for k, seconds in enumerate((0.03, 0.05)):
            files.append(os.path.join(self.tmp, f"one_rank_{k}.csv"))
            with open(files[-1], "w", encoding="utf-8") as f:
                f.write(HEADER + f"\ntiny,1,4,1,true,gloo,,,{seconds},{seconds},5,local:test\n")
        out = os.path.join(self.tmp, "framework_predictions.csv")
        two_rows = os.path.join(self.tmp, "row0.csv")
        with open(two_rows, "w", encoding="utf-8") as f:
            f.write(HEADER + "\n" + ROWS[0] + "\n")
        p = subprocess.run([sys.executable, SCRIPT, two_rows, "--ddlsim", DDLSIM, "--profiles", self.tmp, "--networks",
                            "ideal", "--framework", files[0], "--framework", files[1], "--out", out, "--quiet"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        alone = hand_scenario(self.profile, 1, "100Mbps", "1ms", 1048576, True, 2, {"fidelity": "flow", "model": "ideal"})
        alone["workload"]["iterations"] = 10
        cost = 0.04 - ddlsim_median(self.tmp, alone, "one_worker")
        self.assertGreater(cost, 0)
        self.assertIn(f"tiny batch 4 cap 1 MiB overlap true: {cost * 1e3:+.2f} ms", p.stdout)
        with_cost = hand_scenario(self.profile, 2, "100Mbps", "1ms", 1048576, True, 2, {"fidelity": "flow", "model": "ideal"})
        with_cost["workload"]["framework_overhead_s"] = cost
        want = ddlsim_median(self.tmp, with_cost, "with_cost")
        with open(out, encoding="utf-8") as f:
            got = [float(r["predicted_s"]) for r in csv.DictReader(line for line in f if not line.startswith("#"))]
        self.assertEqual(len(got), 1)
        self.assertAlmostEqual(got[0], want, delta=1e-9 * want)
        # A row without a one-rank measurement of its key is refused.
        p = subprocess.run([sys.executable, SCRIPT, self.csv, "--ddlsim", DDLSIM, "--profiles", self.tmp, "--networks",
                            "ideal", "--framework", files[0], "--quiet"], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--framework: no one-rank row for tiny batch 4 cap 25 overlap false", p.stderr)

    def test_summarise(self):
        sys.path.insert(0, os.path.join(ROOT, "analysis"))
        import validate_ddp
        s = validate_ddp.summarise([-0.2, 0.1, 0.05, -0.01])
        self.assertEqual(s["rows"], 4)
        self.assertAlmostEqual(s["median_abs"], 0.075)
        self.assertAlmostEqual(s["max_abs"], 0.2)
        self.assertAlmostEqual(s["mean_signed"], -0.015)
        self.assertEqual((s["too_fast"], s["too_slow"]), (2, 2))
        self.assertAlmostEqual(validate_ddp.relative_error(0.3, 0.25), 0.2)

    def test_bad_input_exits_2_with_one_line(self):
        wrong_batch = os.path.join(self.tmp, "wrong_b4.json")
        with open(wrong_batch, "w", encoding="utf-8") as f:
            json.dump(dict(PROFILE, batch_size=8), f)
        bad_header = os.path.join(self.tmp, "bad.csv")
        with open(bad_header, "w", encoding="utf-8") as f:
            f.write("model,ranks\ntiny,2\n")
        bad_calibration = os.path.join(self.tmp, "bad_calibration.json")
        with open(bad_calibration, "w", encoding="utf-8") as f:
            json.dump({"format": "something else"}, f)
        cases = [
            ([os.path.join(self.tmp, "missing.csv")], "no such file"),
            ([bad_header], "the header is"),
            ([self.csv, "--profile", f"tiny={wrong_batch}"], "the row's batch is 4"),
            ([self.csv, "--profiles", os.path.join(self.tmp, "nowhere")], "no profile for tiny at batch 4"),
            ([self.csv, "--networks", "ideal,bogus"], "unknown network model 'bogus'"),
            ([self.csv, "--networks", "calibrated"], "needs --calibration"),
            ([self.csv, "--calibration", bad_calibration], "not a ddlsim calibration"),
            ([self.csv, "--profiles", self.tmp, "--networks", "ideal", "--set", "training.collective.name=nope"],
             "ddlsim run"),
        ]
        for extra, message in cases:
            p = subprocess.run([sys.executable, SCRIPT, "--ddlsim", DDLSIM, "--quiet"] + extra,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2, f"{extra}: {p.stderr}")
            # One error line, the last (a note on the left-out --local row may come before it).
            lines = p.stderr.strip().splitlines()
            errors = [line for line in lines if "error" in line]
            self.assertEqual(len(errors), 1, f"{extra}: {p.stderr}")
            self.assertEqual(errors[0], lines[-1])
            self.assertIn(message, lines[-1])
            self.assertTrue(lines[-1].startswith("validate_ddp.py: error: "), lines[-1])


class AverageProfilesTest(unittest.TestCase):
    def test_mean_of_times_and_refusals(self):
        script = os.path.join(ROOT, "analysis", "average_profiles.py")
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, factor in enumerate((1.0, 3.0)):
                p = dict(PROFILE, optimizer_s=PROFILE["optimizer_s"] * factor,
                         layers=[dict(l, forward_s=l["forward_s"] * factor) for l in PROFILE["layers"]])
                paths.append(os.path.join(tmp, f"p{i}.json"))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    json.dump(p, f)
            out = os.path.join(tmp, "mean.json")
            r = subprocess.run([sys.executable, script, out] + paths, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, encoding="utf-8") as f:
                mean = json.load(f)
            self.assertAlmostEqual(mean["optimizer_s"], 2 * PROFILE["optimizer_s"])
            self.assertAlmostEqual(mean["io_s"], PROFILE["io_s"])
            for got, want in zip(mean["layers"], PROFILE["layers"]):
                self.assertAlmostEqual(got["forward_s"], 2 * want["forward_s"])
                self.assertAlmostEqual(got["backward_s"], want["backward_s"])
                self.assertEqual(got["grad_bytes"], want["grad_bytes"])
            other = os.path.join(tmp, "other.json")
            with open(other, "w", encoding="utf-8") as f:
                json.dump(dict(PROFILE, batch_size=8), f)
            r = subprocess.run([sys.executable, script, out, paths[0], other], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("batch_size 8", r.stderr)


if __name__ == "__main__":
    unittest.main()
