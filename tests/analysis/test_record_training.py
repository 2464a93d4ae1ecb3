#!/usr/bin/python3
"""Tests of tools/record_training.py and the bundled training traces (docs/traces.md).

    /usr/bin/python3 tests/analysis/test_record_training.py [PATH_TO_DDLSIM] [-v]

With the standard library only: the rules on hand-worked norms, the independent rule check (check_trace)
against the recorder's own rule code and on tampered traces, the option checks (one line, exit 2), the
missing-torch exit, and every trace under scenarios/traces/ (keys, shapes, rule check, size). Without torch
and scikit-learn (Debian: python3-torch, python3-sklearn) the recording tests are skipped, with the reason
printed; with them the tool records 2 workers for a few iterations under each algorithm, and twice the
same options to check that the output is byte-identical apart from provenance.date and provenance.host.
"""

import contextlib
import importlib.util
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "record_training.py")
TRACES = os.path.join(ROOT, "scenarios", "traces")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import record_training as rt  # noqa: E402  (imports torch only inside main)

DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):  # the ddlsim binary CTest built
    DDLSIM = sys.argv.pop(1)
HAVE_TRAINING = all(importlib.util.find_spec(m) is not None for m in ("torch", "sklearn"))

TOP_KEYS = ["format", "version", "model", "workers", "iterations", "batch_size", "dtype_bytes", "algorithm",
            "tensors", "param_norm", "grad_norm", "sent", "epochs", "provenance"]
ALGORITHM_KEYS = {
    ("event_triggered", "constant"): {"name", "threshold", "value", "initial_comm_passes"},
    ("event_triggered", "adaptive"): {"name", "threshold", "horizon", "initial_comm_passes"},
    ("ordered_gradients", None): {"name", "m"},
    ("selective_sync", None): {"name", "delta"},
    ("none", None): {"name"},
}
EPOCH_KEYS = {"epoch", "last_iteration", "train_loss", "train_accuracy", "test_loss", "test_accuracy"}
PROVENANCE_KEYS = {"tool", "command", "torch", "python", "dataset", "seed", "host", "date"}
PARAMETERS = {"eventgrad_cnn": 27480, "mnist_cnn": 1199882}


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_format(test, doc):
    """Every key of docs/traces.md, its type and the K x N x T shapes."""
    test.assertEqual(list(doc), TOP_KEYS)
    test.assertEqual(doc["format"], "ddlsim-training-trace")
    test.assertEqual(doc["version"], 1)
    test.assertIn(doc["model"], PARAMETERS)
    for key in ("workers", "iterations", "batch_size", "dtype_bytes"):
        test.assertIsInstance(doc[key], int, key)
        test.assertGreaterEqual(doc[key], 1, key)
    test.assertEqual(doc["dtype_bytes"], 4)
    alg = doc["algorithm"]
    test.assertEqual(set(alg), ALGORITHM_KEYS[(alg["name"], alg.get("threshold"))])
    K, N, T = doc["iterations"], doc["workers"], len(doc["tensors"])
    test.assertEqual(T, 8)
    for t in doc["tensors"]:
        test.assertEqual(set(t), {"name", "shape", "numel"})
        test.assertEqual(math.prod(t["shape"]), t["numel"])
    test.assertEqual(sum(t["numel"] for t in doc["tensors"]), PARAMETERS[doc["model"]])
    for key in ("param_norm", "grad_norm", "sent"):
        arr = doc[key]
        test.assertEqual(len(arr), K, key)
        for row in arr:
            test.assertEqual(len(row), N, key)
            for cell in row:
                test.assertEqual(len(cell), T, key)
                for v in cell:
                    if key == "sent":
                        test.assertIn(v, (0, 1))
                        test.assertIsInstance(v, int)
                    else:
                        test.assertTrue(is_number(v) and math.isfinite(v) and v >= 0, f"{key}: {v!r}")
    test.assertTrue(doc["epochs"])
    last = -1
    for n, e in enumerate(doc["epochs"]):
        test.assertEqual(set(e), EPOCH_KEYS)
        test.assertEqual(e["epoch"], n + 1)
        test.assertGreater(e["last_iteration"], last)
        last = e["last_iteration"]
        for key in ("train_accuracy", "test_accuracy"):
            test.assertTrue(0 <= e[key] <= 1, f"{key}: {e[key]}")
        for key in ("train_loss", "test_loss"):
            test.assertTrue(is_number(e[key]) and math.isfinite(e[key]) and e[key] >= 0)
    test.assertEqual(last, K - 1)
    prov = doc["provenance"]
    test.assertEqual(set(prov), PROVENANCE_KEYS)
    for v in prov.values():
        test.assertTrue(isinstance(v, str) or is_number(v))
    test.assertTrue(prov["command"].startswith("/usr/bin/python3 tools/record_training.py "))
    test.assertIsNone(rt.check_trace(doc))


