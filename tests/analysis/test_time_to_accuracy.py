#!/usr/bin/python3
"""Tests of tools/measure_time_to_accuracy.py and analysis/validate_time_to_accuracy.py
(docs/validation.md, "Results: time to accuracy").

    /usr/bin/python3 tests/analysis/test_time_to_accuracy.py [PATH_TO_DDLSIM] [-v]

* The tool's evaluation schedule is ddlsim's: the iterations of convergence.csv for bsp, local SGD and
  gossip.
* With PyTorch, the tool trains for real on loopback (2 ranks, float64, a small split): its curves are
  ddlsim's co-simulated curves of the same settings to rounding -- the same shards, batches and
  arithmetic (the port of the co-simulation's random numbers is exact).
* The validator predicts a row as `ddlsim run` predicts the scenario written out by hand here, and
  refuses bad rows with one line and exit 2.
"""

import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "measure_time_to_accuracy.py")
SCRIPT = os.path.join(ROOT, "analysis", "validate_time_to_accuracy.py")
DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    DDLSIM = os.path.abspath(sys.argv.pop(1))
HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_DATA = os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import measure_time_to_accuracy as tool  # noqa: E402

SETTINGS = {"workers": 2, "batch": 16, "iterations": 30, "every": 5, "train": 2000, "test": 500, "lr": 0.2,
            "period": 4, "target": 0.6}


def scenario(sync, shards="iid"):
    s = SETTINGS
    doc = {"name": "tta_test", "seed": 1,
           "platform": {"topology": "star", "workers": s["workers"], "link": {"bandwidth": "100Mbps", "latency": "1ms"}},
           "workload": {"synthetic": {"layers": 1, "forward_s": "0.5ms", "backward_s": "0.3ms", "grad_bytes": 31400},
                        "batch_size": s["batch"], "iterations": s["iterations"]},
           "training": {"sync": sync,
                        "convergence": {"dataset": "fashion_mnist", "train_samples": s["train"], "test_samples": s["test"],
                                        "learning_rate": s["lr"], "target_accuracy": s["target"], "shards": shards,
                                        "evaluate_every_iterations": s["every"], "bsp_baseline": False}},
           "output": {"timeline": False}}
    if sync["name"] == "bsp":
        doc["training"]["collective"] = {"name": "ring"}
    if sync["name"] in ("asp", "ssp"):
        doc["platform"]["parameter_servers"] = 1
    return doc


