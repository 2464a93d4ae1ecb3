#!/usr/bin/python3
"""Tests of the measurement tools that need no lab: tools/lab_runs.py, tools/measure_collectives.py,
tools/measure_ddp.py (docs/validation.md).

    /usr/bin/python3 tests/analysis/test_measure_collectives.py [path/to/ddlsim] [-v]

* The CSV writer and reader, units, statistics, DDP's bucket assignment and iteration times: standard
  library only.
* The data plans: `ddlsim schedule` gives every rank's steps; a pure-Python executor runs all ranks
  with ddlsim's semantics (post every op of a step, then wait for all; messages between two ranks
  match in order) on the regions the plans assign, and the result must be the true sum (or
  gathered / broadcast vector) on every rank. Skipped without the ddlsim binary.
* With PyTorch (Debian: python3-torch), the tools run for real on loopback (--local, 2 and 3 ranks,
  tiny sizes): the tools check every result themselves and fail otherwise; the test checks the CSV.
"""

import collections
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import lab_runs  # noqa: E402
import measure_collectives as mc  # noqa: E402
import measure_ddp as md  # noqa: E402

DDLSIM = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") \
    else os.path.join(ROOT, "build", "ddlsim")
HAVE_TORCH = importlib.util.find_spec("torch") is not None
PYTHON = "/usr/bin/python3"


def schedule(algorithm, workers, nbytes, servers=None, params=None):
    return mc.ddlsim_schedule(DDLSIM, algorithm, workers, servers, nbytes, params or {})


def execute(doc, elements, initial):
    """Runs every rank's data plan on lists of numbers; returns the final vectors."""
    world = doc["workers"] + doc["servers"]
    plans = [mc.data_plan(doc, r, elements) for r in range(world)]
    vectors = [list(initial(r)) for r in range(world)]
    channels = collections.defaultdict(collections.deque)  # (from, to) -> messages in order
    position = [0] * world
    posted = [False] * world
    while True:
        progressed = False
        for r in range(world):
            steps = doc["ranks"][r]
            if position[r] == len(steps):
                continue
            step, regions = steps[position[r]], plans[r][0][position[r]]
            if not posted[r]:  # sends read the vector when posted; it changes only after the step
                for op, region in zip(step, regions):
                    if op["kind"] == "send":
                        channels[(r, op["peer"])].append(vectors[r][region.lo:region.hi])
                posted[r] = True
                progressed = True
            needed = collections.Counter(op["peer"] for op in step if op["kind"] == "recv")
            if any(len(channels[(peer, r)]) < count for peer, count in needed.items()):
                continue
            arrived = []
            for op, region in zip(step, regions):
                if op["kind"] == "recv":
                    data = channels[(op["peer"], r)].popleft()
                    assert len(data) == region.hi - region.lo, (r, op, region, len(data))
                    arrived.append((region, data))
            for region, data in arrived:
                for i, value in enumerate(data):
                    if region.action == "add":
                        vectors[r][region.lo + i] += value
                    else:
                        vectors[r][region.lo + i] = value
            position[r] += 1
            posted[r] = False
            progressed = True
        if all(position[r] == len(doc["ranks"][r]) for r in range(world)):
            assert not any(channels.values()), "messages left unreceived"
            return vectors, [p[1] for p in plans]
        if not progressed:
            raise AssertionError(f"deadlock at steps {position}")


class Units(unittest.TestCase):
    def test_sizes_rates_delays(self):
        self.assertEqual(lab_runs.parse_bytes("64KiB"), 65536)
        self.assertEqual(lab_runs.parse_bytes("1MB"), 1e6)
        self.assertEqual(lab_runs.parse_bytes("4096"), 4096)
        self.assertEqual(lab_runs.parse_rate_bps("100Mbps"), 1e8)
        self.assertEqual(lab_runs.parse_rate_bps("12.5MBps"), 1e8)
        self.assertEqual(lab_runs.parse_rate_bps("1gbit"), 1e9)
        self.assertEqual(lab_runs.parse_delay_s("2ms"), 0.002)
        self.assertEqual(lab_runs.parse_delay_s("0"), 0.0)
        self.assertEqual(lab_runs.parse_delay_s("500us"), 5e-4)
        for bad in ("100", "10 furlongs", "-1Mbps"):
            with self.assertRaises(ValueError):
                lab_runs.parse_rate_bps(bad)
        with self.assertRaises(ValueError):
            lab_runs.parse_delay_s("5")
        with self.assertRaises(lab_runs.ToolError) as caught:
            lab_runs.parse_list("64KiB,lots", lab_runs.parse_bytes, "--bytes")
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("--bytes", str(caught.exception))

    def test_statistics(self):
        self.assertEqual(lab_runs.median([3, 1, 2]), 2)
        self.assertEqual(lab_runs.percentile([1, 2, 3, 4, 5], 90), 4.6)
        self.assertEqual(lab_runs.percentile([7], 90), 7)