def tiny_doc(name, sent, param_norm=None, grad_norm=None, **alg):
    K, N, T = len(sent), len(sent[0]), len(sent[0][0])
    fill = [[[1.0] * T for _ in range(N)] for _ in range(K)]
    return {"iterations": K, "workers": N, "tensors": [{"name": f"t{i}"} for i in range(T)],
            "algorithm": dict(name=name, **alg), "param_norm": param_norm or fill, "grad_norm": grad_norm or fill,
            "sent": sent}


class RuleTest(unittest.TestCase):
    def test_event_adaptive_by_hand(self):
        # h = 1, P = 0: p=1 diff 1 >= 0 sends, thres (0+0+1)/2 = 0.5; p=2 diff 0.5 >= 0.5 sends, slopes
        # [1, 0.5], thres 0.75; p=3 diff 0.1 holds; p=4 diff 1.5 sends (slope 1.5/2), thres (0.5+0.75)/2.
        r = rt.EventTrigger(True, None, 1.0, 0)
        self.assertEqual([r.decide(p, x) for p, x in enumerate([1.0, 1.5, 1.6, 3.0], 1)], [True, True, False, True])
        self.assertEqual(r.thres, 0.625)
        doc = tiny_doc("event_triggered", [[[1]], [[1]], [[0]], [[1]]], [[[1.0]], [[1.5]], [[1.6]], [[3.0]]],
                       threshold="adaptive", horizon=1.0, initial_comm_passes=0)
        self.assertIsNone(rt.check_trace(doc))
        doc["sent"][2][0][0] = 1
        self.assertIn("/sent/2/0/0: recorded 1", rt.check_trace(doc))

    def test_event_initial_passes_and_constant(self):
        r = rt.EventTrigger(False, 0.5, None, 3)  # p = 1, 2 send whatever the change
        self.assertEqual([r.decide(p, 1.0) for p in range(1, 6)], [True, True, False, False, False])
        r = rt.EventTrigger(False, 0.0, None, 0)  # constant 0 sends every time
        self.assertTrue(all(r.decide(p, 1.0) for p in range(1, 6)))

    def test_check_agrees_with_the_recorder_rule(self):
        """check_trace (written separately) and EventTrigger agree on random walks of norms."""
        rng = random.Random(7)
        for adaptive, h, c, P in ((True, 1.0, None, 5), (True, 0.9, None, 0), (False, None, 0.01, 3)):
            K, N, T = 60, 3, 4
            norms = [[[0.0] * T for _ in range(N)] for _ in range(K)]
            sent = [[[0] * T for _ in range(N)] for _ in range(K)]
            for w in range(N):
                for i in range(T):
                    rule, x = rt.EventTrigger(adaptive, c, h, P), rng.uniform(0.1, 3)
                    for k in range(K):
                        x = abs(x + rng.gauss(0, 0.02))
                        norms[k][w][i] = x
                        sent[k][w][i] = int(rule.decide(k + 1, x))
            alg = {"threshold": "adaptive", "horizon": h} if adaptive else {"threshold": "constant", "value": c}
            doc = tiny_doc("event_triggered", sent, norms, initial_comm_passes=P, **alg)
            self.assertIsNone(rt.check_trace(doc))
            self.assertTrue(0 < rt.messages_saved(doc) < 1)

    def test_ordered_gradients_ties_to_lower_rank(self):
        self.assertEqual(rt.top_m([1.0, 3.0, 3.0, 2.0], 2), [1, 2])
        self.assertEqual(rt.top_m([2.0, 2.0, 2.0], 1), [0])
        gn = [[[3.0, 4.0], [5.0, 0.0], [1.0, 1.0]]]  # G = 5, 5, sqrt 2: ranks 0 and 1
        doc = tiny_doc("ordered_gradients", [[[1, 1], [1, 1], [0, 0]]], grad_norm=gn, m=2)
        self.assertIsNone(rt.check_trace(doc))
        doc = tiny_doc("ordered_gradients", [[[1, 1], [0, 0], [0, 0]]], grad_norm=gn, m=1)
        self.assertIsNone(rt.check_trace(doc))
        doc["sent"] = [[[0, 0], [1, 1], [0, 0]]]
        self.assertIn("/sent/0/0/0", rt.check_trace(doc))

    def test_selective_sync(self):
        self.assertEqual(rt.total_norm([3.0, 4.0]), 5.0)
        # G = 1, 1.2, 1.2, 0, 0, 1: flags k=0; 0.2 >= 0.2; 0; 1 >= 0.2; 0/0 (nan) no; 1/0 (inf) yes.
        gn = [[[g]] for g in (1.0, 1.2, 1.2, 0.0, 0.0, 1.0)]
        doc = tiny_doc("selective_sync", [[[f]] for f in (1, 0, 0, 1, 0, 1)], grad_norm=gn, delta=0.2)
        # |1.2 - 1| / 1 = 0.19999999999999996 < 0.2 in doubles: the rule is exact, not approximate.
        self.assertIsNone(rt.check_trace(doc))
        self.assertTrue(math.isnan(rt.ieee_div(0.0, 0.0)))
        self.assertEqual(rt.ieee_div(1.0, 0.0), math.inf)

    def test_none_sends_everything(self):
        self.assertIsNone(rt.check_trace(tiny_doc("none", [[[1, 1]], [[1, 1]]])))
        self.assertIn("/sent/1/0/1", rt.check_trace(tiny_doc("none", [[[1, 1]], [[1, 0]]])))

    def test_shape_errors_are_named(self):
        doc = tiny_doc("none", [[[1, 1]], [[1, 1]]])
        doc["param_norm"][1] = []
        self.assertEqual(rt.check_trace(doc), "/param_norm/1: 0 workers, expected 1")


