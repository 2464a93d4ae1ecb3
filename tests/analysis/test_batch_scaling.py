#!/usr/bin/python3
"""Tests of analysis/batch_scaling.py (docs/convergence.md, "Batch size and the gradient noise scale").

    /usr/bin/python3 tests/analysis/test_batch_scaling.py [PATH_TO_DDLSIM] [-v]

* The fit recovers S_min and B_crit exactly from steps that follow S = S_min (1 + B_crit / M), and
  refuses what it cannot fit.
* A real sweep of two batches on a small split: each row is the ddlsim run of the scenario at that
  batch (steps, epochs and time to the target, the noise scale), the learning rate and the synthetic
  forward and backward times scaled linearly.
* Bad input: one line, exit 2.
"""

import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "analysis", "batch_scaling.py")
DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    DDLSIM = os.path.abspath(sys.argv.pop(1))
HAVE_DATA = os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import batch_scaling  # noqa: E402
import relaxation_penalty  # noqa: E402

SCENARIO = {"name": "batch_scaling_test", "seed": 1,
            "platform": {"topology": "star", "workers": 4, "link": {"bandwidth": "100Mbps", "latency": "1ms"}},
            "workload": {"synthetic": {"layers": 1, "forward_s": "0.5ms", "backward_s": "0.3ms", "grad_bytes": 31400},
                         "batch_size": 8, "iterations": 10},
            "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"},
                         "convergence": {"dataset": "fashion_mnist", "train_samples": 2000, "test_samples": 500,
                                         "learning_rate": 0.1, "target_accuracy": 0.6, "evaluate_every_iterations": 2}},
            "output": {"timeline": False}}


class FitTest(unittest.TestCase):
    def test_exact_steps_give_back_the_model(self):
        s_min, b_crit = batch_scaling.fit([(m, 40 * (1 + 300 / m)) for m in (16, 64, 256, 1024)])
        self.assertAlmostEqual(s_min, 40, places=9)
        self.assertAlmostEqual(b_crit, 300, places=7)

    def test_what_cannot_be_fitted_is_refused(self):
        with self.assertRaisesRegex(batch_scaling.UsageError, "fewer than two batch sizes reached the target"):
            batch_scaling.fit([(16, 100)])
        with self.assertRaisesRegex(batch_scaling.UsageError, "both must be positive"):
            batch_scaling.fit([(16, 100), (64, 400)])  # more steps at the larger batch


class PenaltyFitTest(unittest.TestCase):
    def test_exact_penalties_give_back_a(self):
        for a in (0.0, 0.02, 0.25, 3.0):
            points = [(x, 1 / (1 + a * x)) for x in (0, 1, 3, 7, 15)]
            self.assertAlmostEqual(relaxation_penalty.fit_a(points), a, places=6)

    def test_one_point_is_refused(self):
        with self.assertRaisesRegex(batch_scaling.UsageError, "fewer than two points reached the target"):
            relaxation_penalty.fit_a([(0, 1.0)])


