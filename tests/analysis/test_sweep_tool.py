#!/usr/bin/python3
"""Tests of analysis/sweep.py's grid, progress and Slurm logic without a Slurm cluster: the scenario's
"sweep" section, grid conflicts (exit 2, one line), the batch script (array size, chunking,
directives), --collect on a partial tree, resubmission of the missing points only, the progress
bar and lines. tests/analysis/test_slurm.py runs the same code on a real one-node cluster.

    /usr/bin/python3 tests/analysis/test_sweep_tool.py build/ddlsim [-v]
"""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

import sweep_axes  # noqa: E402
import sweep_progress  # noqa: E402
import sweep_slurm  # noqa: E402

SWEEP = os.path.join(ROOT, "analysis", "sweep.py")
DDLSIM = None  # set by main


def scenario(sweep=None, **extra):
    doc = {
        "name": "sweep-tool",
        "description": "a small synthetic model for the sweep tests",
        "platform": {"topology": "star", "workers": 2, "link": {"bandwidth": "10Gbps", "latency": "1us"}},
        "network": {"fidelity": "analytic"},
        "workload": {"synthetic": {"layers": 2}, "iterations": 2},
        "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}},
    }
    if sweep is not None:
        doc["sweep"] = sweep
    doc.update(extra)
    return doc


class SweepCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddlsim-sweep-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write_scenario(self, doc, name="s.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def sweep(self, *args):
        return subprocess.run(["/usr/bin/python3", SWEEP, *args], capture_output=True, text=True, timeout=120)

    def refused(self, *args):
        """Runs sweep.py, checks exit 2 with one line on stderr and nothing written; returns the line."""
        out = os.path.join(self.tmp, "refused")
        r = self.sweep(*args, "--ddlsim", DDLSIM, "--out", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertFalse(os.path.exists(out))
        return r.stderr

    def rows(self, out):
        with open(os.path.join(out, "sweep.csv"), newline="") as f:
            return list(csv.DictReader(f))


class SectionTest(SweepCase):
    def test_set_text_keeps_json_types(self):
        self.assertEqual(sweep_axes.set_text("25Gbps"), "25Gbps")
        self.assertEqual(sweep_axes.set_text("16"), '"16"')  # a string stays a string for --set
        self.assertEqual(sweep_axes.set_text(16), "16")
        self.assertEqual(sweep_axes.set_text(None), "null")
        self.assertEqual(sweep_axes.set_text({"policy": "size", "max_inflight": 2}),
                         '{"policy":"size","max_inflight":2}')

    def test_section_axes_in_the_order_written_then_grid(self):
        path = self.write_scenario(scenario({"platform.workers": [4, 1, 2],
                                             "/platform/link/bandwidth": ["10Gbps", "100Gbps"]}))
        out = os.path.join(self.tmp, "out")
        r = self.sweep(path, "--grid", "workload.iterations=1,2", "-j", "2", "--ddlsim", DDLSIM, "--out", out, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")  # --quiet
        rows = self.rows(out)
        self.assertEqual(list(rows[0])[:3], ["platform.workers", "/platform/link/bandwidth", "workload.iterations"])
        expected = [(w, b, i) for w in ("4", "1", "2") for b in ("10Gbps", "100Gbps") for i in ("1", "2")]
        self.assertEqual([(r["platform.workers"], r["/platform/link/bandwidth"], r["workload.iterations"])
                          for r in rows], expected)
        self.assertEqual([r["workers"] for r in rows], [w for w, _, _ in expected])
        with open(os.path.join(out, "sweep.json")) as f:
            self.assertEqual(list(json.load(f)["grid"]), ["platform.workers", "/platform/link/bandwidth",
                                                          "workload.iterations"])

    def test_grid_naming_a_section_path_is_refused(self):
        path = self.write_scenario(scenario({"platform.workers": [1, 2]}))
        self.assertEqual(self.refused(path, "--grid", "/platform/workers=4,8"),
                         "sweep.py: error: --grid /platform/workers: the scenario's sweep section already varies "
                         "this path; edit the section or drop this --grid\n")
        self.assertEqual(self.refused(path, "--set", "platform.workers=4"),
                         "sweep.py: error: --set platform.workers: the scenario's sweep section varies this path; "
                         "a path cannot be both an axis and an override\n")
        self.assertIn("the sweep section is read from the scenario file",
                      self.refused(path, "--set", "sweep.platform.workers=[1]"))
        self.assertIn("another --grid already varies this path",
                      self.refused(self.write_scenario(scenario(), "plain.json"), "--grid", "platform.workers=1,2",
                                   "--grid", "platform.workers=4"))

    def test_a_malformed_section_is_refused(self):
        for sweep, message in [
            ([1, 2], "/sweep: expected an object of override paths to arrays of values"),
            ({"platform.workers": []}, "/sweep/platform.workers: expected a non-empty array of values"),
            ({"platform.workers": 4}, "/sweep/platform.workers: expected a non-empty array of values"),
            ({"platform workers": [1]}, "'platform workers' is not a dotted path"),
            ({"platform.workers": [1, 2, 1]}, "/sweep/platform.workers: a value is listed twice"),
            ({"sweep.x": [1]}, "/sweep/sweep.x: a sweep cannot vary its own section"),
        ]:
            with self.subTest(sweep=sweep):
                self.assertIn(message, self.refused(self.write_scenario(scenario(sweep))))


class ConvergenceColumnsTest(SweepCase):
    def test_time_to_target_columns_only_with_a_co_simulation(self):
        doc = scenario(training={"sync": {"name": "bsp"}, "collective": {"name": "ring"},
                                 "convergence": {"train_samples": 600, "test_samples": 200, "learning_rate": 0.2,
                                                 "target_accuracy": 0.6, "evaluate_every_iterations": 5}})
        doc["workload"] = {"synthetic": {"layers": 1, "grad_bytes": 31400}, "batch_size": 16, "iterations": 20}
        out = os.path.join(self.tmp, "conv")
        r = self.sweep(self.write_scenario(doc), "--grid", "platform.workers=1,2", "--ddlsim", DDLSIM, "--out", out, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = self.rows(out)
        self.assertEqual(list(rows[0])[-4:], sweep_axes.CONVERGENCE_FIELDS)
        for row in rows:
            with open(os.path.join(out, "points", f"platform.workers={row['platform.workers']}", "summary.json")) as f:
                c = json.load(f)["convergence"]
            self.assertEqual(row["time_to_target_s"], repr(c["time_to_target_s"]) if c["reached_target"] else "")
            self.assertEqual(row["final_test_accuracy"], repr(c["final"]["test_accuracy"]))
        plain = os.path.join(self.tmp, "plain")
        r = self.sweep(self.write_scenario(scenario(), "plain.json"), "--grid", "platform.workers=1,2",
                       "--ddlsim", DDLSIM, "--out", plain, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("time_to_target_s", list(self.rows(plain)[0]))
        self.assertNotIn("staleness_mean_updates", list(self.rows(plain)[0]))

    def test_staleness_column_where_a_point_has_parameter_servers(self):
        doc = scenario(training={"sync": {"name": "asp"}})
        doc["platform"]["parameter_servers"] = 1
        out = os.path.join(self.tmp, "asp")
        r = self.sweep(self.write_scenario(doc), "--grid", "platform.workers=1,3", "--ddlsim", DDLSIM, "--out", out, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = self.rows(out)
        self.assertEqual(list(rows[0])[-1], "staleness_mean_updates")
        for row in rows:
            with open(os.path.join(out, "points", f"platform.workers={row['platform.workers']}", "summary.json")) as f:
                mean = json.load(f)["staleness"]["mean"]
            self.assertEqual(row["staleness_mean_updates"], repr(mean))
        self.assertEqual(float(rows[0]["staleness_mean_updates"]), 0)  # one worker: nothing lags


class SlurmScriptTest(SweepCase):
    def plan(self, out):
        with open(os.path.join(out, "slurm", "plan.json")) as f:
            return json.load(f)

    def script(self, out):
        with open(os.path.join(out, "slurm", "sweep.sbatch")) as f:
            return f.read()

    def test_deal_round_robin(self):
        self.assertEqual(sweep_slurm.deal(list(range(12)), 5), [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]])
        self.assertEqual(sweep_slurm.deal(list(range(5)), 1), [[0], [1], [2], [3], [4]])
        self.assertEqual(sweep_slurm.deal(list(range(5)), 9), [[0, 1, 2, 3, 4]])
        self.assertEqual(sweep_slurm.deal([], 3), [])
        for n in range(1, 40):
            for k in range(1, 12):
                tasks = sweep_slurm.deal(list(range(n)), k)
                self.assertEqual(len(tasks), -(-n // k))
                self.assertEqual(sorted(i for t in tasks for i in t), list(range(n)))
                self.assertLessEqual(max(map(len, tasks)) - min(map(len, tasks)), 1)
                self.assertLessEqual(max(map(len, tasks)), k)

    def test_batch_script_and_plan(self):
        path = self.write_scenario(scenario({"platform.workers": [1, 2, 4, 8],
                                             "platform.link.bandwidth": ["10Gbps", "25Gbps", "100Gbps"]}))
        out = os.path.join(self.tmp, "out")
        r = self.sweep(path, "--slurm", "--no-submit", "--points-per-task", "5", "--partition", "short",
                       "--time", "0:30:00", "--max-running", "2", "--sbatch-arg=--mem=2G",
                       "--sbatch-arg=--account=ddl", "--ddlsim", DDLSIM, "--out", out, "--set", "workload.iterations=1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("12 point(s) in 3 array task(s)", r.stderr)
        text = self.script(out)
        directives = re.findall(r"^#SBATCH (.*)$", text, re.M)
        self.assertEqual(directives, ["--job-name=ddlsim-sweep-s", "--array=0-2%2",
                                      f"--output={out}/slurm/logs/%A_%a.out", "--ntasks=1", "--cpus-per-task=1",
                                      "--partition=short", "--time=0:30:00", "--mem=2G", "--account=ddl"])
        self.assertTrue(text.startswith("#!/bin/bash\n"))
        last = text.rstrip("\n").splitlines()[-1]
        self.assertEqual(last, f"exec python3 {out}/slurm/code/sweep.py --slurm-task {out}/slurm/plan.json "
                               '"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}"')
        plan = self.plan(out)
        self.assertEqual(plan["tasks"], [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]])
        self.assertEqual(plan["ddlsim"], os.path.abspath(DDLSIM))
        self.assertEqual(plan["overrides"], [["workload.iterations", "1"]])
        self.assertEqual(sorted(os.listdir(os.path.join(out, "slurm", "code"))), sorted(sweep_slurm.CODE_FILES))

        # One point per task by default; the bare name "ddlsim" is looked up on the nodes.
        r = self.sweep(path, "--slurm", "--no-submit", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--array=0-11\n", self.script(out))
        self.assertEqual(self.plan(out)["ddlsim"], "ddlsim")

    def test_more_array_tasks_than_max_array_size_are_refused(self):
        path = self.write_scenario(scenario({"platform.workers": [1, 2, 4, 8],
                                             "platform.link.bandwidth": ["10Gbps", "25Gbps", "100Gbps"]}))
        out = os.path.join(self.tmp, "out")
        # 12 points, 5 array tasks at most: 12 / 2 = 6 tasks is one too many; ceil(12 / 5) = 3 per task fits.
        r = self.sweep(path, "--slurm", "--no-submit", "--points-per-task", "2", "--max-array-size", "5", "--out", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines()[-1],
                         "sweep.py: error: --points-per-task 2: 12 point(s) make 6 array tasks, more than "
                         "MaxArraySize 5 (--max-array-size) allows; use --points-per-task 3 or more")
        self.assertFalse(os.path.exists(os.path.join(out, "slurm", "plan.json")))
        r = self.sweep(path, "--slurm", "--no-submit", "--points-per-task", "3", "--max-array-size", "4", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--array=0-3\n", self.script(out))
        r = self.sweep(path, "--max-array-size", "4", "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--max-array-size: only with --slurm", r.stderr)

    def test_max_array_size_comes_from_scontrol_else_the_default(self):
        bindir = os.path.join(self.tmp, "bin")
        os.makedirs(bindir)
        fake = os.path.join(bindir, "scontrol")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'MaxArraySize            = 40001'\necho 'MaxJobCount = 10000'\n")
        os.chmod(fake, 0o755)
        old = os.environ["PATH"]
        try:
            os.environ["PATH"] = bindir + os.pathsep + old
            self.assertEqual(sweep_slurm.cluster_max_array_size(), (40001, "scontrol show config"))
            os.environ["PATH"] = os.path.join(self.tmp, "nothing")
            self.assertEqual(sweep_slurm.cluster_max_array_size(),
                             (sweep_slurm.DEFAULT_MAX_ARRAY_SIZE, "Slurm's default; scontrol did not say"))
        finally:
            os.environ["PATH"] = old

    def test_an_array_task_runs_its_points_and_collect_assembles_them(self):
        path = self.write_scenario(scenario({"platform.workers": [1, 2, 4],
                                             "platform.link.bandwidth": ["10Gbps", "1furlong"]}))
        out = os.path.join(self.tmp, "out")
        r = self.sweep(path, "--slurm", "--no-submit", "--points-per-task", "2", "--ddlsim", DDLSIM, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = os.path.join(out, "slurm", "plan.json")
        self.assertEqual(self.plan(out)["tasks"], [[0, 3], [1, 4], [2, 5]])
        # Task 0 runs workers=1 at 10Gbps and workers=2 at 1furlong (which fails); tasks 1 and 2 never run.
        task = subprocess.run(["/usr/bin/python3", os.path.join(out, "slurm", "code", "sweep.py"), "--slurm-task",
                               plan, "0"], capture_output=True, text=True, timeout=60)
        self.assertEqual(task.returncode, 2, task.stderr)
        failed_dir = os.path.join(out, "points", "platform.workers=2__platform.link.bandwidth=1furlong")
        self.assertIn(f"FAILED (exit 2, ", task.stdout)
        self.assertIn(os.path.join(failed_dir, "ddlsim.stderr"), task.stdout)

        r = self.sweep("--collect", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"sweep.py: collected 1/6 points -> {out}/sweep.csv\n", r.stderr)
        self.assertRegex(r.stderr, r"FAILED platform.workers=2 platform.link.bandwidth=1furlong: ddlsim: error: "
                                   r".*\(all of it: " + re.escape(os.path.join(failed_dir, "ddlsim.stderr")) + r"\)")
        self.assertIn("4 point(s) not finished", r.stderr)
        self.assertEqual([(r["platform.workers"], r["platform.link.bandwidth"]) for r in self.rows(out)],
                         [("1", "10Gbps")])

        # Resubmitting writes a plan of the five points without a summary, the failed one included.
        r = self.sweep(path, "--slurm", "--no-submit", "--points-per-task", "2", "--ddlsim", DDLSIM, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.plan(out)["tasks"], [[1, 4], [2, 5], [3]])

        # A local run of the same sweep reuses task 0's point: both modes share the tree.
        r = self.sweep(path, "-v", "-j", "2", "--ddlsim", DDLSIM, "--out", out)
        self.assertEqual(r.returncode, 2)  # 1furlong fails everywhere
        self.assertIn("platform.workers=1 platform.link.bandwidth=10Gbps: ", r.stderr)
        self.assertEqual(r.stderr.count("(cached)"), 1, r.stderr)
        self.assertEqual(len(self.rows(out)), 3)

    def test_collect_refuses_a_folder_that_is_no_sweep(self):
        r = self.sweep("--collect", self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.count("\n"), 1)
        self.assertIn(f"--collect {self.tmp}: cannot read {self.tmp}/sweep.json", r.stderr)
        path = self.write_scenario(scenario())
        self.assertIn("--wait: only with --slurm", self.refused(path, "--wait"))
        self.assertIn("takes no scenario", self.refused(path, "--collect", self.tmp))


class FakeStream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


class ProgressTest(unittest.TestCase):
    def test_format_and_eta(self):
        self.assertEqual(sweep_progress.format_duration(8.25), "8.2 s")
        self.assertEqual(sweep_progress.format_duration(185), "3 min 05 s")
        self.assertEqual(sweep_progress.format_duration(7620), "2 h 07 min")
        self.assertIsNone(sweep_progress.eta_seconds(10, 3, 0, 5.0))  # only cached points so far
        self.assertEqual(sweep_progress.eta_seconds(10, 4, 2, 6.0), 18.0)  # 6 left at 3 s each

    def test_bar_on_a_terminal(self):
        now = [0.0]
        stream = FakeStream(tty=True)
        p = sweep_progress.Progress(4, stream=stream, clock=lambda: now[0])
        self.assertEqual(p.mode, "bar")
        now[0] = 2.0
        p.point_finished()
        p.print("a failure")
        p.finish()
        text = stream.getvalue()
        self.assertIn("\r[", text)
        self.assertIn("1/4 points (25 %), 2.0 s elapsed, ETA 6.0 s", text)
        self.assertIn("a failure\n", text)
        self.assertTrue(text.endswith("\r\x1b[K"))  # the bar is erased at the end

    def test_lines_every_tenth_or_ten_seconds(self):
        now = [0.0]
        stream = FakeStream(tty=False)
        p = sweep_progress.Progress(100, stream=stream, clock=lambda: now[0])
        self.assertEqual(p.mode, "lines")
        for _ in range(25):
            p.point_finished()
        lines = stream.getvalue().splitlines()
        self.assertEqual([ln.split(" points")[0] for ln in lines], ["sweep.py: 10/100", "sweep.py: 20/100"])
        now[0] = 10.0
        p.point_finished(cached=True)
        p.finish()
        self.assertEqual(stream.getvalue().splitlines()[-1],
                         "sweep.py: 26/100 points (26 %), 1 cached, 10.0 s elapsed, ETA 29.6 s")

    def test_quiet(self):
        stream = FakeStream(tty=True)
        p = sweep_progress.Progress(3, mode="quiet", stream=stream)
        p.point_finished()
        p.note("verbose line")
        p.print("a failure")
        p.finish()
        self.assertEqual(stream.getvalue(), "a failure\n")


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        print(f"usage: {sys.argv[0]} PATH/TO/ddlsim [unittest options]", file=sys.stderr)
        sys.exit(2)
    DDLSIM = sys.argv.pop(1)
    unittest.main()
