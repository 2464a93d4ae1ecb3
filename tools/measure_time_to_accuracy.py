#!/usr/bin/python3
"""Train a real model to a target accuracy with torch.distributed and time it, to compare with
ddlsim's co-simulated time to accuracy (training.convergence; docs/validation.md, "Results: time
to accuracy").

Every rank trains softmax regression (784 -> 10, all-zero start) on its shard of Fashion-MNIST
(Debian's dataset-fashion-mnist, pixels / 255) with plain SGD on the mean cross-entropy, exactly as
ddlsim's co-simulation does (models/convergence/): the same shards (`iid`: a seeded permutation
dealt in equal parts; `by_label`: 2N label-sorted pieces, two per rank), the same batches (a fresh
seeded permutation of the shard per epoch of it), from a port of its random numbers (splitmix64,
xoshiro256**, Fisher-Yates), so that with --dtype float64 the training is the co-simulation's to
rounding. The gradient is computed by hand (softmax(z) - onehot(y), through the linear layer), as
the co-simulation does. An iteration is the gradient, then:

* bsp: the flat gradient all-reduced (the library's all-reduce, sum), divided by the world size,
  and the step theta <- theta - lr g: ddlsim's `bsp` with one bucket and `gloo_ring`.
* local_sgd: the step; every --period-th iteration the flat model is all-reduced and divided by the
  world size: ddlsim's `local_sgd`, `period_iterations` = --period.
* dpsgd: the step, then D-PSGD on a ring as tools/measure_decentralised.py does it (receives from
  r-1 and r+1 posted, the model sent to r+1 and r-1, all four waited for), and
  theta <- (theta + theta_left + theta_right) / 3: ddlsim's `gossip` on a `ring`, `synchronous`.
* asp: a parameter server, one more process (the last rank, on its own lab link): each worker sends
  its gradient to it and waits for the parameters back; the server keeps a receive posted per
  worker (a push then never waits for gloo's receiver-ready notice, as ddlsim's servers post
  theirs ahead; a receive from any rank would make every push wait for a NOTIFY_SEND_READY /
  NOTIFY_RECV_READY round trip, gloo/transport/tcp/pair.cc, and serialise the server), takes the
  gradients as they complete, steps theta <- theta - lr g with each, and sends theta back to that
  worker: ddlsim's `asp` with one parameter server. Point-to-point gloo messages, as D-PSGD's (the
  same transport as every other row; torch.distributed.rpc's TensorPipe would add its own costs).
* ssp: the same server, with ddlsim's `ssp` rule (models/sync/ssp.cpp): a worker's pull after its
  iteration t is answered once every worker has pushed at least t + 1 - --staleness-bound
  gradients, and the gradients received and not yet applied are applied together then (one step of
  their sum); --staleness-bound 0 is bsp through a server, a bound >= --iterations asp.

The model is evaluated where ddlsim evaluates it (bsp: every --evaluate-every iterations and the
last; local_sgd: where the copies were just averaged, at most every --evaluate-every; dpsgd: the
ranks' mean model every --evaluate-every iterations and the last; asp: as bsp, the server's model
once it has answered every worker's gradient of that iteration): each rank copies its
parameters there (a copy of 7,850 numbers, inside the timed loop) and the test split is evaluated
after the run, so evaluating costs the timed run nothing. An evaluation's time is when the last
rank ended that iteration, from the common start; `time_to_target_s` the first evaluation at or
above --target (empty if none).

Timing: every rank starts the timed loop at a common time (tools/lab_runs.py) and records when each
iteration ends. `iteration_s_mean` is (last end of the last iteration - start) / iterations, and
`compute_s_median` each rank's gradient-and-step time, median over ranks and iterations;
`compute_rank_factors` each rank's own median over that median (space-separated, rank 0 first:
ranks that share two cores are not equally fast), and `compute_log_sd` the spread of a time around
its rank's median: half the distance between the 16th and the 84th percentile of log(time / the
rank's median) (the sigma of a lognormal fitted by its quantiles). analysis/
validate_time_to_accuracy.py --compute measured gives the three to ddlsim (`workload` compute,
`training.stragglers` speed factors and lognormal noise). One thread per rank.

Launch modes are those of tools/measure_collectives.py: --lab (root) or --local (loopback).

Example:
  sudo /usr/bin/python3 tools/measure_time_to_accuracy.py --lab --algorithms bsp,local_sgd,dpsgd \\
      --ranks 4 --shards by_label --iterations 1000 --rate 100Mbps --delay 2ms --out tta.csv \\
      --curves tta_curves.csv
"""