class Tables(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "sub", "m.csv")

    def tearDown(self):
        self.folder.cleanup()

    def row(self, **changes):
        row = {"op": "allreduce", "algorithm": "ring", "ranks": 3, "servers": 0, "bytes": 65536,
               "seconds": 0.0123, "repeats": 5, "backend": "gloo", "bandwidth_bps": 1e8, "latency_s": 0.001,
               "source": "lab:host"}
        row.update(changes)
        return row

    def test_header_comments_and_append(self):
        table = mc.lab_runs.CsvTable(self.path, mc.HEADER)
        table.append([], ["command: measure it"])
        table.append([self.row()], ["ring N=3: two\nlines"])
        table.append([self.row(algorithm="library", bandwidth_bps=None, latency_s=None, source="torchrun:h")])
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "op,algorithm,ranks,servers,bytes,seconds,repeats,backend,bandwidth_bps,latency_s,source")
        self.assertEqual(lines[1], "# command: measure it")
        self.assertEqual(lines[2:4], ["# ring N=3: two", "# lines"])
        rows = lab_runs.read_table(self.path, mc.HEADER)
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0]["seconds"], "0.0123")
        self.assertEqual(rows[0]["bandwidth_bps"], "100000000.0")
        self.assertEqual(rows[1]["bandwidth_bps"], "")
        self.assertEqual(rows[1]["latency_s"], "")
        # A second table object on the same file appends below, with one header.
        mc.lab_runs.CsvTable(self.path, mc.HEADER).append([self.row(ranks=4)])
        self.assertEqual([r["ranks"] for r in lab_runs.read_table(self.path, mc.HEADER)], ["3", "3", "4"])
        with open(self.path, encoding="utf-8") as f:
            self.assertEqual(sum(1 for line in f if line.startswith("op,")), 1)
        self.assertEqual([n for n in os.listdir(os.path.dirname(self.path))], ["m.csv"])  # no temporary left

    def test_refuses_another_header_and_incomplete_rows(self):
        os.makedirs(os.path.dirname(self.path))
        with open(self.path, "w") as f:
            f.write("# old\nmodel,ranks\nx,2\n")
        with self.assertRaises(ValueError):
            mc.lab_runs.CsvTable(self.path, mc.HEADER)
        other = os.path.join(self.folder.name, "n.csv")
        with self.assertRaises(ValueError):
            mc.lab_runs.CsvTable(other, mc.HEADER).append([{"op": "allreduce"}])
        with open(other, "w") as f:
            f.write(",".join(mc.HEADER) + "\nallreduce,ring\n")
        with self.assertRaises(ValueError):
            lab_runs.read_table(other, mc.HEADER)

    def test_command_comment_quotes(self):
        self.assertEqual(lab_runs.command_comment(["tool", "--params", '{"ring": 1}', "--ranks", "2,3"]),
                         "command: tool --params '{\"ring\": 1}' --ranks 2,3")


