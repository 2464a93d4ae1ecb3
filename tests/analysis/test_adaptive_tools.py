#!/usr/bin/python3
"""Tests of the adaptive-compression tools: tools/measure_gain.py, analysis/plot_adaptive.py and
analysis/compression_whatif.py (docs/compression.md).

    /usr/bin/python3 tests/analysis/test_adaptive_tools.py [PATH_TO_DDLSIM] [-v]

measure_gain's run is skipped without torch and scikit-learn (the fit is tested with the standard library);
the what-if and the plot run ddlsim (default build/ddlsim); the figure is drawn only with matplotlib.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "analysis"))
import compression_whatif  # noqa: E402
import measure_gain  # noqa: E402  (imports torch only inside main)
import plot_adaptive  # noqa: E402

DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):  # the ddlsim binary CTest built
    DDLSIM = sys.argv.pop(1)
HAVE_TRAINING = all(importlib.util.find_spec(m) is not None for m in ("torch", "sklearn"))
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None


class FitTest(unittest.TestCase):
    def test_power_law_recovered(self):
        points = [(c, 2.5 * c ** 0.45) for c in (0.1, 0.033, 0.011, 0.004, 0.001)]
        a, b, err = measure_gain.fit_power(points)
        self.assertAlmostEqual(a, 2.5, places=9)
        self.assertAlmostEqual(b, 0.45, places=9)
        self.assertLess(err, 1e-9)

    def test_fit_error_is_the_largest_relative_error(self):
        points = [(0.1, 0.8), (0.01, 0.3), (0.001, 0.05)]
        a, b, err = measure_gain.fit_power(points)
        self.assertAlmostEqual(err, max(abs(min(1, a * c ** b) - g) / g for c, g in points), places=12)


@unittest.skipUnless(HAVE_TRAINING, "torch and scikit-learn are not installed (python3-torch, python3-sklearn)")
class MeasureGainTest(unittest.TestCase):
    def test_quick_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "gain.json")
            p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "measure_gain.py"), "--steps", "4",
                                "--every", "2", "--explore-steps", "5", "--out", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        self.assertEqual([c["step"] for c in doc["checkpoints"]], [0, 2, 4])
        for cp in doc["checkpoints"]:
            gains = [g for _, g in cp["measured"]]
            self.assertEqual([c for c, _ in cp["measured"]], measure_gain.CANDIDATES)
            self.assertTrue(all(0 < g < 1 for g in gains), gains)
            self.assertEqual(gains, sorted(gains, reverse=True))  # keeping more keeps more energy
            # Top-k keeps at least its share of the energy: gain(c) >= c.
            self.assertTrue(all(g >= c for c, g in cp["measured"]))
            fit = [min(1, cp["a"] * c ** cp["b"]) for c, _ in cp["measured"]]
            self.assertLessEqual(max(abs(f - g) / g for f, g in zip(fit, gains)), cp["max_fit_error"] + 1e-3)

    def test_bad_option(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "measure_gain.py"), "--ratios", "0.1,2",
                            "--out", "/dev/null"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--ratios: every CR must be in (0, 1]", p.stderr)


class WhatIfTest(unittest.TestCase):
    def test_seed_pick_is_the_smallest_closed_form(self):
        # N = 64, alpha = 10 us, 10 Gbps: the tree wins between (alpha/beta)/9 and (alpha/beta)/0.088 (docs).
        alpha, beta = 10e-6, 8 / 10e9
        self.assertEqual(compression_whatif.seed_pick(64, alpha, beta, 1000), "allgather")
        self.assertEqual(compression_whatif.seed_pick(64, alpha, beta, 10000), "artopk_tree")
        self.assertEqual(compression_whatif.seed_pick(64, alpha, beta, 1e6), "artopk_ring")

    @unittest.skipUnless(os.path.exists(DDLSIM), f"{DDLSIM} is not built")
    def test_grid_marks_the_fastest(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "analysis", "compression_whatif.py"), "--ddlsim", DDLSIM,
                            "--workers", "64", "--gradient-bytes", "102.2MB", "--ratios", "0.1,0.001",
                            "--latencies", "1us,1ms", "--csv"], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split(",") for line in p.stdout.strip().split("\n")[1:]]
        cells = {}
        for latency, ratio, option, t, fastest, seed in rows:
            cells.setdefault((latency, ratio), []).append((option, float(t), fastest == "1", seed))
        self.assertEqual(len(cells), 2 * 3)  # a dense row and two ratios per latency
        for (latency, ratio), options in cells.items():
            if ratio == "":
                self.assertEqual([o for o, *_ in options], ["dense"])
                continue
            best = min(options, key=lambda o: o[1])
            self.assertEqual([o for o, _, f, _ in options if f], [best[0]])
            self.assertEqual(best[3], best[0])  # the seed's inequalities agree on the uncontended star
        n = 102.2e6 / 4
        # At 1 us and ratio 0.1 the ring: its time is the seed's t_ARTring with alpha = 2 us, beta = 8 / 10 Gbps.
        mc = 4 * math.ceil(0.1 * n - 1e-9)
        ring = dict((o, t) for o, t, *_ in cells[("1us", "0.1")])["artopk_ring"]
        self.assertAlmostEqual(ring, 2e-6 * (2 * 63 + 6) + mc * 8 / 10e9 * (2 * 63 / 64 + 6), delta=ring * 1e-6)
        self.assertEqual([o for o, _, f, _ in cells[("1ms", "0.001")] if f], ["allgather"])

    def test_exactly_one_axis(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "analysis", "compression_whatif.py")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("give exactly one of --bandwidths and --latencies", p.stderr)


@unittest.skipUnless(os.path.exists(DDLSIM), f"{DDLSIM} is not built")
class PlotAdaptiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "run")
        p = subprocess.run([DDLSIM, "run", os.path.join(ROOT, "scenarios", "resnet50_adaptive_fluctuating_10gbps.json"),
                            "--set", "workload.iterations=200", "--out", cls.out, "--quiet"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_series(self):
        its, network, explorations = plot_adaptive.series(self.out)
        self.assertEqual(len(its), 200)
        with open(os.path.join(self.out, "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        a = summary["adaptive_compression"]
        self.assertEqual(sum(r["exploring"] for r in its), a["exploration_iterations"])
        self.assertEqual(network[0], (0.0, 10.0))  # 10 Gbps at the start, in Gbps
        self.assertEqual([r for _, r in explorations], [e["reason"] for e in a["explorations"]])
        self.assertAlmostEqual(network[1][1], 1.0, places=9)  # the drop to 1 Gbps at 20 s
        self.assertGreater(network[1][0], 20.0)

    def test_not_adaptive(self):
        other = os.path.join(self.tmp.name, "dense")
        subprocess.run([DDLSIM, "run", os.path.join(ROOT, "scenarios", "default.json"), "--set",
                        "workload.iterations=2", "--out", other, "--quiet"], check=True, capture_output=True)
        with self.assertRaises(plot_adaptive.PlotError) as e:
            plot_adaptive.series(other)
        self.assertIn("the run has no adaptive compression", str(e.exception))

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed (python3-matplotlib)")
    def test_figure(self):
        png = os.path.join(self.tmp.name, "a.png")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "analysis", "plot_adaptive.py"), self.out, "--output", png],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