import argparse
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_runs  # noqa: E402
from lab_runs import ToolError  # noqa: E402

PROG = "measure_time_to_accuracy.py"
ALGORITHMS = ["bsp", "local_sgd", "dpsgd", "asp", "ssp"]
SERVED = ("asp", "ssp")  # with a parameter server: one more process
HEADER = ["algorithm", "ranks", "batch_size", "learning_rate", "period_iterations", "staleness_bound", "shards",
          "train_samples",
          "test_samples", "seed", "dtype", "backend", "bandwidth_bps", "latency_s", "iterations",
          "evaluate_every", "target_accuracy", "time_to_target_s", "iterations_to_target", "final_test_accuracy",
          "iteration_s_mean", "compute_s_median", "compute_s_mean", "compute_log_sd", "compute_rank_factors",
          "source"]
CURVE_HEADER = ["algorithm", "ranks", "shards", "bandwidth_bps", "latency_s", "iteration", "time_s", "test_loss",
                "test_accuracy"]
FASHION_DIR = "/usr/share/datasets/fashion-mnist"
TO_RIGHT, TO_LEFT = 0, 1
MASK = (1 << 64) - 1


# ---- the co-simulation's random numbers and data order (models/convergence/random.hpp, cosimulation.cpp) ----

class Rng:
    """splitmix64 seeding xoshiro256**, as models/convergence/random.hpp."""

    def __init__(self, seed):
        self.s = []
        x = seed & MASK
        for _ in range(4):
            x = (x + 0x9e3779b97f4a7c15) & MASK
            z = x
            z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
            self.s.append(z ^ (z >> 31))

    @staticmethod
    def _rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK

    def next(self):
        s = self.s
        result = (self._rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def below(self, n):
        limit = MASK - (MASK % n)
        v = self.next()
        while v >= limit:
            v = self.next()
        return v % n


def shuffle(values, rng):
    for i in range(len(values), 1, -1):
        j = rng.below(i)
        values[i - 1], values[j] = values[j], values[i - 1]


def stream(seed, what, index):
    return ((seed * 0x9e3779b97f4a7c15) & MASK) ^ (what << 48) ^ index


def make_shards(labels, workers, by_label, seed):
    n = len(labels)
    pieces = 2 * workers if by_label else workers
    order = list(range(n))
    rng = Rng(stream(seed, 1, 0))
    if by_label:
        order.sort(key=lambda i: labels[i])  # stable: ties in file order
    else:
        shuffle(order, rng)
    piece_of = list(range(pieces))
    if by_label:
        shuffle(piece_of, rng)
    shards = [[] for _ in range(workers)]
    for slot in range(pieces):
        p = piece_of[slot]
        shards[slot % workers].extend(order[p * n // pieces:(p + 1) * n // pieces])
    return shards


class Batches:
    """Worker w's batches: a fresh seeded permutation of its shard each epoch of it, in order."""

    def __init__(self, shard, worker, seed, batch):
        self.shard, self.worker, self.seed, self.batch = shard, worker, seed, batch
        self.order, self.at, self.epoch = [], 0, 0

    def next(self):
        out = []
        while len(out) < self.batch:
            if self.at == len(self.order):
                self.order = list(self.shard)
                shuffle(self.order, Rng(stream(self.seed, 2, ((self.worker << 24) ^ self.epoch) & MASK)))
                self.at = 0
                self.epoch += 1
            out.append(self.order[self.at])
            self.at += 1
        return out


def read_idx(path, dims):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if int.from_bytes(data[0:4], "big") != 0x0800 + dims:
        raise ToolError(f"{path}: not an IDX file of {dims} dimensions")
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return shape, data[4 + 4 * dims:]


def load_fashion(torch, split, limit, dtype):
    """(x: n x 784 in [0, 1], y) of the `split` ("train" or "t10k"), its first `limit` samples (0: all)."""
    (n, rows, cols), pixels = read_idx(f"{FASHION_DIR}/{split}-images-idx3-ubyte.gz", 3)
    (_,), labels = read_idx(f"{FASHION_DIR}/{split}-labels-idx1-ubyte.gz", 1)
    n = min(n, limit) if limit > 0 else n
    x = torch.frombuffer(bytearray(pixels[:n * rows * cols]), dtype=torch.uint8).reshape(n, rows * cols)
    # float pixels / 255 in fp32 first, as the co-simulation stores them
    x = (x.to(torch.float32) / 255.0).to(dtype)
    y = torch.frombuffer(bytearray(labels[:n]), dtype=torch.uint8).to(torch.long)
    return x, y


def evaluation_iterations(algorithm, iterations, every, period):
    """The iterations ddlsim evaluates (models/convergence/cosimulation.cpp, peer_training.cpp)."""
    out, since = [], 0
    for k in range(iterations):
        last = k + 1 == iterations
        if algorithm == "dpsgd":
            if last or (k + 1) % every == 0:
                out.append(k)
            continue
        since += 1
        if algorithm == "local_sgd" and (k + 1) % period != 0:
            continue
        if not last and since < every:
            continue
        out.append(k)
        since = 0
    return out


def compute_summary(per_rank):
    """Each rank's compute times (a list per rank) summarised (see the header): the median over all,
    the spread of a time around its own rank's median, and each rank's median over the median."""
    import math
    pooled = [t for times in per_rank for t in times]
    median = lab_runs.median(pooled)
    residuals = []
    for times in per_rank:
        own = math.log(max(lab_runs.median(times), 1e-9))
        residuals += [math.log(max(t, 1e-9)) - own for t in times]
    spread = (lab_runs.percentile(residuals, 84) - lab_runs.percentile(residuals, 16)) / 2
    return {"compute_s_median": median, "compute_s_mean": sum(pooled) / len(pooled), "compute_log_sd": spread,
            "compute_rank_factors": " ".join(f"{lab_runs.median(times) / median:.4f}" for times in per_rank)}


# ---- the launcher ----

def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)

    def tool_arguments(ap):
        ap.add_argument("--algorithms", default="bsp,local_sgd,dpsgd", help=f"comma-separated, of {', '.join(ALGORITHMS)}")
        ap.add_argument("--ranks", default="4", help="worker counts, comma-separated, each >= 2 (default 4)")
        ap.add_argument("--batch-size", type=int, default=32, help="samples per rank and iteration (default 32)")
        ap.add_argument("--learning-rate", type=float, default=0.2, help="SGD's step (default 0.2)")
        ap.add_argument("--period", type=int, default=8, help="local_sgd: iterations per averaging (default 8)")
        ap.add_argument("--staleness-bound", type=int, default=3,
                        help="ssp: how many iterations a worker may run ahead of the slowest (default 3, as ddlsim's)")
        ap.add_argument("--shards", choices=["iid", "by_label"], default="iid", help="how the data is dealt")
        ap.add_argument("--iterations", type=int, default=400, help="timed iterations (default 400)")
        ap.add_argument("--evaluate-every", type=int, default=10, help="iterations between evaluations (default 10)")
        ap.add_argument("--target", type=float, default=0.8, help="target test accuracy (default 0.8)")
        ap.add_argument("--train-samples", type=int, default=0, help="the first samples of the training split (0: all)")
        ap.add_argument("--test-samples", type=int, default=0, help="the first samples of the test split (0: all)")
        ap.add_argument("--seed", type=int, default=1, help="the scenario seed the data order follows (default 1)")
        ap.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                        help="the parameters' and messages' type (default float32, as the bundled scenarios' fp32)")
        ap.add_argument("--warmup", type=int, default=5,
                        help="untimed iterations of the same algorithm on a copy, before the timed run (default 5)")

    def after_out(ap):
        ap.add_argument("--curves", help="CSV to append every evaluation to")

    def check_tool_arguments(args):
        args.algorithms = lab_runs.parse_list(args.algorithms, algorithm_name, "--algorithms")
        args.ranks = lab_runs.parse_list(args.ranks, lab_runs.positive_int, "--ranks")
        if min(args.ranks) < (1 if set(args.algorithms) <= set(SERVED) else 2):
            raise ToolError("--ranks: every set-up here but asp and ssp alone needs at least 2 ranks", 2)
        lab_runs.check_counts((("--batch-size", args.batch_size, 1), ("--iterations", args.iterations, 1),
                               ("--period", args.period, 1), ("--evaluate-every", args.evaluate_every, 1),
                               ("--staleness-bound", args.staleness_bound, 0),
                               ("--warmup", args.warmup, 0), ("--train-samples", args.train_samples, 0),
                               ("--test-samples", args.test_samples, 0), ("--seed", args.seed, 0)))
        if not 0 < args.learning_rate <= 100:
            raise ToolError(f"--learning-rate: expected a number in (0, 100], got {args.learning_rate:g}", 2)
        if not 0 < args.target <= 1:
            raise ToolError(f"--target: expected a fraction in (0, 1], got {args.target:g}", 2)
        if not os.path.exists(f"{FASHION_DIR}/train-images-idx3-ubyte.gz"):
            raise ToolError(f"{FASHION_DIR}: Fashion-MNIST is missing (apt-get install dataset-fashion-mnist)", 2)

    lab_runs.add_common_arguments(ap, 3600, tool_arguments, after_out)
    args = lab_runs.parse_common_arguments(ap, argv, check_tool_arguments)
    if not args.worker and args.mode == "torchrun":
        raise ToolError("choose --lab or --local (this tool times ranks on one shared clock)", 2)
    return args


def algorithm_name(text):
    if text not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {text!r} (choose from {', '.join(ALGORITHMS)})")
    return text


def run_group(args, ranks, network, table, port):
    job = {key: getattr(args, key) for key in ("backend", "mode", "algorithms", "batch_size", "learning_rate", "period",
                                               "staleness_bound", "shards", "iterations", "evaluate_every", "target", "train_samples",
                                               "test_samples", "seed", "dtype", "warmup")}
    job.update({"ranks": ranks, "workers": ranks, "lead_s": 0.05})
    lab_runs.progress(PROG, f"{ranks} ranks: {', '.join(args.algorithms)} on {args.shards} shards")
    results = []
    collective = [a for a in args.algorithms if a not in SERVED]
    served = [a for a in args.algorithms if a in SERVED]
    if collective:
        results += lab_runs.run_job(dict(job, algorithms=collective), __file__, args.mode, ranks, args.backend, port,
                                    args.timeout, "ddlsim-tta-")
    if served:  # the workers and a parameter server: one more process
        results += lab_runs.run_job(dict(job, algorithms=served, ranks=ranks + 1), __file__, args.mode, ranks + 1,
                                    args.backend, port + 100, args.timeout, "ddlsim-tta-")
    for result in results:
        reached = next((p for p in result["curve"] if p["test_accuracy"] >= args.target), None)
        row = {"algorithm": result["algorithm"], "ranks": ranks, "batch_size": args.batch_size,
               "learning_rate": args.learning_rate,
               "period_iterations": args.period if result["algorithm"] == "local_sgd" else "",
               "staleness_bound": args.staleness_bound if result["algorithm"] == "ssp" else "",
               "shards": args.shards, "train_samples": args.train_samples, "test_samples": args.test_samples,
               "seed": args.seed, "dtype": args.dtype, "backend": args.backend,
               "bandwidth_bps": network["bandwidth_bps"], "latency_s": network["latency_s"],
               "iterations": args.iterations, "evaluate_every": args.evaluate_every, "target_accuracy": args.target,
               "time_to_target_s": reached["time_s"] if reached else "",
               "iterations_to_target": reached["iteration"] + 1 if reached else "",
               "final_test_accuracy": result["curve"][-1]["test_accuracy"],
               "iteration_s_mean": result["iteration_s_mean"], "compute_s_median": result["compute_s_median"],
               "compute_s_mean": result["compute_s_mean"],
               "compute_log_sd": result["compute_log_sd"], "compute_rank_factors": result["compute_rank_factors"],
               "source": lab_runs.source_label(args.mode)}
        table.append([row], [])
        if args.curves:
            curves = lab_runs.CsvTable(args.curves, CURVE_HEADER)
            curves.append([{"algorithm": result["algorithm"], "ranks": ranks, "shards": args.shards,
                            "bandwidth_bps": network["bandwidth_bps"], "latency_s": network["latency_s"],
                            "iteration": p["iteration"], "time_s": p["time_s"], "test_loss": p["test_loss"],
                            "test_accuracy": p["test_accuracy"]} for p in result["curve"]], [])
        lab_runs.progress(PROG, f"{result['algorithm']} N={ranks}: "
                                + (f"{args.target:.0%} at {reached['time_s']:.3f} s (iteration {reached['iteration'] + 1})"
                                   if reached else f"{args.target:.0%} not reached")
                                + f", final {row['final_test_accuracy']:.2%}, {result['iteration_s_mean'] * 1e3:.2f} ms"
                                  " per iteration")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    lab_runs.sigterm_as_interrupt()
    table = lab_runs.CsvTable(args.out, HEADER)
    table.append([], [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + argv)])
    lab_runs.run_groups(PROG, args, table, run_group, 29600, 1 if set(SERVED) & set(args.algorithms) else 0)
    lab_runs.progress(PROG, f"wrote {args.out}")
    return 0


