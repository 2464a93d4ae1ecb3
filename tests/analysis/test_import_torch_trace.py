#!/usr/bin/python3
"""Tests of tools/import_torch_trace.py (docs/profiles.md, "Importing a torch.profiler trace").

    /usr/bin/python3 tests/analysis/test_import_torch_trace.py [PATH_TO_DDLSIM] [-v]

Imports the bundled traces (standard library only): the two H200 Kineto traces beside the measured
profiles, and the CPU fixtures in tests/fixtures/torch_traces/ (torch 1.13 without Kineto, as
export_chrome_trace writes them and as tools/record_torch_trace.py --format events writes the same
profiler's events). Checks that the imported iteration is the traced step, the layers' order and
parameters against the models, that ddlsim accepts the profiles, and the one-line errors. With torch
installed it also records a fixture afresh and imports it.
"""

import gzip
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "import_torch_trace.py")
RECORDER = os.path.join(ROOT, "tools", "record_torch_trace.py")
FIX = os.path.join(ROOT, "tests", "fixtures", "torch_traces")
MEASURED = os.path.join(ROOT, "scenarios", "profiles", "measured")
TRACES = os.path.join(MEASURED, "traces")

DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):  # the ddlsim binary CTest built
    DDLSIM = sys.argv.pop(1)
HAVE_TORCH = importlib.util.find_spec("torch") is not None
PROG = "import_torch_trace.py: error: "

CNN_LAYERS = ["conv1", "conv2", "fc1", "fc2"]
TRANSFORMER_LAYERS = ["tok", "pos"] + [f"blocks.{i}.{m}" for i in range(2) for m in
                                       ("self_attn", "norm1", "linear1", "linear2", "norm2")] + ["ln_f", "head"]


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, check=False)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def iteration(p):
    return p["unattributed_s"] + p["io_s"] + p["optimizer_s"] + sum(l["forward_s"] + l["backward_s"] for l in p["layers"])


def cpu_step_s(trace):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation"]
    return steps[-1]["dur"] / 1e6


