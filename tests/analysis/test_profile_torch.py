#!/usr/bin/python3
"""Tests of tools/profile_torch.py's unattributed_s (docs/profiles.md, "Unattributed time").

    /usr/bin/python3 tests/analysis/test_profile_torch.py [PATH_TO_DDLSIM] [-v]

The clamp rule on hand-worked numbers needs the standard library only. With torch (Debian:
python3-torch) the tool profiles the EventGraD CNN at two batches for a few iterations: every batch
states unattributed_s >= 0, the printed parts add up to the measured whole iteration (or exceed it,
clamped, with a note), and ddlsim loads the profile.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "profile_torch.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))

import profile_torch  # noqa: E402  (imports torch only inside main)

DDLSIM = os.path.join(ROOT, "build", "ddlsim")
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):  # the ddlsim binary CTest built
    DDLSIM = sys.argv.pop(1)
HAVE_TORCH = importlib.util.find_spec("torch") is not None

LINE = re.compile(r"batch (\d+): .* per iteration: io ([0-9.]+) ms, forward ([0-9.]+) ms, backward ([0-9.]+) ms, "
                  r"optimizer ([0-9.]+) ms, unattributed ([0-9.]+) ms; without hooks forward\+backward [0-9.]+ ms, "
                  r"whole iteration ([0-9.]+) ms")


class UnattributedRule(unittest.TestCase):
    def test_difference_when_the_iteration_is_longer(self):
        value, note = profile_torch.unattributed(0.010, 0.007)
        self.assertAlmostEqual(value, 0.003, places=15)
        self.assertIsNone(note)
        self.assertEqual(profile_torch.unattributed(0.007, 0.007), (0.0, None))

    def test_clamped_at_zero_with_a_note(self):
        value, note = profile_torch.unattributed(0.005, 0.0075)
        self.assertEqual(value, 0.0)
        self.assertEqual(note, "unattributed_s clamped at 0: the hooked phases add up to 7.500 ms, 2.500 ms more "
                               "than the un-hooked iteration (5.000 ms)")


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (Debian: python3-torch)")
class Measured(unittest.TestCase):
    def test_every_batch_states_unattributed_s_and_the_parts_add_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "eg.json")
            p = subprocess.run([sys.executable, TOOL, "--model", "eventgrad_cnn", "--batch-sizes", "4,8",
                                "--iterations", "3", "--warmup", "1", "--output", out],
                               capture_output=True, text=True, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            self.assertEqual(list(doc)[:8], ["model", "batch_size", "device", "dtype", "provenance", "optimizer_s",
                                             "io_s", "unattributed_s"])
            values = [doc["unattributed_s"]] + [b["unattributed_s"] for b in doc["batch_profiles"]]
            self.assertTrue(all(isinstance(v, float) and v >= 0 for v in values), values)
            self.assertIn("unattributed_s = the un-hooked training iteration", doc["provenance"])
            lines = [LINE.search(line) for line in p.stdout.splitlines()]
            rows = [m for m in lines if m]
            self.assertEqual([int(m.group(1)) for m in rows], [4, 8])
            for m in rows:
                io, fwd, bwd, opt, unatt, whole = (float(m.group(i)) for i in range(2, 8))
                parts = io + fwd + bwd + opt
                if unatt > 0:  # parts + unattributed = the whole iteration (each printed to 0.0005 ms)
                    self.assertAlmostEqual(parts + unatt, whole, delta=0.003)
                else:  # clamped: the hooked parts took at least the whole iteration, and the provenance says so
                    self.assertGreaterEqual(parts + 0.003, whole)
                    if parts > whole + 0.003:
                        self.assertIn(f"batch {m.group(1)}: unattributed_s clamped at 0", doc["provenance"])
            if os.path.exists(DDLSIM):  # the simulator reads it, the unattributed time included
                scenario = {"name": "p", "platform": {"workers": 2},
                            "workload": {"profile": out, "iterations": 1, "batch_size": 6}}
                sc = os.path.join(tmp, "sc.json")
                with open(sc, "w", encoding="utf-8") as f:
                    json.dump(scenario, f)
                v = subprocess.run([DDLSIM, "validate", sc], capture_output=True, text=True, check=False)
                self.assertEqual(v.returncode, 0, v.stderr)


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (Debian: python3-torch)")
class Gpt2(unittest.TestCase):
    """--model gpt2: HuggingFace GPT2LMHeadModel's parameters and module paths, without transformers."""

    def test_parameters_and_layers_of_gpt2_small(self):
        import torch
        model, shape, vocab = profile_torch.build_model(torch, "gpt2", 1000)
        self.assertIsNone(shape)
        self.assertEqual(vocab, 50257)
        # wte 50257 x 768, wpe 1024 x 768; per block: two LayerNorms (2 x 768 each), c_attn 768 x 2304 + 2304,
        # c_proj 768 x 768 + 768, c_fc 768 x 3072 + 3072, c_proj 3072 x 768 + 768; ln_f; the head is tied.
        block = 2 * 2 * 768 + (768 * 2304 + 2304) + (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768)
        expected = 50257 * 768 + 1024 * 768 + 12 * block + 2 * 768
        self.assertEqual(expected, 124439808)
        self.assertEqual(sum(p.numel() for p in model.parameters()), expected)
        owners = [n for n, m in model.named_modules() if any(True for _ in m.parameters(recurse=False))]
        self.assertEqual(len(owners), 2 + 12 * 6 + 1)
        self.assertEqual(owners[:4], ["transformer.wte", "transformer.wpe", "transformer.h.0.ln_1",
                                      "transformer.h.0.attn.c_attn"])
        self.assertEqual(owners[-1], "transformer.ln_f")
        tokens = torch.randint(0, vocab, (1, 8))
        self.assertEqual(tuple(model(tokens).shape), (1, 8, vocab))


if __name__ == "__main__":
    unittest.main()