class OptionsTest(unittest.TestCase):
    BAD = [
        (["--workers", "0"], "--workers must be at least 1"),
        (["--algorithm", "ordered_gradients"], "needs --m"),
        (["--algorithm", "ordered_gradients", "--m", "5", "--workers", "4"], "--m must be between 1 and"),
        (["--algorithm", "selective_sync"], "needs --delta"),
        (["--delta", "0.5"], "--delta applies only to --algorithm selective_sync"),
        (["--value", "0.01"], "--value applies only to --threshold constant"),
        (["--threshold", "constant"], "--threshold constant needs --value"),
        (["--threshold", "constant", "--value", "0.1", "--horizon", "1"], "--horizon applies only"),
        (["--lr", "nan"], "expected a finite number"),
        (["--lr", "0"], "--lr must be positive"),
        (["--model", "resnet50"], "invalid choice"),
        (["--batch-size", "2000"], "fewer than --batch-size 2000"),
        ([], "the following arguments are required: --output"),
    ]

    def run_tool(self, *args, env=None):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=120, env=env)

    def test_bad_options_exit_2_with_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.json")
            for args, message in self.BAD:
                if "fewer than" in message and not HAVE_TRAINING:
                    continue  # needs the data set to know the shard size
                with self.subTest(args=args):
                    r = self.run_tool(*args, *(["--output", out] if args else []))
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    self.assertTrue(r.stderr.startswith("record_training.py: error: "), r.stderr)
                    self.assertIn(message, r.stderr)
                    self.assertFalse(os.path.exists(out))

    def test_missing_torch_exits_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "fake")
            os.makedirs(os.path.join(fake, "torch"))
            with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                f.write("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
            r = self.run_tool("--output", os.path.join(tmp, "t.json"), env=dict(os.environ, PYTHONPATH=fake))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("python3-torch", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "t.json")))