def gpu_extent_s(trace):
    """First to last GPU activity of the trace (the bundled traces hold one step's)."""
    g = [e for e in trace["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return (max(e["ts"] + e["dur"] for e in g) - min(e["ts"] for e in g)) / 1e6


def owners(params):
    """{module path: parameters} of a named_parameters file, grouped into the modules that run forward
    (the transformer's self_attn.out_proj is used functionally by self_attn)."""
    out = {}
    for name, n in params.items():
        owner = name.rsplit(".", 1)[0].replace(".out_proj", "")
        out[owner] = out.get(owner, 0) + n
    return out


class Imported(unittest.TestCase):
    """Every bundled trace imported once (about a second in all)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = {}
        cls.stdout = {}
        jobs = {
            "resnet50": [os.path.join(TRACES, "resnet50_h200_bf16_b32.trace.json.gz"), "--batch-size", "32", "--dtype",
                         "bf16", "--parameters-from-profile", os.path.join(MEASURED, "resnet50_h200_bf16.json")],
            "gpt2": [os.path.join(TRACES, "gpt2_h200_bf16_b4.trace.json.gz"), "--batch-size", "4", "--dtype", "bf16",
                     "--parameters-from-profile", os.path.join(MEASURED, "gpt2_h200_bf16.json")],
            "resnet50_busy": [os.path.join(TRACES, "resnet50_h200_bf16_b32.trace.json.gz"), "--batch-size", "32",
                              "--gaps", "unattributed",
                              "--parameters-from-profile", os.path.join(MEASURED, "resnet50_h200_bf16.json")],
        }
        for m in ("cnn", "transformer"):
            jobs[f"{m}_events"] = [os.path.join(FIX, f"{m}_events.trace.json.gz"), "--batch-size", "8"]
            jobs[f"{m}_torch"] = [os.path.join(FIX, f"{m}_torch.trace.json.gz"), "--batch-size", "8",
                                  "--parameters", os.path.join(FIX, f"{m}.parameters.json")]
        for key, argv in jobs.items():
            path = os.path.join(cls.tmp.name, f"{key}.json")
            p = run(*argv, "--output", path)
            if p.returncode != 0:
                raise AssertionError(f"{key}: {p.stderr}")
            cls.stdout[key] = p.stdout
            cls.out[key] = load(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_iteration_equals_the_traced_step(self):
        steps = {"resnet50": gpu_extent_s(load(os.path.join(TRACES, "resnet50_h200_bf16_b32.trace.json.gz"))),
                 "gpt2": gpu_extent_s(load(os.path.join(TRACES, "gpt2_h200_bf16_b4.trace.json.gz")))}
        steps["resnet50_busy"] = steps["resnet50"]
        for m in ("cnn", "transformer"):
            for f in ("events", "torch"):
                steps[f"{m}_{f}"] = cpu_step_s(load(os.path.join(FIX, f"{m}_{f}.trace.json.gz")))
        for key, step in steps.items():
            it = iteration(self.out[key])
            self.assertLess(abs(it - step) / step, 0.05, f"{key}: {it} vs step {step}")
            self.assertLess(abs(it - step) / step, 1e-4, f"{key}: the parts add up to the step by construction")
        # The GPU step is the GPU extent, not the step's gpu_user_annotation (31.8 ms: no backward kernels).
        self.assertAlmostEqual(steps["resnet50"], 0.055005, places=5)

    def test_gpu_busy_and_idle(self):
        busy, full = self.out["resnet50_busy"], self.out["resnet50"]
        layers = lambda p: sum(l["forward_s"] + l["backward_s"] for l in p["layers"])  # noqa: E731
        self.assertLess(layers(busy), 0.016)  # kernels busy ~14.6 ms
        self.assertGreater(busy["unattributed_s"], 0.035)  # the host-bound idle time
        self.assertGreater(layers(full), 0.050)
        for p in (busy, full):
            self.assertGreater(p["optimizer_s"], 0)
            self.assertGreater(p["io_s"], 0)  # the batch's host-to-device copy
            self.assertTrue(all(l["backward_s"] > 0 for l in p["layers"]))

    def test_layers_and_parameters_match_the_models(self):
        for key, ref in (("resnet50", "resnet50_h200_bf16.json"), ("gpt2", "gpt2_h200_bf16.json")):
            with open(os.path.join(MEASURED, ref), encoding="utf-8") as f:
                reference = json.load(f)
            got = self.out[key]
            self.assertEqual([l["name"] for l in got["layers"]], [l["name"] for l in reference["layers"]])
            self.assertEqual([l["parameters"] for l in got["layers"]], [l["parameters"] for l in reference["layers"]])
            self.assertEqual([l["grad_bytes"] for l in got["layers"]], [l["grad_bytes"] for l in reference["layers"]])
        self.assertEqual(sum(l["parameters"] for l in self.out["resnet50"]["layers"]), 25_557_032)
        self.assertEqual(sum(l["parameters"] for l in self.out["gpt2"]["layers"]), 124_439_808)
        for m, names, total in (("cnn", CNN_LAYERS, 27_480), ("transformer", TRANSFORMER_LAYERS, 101_120)):
            with open(os.path.join(FIX, f"{m}.parameters.json"), encoding="utf-8") as f:
                params = json.load(f)
            self.assertEqual(sum(params.values()), total)
            per = owners(params)
            for f in ("events", "torch"):  # events: from Input Dims; torch: from the parameters file
                got = self.out[f"{m}_{f}"]
                self.assertEqual([l["name"] for l in got["layers"]], names, f"{m}_{f}")
                self.assertEqual({l["name"]: l["parameters"] for l in got["layers"]}, per, f"{m}_{f}")
                self.assertTrue(all(l["grad_bytes"] == 4 * l["parameters"] for l in got["layers"]))
                self.assertTrue(all(l["forward_s"] > 0 and l["backward_s"] > 0 for l in got["layers"]), f"{m}_{f}")

    def test_name_order_mapping_matches_sequence_numbers(self):
        """The same trace without "Sequence number": backward mapped by the latest forward op of the name."""
        for m, tolerance in (("cnn", 0.0), ("transformer", 0.10)):
            trace = load(os.path.join(FIX, f"{m}_events.trace.json.gz"))
            for e in trace["traceEvents"]:
                e["args"].pop("Sequence number", None)
            with tempfile.TemporaryDirectory() as tmp:
                src, out = os.path.join(tmp, "t.json"), os.path.join(tmp, "p.json")
                with open(src, "w", encoding="utf-8") as f:
                    json.dump(trace, f)
                p = run(src, "--batch-size", "8", "--output", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                got = load(out)
            self.assertIn("latest unmatched forward operator", got["provenance"])
            ref = self.out[f"{m}_events"]
            rel = [abs(a["backward_s"] - b["backward_s"]) / b["backward_s"] for a, b in zip(got["layers"], ref["layers"])]
            self.assertLessEqual(statistics.median(rel), tolerance + 1e-9, m)
            self.assertEqual([l["forward_s"] for l in got["layers"]], [l["forward_s"] for l in ref["layers"]])

    def test_provenance_and_labels(self):
        p = self.out["resnet50"]
        self.assertEqual((p["batch_size"], p["dtype"], p["device"]), (32, "bf16", "NVIDIA H200"))
        self.assertIn("resnet50_h200_bf16_b32.trace.json.gz", p["provenance"])
        self.assertIn("gpu_user_annotation 31.838 ms", p["provenance"])
        self.assertIn("\"Sequence number\"", p["provenance"])
        self.assertEqual(self.out["cnn_torch"]["device"], "CPU")
        self.assertIn("imported iteration", self.stdout["gpt2"])

    @unittest.skipUnless(os.access(DDLSIM, os.X_OK), f"no ddlsim binary at {DDLSIM}")
    def test_ddlsim_accepts_the_profiles_and_replays_the_step(self):
        with tempfile.TemporaryDirectory() as tmp:
            for key in ("resnet50", "cnn_torch", "transformer_events"):
                prof = os.path.join(tmp, f"{key}.json")
                with open(prof, "w", encoding="utf-8") as f:
                    json.dump(self.out[key], f)
                scen = os.path.join(tmp, f"s_{key}.json")
                with open(scen, "w", encoding="utf-8") as f:
                    json.dump({"name": key, "platform": {"topology": "star", "workers": 1,
                                                         "link": {"bandwidth": "25Gbps", "latency": "2us"}},
                               "network": {"fidelity": "analytic"},
                               "workload": {"profile": f"{key}.json", "iterations": 1},
                               "training": {"sync": {"name": "bsp"}, "collective": {"name": "ring"}}}, f)
                v = subprocess.run([DDLSIM, "validate", scen], capture_output=True, text=True, check=False)
                self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
                r = subprocess.run([DDLSIM, "run", scen, "--out", os.path.join(tmp, f"out_{key}")],
                                   capture_output=True, text=True, check=False)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(os.path.join(tmp, f"out_{key}", "summary.json"), encoding="utf-8") as f:
                    single = json.load(f)["single_worker_iteration_time_s"]
                self.assertAlmostEqual(single, iteration(self.out[key]), delta=1e-9 + 1e-6 * single)


class Errors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def refused(self, argv, message):
        out = os.path.join(self.tmp.name, "out.json")
        p = run(*argv, "--output", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, PROG + message + "\n")
        self.assertFalse(os.path.exists(out))

    def test_bad_inputs(self):
        cnn_torch = os.path.join(FIX, "cnn_torch.trace.json.gz")
        cnn_params = os.path.join(FIX, "cnn.parameters.json")
        self.refused([self.write("a.json", "hello"), "--batch-size", "8"],
                     "a.json is not a trace: not JSON (Expecting value: line 1 column 1 (char 0))")
        self.refused([self.write("b.json", '{"events": []}'), "--batch-size", "8"],
                     "b.json is not a Chrome trace: expected a JSON list of events or an object with \"traceEvents\"")
        self.refused([os.path.join(self.tmp.name, "none.json"), "--batch-size", "8"],
                     f"cannot read {os.path.join(self.tmp.name, 'none.json')}: No such file or directory")
        self.refused([self.write("c.json", '[{"name": "aten::mm", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]'),
                      "--batch-size", "8"],
                     "c.json has no ProfilerStep#N span: record it with torch.profiler.profile(schedule=...) and call "
                     "prof.step() after every iteration")
        self.refused([cnn_torch, "--batch-size", "8", "--step", "7", "--parameters", cnn_params],
                     "cnn_torch.trace.json.gz has no ProfilerStep#7 (it has #1)")
        trace = [e for e in load(cnn_torch) if not e["name"].startswith("module: ")]
        self.refused([self.write("d.json", json.dumps(trace)), "--batch-size", "8", "--parameters", cnn_params],
                     "d.json has no module spans in ProfilerStep#1: record with with_stack=True (\"nn.Module: ...\" "
                     "spans) or label every module with record_function(\"module: <name>\") "
                     "(tools/record_torch_trace.py does)")
        forward_only = [e for e in load(cnn_torch) if "Backward" not in e["name"] and "autograd::" not in e["name"]]
        self.refused([self.write("e.json", json.dumps(forward_only)), "--batch-size", "8", "--parameters", cnn_params],
                     "e.json: no ProfilerStep holds a backward pass (\"autograd::engine::evaluate_function: ...\" "
                     "operators): import a trace of a training iteration")
        self.refused([cnn_torch, "--batch-size", "8"],
                     "cnn_torch.trace.json.gz has no \"Input Dims\" (record with record_shapes=True) and no "
                     "--parameters FILE was given: give --parameters FILE (JSON {name: numel}, e.g. {n: p.numel() "
                     "for n, p in model.named_parameters()}) or --parameters-from-profile PROFILE.json")
        gpu = os.path.join(TRACES, "resnet50_h200_bf16_b32.trace.json.gz")
        self.refused([gpu, "--batch-size", "32", "--parameters", self.write("p.json", "[1, 2, 3]")],
                     "p.json gives 3 parameter-owning modules, but ProfilerStep#1 has 107 innermost modules with "
                     "weighted operators; list one entry per such module, in forward order")
        self.refused([gpu, "--batch-size", "32", "--parameters", self.write("q.json", '{"conv1.weight": -1}')],
                     f"--parameters {os.path.join(self.tmp.name, 'q.json')}: \"conv1.weight\": expected a parameter "
                     "count (integer >= 0), got -1")
        self.refused([gpu, "--batch-size", "32", "--parameters-from-profile", cnn_params],
                     f"--parameters-from-profile {cnn_params}: not a ddlsim profile (no \"layers\" array)")
        self.refused([gpu, "--batch-size", "32"],
                     "resnet50_h200_bf16_b32.trace.json.gz has no \"Input Dims\" (record with record_shapes=True) "
                     "and no --parameters FILE was given: give --parameters FILE (JSON {name: numel}, e.g. "
                     "{n: p.numel() for n, p in model.named_parameters()}) or --parameters-from-profile PROFILE.json")


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (Debian: python3-torch)")
class Recorded(unittest.TestCase):
    def test_record_and_import(self):
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "cnn.trace.json.gz")
            r = subprocess.run([sys.executable, RECORDER, "--model", "cnn", "--batch-size", "4", "--format", "torch",
                                "--output", trace], capture_output=True, text=True, check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            params = os.path.join(tmp, "cnn.parameters.json")
            self.assertTrue(os.path.exists(params))
            out = os.path.join(tmp, "p.json")
            p = run(trace, "--batch-size", "4", "--parameters", params, "--output", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            got = load(out)
            self.assertEqual([l["name"] for l in got["layers"]], CNN_LAYERS)
            self.assertEqual(sum(l["parameters"] for l in got["layers"]), 27_480)
            self.assertLess(abs(iteration(got) - cpu_step_s(load(trace))) / cpu_step_s(load(trace)), 0.05)


if __name__ == "__main__":
    unittest.main()