# ---- inside a rank ----

def worker_main(args):
    import torch
    with open(args.worker, encoding="utf-8") as f:
        job = json.load(f)
    store = lab_runs.init_rank(torch, job["backend"], args.rank, job["ranks"], mode=job["mode"])
    dtype = torch.float64 if job["dtype"] == "float64" else torch.float32
    train_x, train_y = load_fashion(torch, "train", job["train_samples"], dtype)
    test_x, test_y = load_fashion(torch, "t10k", job["test_samples"], torch.float64)
    shards = make_shards(train_y.tolist(), job["workers"], job["shards"] == "by_label", job["seed"])
    data = (train_x, train_y, test_x, test_y, shards[args.rank] if args.rank < job["workers"] else [])
    results = []
    for index, algorithm in enumerate(job["algorithms"]):
        train = served_and_time if algorithm in SERVED else train_and_time
        result = train(torch, store, job, args.rank, algorithm, index, data, dtype)
        if args.rank == 0:
            results.append(result)
    if args.rank == 0:
        with open(job["results"], "w", encoding="utf-8") as f:
            json.dump(results, f)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


def train_and_time(torch, store, job, rank, algorithm, index, data, dtype):
    import time
    dist = torch.distributed
    world = job["ranks"]
    train_x, train_y, test_x, test_y, shard = data
    features, classes = train_x.shape[1], 10
    lr = job["learning_rate"]
    left, right = (rank - 1) % world, (rank + 1) % world
    evaluated = set(evaluation_iterations(algorithm, job["iterations"], job["evaluate_every"], job["period"]))

    def run(iterations, timed):
        theta = torch.zeros(classes * features + classes, dtype=dtype)  # W (row-major), then b
        grad = torch.zeros_like(theta)
        w, b = theta[:classes * features].view(classes, features), theta[classes * features:]
        gw, gb = grad[:classes * features].view(classes, features), grad[classes * features:]
        from_left, from_right = torch.empty_like(theta), torch.empty_like(theta)
        batches = Batches(shard, rank, job["seed"], job["batch_size"])
        ends, snapshots, compute = [], {}, []
        for k in range(iterations):
            begin = time.monotonic()
            idx = torch.tensor(batches.next(), dtype=torch.long)
            x, y = train_x[idx], train_y[idx]
            z = x @ w.T + b
            p = torch.softmax(z, dim=1)
            p[torch.arange(len(idx)), y] -= 1.0
            torch.matmul(p.T, x, out=gw)
            torch.sum(p, dim=0, out=gb)
            grad.div_(len(idx))
            if algorithm == "bsp":
                compute.append(time.monotonic() - begin)
                dist.all_reduce(grad)
                theta.sub_(grad, alpha=lr / world)
            else:
                theta.sub_(grad, alpha=lr)
                compute.append(time.monotonic() - begin)
                if algorithm == "local_sgd" and (k + 1) % job["period"] == 0:
                    dist.all_reduce(theta)
                    theta.div_(world)
                elif algorithm == "dpsgd":
                    works = [dist.irecv(from_left, left, tag=TO_RIGHT), dist.irecv(from_right, right, tag=TO_LEFT),
                             dist.isend(theta, right, tag=TO_RIGHT), dist.isend(theta, left, tag=TO_LEFT)]
                    for work in works:
                        work.wait()
                    theta.add_(from_left).add_(from_right).div_(3.0)
            if timed:
                ends.append(time.monotonic())
                if k in evaluated:
                    snapshots[k] = theta.clone()
        return ends, snapshots, compute

    run(job["warmup"], False)  # untimed: the first calls' set-up
    key = f"tta/{index}"
    if rank == 0:
        store.set(f"{key}/start", repr(time.monotonic() + job["lead_s"] + 0.02 * world))
    start = float(store.get(f"{key}/start"))
    while time.monotonic() < start:
        time.sleep(min(0.001, max(0.0, start - time.monotonic())))
    ends, snapshots, compute = run(job["iterations"], True)
    # The evaluated models: every rank's snapshots, summed at rank 0 (an all-reduce of each).
    curve = []
    for k in sorted(snapshots):
        model = snapshots[k].to(torch.float64)
        dist.all_reduce(model)
        model.div_(world)
        if rank == 0:
            w, b = model[:classes * features].view(classes, features), model[classes * features:]
            z = test_x @ w.T + b
            loss = float(torch.nn.functional.cross_entropy(z, test_y))
            accuracy = float((z.argmax(dim=1) == test_y).double().mean())
            curve.append({"iteration": k, "test_loss": loss, "test_accuracy": accuracy})
    gathered = lab_runs.gather_json(store, rank, world, f"{key}/ends", {"ends": ends, "compute": compute})
    if rank != 0:
        return None
    for p in curve:
        p["time_s"] = max(g["ends"][p["iteration"]] for g in gathered) - start
    last = max(g["ends"][-1] for g in gathered)
    return {"algorithm": algorithm, "curve": curve, "iteration_s_mean": (last - start) / job["iterations"],
            **compute_summary([g["compute"] for g in gathered])}


