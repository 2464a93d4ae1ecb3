#!/usr/bin/python3
"""Tests of analysis/published_scaling.py (docs/validation.md, "Published scaling").

    /usr/bin/python3 tests/analysis/test_published_scaling.py [PATH_TO_DDLSIM] [-v]

* A row with a baseline is predicted as the scenario's scaling_efficiency divided by the baseline's,
  both read here from `ddlsim run` directly; a row without one as its own; the gap is in points.
* The bundled table names every scenario of scenarios/published/ and runs.
* Bad tables are refused with one line and exit 2.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "analysis", "published_scaling.py")
DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    DDLSIM = os.path.abspath(sys.argv.pop(1))
HEADER = "name,scenario,baseline,published_efficiency,source"


def scenario(workers):
    return {"name": f"tiny{workers}", "seed": 1,
            "platform": {"topology": "star", "workers": workers, "link": {"bandwidth": "1Gbps", "latency": "10us"}},
            "network": {"fidelity": "analytic"},
            "workload": {"synthetic": {"layers": 4, "forward_s": 0.001, "backward_s": 0.002, "grad_bytes": "1MB"},
                         "iterations": 5},
            "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}}}


def run(args):
    return subprocess.run([sys.executable, SCRIPT] + args + ["--ddlsim", DDLSIM], capture_output=True, text=True)


def efficiency(path, out):
    p = subprocess.run([DDLSIM, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        return json.load(f)["scaling_efficiency"]


@unittest.skipUnless(os.access(DDLSIM, os.X_OK), f"no ddlsim binary at {DDLSIM}")
class PublishedScalingTest(unittest.TestCase):
    def test_rows_with_and_without_a_baseline(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as tmp:
            paths = {}
            for n in (2, 8):
                paths[n] = os.path.join(tmp, f"tiny{n}.json")
                with open(paths[n], "w", encoding="utf-8") as f:
                    json.dump(scenario(n), f)
            rel = {n: os.path.relpath(p, ROOT) for n, p in paths.items()}
            table = os.path.join(tmp, "published.csv")
            with open(table, "w", encoding="utf-8") as f:
                f.write(f"# a comment\n{HEADER}\nalone,{rel[8]},,0.5,hand\nrelative,{rel[8]},{rel[2]},0.75,\"hand, quoted\"\n")
            out = os.path.join(tmp, "out.csv")
            p = run([table, "--out", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            e8 = efficiency(paths[8], os.path.join(tmp, "o8"))
            e2 = efficiency(paths[2], os.path.join(tmp, "o2"))
            self.assertLess(e8, e2)  # the ring costs more on 8 workers
            with open(out, encoding="utf-8") as f:
                rows = [line.split(",") for line in f.read().splitlines() if not line.startswith("#")][1:]
            self.assertEqual([r[0] for r in rows], ["alone", "relative"])
            self.assertEqual(rows[0][1:3], ["8", "1"])
            self.assertAlmostEqual(float(rows[0][3]), e8, delta=1e-12)
            self.assertAlmostEqual(float(rows[0][5]), 100 * (e8 - 0.5), delta=1e-9)
            self.assertEqual(rows[1][1:3], ["8", "2"])
            self.assertAlmostEqual(float(rows[1][3]), e8 / e2, delta=1e-12)
            self.assertAlmostEqual(float(rows[1][5]), 100 * (e8 / e2 - 0.75), delta=1e-9)

    def test_the_bundled_table_covers_every_published_scenario(self):
        p = run([])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(ROOT, "docs", "data", "published_scaling.csv"), encoding="utf-8") as f:
            text = f.read()
        for path in glob.glob(os.path.join(ROOT, "scenarios", "published", "*.json")):
            self.assertIn(os.path.relpath(path, ROOT), text)
        self.assertIn("median |gap|", p.stdout)
        self.assertEqual(len([line for line in p.stdout.splitlines() if " 512 " in line]), 3)

    def test_refusals(self):
        with tempfile.TemporaryDirectory() as tmp:
            table = os.path.join(tmp, "t.csv")
            for body, message in (
                    ("name,scenario\n", "the header is 'name,scenario'"),
                    (f"{HEADER}\nx,scenarios/default.json,,1.5,s\n", "published_efficiency must be in (0, 1], got 1.5"),
                    (f"{HEADER}\nx,scenarios/default.json,,high,s\n", "published_efficiency 'high' is not a number"),
                    (f"{HEADER}\nx,scenarios/nowhere.json,,0.9,s\n", "scenario scenarios/nowhere.json does not exist"),
                    (f"{HEADER}\n", "no rows")):
                with open(table, "w", encoding="utf-8") as f:
                    f.write(body)
                p = run([table])
                self.assertEqual(p.returncode, 2, (body, p.stdout, p.stderr))
                self.assertIn(message, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
