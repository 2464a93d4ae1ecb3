#!/usr/bin/python3
"""Tests of tools/measure_compressors.py (docs/compression_costs.md).

    /usr/bin/python3 tests/analysis/test_measure_compressors.py [-v]

Without PyTorch (Debian: python3-torch) the measuring test is skipped, with the reason printed; the fit,
the option checks, the missing-torch exit and the shipped tables are tested with the standard library only.
With PyTorch it runs the tool with --quick into a temporary directory (a few seconds) and checks the JSON
schema, that every coefficient is finite and >= 0, and that top-k's encode of a 25 MB gradient (by the
fitted model) is slower than random-k's.
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
TOOL = os.path.join(ROOT, "tools", "measure_compressors.py")
TABLES = os.path.join(ROOT, "scenarios", "compressor_costs")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import measure_compressors as mc  # noqa: E402  (imports torch only inside main)

HAVE_TORCH = importlib.util.find_spec("torch") is not None
TOP_KEYS = {"device", "source", "method", "compression_ratio", "compressors"}
PHASE_KEYS = {"fixed_s", "per_element_s", "n_log_k_s"}


def check_table(test, doc, expect_names=None):
    """The schema of docs/compression_costs.md: exactly these keys, finite non-negative coefficients."""
    test.assertEqual(set(doc), TOP_KEYS)
    for key in ("device", "source", "method"):
        test.assertIsInstance(doc[key], str)
        test.assertTrue(doc[key].strip(), key)
        test.assertNotIn("\n", doc["device"])
    ratio = doc["compression_ratio"]
    test.assertIsInstance(ratio, (int, float))
    test.assertTrue(0 < ratio <= 1)
    test.assertIsInstance(doc["compressors"], dict)
    test.assertTrue(doc["compressors"])
    if expect_names is not None:
        test.assertEqual(set(doc["compressors"]), set(expect_names))
    for name, entry in doc["compressors"].items():
        with test.subTest(compressor=name):
            test.assertEqual(set(entry), {"encode", "decode", "max_fit_error"})
            for phase in ("encode", "decode"):
                test.assertEqual(set(entry[phase]), PHASE_KEYS)
                for key, value in entry[phase].items():
                    test.assertIsInstance(value, (int, float), f"{phase}.{key}")
                    test.assertTrue(math.isfinite(value) and value >= 0, f"{phase}.{key} = {value}")
            test.assertEqual(entry["decode"]["n_log_k_s"], 0)
            err = entry["max_fit_error"]
            test.assertTrue(isinstance(err, (int, float)) and math.isfinite(err) and err >= 0)
            # Some time per call, however small the gradient.
            test.assertGreater(entry["encode"]["fixed_s"] + entry["encode"]["per_element_s"]
                               + entry["encode"]["n_log_k_s"], 0)


def cost(phase, nbytes, ratio):
    n = nbytes // 4
    k = max(1, math.ceil(ratio * n))
    return mc.predict(phase, n, k)


class FitTest(unittest.TestCase):
    """The least-squares fit, on points made from known coefficients."""

    def test_recovers_a_line(self):
        pts = [(n, n // 100 or 1, 5e-6 + 2e-10 * n) for n in (256, 4096, 65536, 1 << 20, 1 << 24)]
        coef, err = mc.fit(pts, with_log=False)
        self.assertAlmostEqual(coef[0] / 5e-6, 1, places=6)
        self.assertAlmostEqual(coef[1] / 2e-10, 1, places=6)
        self.assertLess(err, 1e-9)

    def test_recovers_n_log_k(self):
        pts = [(n, math.ceil(n / 100), 4e-6 + 1e-10 * n + 3e-10 * n * math.log2(math.ceil(n / 100)))
               for n in (256, 4096, 65536, 1 << 20, 1 << 24)]
        coef, err = mc.fit(pts, with_log=True)
        for got, want in zip(coef, (4e-6, 1e-10, 3e-10)):
            self.assertAlmostEqual(got / want, 1, places=5)
        self.assertLess(err, 1e-6)

    def test_coefficients_never_negative(self):
        # Decreasing per-element time would want a negative slope: the fit keeps it at 0.
        pts = [(256, 3, 1e-3), (4096, 41, 0.9e-3), (65536, 656, 0.8e-3)]
        coef, err = mc.fit(pts, with_log=True)
        self.assertTrue(all(c >= 0 for c in coef), coef)
        self.assertLess(err, 0.2)

    def test_relative_weights(self):
        # A bad fit at the small size would be a large relative error: the fit spreads it evenly.
        pts = [(256, 3, 1e-5), (1 << 20, 10486, 1e-3), (1 << 24, 167773, 2e-2)]
        coef, err = mc.fit(pts, with_log=False)
        small = (coef[0] + coef[1] * 256) / 1e-5
        self.assertGreater(small, 0.5)
        self.assertLess(err, 0.5)


class CommandLineTest(unittest.TestCase):
    def run_tool(self, *args, env=None):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, env=env,
                              timeout=300, check=False)

    def test_bad_options_are_one_line(self):
        for args in (["--ratio", "0"], ["--only", "nosuch"], ["--max-bytes", "2KB"], ["--qsgd-levels", "300"]):
            with self.subTest(args=args):
                with tempfile.TemporaryDirectory() as tmp:
                    r = self.run_tool("--out", os.path.join(tmp, "c.json"), *args)
                self.assertNotEqual(r.returncode, 0)
                self.assertNotIn("Traceback", r.stderr)

    def test_missing_torch_exits_2(self):
        """With torch hidden (a sys.path entry whose torch fails as absent), one line and exit status 2."""
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "fake")
            os.makedirs(os.path.join(fake, "torch"))
            with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                f.write("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
            env = dict(os.environ, PYTHONPATH=fake)
            r = self.run_tool("--quick", "--out", os.path.join(tmp, "c.json"), env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("python3-torch", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "c.json")))


class ShippedTablesTest(unittest.TestCase):
    """The tables under scenarios/compressor_costs/ follow the schema."""

    def test_shipped_tables(self):
        names = sorted(f for f in os.listdir(TABLES) if f.endswith(".json"))
        self.assertIn("cpu_this_machine.json", names)
        self.assertIn("v100_gravac.json", names)
        for fname in names:
            with self.subTest(table=fname):
                with open(os.path.join(TABLES, fname), encoding="utf-8") as f:
                    check_table(self, json.load(f))

    def test_cpu_table_has_every_compressor(self):
        with open(os.path.join(TABLES, "cpu_this_machine.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(set(doc["compressors"]), set(mc.COMPRESSORS))
        c = doc["compressors"]
        r = doc["compression_ratio"]
        self.assertGreater(cost(c["topk"]["encode"], 25 * mc.MIB, r), cost(c["randomk"]["encode"], 25 * mc.MIB, r))


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (Debian: apt-get install python3-torch)")
class QuickRunTest(unittest.TestCase):
    """tools/measure_compressors.py --quick: a real measurement, a few seconds."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "sub", "costs.json")
        cls.result = subprocess.run([sys.executable, TOOL, "--quick", "--quiet", "--out", cls.out],
                                    capture_output=True, text=True, timeout=300, check=False)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        with open(self.out, encoding="utf-8") as f:
            self.doc = json.load(f)

    def test_schema_and_coefficients(self):
        check_table(self, self.doc, expect_names=mc.COMPRESSORS)
        self.assertEqual(self.doc["compression_ratio"], 0.01)
        self.assertIn("--quick", self.doc["source"])

    def test_topk_slower_than_randomk_at_25mb(self):
        c = self.doc["compressors"]
        r = self.doc["compression_ratio"]
        topk = cost(c["topk"]["encode"], 25 * mc.MIB, r)
        randomk = cost(c["randomk"]["encode"], 25 * mc.MIB, r)
        self.assertGreater(topk, randomk, f"topk {topk:.3g} s, randomk {randomk:.3g} s at 25 MB")


if __name__ == "__main__":
    if not HAVE_TORCH:
        print(f"{os.path.basename(__file__)}: PyTorch is not installed (Debian: apt-get install python3-torch): "
              "skipping the --quick measurement; the fit, options and shipped tables are still tested",
              flush=True)
    unittest.main()