def served_and_time(torch, store, job, rank, algorithm, index, data, dtype):
    """asp and ssp: ranks 0 .. N-1 are workers, rank N the parameter server (see the header)."""
    import time
    dist = torch.distributed
    workers = job["workers"]
    server = workers
    train_x, train_y, test_x, test_y, shard = data
    features, classes = train_x.shape[1], 10
    size = classes * features + classes
    lr = job["learning_rate"]
    evaluated = set(evaluation_iterations(algorithm, job["iterations"], job["evaluate_every"], job["period"]))

    bound = job["staleness_bound"] if algorithm == "ssp" else None  # asp: every pull answered at once

    def arrivals(iterations, grad):
        """Each worker's gradients as they arrive: one thread per worker keeps a receive posted from it
        (so a push never waits for a receiver-ready notice, as ddlsim's servers post theirs ahead;
        gloo's Work.is_completed() stays false until wait(), so receives cannot be polled)."""
        import queue
        import threading
        arrived = queue.Queue()

        def reader(w):
            buf = torch.zeros(size, dtype=dtype)
            for _ in range(iterations):
                dist.irecv(buf, src=w).wait()
                arrived.put((w, buf.clone()))

        threads = [threading.Thread(target=reader, args=(w,), daemon=True) for w in range(workers)]
        for t in threads:
            t.start()
        for _ in range(workers * iterations):
            w, g = arrived.get()
            grad.copy_(g)
            yield w
        for t in threads:
            t.join()

    def serve(iterations, timed):
        theta, grad = torch.zeros(size, dtype=dtype), torch.zeros(size, dtype=dtype)
        pending, unapplied = torch.zeros(size, dtype=dtype), 0
        clock = [0] * workers              # gradients pushed per worker
        waiting = []                       # (worker, its iteration) whose pull is not answered yet
        done = [0] * iterations            # workers answered for iteration k
        snapshots = {}
        for source in arrivals(iterations, grad):
            waiting.append((source, clock[source]))
            clock[source] += 1
            if bound is None:
                theta.sub_(grad, alpha=lr)
            else:
                pending.add_(grad)
                unapplied += 1
            slowest = min(clock)
            ready = [(w, t) for w, t in waiting if bound is None or slowest >= t + 1 - bound]
            if not ready:
                continue
            if unapplied:  # ssp: what arrived since the last step, applied as one step of its sum
                theta.sub_(pending, alpha=lr)
                pending.zero_()
                unapplied = 0
            for w, t in ready:
                dist.send(theta, w)
                done[t] += 1
                if timed and done[t] == workers and t in evaluated:
                    snapshots[t] = theta.clone()
            waiting = [p for p in waiting if p not in ready]
        return snapshots

    def work(iterations, timed):
        theta, grad = torch.zeros(size, dtype=dtype), torch.zeros(size, dtype=dtype)
        w, b = theta[:classes * features].view(classes, features), theta[classes * features:]
        gw, gb = grad[:classes * features].view(classes, features), grad[classes * features:]
        batches = Batches(shard, rank, job["seed"], job["batch_size"])
        ends, compute = [], []
        for _ in range(iterations):
            begin = time.monotonic()
            idx = torch.tensor(batches.next(), dtype=torch.long)
            x, y = train_x[idx], train_y[idx]
            p = torch.softmax(x @ w.T + b, dim=1)
            p[torch.arange(len(idx)), y] -= 1.0
            torch.matmul(p.T, x, out=gw)
            torch.sum(p, dim=0, out=gb)
            grad.div_(len(idx))
            compute.append(time.monotonic() - begin)
            dist.send(grad, server)
            dist.recv(theta, server)
            if timed:
                ends.append(time.monotonic())
        return ends, compute

    # Every rank here before anyone sends: a worker done with the previous set-up must not send
    # into the server's loop of that one.
    dist.barrier()
    if rank == server:
        serve(job["warmup"], False)
    else:
        work(job["warmup"], False)
    dist.barrier()
    key = f"tta/{index}"
    if rank == 0:
        store.set(f"{key}/start", repr(time.monotonic() + job["lead_s"] + 0.02 * (workers + 1)))
    start = float(store.get(f"{key}/start"))
    while time.monotonic() < start:
        time.sleep(min(0.001, max(0.0, start - time.monotonic())))
    if rank == server:
        curve = []
        for k, model in sorted(serve(job["iterations"], True).items()):
            model = model.to(torch.float64)
            w, b = model[:classes * features].view(classes, features), model[classes * features:]
            z = test_x @ w.T + b
            curve.append({"iteration": k, "test_loss": float(torch.nn.functional.cross_entropy(z, test_y)),
                          "test_accuracy": float((z.argmax(dim=1) == test_y).double().mean())})
        mine = {"curve": curve}
    else:
        ends, compute = work(job["iterations"], True)
        mine = {"ends": ends, "compute": compute}
    gathered = lab_runs.gather_json(store, rank, workers + 1, f"{key}/ends", mine)
    if rank != 0:
        return None
    curve, ranks = gathered[server]["curve"], gathered[:workers]
    for p in curve:
        p["time_s"] = max(g["ends"][p["iteration"]] for g in ranks) - start
    last = max(g["ends"][-1] for g in ranks)
    return {"algorithm": algorithm, "curve": curve, "iteration_s_mean": (last - start) / job["iterations"],
            **compute_summary([g["compute"] for g in ranks])}


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.status)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the lab is torn down", file=sys.stderr)
        sys.exit(130)