class DdpHelpers(unittest.TestCase):
    class Param:
        def __init__(self, numel, grad=True):
            self.n, self.requires_grad = numel, grad

        def numel(self):
            return self.n

        def element_size(self):
            return 4

    def test_buckets_follow_ddp(self):
        mib = 1 << 20
        params = [self.Param(n) for n in (100, mib // 4, 10, mib // 2, 5)] + [self.Param(7, grad=False)]
        # Reverse order 5,3,2,1,0 (5 has no gradient); the first bucket closes at 1 MiB, then at 4 MiB.
        self.assertEqual(md.gradient_buckets(params, 4 * mib), [[4, 3], [2, 1, 0]])
        self.assertEqual(md.gradient_buckets(params, 1, first_bucket_bytes=1), [[4], [3], [2], [1], [0]])

    def test_iteration_times(self):
        ends = [[1.5, 2.5, 3.4], [1.6, 2.4, 3.6]]
        self.assertEqual([round(t, 9) for t in md.iteration_times(ends, start=1.0)], [0.6, 0.9, 1.1])
        self.assertEqual(md.iteration_times([[0.5, 0.7], [0.6, 0.4]]), [0.6, 0.7])


@unittest.skipUnless(os.path.exists(DDLSIM), f"no ddlsim binary at {DDLSIM}")
class DataPlans(unittest.TestCase):
    """Every plan, run by the pure-Python executor on ddlsim's own schedule, gives the true result."""

    def allreduce(self, algorithm, workers, elements, servers=None, params=None):
        doc = schedule(algorithm, workers, elements * 4, servers, params)
        world = doc["workers"] + doc["servers"]
        initial = lambda r: [(r + 1) * 10 + i % 3 if r < workers else 0 for i in range(elements)]  # noqa: E731
        vectors, checked = execute(doc, elements, initial)
        self.assertTrue(all(checked))
        want = [sum(initial(r)[i] for r in range(workers)) for i in range(elements)]
        for r in range(workers):
            self.assertEqual(vectors[r], want, f"{algorithm} N={workers} rank {r}")
        return doc, world

    def test_ring(self):
        for n in (2, 3, 4, 5):
            for elements in (n, 7, 100):
                for segments in (1, 2):
                    with self.subTest(n=n, elements=elements, segments=segments):
                        if elements < n * segments:
                            continue
                        self.allreduce("ring", n, elements, params={"segments": segments})

    def test_tree(self):
        for n in (2, 3, 4, 6, 7):
            for segments in (1, 3):
                with self.subTest(n=n, segments=segments):
                    self.allreduce("tree", n, 33, params={"segments": segments})

    def test_ps_and_direct(self):
        for n in (1, 2, 4):
            for servers in (1, 2, 3):
                with self.subTest(n=n, servers=servers):
                    self.allreduce("ps", n, 31, servers=servers)
        for n in (2, 3, 5):
            with self.subTest(direct=n):
                self.allreduce("direct", n, 31)

    def test_gather_scatter_broadcast(self):
        n, elements = 4, 30
        doc = schedule("ring_allgather", n, elements * 4)
        block = mc.bounds(elements, n)
        owner = lambda i: next(r for r in range(n) if block[r] <= i < block[r + 1])  # noqa: E731
        initial = lambda r: [float(r + 1) if owner(i) == r else -1.0 for i in range(elements)]  # noqa: E731
        vectors, _ = execute(doc, elements, initial)
        for r in range(n):
            self.assertEqual(vectors[r], [float(owner(i) + 1) for i in range(elements)])
        doc = schedule("ring_reduce_scatter", n, elements * 4)
        vectors, _ = execute(doc, elements, lambda r: [r + 1.0] * elements)
        for r in range(n):
            c = (r + 1) % n
            self.assertEqual(vectors[r][block[c]:block[c + 1]], [10.0] * (block[c + 1] - block[c]))
        doc = schedule("binomial_broadcast", 5, elements * 4)
        vectors, _ = execute(doc, elements, lambda r: [7.0 if r == 0 else 0.0] * elements)
        self.assertEqual(vectors, [[7.0] * elements] * 5)

    def test_generic_plan_rounds_messages(self):
        doc = schedule("halving_doubling", 3, 4 * 10 + 2)  # fractional elements per message
        regions, checked = mc.data_plan(doc, 0, 10)
        self.assertFalse(checked)
        for step, step_regions in zip(doc["ranks"][0], regions):
            for op, region in zip(step, step_regions):
                self.assertEqual(region.hi - region.lo, max(1, round(op["bytes"] / 4)))
        sent, messages, counted = mc.traffic(doc, regions, 0)
        self.assertEqual(messages, sum(op["kind"] == "send" for step in doc["ranks"][0] for op in step))
        self.assertAlmostEqual(sent, counted, delta=2 * messages)

    def test_windowed_schedule_is_refused(self):
        # gloo_ring keeps two steps in flight; the tool runs steps one at a time, so it refuses it
        with self.assertRaises(lab_runs.ToolError) as caught:
            mc.ddlsim_schedule(DDLSIM, "gloo_ring", 2, None, 4, {})
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("measure that as --algorithms library", str(caught.exception))

    def test_mismatch_is_refused(self):
        doc = schedule("ring", 3, 400)
        doc["ranks"][0] = doc["ranks"][0][:-1]
        with self.assertRaises(mc.PlanMismatch):
            mc.data_plan(doc, 0, 100)


class Options(unittest.TestCase):
    def test_bad_arguments_exit_2(self):
        env_free = dict(os.environ)
        env_free.pop("RANK", None)
        for args in (["--out", "x.csv"],  # no mode
                     ["--local", "--out", "x.csv", "--ranks", "1"],
                     ["--local", "--out", "x.csv", "--bytes", "2"],
                     ["--local", "--out", "x.csv", "--ops", "alltoall"],
                     ["--local", "--out", "x.csv", "--rate", "fast"],
                     ["--local", "--out", "x.csv", "--params", "{"]):
            with self.subTest(args=args):
                r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "measure_collectives.py")] + args,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_free)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertTrue(r.stderr.startswith("measure_collectives.py: error: "), r.stderr)
        r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "measure_ddp.py"), "--local", "--out", "x.csv",
                            "--bucket-cap-mb", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env_free)
        self.assertEqual(r.returncode, 2, r.stderr)


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (Debian: apt-get install python3-torch)")
@unittest.skipUnless(os.path.exists(DDLSIM), f"no ddlsim binary at {DDLSIM}")
class LocalRuns(unittest.TestCase):
    def test_collectives_on_loopback(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "m.csv")
            r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "measure_collectives.py"), "--local",
                                "--ddlsim", DDLSIM, "--ops", "allreduce,allgather,broadcast",
                                "--algorithms", "library,ring,tree,ps,ring_allgather,binomial_broadcast",
                                "--ranks", "2,3", "--bytes", "4KiB,1000", "--repeat", "2", "--warmup", "1",
                                "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                text = f.read()
            self.assertTrue(text.startswith(",".join(mc.HEADER) + "\n# command: "))
            self.assertNotIn("not checkable", text)
            rows = lab_runs.read_table(out, mc.HEADER)
            # Per N: 3 library ops + ring + tree + ps + ring_allgather + binomial_broadcast, 2 sizes.
            self.assertEqual(len(rows), 2 * 2 * 8)
            for row in rows:
                self.assertIn(row["op"], mc.OPS)
                self.assertEqual(row["servers"], "1" if row["algorithm"] == "ps" else "0")
                self.assertGreater(float(row["seconds"]), 0)
                self.assertEqual(row["repeats"], "2")
                self.assertEqual(row["backend"], "gloo")
                self.assertEqual((row["bandwidth_bps"], row["latency_s"]), ("", ""))
                self.assertTrue(row["source"].startswith("local:"))
                self.assertEqual(int(row["bytes"]) % 4, 0)
            sizes = {(r["op"], r["algorithm"], r["ranks"], r["bytes"]) for r in rows}
            self.assertIn(("allreduce", "ring", "3", "1000"), sizes)   # 250 float32 elements
            self.assertIn(("allgather", "library", "3", "996"), sizes)  # 3 equal pieces of round(250 / 3) = 83

    def test_ddp_on_loopback(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "d.csv")
            for extra in ([], ["--no-overlap"]):
                r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "measure_ddp.py"), "--local",
                                    "--model", "eventgrad_cnn", "--ranks", "2", "--batch-size", "4",
                                    "--iterations", "3", "--warmup", "1", "--bucket-cap-mb", "0.01,25",
                                    "--out", out] + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=600)
                self.assertEqual(r.returncode, 0, r.stderr)
            rows = lab_runs.read_table(out, md.HEADER)
            self.assertEqual([(r["bucket_cap_mb"], r["overlap"]) for r in rows],
                             [("0.01", "true"), ("25", "true"), ("0.01", "false"), ("25", "false")])
            for row in rows:
                self.assertEqual(row["iterations"], "3")
                self.assertLessEqual(float(row["iteration_s_median"]), float(row["iteration_s_p90"]))
                self.assertGreater(float(row["iteration_s_median"]), 0)

    def test_ddp_one_rank(self):
        """One rank: DDP's own compute on a process group of one (no network)."""
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "d1.csv")
            r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "measure_ddp.py"), "--local",
                                "--model", "eventgrad_cnn", "--ranks", "1", "--batch-size", "4",
                                "--iterations", "3", "--warmup", "1", "--out", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = lab_runs.read_table(out, md.HEADER)
            self.assertEqual([(r["ranks"], r["iterations"]) for r in rows], [("1", "3")])
            self.assertGreater(float(rows[0]["iteration_s_median"]), 0)


if __name__ == "__main__":
    unittest.main()