@unittest.skipUnless(HAVE_DATA, "needs Debian's dataset-fashion-mnist")
class PenaltyRunTest(unittest.TestCase):
    PENALTY = os.path.join(ROOT, "analysis", "relaxation_penalty.py")

    def test_staleness_points_are_the_runs_and_plain_sgd_is_the_reference(self):
        doc = json.loads(json.dumps(SCENARIO))
        doc["platform"]["parameter_servers"] = 1
        doc["training"] = {"sync": {"name": "asp"}, "convergence": dict(SCENARIO["training"]["convergence"],
                                                                         learning_rate=0.05, target_accuracy=0.5)}
        with tempfile.TemporaryDirectory() as tmp:
            path, model, keep = os.path.join(tmp, "s.json"), os.path.join(tmp, "p.json"), os.path.join(tmp, "runs")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            result = subprocess.run(["/usr/bin/python3", self.PENALTY, path, "--workers", "1,2,4", "--epochs", "1",
                                     "--ddlsim", DDLSIM, "--model-out", model, "--keep", keep],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(model, encoding="utf-8") as f:
                p = json.load(f)
            epochs = []
            for i in range(3):
                with open(os.path.join(keep, f"p{i}", "out", "summary.json"), encoding="utf-8") as f:
                    s = json.load(f)
                self.assertEqual(s["workers"], [1, 2, 4][i])
                self.assertAlmostEqual(p["points"][i]["x"], s["staleness"]["mean"])
                epochs.append(s["convergence"]["epochs_to_target"])
        self.assertEqual(p["kind"], "staleness")
        self.assertEqual(p["points"][0]["x"], 0)  # one worker: plain SGD
        for i in range(3):
            self.assertAlmostEqual(p["points"][i]["penalty"], epochs[0] / epochs[i])
            self.assertAlmostEqual(p["points"][i]["model_penalty"], 1 / (1 + p["a"] * p["points"][i]["x"]))
        errors = sorted(abs(q["model_penalty"] / q["penalty"] - 1) for q in p["points"])
        self.assertAlmostEqual(p["fit_error"]["largest"], errors[-1])
        self.assertIn("model (fitted, not co-simulated): P(x) = 1 / (1 + a x)", result.stdout)

    def test_bad_input_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(SCENARIO, f)
            for args, message in (([path, "--workers", "1,2"], "--workers measures staleness on asp or ssp; this "
                                                                "scenario's sync model is 'bsp'"),
                                  ([path, "--ratios", "1,0.1"], "--ratios needs a compressor with a ratio"),
                                  ([path, "--workers", "2,4"], "--workers: include 1")):
                result = subprocess.run(["/usr/bin/python3", self.PENALTY, *args, "--ddlsim", DDLSIM],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(message, result.stderr)


@unittest.skipUnless(HAVE_DATA, "needs Debian's dataset-fashion-mnist")
class SweepTest(unittest.TestCase):
    def test_each_row_is_the_ddlsim_run_at_that_batch(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(SCENARIO, f)
            out = os.path.join(tmp, "rows.csv")
            result = subprocess.run(["/usr/bin/python3", SCRIPT, path, "--batches", "4,16", "--epochs", "4",
                                     "--ddlsim", DDLSIM, "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([int(r["global_batch"]) for r in rows], [16, 64])
            for r in rows:
                b = int(r["batch_per_worker"])
                self.assertAlmostEqual(float(r["learning_rate"]), 0.1 * b / 8)
                self.assertEqual(int(r["iterations"]), -(-4 * 2000 // (4 * b)))
                run_out = os.path.join(tmp, f"check{b}")
                subprocess.run([DDLSIM, "run", path, "-q", "--out", run_out, "--set", f"workload.batch_size={b}",
                                "--set", f"training.convergence.learning_rate={0.1 * b / 8!r}",
                                "--set", "training.convergence.noise_scale=true",
                                "--set", f"workload.synthetic.forward_s={0.5e-3 * (b / 8)!r}",
                                "--set", f"workload.synthetic.backward_s={0.3e-3 * (b / 8)!r}",
                                "--set", f"workload.iterations={r['iterations']}"], check=True)
                with open(os.path.join(run_out, "summary.json"), encoding="utf-8") as f:
                    c = json.load(f)["convergence"]
                self.assertEqual(int(r["steps_to_target"]), c["iterations_to_target"])
                self.assertAlmostEqual(float(r["time_to_target_s"]), c["time_to_target_s"], places=9)
                self.assertAlmostEqual(float(r["gradient_noise_scale_at_target"]), c["gradient_noise_scale"]["at_target"])
            self.assertIn("model (fitted, not co-simulated): S = S_min (1 + B_crit / M)", result.stdout)

    def test_bad_input_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = json.loads(json.dumps(SCENARIO))
            doc["training"]["sync"] = {"name": "local_sgd"}
            path = os.path.join(tmp, "s.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            for args, message in (([path, "--batches", "4"], "the batch-size model is fitted on bsp; this scenario's "
                                                              "sync model is 'local_sgd'"),
                                  ([path, "--batches", "4", "--epochs", "0"], "--epochs: expected a number > 0, got 0")):
                result = subprocess.run(["/usr/bin/python3", SCRIPT, *args, "--ddlsim", DDLSIM],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(message, result.stderr)


MODEL = os.path.join(ROOT, "analysis", "time_to_accuracy_model.py")


class TimeToAccuracyModelTest(unittest.TestCase):
    SWEEP = ("workers,iteration_time_s,throughput_samples_per_s,sync_model\n"
             "8,0.5,512,bsp\n"       # M = 256
             "32,0.8,1280,bsp\n")    # M = 1024

    def model(self, sweep, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sweep.csv")
            with open(path, "w", encoding="utf-8") as f:
                f.write(sweep)
            return subprocess.run(["/usr/bin/python3", MODEL, path, *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def test_steps_time_epochs_and_efficiency_follow_the_model_and_are_labelled(self):
        # 90 epochs of 1,280,000 samples at batch 256 with B_crit = 1024: S_min = 450000 / 5 = 90000.
        result = self.model(self.SWEEP, "--b-crit", "1024", "--reference", "90@256", "--dataset-samples", "1280000")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("# MODEL, not simulated: S = S_min (1 + B_crit / M) (McCandlish et al. 2018) "
                                            "with S_min = 90000 steps, B_crit = 1024 samples"))
        rows = list(csv.DictReader(lines[1:]))
        self.assertEqual(float(rows[0]["model_global_batch"]), 256)
        self.assertAlmostEqual(float(rows[0]["model_steps_to_target"]), 450000)  # the reference itself: 90 epochs
        self.assertAlmostEqual(float(rows[0]["model_epochs_to_target"]), 90)
        self.assertAlmostEqual(float(rows[0]["model_time_to_target_s"]), 225000)
        self.assertAlmostEqual(float(rows[1]["model_steps_to_target"]), 180000)  # 90000 (1 + 1024 / 1024)
        self.assertAlmostEqual(float(rows[1]["model_time_to_target_s"]), 144000)
        self.assertAlmostEqual(float(rows[1]["model_statistical_efficiency"]), 1280 / 2048)

    def penalty(self, tmp, kind, a):
        path = os.path.join(tmp, "penalty.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"kind": kind, "a": a, "x": "x", "scenario": "s.json",
                       "fit_error": {"median": 0.1, "largest": 0.2}}, f)
        return path

    def test_a_staleness_penalty_prices_asp_rows_per_update(self):
        sweep = ("workers,iteration_time_s,throughput_samples_per_s,sync_model,staleness_mean_updates\n"
                 "8,0.5,512,bsp,\n"       # M = 256
                 "8,0.5,512,asp,7\n")     # one worker's batch per update: 32; P = 1 / (1 + 0.1 x 7)
        with tempfile.TemporaryDirectory() as tmp:
            result = self.model(sweep, "--b-crit", "1024", "--s-min", "90000", "--penalty", self.penalty(tmp, "staleness", 0.1))
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("; staleness penalty P(x) = 1 / (1 + a x), x = x, a = 0.1, fitted on co-simulated s.json", lines[0])
        self.assertIn("missed by 10.0 % at the median, 20.0 % at most", lines[0])
        bsp, asp = list(csv.DictReader(lines[1:]))
        self.assertAlmostEqual(float(bsp["model_steps_to_target"]), 90000 * (1 + 1024 / 256))
        self.assertAlmostEqual(float(bsp["model_penalty"]), 1)
        # E_min (1 + 32 / B_crit) / P samples = 90000 (1024 + 32) 1.7, at 512 samples/s; 32 samples per update.
        samples = 90000 * (1024 + 32) * 1.7
        self.assertAlmostEqual(float(asp["model_global_batch"]), 32)
        self.assertAlmostEqual(float(asp["model_penalty"]), 1 / 1.7, places=6)
        self.assertAlmostEqual(float(asp["model_steps_to_target"]) / (samples / 32), 1, places=5)
        self.assertAlmostEqual(float(asp["model_time_to_target_s"]) / (samples / 512), 1, places=5)
        # Relative to the smallest batch (32) without staleness: 1 / 1.7.
        self.assertAlmostEqual(float(asp["model_statistical_efficiency"]), 1 / 1.7, places=5)

    def test_a_compression_penalty_prices_bsp_rows_at_their_ratio(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = self.model(self.SWEEP, "--b-crit", "1024", "--s-min", "90000", "--ratio", "0.1",
                                "--penalty", self.penalty(tmp, "compression", 0.01))
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = list(csv.DictReader(result.stdout.splitlines()[1:]))
        self.assertAlmostEqual(float(rows[0]["model_penalty"]), 1 / 1.09, places=6)  # x = 1 / 0.1 - 1 = 9
        self.assertAlmostEqual(float(rows[0]["model_steps_to_target"]) / (450000 * 1.09), 1, places=5)

    def test_penalty_bad_input_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            stale, packed = self.penalty(tmp, "staleness", 0.1), os.path.join(tmp, "c.json")  # packed: compression
            with open(packed, "w", encoding="utf-8") as f:
                json.dump({"kind": "compression", "a": 0.1, "fit_error": {}}, f)
            asp = self.SWEEP.replace("32,0.8,1280,bsp", "32,0.8,1280,asp")
            for sweep, args, message in (
                    (asp, ["--penalty", stale], "row 2 (asp) has no staleness_mean_updates"),
                    (self.SWEEP, ["--ratio", "0.1"], "--ratio goes with a compression --penalty"),
                    (self.SWEEP, ["--penalty", packed], "row 1 has no training.compressor.params.ratio column: give "
                                                         "--ratio for a compression penalty"),
                    (self.SWEEP, ["--penalty", packed, "--ratio", "2"], "row 1 compression ratio: expected a kept "
                                                                         "fraction in (0, 1], got 2"),
                    (self.SWEEP, ["--penalty", os.path.join(tmp, "none.json")], "No such file")):
                result = self.model(sweep, "--b-crit", "10", "--s-min", "5", *args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(message, result.stderr)

    def test_bad_input_is_one_line(self):
        for sweep, args, message in (
                (self.SWEEP.replace("32,0.8,1280,bsp", "32,0.8,1280,asp"), ["--b-crit", "10", "--s-min", "5"],
                 "row 2 is sync model 'asp'; the batch-size model covers bsp, and asp and ssp with a staleness --penalty"),
                (self.SWEEP, ["--b-crit", "10"], "give --s-min, or --reference EPOCHS@BATCH with --dataset-samples"),
                (self.SWEEP, ["--b-crit", "10", "--reference", "90"], "--reference needs --dataset-samples"),
                (self.SWEEP, ["--b-crit", "10", "--reference", "90", "--dataset-samples", "5"],
                 "--reference: expected EPOCHS@BATCH (e.g. 90@256), got '90'"),
                ("workers,sync_model\n1,bsp\n", ["--b-crit", "10", "--s-min", "5"], "no iteration_time_s column")):
            result = self.model(sweep, *args)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(message, result.stderr)


if __name__ == "__main__":
    unittest.main()