class BundledTracesTest(unittest.TestCase):
    """The traces under scenarios/traces/: format, rule check, size, and the command that made them."""

    def test_bundled_traces(self):
        names = sorted(f for f in os.listdir(TRACES) if f.endswith(".json"))
        self.assertEqual(names, ["eventgrad_cnn_event_adaptive_4w.json", "eventgrad_cnn_event_constant_4w.json",
                                 "eventgrad_cnn_ordered_m2_4w.json", "eventgrad_cnn_selsync_4w.json",
                                 "mnist_cnn_event_adaptive_4w.json"])
        with open(os.path.join(TRACES, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for name in names:
            with self.subTest(trace=name):
                path = os.path.join(TRACES, name)
                self.assertLess(os.path.getsize(path), 3 * 1024 * 1024)
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
                check_format(self, doc)
                self.assertEqual(doc["workers"], 4)
                cmd = doc["provenance"]["command"]
                self.assertTrue(cmd.endswith(f" --output scenarios/traces/{name}"), cmd)
                self.assertIn(cmd, readme)
                self.assertGreaterEqual(doc["epochs"][-1]["test_accuracy"], 0.9)


@unittest.skipUnless(HAVE_TRAINING, "torch and scikit-learn are not installed (python3-torch, python3-sklearn)")
class RecordTest(unittest.TestCase):
    RUNS = {
        "event_adaptive": ["--algorithm", "event_triggered", "--threshold", "adaptive", "--horizon", "1",
                           "--initial-comm-passes", "2"],
        "event_constant": ["--algorithm", "event_triggered", "--threshold", "constant", "--value", "0.002",
                           "--initial-comm-passes", "2"],
        "ordered": ["--algorithm", "ordered_gradients", "--m", "1"],
        "selsync": ["--algorithm", "selective_sync", "--delta", "0.1"],
        "none": ["--algorithm", "none"],
    }

    COMMON = ["--workers", "2", "--batch-size", "8", "--epochs", "2", "--iterations", "6", "--seed", "3"]

    @classmethod
    def setUpClass(cls):
        """Every algorithm in this process (torch is imported once: the test stays well under a minute on
        2 cores), then event_adaptive again in a fresh process from another directory, for determinism."""
        cls.tmp = tempfile.TemporaryDirectory()
        cls.docs, cls.texts = {}, {}
        here = os.getcwd()
        try:
            os.chdir(cls.tmp.name)  # the command names the output as given: the same relative name below
            for name, extra in cls.RUNS.items():
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    status = rt.main([*cls.COMMON, *extra, "--output", f"{name}.json"])
                if status != 0:
                    raise AssertionError(f"{name}: exit {status}: {err.getvalue()}")
                cls.stderr = err.getvalue()
                cls.load(name, f"{name}.json")
        finally:
            os.chdir(here)
        again = os.path.join(cls.tmp.name, "again")
        os.makedirs(again)
        r = subprocess.run([sys.executable, TOOL, *cls.COMMON, *cls.RUNS["event_adaptive"], "--output",
                            "event_adaptive.json"], capture_output=True, text=True, timeout=120, cwd=again)
        if r.returncode != 0:
            raise AssertionError(f"event_adaptive again: exit {r.returncode}: {r.stderr}")
        cls.load("event_adaptive_again", os.path.join("again", "event_adaptive.json"))

    @classmethod
    def load(cls, name, path):
        with open(os.path.join(cls.tmp.name, path), encoding="utf-8") as f:
            cls.texts[name] = f.read()
        cls.docs[name] = json.loads(cls.texts[name])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_progress_lines(self):
        lines = self.stderr.strip().splitlines()  # the last run's: one line per epoch and a summary
        self.assertEqual(len(lines), 2, self.stderr)
        self.assertTrue(lines[0].startswith("record_training.py: epoch 1 (partial): iterations 6/6"), lines[0])

    def test_format_and_rule_check(self):
        for name, doc in self.docs.items():
            with self.subTest(run=name):
                check_format(self, doc)
                self.assertEqual((doc["workers"], doc["iterations"], doc["batch_size"]), (2, 6, 8))
                self.assertEqual(doc["provenance"]["seed"], 3)
                # 719 samples per shard / 8 = 89 batches: the 6 iterations are one partial epoch.
                self.assertEqual([e["last_iteration"] for e in doc["epochs"]], [5])

    def test_algorithms_decide(self):
        d = self.docs
        self.assertEqual(d["event_adaptive"]["algorithm"],
                         {"name": "event_triggered", "threshold": "adaptive", "horizon": 1.0, "initial_comm_passes": 2})
        self.assertEqual(d["event_constant"]["algorithm"]["value"], 0.002)
        sent = d["event_adaptive"]["sent"]
        self.assertEqual(sent[0], [[1] * 8, [1] * 8])  # p = 1 < 2 always sends
        self.assertGreater(rt.messages_saved(d["event_adaptive"]), 0)  # h = 1 holds some tensors
        for k in range(6):
            self.assertEqual(sorted(sum(row) for row in d["ordered"]["sent"][k]), [0, 8])  # one of two
            self.assertEqual(d["ordered"]["param_norm"][k][0], d["ordered"]["param_norm"][k][1])
            self.assertEqual(d["none"]["param_norm"][k][0], d["none"]["param_norm"][k][1])
        self.assertEqual(d["selsync"]["sent"][0], [[1] * 8, [1] * 8])
        self.assertEqual(rt.messages_saved(d["none"]), 0)
        # Replicas start from the same model (torch.manual_seed before it is built).
        for name in ("event_adaptive", "selsync"):
            self.assertEqual(d[name]["param_norm"][0][0], d[name]["param_norm"][0][1])

    def test_deterministic(self):
        a, b = self.texts["event_adaptive"], self.texts["event_adaptive_again"]
        da, db = json.loads(a), json.loads(b)
        for doc in (da, db):
            del doc["provenance"]["date"], doc["provenance"]["host"]
        self.assertEqual(da, db)
        strip = [line for line in a.splitlines() if '"provenance"' not in line]
        self.assertEqual(strip, [line for line in b.splitlines() if '"provenance"' not in line])
        self.assertEqual(rt.dumps(json.loads(a)), a)  # floats round-trip exactly

    def test_tampered_trace_is_refused(self):
        doc = json.loads(self.texts["event_adaptive"])
        k, w, i = 4, 1, 2
        doc["sent"][k][w][i] = 1 - doc["sent"][k][w][i]
        self.assertTrue(rt.check_trace(doc).startswith(f"/sent/{k}/{w}/{i}: "))

    def test_parameter_counts(self):
        import torch
        for name, count in PARAMETERS.items():
            model = rt.build_model(torch, name)
            self.assertEqual(sum(p.numel() for p in model.parameters()), count)
            self.assertEqual(len(list(model.parameters())), 8)
        with open(os.path.join(ROOT, "scenarios", "profiles", "mnist_cnn.json"), encoding="utf-8") as f:
            profile = json.load(f)
        self.assertEqual(sum(l["parameters"] for l in profile["layers"]), PARAMETERS["mnist_cnn"])

    def ddlsim_run(self, name, doc, sync, servers=0):
        """Runs the ddlsim binary on a 2-worker scenario replaying `doc` under `sync`."""
        folder = os.path.join(self.tmp.name, "sim_" + name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "trace.json"), "w", encoding="utf-8") as f:
            f.write(rt.dumps(doc))
        scenario = {
            "name": name,
            "platform": {"topology": "star", "workers": doc["workers"], "parameter_servers": servers,
                         "link": {"bandwidth": "1Gbps", "latency": "50us"}},
            "workload": {"profile": os.path.join(ROOT, "scenarios", "profiles", "measured", "eventgrad_cnn_cpu.json"),
                         "iterations": doc["iterations"], "batch_size": doc["batch_size"], "batch_scaling": "linear"},
            "training": {"sync": {"name": sync, "params": {"trace": "trace.json"}}},
            "output": {"timeline": False},
        }
        with open(os.path.join(folder, "scenario.json"), "w", encoding="utf-8") as f:
            json.dump(scenario, f)
        return subprocess.run([DDLSIM, "run", os.path.join(folder, "scenario.json"), "--out",
                               os.path.join(folder, "out"), "--quiet"], capture_output=True, text=True, timeout=60)

    @unittest.skipUnless(os.path.exists(DDLSIM), f"no ddlsim binary at {DDLSIM}")
    def test_ddlsim_replays_the_recorded_traces(self):
        runs = {"event_adaptive": ("event_triggered", 0), "event_constant": ("event_triggered", 0),
                "ordered": ("ordered_gradients", 1), "selsync": ("selective_sync", 0)}
        for name, (sync, servers) in runs.items():
            with self.subTest(run=name):
                doc = self.docs[name]
                r = self.ddlsim_run(name, doc, sync, servers)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(self.tmp.name, "sim_" + name, "out", "summary.json"), encoding="utf-8") as f:
                    summary = json.load(f)
                events = summary["events"]
                if sync == "event_triggered":  # one event per tensor per neighbour, as the trace lists them
                    self.assertEqual(events["sent"], 2 * sum(sum(sum(c) for c in row) for row in doc["sent"]))
                self.assertEqual(events["decisions"]["trace"]["iterations"], doc["iterations"])
        doc = json.loads(self.texts["event_adaptive"])
        k, w, i = 4, 1, 2
        doc["sent"][k][w][i] = 1 - doc["sent"][k][w][i]
        r = self.ddlsim_run("tampered", doc, "event_triggered")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"/sent/{k}/{w}/{i}: the event_triggered rule with the recorded settings gives", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

if __name__ == "__main__":
    unittest.main()