def ddlsim_curve(doc, tmp):
    path = os.path.join(tmp, "s.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, "out")
    subprocess.run([DDLSIM, "run", path, "--out", out, "-q"], check=True)
    with open(os.path.join(out, "convergence.csv"), encoding="utf-8") as f:
        return [(int(r["iteration"]), float(r["test_loss"]), float(r["test_accuracy"])) for r in csv.DictReader(f)]


SYNCS = {"bsp": {"name": "bsp"}, "local_sgd": {"name": "local_sgd", "params": {"period_iterations": 4}},
         "dpsgd": {"name": "gossip", "params": {"graph": "ring"}}}


@unittest.skipUnless(HAVE_DATA, "needs Debian's dataset-fashion-mnist")
class ScheduleTest(unittest.TestCase):
    def test_evaluations_fall_where_ddlsim_evaluates(self):
        with tempfile.TemporaryDirectory() as tmp:
            for algorithm, sync in dict(SYNCS, asp={"name": "asp"}, ssp={"name": "ssp"}).items():
                expected = [k for k, _, _ in ddlsim_curve(scenario(sync), tmp)]
                self.assertEqual(tool.evaluation_iterations(algorithm, 30, 5, 4), expected, algorithm)

    def test_the_tool_refuses_bad_options_with_one_line(self):
        for args, message in ((["--ranks", "1"], "--ranks: every set-up here but asp and ssp alone needs at least 2 ranks"),
                              (["--target", "1.5"], "--target: expected a fraction in (0, 1], got 1.5"),
                              (["--algorithms", "sgd"], "unknown algorithm 'sgd' (choose from bsp, local_sgd, dpsgd, asp, ssp)")):
            result = subprocess.run(["/usr/bin/python3", TOOL, "--local", "--out", "/nonexistent/x.csv", *args],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(message, result.stderr)

    def test_shards_deal_every_sample_once(self):
        labels = [i % 10 for i in range(1000)]
        for by_label in (False, True):
            shards = tool.make_shards(labels, 4, by_label, 1)
            self.assertEqual(sorted(i for s in shards for i in s), list(range(1000)))
        by_label = tool.make_shards(labels, 5, True, 1)
        self.assertTrue(all(len({labels[i] for i in s}) <= 2 for s in by_label))  # two pieces of one class each


@unittest.skipUnless(HAVE_TORCH and HAVE_DATA, "needs PyTorch and dataset-fashion-mnist")
class RealTrainingTest(unittest.TestCase):
    def test_loopback_training_is_the_cosimulation_to_rounding(self):
        s = SETTINGS
        with tempfile.TemporaryDirectory() as tmp:
            out, curves = os.path.join(tmp, "tta.csv"), os.path.join(tmp, "curves.csv")
            subprocess.run(["/usr/bin/python3", TOOL, "--local", "--ranks", "2", "--dtype", "float64",
                            "--train-samples", str(s["train"]), "--test-samples", str(s["test"]),
                            "--iterations", str(s["iterations"]), "--batch-size", str(s["batch"]),
                            "--evaluate-every", str(s["every"]), "--target", str(s["target"]),
                            "--period", str(s["period"]), "--shards", "by_label", "--out", out, "--curves", curves],
                           check=True, stderr=subprocess.DEVNULL)
            with open(curves, encoding="utf-8") as f:
                rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
            for algorithm, sync in SYNCS.items():
                lab = [(int(r["iteration"]), float(r["test_loss"]), float(r["test_accuracy"]))
                       for r in rows if r["algorithm"] == algorithm]
                sim = ddlsim_curve(scenario(sync, "by_label"), tmp)
                self.assertEqual([k for k, _, _ in lab], [k for k, _, _ in sim], algorithm)
                for (_, lab_loss, lab_acc), (_, sim_loss, sim_acc) in zip(lab, sim):
                    self.assertAlmostEqual(lab_loss, sim_loss, delta=1e-6)  # convergence.csv's 6 decimals
                    self.assertAlmostEqual(lab_acc, sim_acc, delta=1e-6)


    def test_one_asp_worker_through_the_server_is_the_cosimulation_to_rounding(self):
        # One worker: the server applies its gradients in the one order there is, plain SGD (the
        # arrival order of several workers is the network's, so their curves are compared in the lab).
        self.served("asp", {"name": "asp"}, 1)

    def test_ssp_at_bound_0_is_bsp_through_the_server_to_rounding(self):
        # Bound 0: every pull waits for every push, and the server steps once with their sum; the
        # co-simulated ssp replays the same (ddlsim's ssp at bound 0 is bsp through a server).
        self.served("ssp", {"name": "ssp", "params": {"staleness_bound": 0}}, 2)

    def served(self, algorithm, sync, ranks):
        s = SETTINGS
        with tempfile.TemporaryDirectory() as tmp:
            out, curves = os.path.join(tmp, "tta.csv"), os.path.join(tmp, "curves.csv")
            subprocess.run(["/usr/bin/python3", TOOL, "--local", "--algorithms", algorithm, "--ranks", str(ranks),
                            "--staleness-bound", "0",
                            "--dtype", "float64", "--train-samples", str(s["train"]), "--test-samples", str(s["test"]),
                            "--iterations", str(s["iterations"]), "--batch-size", str(s["batch"]),
                            "--evaluate-every", str(s["every"]), "--target", str(s["target"]), "--out", out,
                            "--curves", curves], check=True, stderr=subprocess.DEVNULL)
            with open(curves, encoding="utf-8") as f:
                lab = [(int(r["iteration"]), float(r["test_loss"]), float(r["test_accuracy"]))
                       for r in csv.DictReader(line for line in f if not line.startswith("#"))]
            doc = scenario(sync)
            doc["platform"]["workers"] = ranks
            sim = ddlsim_curve(doc, tmp)
        self.assertEqual([k for k, _, _ in lab], [k for k, _, _ in sim])
        for (_, lab_loss, lab_acc), (_, sim_loss, sim_acc) in zip(lab, sim):
            self.assertAlmostEqual(lab_loss, sim_loss, delta=1e-6)
            self.assertAlmostEqual(lab_acc, sim_acc, delta=1e-6)


ROW = {"algorithm": "dpsgd", "ranks": "2", "batch_size": "32", "learning_rate": "0.2", "period_iterations": "", "staleness_bound": "",
       "shards": "iid", "train_samples": "2000", "test_samples": "500", "seed": "1", "dtype": "float32",
       "backend": "gloo", "bandwidth_bps": "100000000", "latency_s": "0.002", "iterations": "60",
       "evaluate_every": "10", "target_accuracy": "0.6", "time_to_target_s": "0.5", "iterations_to_target": "30",
       "final_test_accuracy": "0.7", "iteration_s_mean": "0.01", "compute_s_median": "0.0008", "compute_s_mean": "0.001",
       "compute_log_sd": "0.25", "compute_rank_factors": "1.0000 1.0000", "source": "lab"}


def write_rows(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write(",".join(tool.HEADER) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in tool.HEADER) + "\n")


@unittest.skipUnless(HAVE_DATA, "needs Debian's dataset-fashion-mnist")
class ValidatorTest(unittest.TestCase):
    def validate(self, rows, *extra):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, rows)
            return subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--quiet", *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_a_row_is_predicted_as_ddlsim_runs_its_scenario(self):
        result = self.validate([ROW])
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = scenario({"name": "gossip", "params": {"graph": "ring", "variant": "synchronous"}})
        doc["platform"]["link"] = {"bandwidth": "100000000bps", "latency": 0.001}
        doc["network"] = {"fidelity": "flow", "collective_granularity": "stepwise", "model": "ideal", "software": "gloo"}
        doc["workload"] = {"synthetic": {"model": "softmax 784-10", "layers": 1, "forward_s": 0.46e-3,
                                         "backward_s": 0.26e-3, "optimizer_s": 0.056e-3, "grad_bytes": 31400},
                           "batch_size": 32, "iterations": 60}
        doc["training"]["convergence"].update({"evaluate_every_iterations": 10, "target_accuracy": 0.6})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            subprocess.run([DDLSIM, "run", path, "--out", os.path.join(tmp, "out"), "-q"], check=True)
            with open(os.path.join(tmp, "out", "summary.json"), encoding="utf-8") as f:
                summary = json.load(f)
        predicted = summary["convergence"]["time_to_target_s"]
        self.assertIsNotNone(predicted)
        error = predicted / 0.5 - 1
        self.assertIn(f"| dpsgd | 2 | iid | 0.500 s | {predicted:.3f} s | {100 * error:+.1f} % | 30 | "
                      f"{summary['convergence']['iterations_to_target']} |", result.stdout)
        self.assertIn("ranking at 100 Mbit/s 2 ms, N=2, iid, lr 0.2, batch 32, 60%: measured dpsgd; predicted dpsgd: "
                      "the same; pairs measured more than 10 % apart: 0 of 0 in the measured order", result.stdout)

    def test_measured_compute_is_a_lognormal_of_the_rows_median_and_mean(self):
        # The row's compute (gradient and step): median 0.8 ms, mean 1 ms. The profile's three times
        # scaled to the mean, 1 ms / 0.776 ms, and lognormal noise (mean 1) of sigma
        # sqrt(2 ln(1 / 0.8)), whose median is e^(-sigma^2 / 2) = 0.8: the simulated median is 0.8 ms.
        import math
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, [ROW])
            keep = os.path.join(tmp, "keep")
            result = subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--quiet", "--compute",
                                     "measured", "--keep", keep], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(os.path.join(keep, "tta_row0", "draw1", "scenario.json"), encoding="utf-8") as f:
                doc = json.load(f)
        factor = 0.001 / (0.46e-3 + 0.26e-3 + 0.056e-3)
        synthetic = doc["workload"]["synthetic"]
        for key, profile in (("forward_s", 0.46e-3), ("backward_s", 0.26e-3), ("optimizer_s", 0.056e-3)):
            self.assertAlmostEqual(synthetic[key], factor * profile, delta=1e-15)
        sigma = math.sqrt(2 * math.log(1.25))
        self.assertEqual(doc["training"]["stragglers"]["distribution"], "lognormal")
        self.assertAlmostEqual(doc["training"]["stragglers"]["sigma"], sigma, delta=1e-15)
        self.assertAlmostEqual((synthetic["forward_s"] + synthetic["backward_s"] + synthetic["optimizer_s"])
                               * math.exp(-sigma ** 2 / 2), 0.0008, delta=1e-15)
        self.assertIn("compute measured", result.stdout)
        # bsp's measured compute is the gradient alone (the step follows the all-reduce); a mean at
        # the median is no noise
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, [dict(ROW, algorithm="bsp", compute_s_mean="0.0008")])
            keep = os.path.join(tmp, "keep")
            subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--quiet", "--compute", "measured",
                            "--keep", keep], check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(keep, "tta_row0", "draw1", "scenario.json"), encoding="utf-8") as f:
                doc = json.load(f)
        synthetic = doc["workload"]["synthetic"]
        self.assertAlmostEqual(synthetic["forward_s"] + synthetic["backward_s"], 0.0008, delta=1e-15)
        self.assertNotIn("stragglers", doc["training"])
        # rows measured before the tool recorded the mean are predicted from the profile only
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, [dict(ROW, compute_s_mean="")])
            result = subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--quiet", "--compute",
                                     "measured"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.strip(), "validate_time_to_accuracy.py: error: row dpsgd N=2 iid has no "
                         "compute_s_mean (measured before the tool recorded it): use --compute profile")

    def test_draws_predict_the_median_of_other_noise_seeds_over_the_same_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, [dict(ROW, algorithm="asp")])
            keep = os.path.join(tmp, "keep")
            result = subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--quiet", "--compute",
                                     "measured", "--draws", "3", "--keep", keep], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            times, docs = [], []
            for draw in (1, 2, 3):
                with open(os.path.join(keep, "tta_row0", f"draw{draw}", "scenario.json"), encoding="utf-8") as f:
                    docs.append(json.load(f))
                with open(os.path.join(keep, "tta_row0", f"draw{draw}", "out", "summary.json"), encoding="utf-8") as f:
                    times.append(json.load(f)["convergence"]["time_to_target_s"])
        self.assertEqual([d["training"]["stragglers"]["seed"] for d in docs], [1, 2, 3])
        self.assertEqual(len({d["seed"] for d in docs}), 1)  # the data order is the row's in every draw
        self.assertNotIn(None, times)
        self.assertGreater(len(set(times)), 1)  # other noise, other arrival times
        median = sorted(times)[1]
        self.assertIn(f"| asp | 2 | iid | 0.500 s | {median:.3f} s |", result.stdout)
        self.assertIn("compute measured, the median of 3 draws of its noise", result.stdout)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rows.csv")
            write_rows(path, [ROW])
            result = subprocess.run(["/usr/bin/python3", SCRIPT, path, "--ddlsim", DDLSIM, "--draws", "2"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.strip(), "validate_time_to_accuracy.py: error: --draws: only with --compute "
                         "measured (the profile's compute draws no noise)")

    def test_bad_rows_are_refused_with_one_line(self):
        for change, message in (({"dtype": "float64"}, "data row 1: dtype 'float64'; only float32 rows are predicted"),
                                ({"algorithm": "sgd"}, "data row 1: unknown algorithm 'sgd' (valid: bsp, local_sgd, dpsgd, asp, ssp)"),
                                ({"bandwidth_bps": ""}, "data row 1 has no lab bandwidth and latency (a --local row)"),
                                ({"ranks": "two"}, "data row 1: ranks 'two' is not a number")):
            result = self.validate([dict(ROW, **change)])
            self.assertEqual(result.returncode, 2)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(message, result.stderr)


sys.path.insert(0, os.path.join(ROOT, "analysis"))
import validate_time_to_accuracy as validator  # noqa: E402


class RepeatsAndRankingTest(unittest.TestCase):
    def test_repeats_are_one_row_of_medians_with_not_reached_as_the_slowest(self):
        base = {"algorithm": "asp", "ranks": 2, "shards": "iid", "learning_rate": 0.02, "source": "lab"}
        runs = [dict(base, time_to_target_s=t, iterations_to_target=k, final_test_accuracy=0.8, iteration_s_mean=m,
                     compute_s_mean=0.0012,
                     compute_s_median=0.001, compute_log_sd=sd)
                for t, k, m, sd in ((1.0, 100, 0.010, 0.1), (None, None, 0.014, 0.3), (2.0, 150, 0.012, 0.2))]
        other = dict(runs[0], ranks=3)
        merged = validator.merge_repeats(runs + [other])
        self.assertEqual(len(merged), 2)
        row = merged[0]
        self.assertEqual((row["runs"], row["time_to_target_s"], row["iterations_to_target"]), (3, 2.0, 150))
        self.assertAlmostEqual(row["iteration_s_mean"], 0.012)
        self.assertAlmostEqual(row["compute_log_sd"], 0.2)
        self.assertEqual(validator.runs_cell(row), "3: 1.000–2.000 s (2 reached)")
        self.assertEqual((merged[1]["runs"], validator.runs_cell(merged[1])), (1, "1"))
        # an even count: the mean of the middle two, none if one of them never reached the target
        self.assertEqual(validator.middle([1.0, 3.0]), 2.0)
        self.assertIsNone(validator.middle([1.0, None]))

    def test_pairs_closer_than_ten_percent_are_ties(self):
        def setup(measured, predicted):
            return {"time_to_target_s": measured, "predicted_s": predicted}
        a, b, c = setup(1.0, 2.0), setup(1.05, 1.0), setup(None, 3.0)  # a-b: a tie (5 % apart)
        self.assertEqual(validator.ordered_pairs([a, b, c]), (2, 2))
        self.assertEqual(validator.ordered_pairs([a, b, setup(None, None)]), (2, 2))
        self.assertEqual(validator.ordered_pairs([a, b, setup(None, 0.5)]), (2, 0))
        self.assertEqual(validator.ordered_pairs([a, setup(1.2, 2.0)]), (1, 0))  # predicted equal: not ordered


class ComputeSummaryTest(unittest.TestCase):
    def test_median_mean_spread_around_each_ranks_median_and_rank_factors(self):
        import math
        # rank 0: 1, 2, 3 ms; rank 1: 2, 4, 6 ms. Pooled median 2.5, mean 3. Around each rank's
        # median (2 and 4) the logs are ln 0.5, 0, ln 1.5 for both: the 16th and 84th percentiles
        # (linear between the six order statistics) are ln 0.5 and ln 1.5, a spread of ln(3) / 2.
        summary = tool.compute_summary([[1e-3, 2e-3, 3e-3], [2e-3, 4e-3, 6e-3]])
        self.assertAlmostEqual(summary["compute_s_median"], 2.5e-3, delta=1e-15)
        self.assertAlmostEqual(summary["compute_s_mean"], 3e-3, delta=1e-15)
        self.assertAlmostEqual(summary["compute_log_sd"], math.log(3) / 2, delta=1e-12)
        self.assertEqual(summary["compute_rank_factors"], "0.8000 1.6000")
        self.assertEqual(tool.compute_summary([[0.002] * 7]), {"compute_s_median": 0.002, "compute_s_mean": 0.002,
                                                               "compute_log_sd": 0.0, "compute_rank_factors": "1.0000"})


if __name__ == "__main__":
    unittest.main()
