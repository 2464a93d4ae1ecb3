#!/usr/bin/python3
"""Tests of analysis/units.py, analysis/plot_speedup.py (labels, --where, --x with units) and
tools/profile_torch.py without PyTorch. No ddlsim needed: the sweep.csv files are written here.

    /usr/bin/python3 tests/analysis/test_plots_tools.py [-v]

Runs in a few seconds. The one test that draws needs matplotlib (Debian: python3-matplotlib, which
tools/install-deps.sh installs); everything else needs only the standard library.
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

import plot_speedup  # noqa: E402
import units  # noqa: E402

PLOT = os.path.join(ROOT, "analysis", "plot_speedup.py")
PROFILE_TORCH = os.path.join(ROOT, "tools", "profile_torch.py")

GRID = ["platform.workers", "platform.link.bandwidth"]
SUMMARY = ["workers", "iteration_time_s", "throughput_samples_per_s", "speedup", "scaling_efficiency",
           "compute_time_per_iteration_s", "exposed_comm_time_per_iteration_s", "overlap_fraction",
           "comm_bytes_per_iteration", "fidelity", "collective_granularity", "network_model", "sync_model",
           "collective"]
HEADER = GRID + SUMMARY


def summary_row(workers, bandwidth_gbps):
    t = 0.1 + 0.01 * (workers - 1) * 10 / bandwidth_gbps  # made up, but decreasing with bandwidth
    return [str(workers), f"{t!r}", f"{16 * workers / t!r}", f"{workers * 0.1 / t!r}", f"{0.1 / t!r}", "0.1",
            f"{t - 0.1!r}", "0.5", "1e9", "flow", "pipelined", "ideal", "bsp", "ring"]


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def sweep_rows():
    """A 4 x 3 grid as analysis/sweep.py writes it: bandwidths in the spelling they were given."""
    return [[str(n), f"{b}Gbps"] + summary_row(n, b) for n in (1, 2, 4, 8) for b in (100, 10, 25)]


def dict_rows(header, rows):
    return [dict(zip(header, r)) for r in rows]


class UnitsTest(unittest.TestCase):
    """Every unit of models/units.cpp, with the value derived from its definition."""

    def test_bandwidth_units(self):
        bits, byte = 1 / 8, 1.0  # bytes per second in one bit/s and one byte/s
        expected = {
            "bps": bits, "Kbps": 1e3 * bits, "Mbps": 1e6 * bits, "Gbps": 1e9 * bits, "Tbps": 1e12 * bits,
            "Bps": byte, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
            "KiBps": 2.0 ** 10, "MiBps": 2.0 ** 20, "GiBps": 2.0 ** 30, "TiBps": 2.0 ** 40,
        }
        self.assertEqual(list(units.BANDWIDTH_UNITS), list(expected), "units and their order (error messages)")
        for unit, factor in expected.items():
            self.assertAlmostEqual(units.parse_bandwidth_Bps(f"3{unit}") / (3 * factor), 1.0, places=12, msg=unit)
        self.assertEqual(units.parse_bandwidth_Bps("25Gbps"), 25e9 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("25000Mbps"), 25e9 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("3.125GBps"), 25e9 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("100Mbps"), 100e6 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("10 Gbps"), 10e9 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("1e2Mbps"), 100e6 / 8)
        self.assertEqual(units.parse_bandwidth_Bps("1.6Tbps"), 1.6e12 / 8)

    def test_time_units(self):
        expected = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
        self.assertEqual(list(units.TIME_UNITS), list(expected))
        for unit, factor in expected.items():
            self.assertAlmostEqual(units.parse_time_s(f"7{unit}") / (7 * factor), 1.0, places=12, msg=unit)
        self.assertEqual(units.parse_time_s("2us"), 2e-6)
        self.assertEqual(units.parse_time_s("1.5ms"), 1.5e-3)
        self.assertEqual(units.parse_time_s("0s"), 0.0)

    def test_byte_units(self):
        expected = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
                    "KiB": 2.0 ** 10, "MiB": 2.0 ** 20, "GiB": 2.0 ** 30, "TiB": 2.0 ** 40}
        self.assertEqual(list(units.BYTE_UNITS), list(expected))
        for unit, factor in expected.items():
            self.assertAlmostEqual(units.parse_bytes(f"5{unit}") / (5 * factor), 1.0, places=12, msg=unit)
        self.assertEqual(units.parse_bytes("25MB"), 25e6)
        self.assertEqual(units.parse_bytes("25MiB"), 25 * 1024 * 1024)

    def test_errors_as_models_units_cpp(self):
        # The messages of tests/models/units_test.cpp.
        cases = [
            (units.parse_bandwidth_Bps, "25", 'missing unit in "25"; expected one of bps, Kbps, Mbps, Gbps, '
                                              "Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps"),
            (units.parse_time_s, "3 hours", 'unknown time unit "hours" in "3 hours"; expected one of ns, us, ms, s'),
            (units.parse_bytes, "MB", "expected a size in bytes: a number followed by one of B, KB, MB, GB, TB, "
                                      'KiB, MiB, GiB, TiB, got "MB"'),
            (units.parse_bandwidth_Bps, "10gbps", 'unknown bandwidth unit "gbps" in "10gbps"; expected one of bps, '
                                                  "Kbps, Mbps, Gbps, Tbps, Bps, KBps, MBps, GBps, TBps, KiBps, "
                                                  "MiBps, GiBps, TiBps"),
            (units.parse_bandwidth_Bps, " 10 Gbps ", '" 10 Gbps " has a space at its start; a bandwidth is written '
                                                     'without spaces around it: "10 Gbps"'),
            (units.parse_time_s, "2us ", '"2us " has a space at its end; a time is written without spaces around '
                                         'it: "2us"'),
        ]
        for parse, text, message in cases:
            with self.assertRaises(units.UnitError, msg=text) as cm:
                parse(text)
            self.assertEqual(str(cm.exception), message)
        for parse, text in [(units.parse_time_s, "2US"), (units.parse_bytes, "25mb"), (units.parse_bytes, "1kB"),
                            (units.parse_bandwidth_Bps, "+5Gbps"), (units.parse_bandwidth_Bps, "25GB"),
                            (units.parse_bandwidth_Bps, "infGbps"), (units.parse_time_s, "0x10s")]:
            with self.assertRaises(units.UnitError, msg=text):
                parse(text)

    def test_quantity_kinds(self):
        self.assertEqual(units.parse_quantity("25Gbps"), ("bandwidth", 25e9 / 8))
        self.assertEqual(units.parse_quantity("2us"), ("time", 2e-6))
        self.assertEqual(units.parse_quantity("25MiB"), ("bytes", 25 * 2.0 ** 20))
        for text in ("8", "ring", "25 furlongs", "", "Gbps"):
            self.assertIsNone(units.parse_quantity(text), text)
        self.assertEqual(units.parse_number(" 8.0 "), 8.0)
        self.assertIsNone(units.parse_number("8x"))


class WhereTest(unittest.TestCase):
    """--where compares values, not spellings."""

    def select(self, column, cells, wanted):
        header = [column, "workers"]
        rows = dict_rows(header, [[c, "1"] for c in cells])
        kept = plot_speedup.filter_rows(rows, header, [f"{column}={wanted}"])
        return [r[column] for r in kept]

    def test_bandwidth(self):
        cells = ["25Gbps", "25000Mbps", "3.125GBps", "10Gbps", "25GB", "3125000000", "25 Gbps", "\"25Gbps\"",
                 "25Gbit"]
        expected = ["25Gbps", "25000Mbps", "3.125GBps", "25 Gbps", "\"25Gbps\""]
        for wanted in ("25Gbps", "25000Mbps", "3.125GBps", "0.025Tbps"):
            self.assertEqual(self.select("platform.link.bandwidth", cells, wanted), expected, wanted)

    def test_numbers(self):
        cells = ["8", "\"8\"", "8.0", "8e0", "80", "16", "8Gbps", "eight"]
        self.assertEqual(self.select("platform.workers", cells, "8"), ["8", "\"8\"", "8.0", "8e0"])
        self.assertEqual(self.select("platform.workers", cells, "8.0"), ["8", "\"8\"", "8.0", "8e0"])
        # Relative tolerance 1e-9: rounding in a written number still matches, a real difference does not.
        self.assertEqual(self.select("x", ["0.30000000000000004", "0.3", "0.3000001"], "0.3"),
                         ["0.30000000000000004", "0.3"])

    def test_times_and_bytes(self):
        self.assertEqual(self.select("platform.link.latency", ["2us", "2000ns", "0.002ms", "2e-06", "2ms"], "2us"),
                         ["2us", "2000ns", "0.002ms", "2e-06"])
        self.assertEqual(self.select("training.bucketing.bucket_bytes", ["25MB", "25000000", "25MiB", "25000KB"],
                                     "25MB"), ["25MB", "25000000", "25000KB"])
        self.assertEqual(self.select("training.bucketing.bucket_bytes", ["25MB", "25MiB", "26214400"], "25MiB"),
                         ["25MiB", "26214400"])

    def test_booleans_and_strings(self):
        cells = ["true", "True", "false", "1", "0", "\"true\""]
        for wanted in ("true", "True", "1"):
            self.assertEqual(self.select("training.bucketing.overlap", cells, wanted),
                             ["true", "True", "1", "\"true\""], wanted)
        self.assertEqual(self.select("training.bucketing.overlap", cells, "false"), ["false", "0"])
        self.assertEqual(self.select("training.collective.name", ["ring", "\"ring\"", "tree", "Ring"], "ring"),
                         ["ring", "\"ring\""])
        self.assertEqual(self.select("platform.params", ['{"k": 4}', '{"k": 4.0}', '{"k": 6}'], '{"k":4}'),
                         ['{"k": 4}', '{"k": 4.0}'])

    def test_where_on_a_sweep(self):
        header = HEADER
        rows = dict_rows(header, sweep_rows())
        kept = plot_speedup.filter_rows(rows, header, ["platform.link.bandwidth=25000Mbps", "platform.workers=8.0"])
        self.assertEqual([(r["platform.workers"], r["platform.link.bandwidth"]) for r in kept], [("8", "25Gbps")])
        kept = plot_speedup.filter_rows(rows, header, ["/platform/link/bandwidth=3.125GBps"])  # JSON pointer
        self.assertEqual(len(kept), 4)
        with self.assertRaises(plot_speedup.PlotError):
            plot_speedup.filter_rows(rows, header, ["platform.nope=1"])


class LabelsTest(unittest.TestCase):
    """Titles, axis labels and legends, built without drawing."""

    def test_speedup_vs_workers_by_bandwidth(self):
        rows = dict_rows(HEADER, sweep_rows())
        labels = plot_speedup.build_labels(HEADER, rows, "workers", "speedup", ["platform.link.bandwidth"],
                                           scenario_name="resnet50_bsp_ring_25gbps")
        self.assertEqual(labels.title,
                         "Speedup vs workers — resnet50_bsp_ring_25gbps, bsp/ring, flow fidelity, by link bandwidth")
        self.assertEqual(labels.xlabel, "workers")
        self.assertEqual(labels.ylabel, "speedup (× one worker's throughput)")
        self.assertEqual(labels.legend_title, "link bandwidth")
        self.assertEqual(labels.series_label(("25Gbps",)), "25Gbps")

    def test_speedup_vs_bandwidth_by_workers(self):
        rows = dict_rows(HEADER, sweep_rows())
        labels = plot_speedup.build_labels(HEADER, rows, "platform.link.bandwidth", "speedup", ["platform.workers"])
        self.assertEqual(labels.title, "Speedup vs link bandwidth — bsp/ring, flow fidelity, by workers")
        self.assertEqual(labels.xlabel, "link bandwidth (Gbps)")
        self.assertEqual(labels.legend_title, "workers")

    def test_constant_grid_columns_in_title(self):
        header = ["platform.workers", "platform.link.latency"] + HEADER[1:]
        rows = dict_rows(header, [["8", lat] + r[1:] for lat, r in zip(["2us", "10us", "50us"], sweep_rows())])
        labels = plot_speedup.build_labels(header, rows, "platform.link.latency", "iteration_time_s", [])
        self.assertEqual(labels.title, "Iteration time vs link latency — bsp/ring, 8 workers, flow fidelity")
        self.assertEqual(labels.xlabel, "link latency (us)")
        self.assertEqual(labels.ylabel, "iteration time (ms)")
        self.assertEqual(labels.legend_title, "")

    def test_legend_titles_in_words(self):
        words = plot_speedup.column_words
        self.assertEqual(words("platform.link.bandwidth"), "link bandwidth")
        self.assertEqual(words("/platform/link/latency"), "link latency")
        self.assertEqual(words("platform.workers"), "workers")
        self.assertEqual(words("training.collective.name"), "collective")
        self.assertEqual(words("training.sync.params.staleness_bound"), "staleness bound")  # generic fallback
        self.assertEqual(words("training.foo_bar.name"), "foo bar")
        rows = [{"training.bucketing.bucket_bytes": "25000000", "training.collective.name": "ring"}]
        self.assertEqual(plot_speedup.legend_title(["training.bucketing.bucket_bytes", "training.collective.name"],
                                                   rows), "bucket size (B), collective")
        rows = [{"training.bucketing.bucket_bytes": "25MB"}]
        self.assertEqual(plot_speedup.legend_title(["training.bucketing.bucket_bytes"], rows), "bucket size")

    def test_axis_units_and_order(self):
        def axis_values(column, cells):
            rows = [{column: c} for c in cells]
            a = plot_speedup.axis(column, rows)
            return a.label, [a.convert(c, i) for i, c in enumerate(cells, start=2)]

        label, xs = axis_values("platform.link.bandwidth", ["100Gbps", "10Gbps", "3.125GBps", "100Mbps"])
        self.assertEqual(label, "link bandwidth (Gbps)")
        self.assertEqual([round(x, 9) for x in xs], [100, 10, 25, 0.1])
        label, xs = axis_values("platform.link.latency", ["2us", "500us", "2ms"])
        self.assertEqual(label, "link latency (ms)")
        self.assertEqual([round(x, 9) for x in xs], [0.002, 0.5, 2])
        label, xs = axis_values("platform.link.latency", ["2us", "500ns", "0.00005"])
        self.assertEqual(label, "link latency (us)")
        self.assertEqual([round(x, 9) for x in xs], [2, 0.5, 50])
        label, xs = axis_values("training.bucketing.bucket_bytes", ["25MB", "25MiB", "1000000"])
        self.assertEqual(label, "bucket size (MB)")
        self.assertEqual([round(x, 9) for x in xs], [25, 26.2144, 1])
        with self.assertRaises(plot_speedup.PlotError):
            axis_values("platform.link.bandwidth", ["10Gbps", "2us"])  # two kinds
        with self.assertRaises(plot_speedup.PlotError):
            axis_values("platform.link.bandwidth", ["10Gbps", "1250000000"])  # ddlsim needs a unit here
        order = sorted(["100Gbps", "10Gbps", "25Gbps", "3.125GBps", "500Mbps"], key=plot_speedup.sort_key)
        self.assertEqual(order, ["500Mbps", "10Gbps", "25Gbps", "3.125GBps", "100Gbps"])
        self.assertEqual(sorted(["16", "2", "4", "1"], key=plot_speedup.sort_key), ["1", "2", "4", "16"])


class PlotCommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "sweep.csv")
        write_csv(self.csv, HEADER, sweep_rows())

    def tearDown(self):
        self.tmp.cleanup()

    def run_plot(self, *args):
        return subprocess.run([sys.executable, PLOT, self.csv, *args], capture_output=True, text=True, timeout=60)

    def test_x_bandwidth_draws_a_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.fail(f"{sys.executable} cannot import matplotlib (apt-get install -y python3-matplotlib)")
        out = os.path.join(self.tmp.name, "bw.png")
        p = self.run_plot("--x", "platform.link.bandwidth", "--where", "platform.workers=8.0", "--output", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(1 line(s), 3 point(s))", p.stderr)
        self.assertTrue(os.path.getsize(out) > 0)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        out = os.path.join(self.tmp.name, "all.png")
        p = self.run_plot("--x", "platform.link.bandwidth", "--output", out)  # one line per worker count
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(4 line(s), 12 point(s))", p.stderr)
        self.assertTrue(os.path.getsize(out) > 0)

    def test_time_to_target_leaves_out_the_points_that_did_not_reach_it(self):
        csv_path = os.path.join(self.tmp.name, "conv.csv")
        write_csv(csv_path, ["platform.workers", "training.sync.name", "workers", "time_to_target_s"],
                  [["2", "bsp", "2", "1.9"], ["4", "bsp", "4", "2.8"], ["2", "local_sgd", "2", ""],
                   ["4", "local_sgd", "4", "0.5"]])
        out = os.path.join(self.tmp.name, "t.png")
        p = subprocess.run([sys.executable, PLOT, csv_path, "--y", "time_to_target_s", "--no-ideal", "--output", out],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 point(s) did not reach the target accuracy (time_to_target_s empty) and are left out", p.stderr)
        self.assertIn("(2 line(s), 3 point(s))", p.stderr)
        write_csv(csv_path, ["platform.workers", "workers", "time_to_target_s"], [["2", "2", ""]])
        p = subprocess.run([sys.executable, PLOT, csv_path, "--y", "time_to_target_s", "--output", out],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no point reached the target accuracy", p.stderr)

    def test_errors_are_one_line_and_exit_2(self):
        out = os.path.join(self.tmp.name, "x.png")
        for args, text in [(["--where", "nope=1"], "--where 'nope=1': expected COLUMN=VALUE"),
                           (["--where", "platform.link.bandwidth=40Gbps"], "has no rows to plot after --where"),
                           (["--x", "platform.link.bandwidth", "--series", "none"], "two rows have"),
                           (["--x", "fidelity"], "column 'fidelity' is not a number")]:
            p = self.run_plot(*args, "--output", out)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertTrue(p.stderr.startswith("plot_speedup.py: error: "), p.stderr)
            self.assertIn(text, p.stderr)
            self.assertFalse(os.path.exists(out))


class ProfileTorchWithoutTorchTest(unittest.TestCase):
    """tools/profile_torch.py where `import torch` fails: one line on stderr, exit 2, no traceback."""

    def run_with_fake_torch(self, torch_py, *args):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "torch.py"), "w") as f:
                f.write(torch_py)
            env = dict(os.environ)
            env["PYTHONPATH"] = tmp + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            return subprocess.run([sys.executable, PROFILE_TORCH, *args, "--output", os.path.join(tmp, "p.json")],
                                  capture_output=True, text=True, env=env, timeout=60)

    def test_torch_not_installed(self):
        # What Python raises for a module that is not there.
        p = self.run_with_fake_torch("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n",
                                     "--model", "mnist_cnn")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr,
                         "profile_torch.py: error: PyTorch is not installed (Debian: apt-get install python3-torch)\n")
        self.assertEqual(p.stdout, "")

    def test_torch_that_fails_to_import(self):
        p = self.run_with_fake_torch("raise ImportError('libtorch_cpu.so: cannot open shared object file')\n",
                                     "--model", "mnist_cnn")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, "profile_torch.py: error: PyTorch cannot be imported: libtorch_cpu.so: cannot "
                                   "open shared object file (Debian: apt-get install python3-torch)\n")
        self.assertEqual(p.stdout, "")

    def test_help_needs_no_torch(self):
        p = self.run_with_fake_torch("raise ImportError('no torch here')\n", "--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--model", p.stdout)


if __name__ == "__main__":
    unittest.main()
