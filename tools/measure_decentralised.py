#!/usr/bin/python3
"""Measure real decentralised and periodic-averaging training with torch.distributed, to compare with
ddlsim's `gossip` (D-PSGD on a ring) and `local_sgd` (docs/validation.md, "Results: decentralised").

Every rank trains the model (tools/profile_torch.py's build_model) on a synthetic batch (torch.randn
inputs, random labels) with SGD (momentum 0.9), one thread per rank. The model's parameters are views
into one flat buffer, so a model message is that buffer, sent as it is (no packing copy). An
iteration is zero_grad, forward, cross-entropy loss, backward and the optimizer step, then:

* dpsgd: D-PSGD on a ring (Lian et al., NeurIPS 2017), as ddlsim's `gossip` with `graph: ring`,
  `variant: synchronous`. Rank r posts its two receives (from r-1 and from r+1) and then its two
  sends (its model to r+1 and to r-1), waits for all four, and averages:
  x <- (x + x_left + x_right) / 3. On 2 ranks both neighbours are the other rank, which gets two
  messages (tags tell them apart), as ddlsim's ring without `distinct_neighbours`.
* local_sgd: every --period-th iteration the flat model is all-reduced (the library's all-reduce,
  sum) and divided by the world size, after the optimizer step: ddlsim's `local_sgd` with
  `period_iterations` = --period and one bucket.
* event: EventGraD's event-triggered ring (seed 000, dmnist/event/event.cpp), replaying the decisions
  of a training trace (docs/traces.md; --trace, recorded with --ranks workers by
  tools/record_training.py), as ddlsim's `event_triggered` with `decisions: trace`, `puts:
  sequential`. After backward, for each tensor the trace says rank r sent at this iteration, r puts
  it to r-1 and then to r+1, each put complete before the next, as the seed's
  MPI_Win_lock / MPI_Put / MPI_Win_unlock; then it averages every tensor with the last values its
  neighbours put, and steps. A put is one-sided in effect: each rank runs one receiver thread per
  neighbour that always has the next receive posted (it knows the sender's decisions from the
  trace), like MPI's window with an asynchronous progress thread, and acknowledges each tensor with
  a 4-byte message once it has arrived; the put completes when the acknowledgement is in, as
  MPI_Win_unlock returns once the put is complete at the target (MPI-3.1, section 11.5.3). The
  warm-up replays trace iterations 0 .. --warmup - 1, the timed loop iterations 0 .. --iterations - 1.

Timing: --warmup untimed iterations (for local_sgd rounded up to whole periods), then --iterations
timed ones. On one machine (--lab, --local) the ranks start the timed loop at a common time and
every rank records when each of its iterations ends. `iteration_s_median` is the median over every
rank's iterations of (end - previous end), `iteration_s_mean` is for dpsgd and event the mean of
those (what ddlsim's `iteration_time_s` is for `gossip` and `event_triggered`: `worker_mean`) and for local_sgd (latest end of the
last iteration - start) / iterations (ddlsim's `global_step` basis; a period's iterations differ,
so compare means there). `averaging_s_median` is each iteration's own averaging arithmetic (the two
adds and the divide, or the divide after the all-reduce), measured on the rank, median over ranks
and iterations: a framework cost ddlsim does not model, reported so that it can be seen.

Launch modes are those of tools/measure_collectives.py: --lab (root; the tool sets up the lab for
every --rate x --delay and tears it down at the end) or --local (loopback, unshaped).

Example:
  sudo /usr/bin/python3 tools/measure_decentralised.py --lab --algorithms dpsgd,local_sgd \\
      --model eventgrad_cnn --ranks 2,3 --batch-size 16 --rate 100Mbps --delay 1ms --out dec.csv
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_runs  # noqa: E402
from lab_runs import ToolError  # noqa: E402

PROG = "measure_decentralised.py"
ALGORITHMS = ["dpsgd", "local_sgd", "event"]
HEADER = ["algorithm", "model", "ranks", "batch_size", "period_iterations", "backend", "bandwidth_bps",
          "latency_s", "iteration_s_median", "iteration_s_mean", "iteration_s_p90", "averaging_s_median",
          "iterations", "trace", "source"]
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TO_RIGHT, TO_LEFT = 0, 1  # message tags: a model sent to r+1, to r-1
ACK_TAG = 2  # event: added to a direction's tag, the target's acknowledgement of a put


def durations(ends, start):
    """One rank's iteration durations from its absolute end times and the common start."""
    return [ends[i] - (ends[i - 1] if i > 0 else start) for i in range(len(ends))]


def summarise(algorithm, ends_per_rank, start):
    """(median, mean, p90) of the iteration times as the module doc defines them."""
    every = [d for ends in ends_per_rank for d in durations(ends, start)]
    if algorithm == "local_sgd":
        count = min(len(e) for e in ends_per_rank)
        mean = (max(e[count - 1] for e in ends_per_rank) - start) / count
    else:
        mean = sum(every) / len(every)
    return lab_runs.median(every), mean, lab_runs.percentile(every, 90)


def ring_peers(rank, world):
    """(left, right) on a ring: r-1 and r+1 modulo the world."""
    return (rank - 1) % world, (rank + 1) % world


# ---- the launcher ----

def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)

    def tool_arguments(ap):
        ap.add_argument("--algorithms", default="dpsgd,local_sgd",
                        help=f"comma-separated, of {', '.join(ALGORITHMS)} (default: both)")
        ap.add_argument("--model", default="eventgrad_cnn", help="model (tools/profile_torch.py names)")
        ap.add_argument("--ranks", default="2", help="worker counts, comma-separated, each >= 2 (default 2)")
        ap.add_argument("--batch-size", type=int, default=16, help="samples per rank and iteration (default 16)")
        ap.add_argument("--period", type=int, default=4, help="local_sgd: iterations per averaging (default 4)")
        ap.add_argument("--iterations", type=int, default=20, help="timed iterations (default 20)")
        ap.add_argument("--warmup", type=int, default=4, help="untimed iterations first (default 4)")
        ap.add_argument("--trace", help="event: the training trace; {ranks} is replaced by each --ranks value")

    def check_tool_arguments(args):
        args.algorithms = lab_runs.parse_list(args.algorithms, algorithm_name, "--algorithms")
        args.ranks = lab_runs.parse_list(args.ranks, lab_runs.positive_int, "--ranks")
        if min(args.ranks) < 2:
            raise ToolError("--ranks: a ring needs at least 2 ranks", 2)
        lab_runs.check_counts((("--batch-size", args.batch_size, 1), ("--iterations", args.iterations, 1),
                               ("--warmup", args.warmup, 0), ("--period", args.period, 1)))
        if "event" in args.algorithms:
            if not args.trace:
                raise ToolError("--algorithms event needs --trace (a training trace per rank count)", 2)
            for ranks in args.ranks:
                check_trace(args.trace.replace("{ranks}", str(ranks)), ranks, args.model,
                            max(args.iterations, args.warmup))
        if "local_sgd" in args.algorithms and args.iterations % args.period:
            raise ToolError(f"--iterations ({args.iterations}) must be a multiple of --period ({args.period}) "
                            "so that local_sgd's mean covers whole periods", 2)

    lab_runs.add_common_arguments(ap, 3600, tool_arguments)
    args = lab_runs.parse_common_arguments(ap, argv, check_tool_arguments)
    if not args.worker and args.mode == "torchrun":
        raise ToolError("choose --lab or --local (this tool times ranks on one shared clock)", 2)
    return args


def algorithm_name(text):
    if text not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {text!r} (choose from {', '.join(ALGORITHMS)})")
    return text


def check_trace(path, ranks, model, iterations):
    """The trace's `sent` decisions, refused (ToolError, 2) unless it is an event_triggered trace of
    `model` with `ranks` workers and at least `iterations` iterations."""
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        raise ToolError(f"--trace {path}: {e}", 2) from None
    algorithm = trace.get("algorithm", {}).get("name") if isinstance(trace, dict) else None
    if algorithm != "event_triggered" or trace.get("model") != model or trace.get("workers") != ranks \
            or trace.get("iterations", 0) < iterations:
        raise ToolError(f"--trace {path}: need an event_triggered trace of {model} with {ranks} workers and at least "
                        f"{iterations} iterations; it is {algorithm} of {trace.get('model')} with "
                        f"{trace.get('workers')} workers and {trace.get('iterations')} iterations", 2)
    return trace


def put_summary(put_times):
    """The median time of a put (from posting to its acknowledgement) per message size."""
    sizes = sorted({b for b, _ in put_times})
    return "median put " + ", ".join(
        f"{lab_runs.median([t for b, t in put_times if b == size]) * 1e3:.2f} ms at {size} B" for size in sizes)


def run_group(args, ranks, network, table, port):
    job = {"backend": args.backend, "mode": args.mode, "model": args.model, "ranks": ranks,
           "batch_size": args.batch_size, "algorithms": args.algorithms, "period": args.period,
           "iterations": args.iterations, "warmup": args.warmup, "lead_s": 0.05,
           "trace": os.path.abspath(args.trace.replace("{ranks}", str(ranks))) if args.trace else None}
    lab_runs.progress(PROG, f"{ranks} ranks: {args.model}, {', '.join(args.algorithms)}")
    results = lab_runs.run_job(job, __file__, args.mode, ranks, args.backend, port, args.timeout, "ddlsim-dec-")
    for result in results:
        comment = (f"{args.model} N={ranks} {result['algorithm']}: {result['parameters']} parameters, "
                   f"model message {4 * result['parameters']} bytes")
        if result["algorithm"] == "event":
            put_s = sum(t for _, t in result["put_times"]) / (ranks * args.iterations)
            comment = (f"{comment}; {result['puts']} puts timed, {put_s * 1e3:.2f} ms of puts per rank and "
                       f"iteration, {put_summary(result['put_times'])}")
        row = {"algorithm": result["algorithm"], "model": args.model, "ranks": ranks, "batch_size": args.batch_size,
               "period_iterations": args.period if result["algorithm"] == "local_sgd" else "",
               "backend": args.backend, "bandwidth_bps": network["bandwidth_bps"], "latency_s": network["latency_s"],
               "iteration_s_median": result["median"], "iteration_s_mean": result["mean"],
               "iteration_s_p90": result["p90"], "averaging_s_median": result["averaging_median"],
               "iterations": args.iterations,
               "trace": os.path.relpath(job["trace"], ROOT) if result["algorithm"] == "event" else "",
               "source": lab_runs.source_label(args.mode)}
        table.append([row], [comment])
        lab_runs.progress(PROG, f"{result['algorithm']} {args.model} N={ranks}: median "
                                f"{result['median'] * 1e3:.1f} ms, mean {result['mean'] * 1e3:.1f} ms, averaging "
                                f"{result['averaging_median'] * 1e3:.2f} ms")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    lab_runs.sigterm_as_interrupt()
    table = lab_runs.CsvTable(args.out, HEADER)
    table.append([], [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + argv)])
    lab_runs.run_groups(PROG, args, table, run_group, 29400)
    lab_runs.progress(PROG, f"wrote {args.out}")
    return 0


# ---- inside a rank ----

def worker_main(args):
    import torch
    with open(args.worker, encoding="utf-8") as f:
        job = json.load(f)
    store = lab_runs.init_rank(torch, job["backend"], args.rank, job["ranks"], mode=job["mode"])
    results = []
    for index, algorithm in enumerate(job["algorithms"]):
        result = train_and_time(torch, store, job, args.rank, algorithm, index)
        if args.rank == 0:
            results.append(result)
    if args.rank == 0:
        with open(job["results"], "w", encoding="utf-8") as f:
            json.dump(results, f)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


def flat_model(torch, model):
    """Makes every parameter a view into one flat fp32 buffer and returns the buffer."""
    parameters = list(model.parameters())
    flat = torch.cat([p.detach().reshape(-1) for p in parameters]).contiguous()
    offset = 0
    for p in parameters:
        p.data = flat[offset:offset + p.numel()].view_as(p)
        offset += p.numel()
    return flat


def train_and_time(torch, store, job, rank, algorithm, index):
    import profile_torch
    import time
    from measure_ddp import logits
    dist = torch.distributed
    world = job["ranks"]
    torch.manual_seed(0)
    model, input_shape, classes = profile_torch.build_model(torch, job["model"], 10)
    flat = flat_model(torch, model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    generator = torch.Generator().manual_seed(1 + rank)
    inputs = torch.randn((job["batch_size"],) + tuple(input_shape), generator=generator)
    labels = torch.randint(0, classes, (job["batch_size"],), generator=generator)
    left, right = ring_peers(rank, world)
    from_left, from_right = torch.empty_like(flat), torch.empty_like(flat)
    averaging = []
    counter = [0]

    def compute_gradients():
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(logits(model(inputs)), labels)
        loss.backward()

    def compute():
        compute_gradients()
        optimizer.step()

    def dpsgd():
        compute()
        works = [dist.irecv(from_left, left, tag=TO_RIGHT), dist.irecv(from_right, right, tag=TO_LEFT),
                 dist.isend(flat, right, tag=TO_RIGHT), dist.isend(flat, left, tag=TO_LEFT)]
        for w in works:
            w.wait()
        begin = time.monotonic()
        flat.add_(from_left).add_(from_right).div_(3.0)
        averaging.append(time.monotonic() - begin)

    def local_sgd():
        compute()
        counter[0] += 1
        if counter[0] % job["period"] == 0:
            dist.all_reduce(flat)
            begin = time.monotonic()
            flat.div_(world)
            averaging.append(time.monotonic() - begin)

    event = EventRing(torch, job, rank, model, optimizer, compute_gradients, averaging) \
        if algorithm == "event" else None
    step = {"dpsgd": dpsgd, "local_sgd": local_sgd, "event": event.step if event else None}[algorithm]
    warmup = job["warmup"]
    if algorithm == "local_sgd":
        warmup = -(-warmup // job["period"]) * job["period"]  # whole periods, so the timed loop starts one
    for _ in range(warmup):
        step()
    averaging.clear()
    if event:
        event.restart()
    key = f"dec/{index}"
    if rank == 0:
        store.set(f"{key}/start", repr(time.monotonic() + job["lead_s"] + 0.02 * world))
    start = float(store.get(f"{key}/start"))
    while time.monotonic() < start:
        time.sleep(min(0.001, max(0.0, start - time.monotonic())))
    ends = []
    for _ in range(job["iterations"]):
        step()
        ends.append(time.monotonic())
    puts = event.finish() if event else 0
    gathered = lab_runs.gather_json(store, rank, world, f"{key}/ends",
                                    {"ends": ends, "averaging": averaging, "puts": puts,
                                     "put_times": event.put_times if event else []})
    if rank != 0:
        return None
    median, mean, p90 = summarise(algorithm, [g["ends"] for g in gathered], start)
    every_averaging = [a for g in gathered for a in g["averaging"]]
    return {"algorithm": algorithm, "median": median, "mean": mean, "p90": p90,
            "averaging_median": lab_runs.median(every_averaging) if every_averaging else 0.0,
            "parameters": flat.numel(), "puts": sum(g["puts"] for g in gathered),
            "put_times": [t for g in gathered for t in g["put_times"]]}


class EventRing:
    """One rank of the event-triggered ring (module doc, "event"): its puts, its two receiver
    threads and the averaging."""

    def __init__(self, torch, job, rank, model, optimizer, compute_gradients, averaging):
        import threading
        self.torch, self.dist = torch, torch.distributed
        self.rank, self.optimizer, self.compute_gradients, self.averaging = rank, optimizer, compute_gradients, averaging
        world = job["ranks"]
        trace = check_trace(job["trace"], world, job["model"], max(job["iterations"], job["warmup"]))
        self.sent = trace["sent"]
        self.tensors = [p.data for p in model.parameters()]
        if [t.get("numel") for t in trace.get("tensors", [])] != [t.numel() for t in self.tensors]:
            raise ToolError(f"--trace {job['trace']}: its tensors are not {job['model']}'s parameters", 2)
        # Trace iterations in the order this rank runs them: the warm-up's, then the timed loop's.
        self.schedule = list(range(job["warmup"])) + list(range(job["iterations"]))
        self.left, self.right = ring_peers(rank, world)
        # The seed's window: the last value each neighbour put of every tensor, zero at first.
        self.from_left = [torch.zeros_like(t) for t in self.tensors]
        self.from_right = [torch.zeros_like(t) for t in self.tensors]
        self.ack = torch.zeros(1)
        self.position, self.puts, self.put_times = 0, 0, []
        # Puts travelling right (tag TO_RIGHT) come from the left neighbour into from_left, and so on.
        self.threads = [threading.Thread(target=self.receive, args=(self.left, TO_RIGHT, self.from_left), daemon=True),
                        threading.Thread(target=self.receive, args=(self.right, TO_LEFT, self.from_right), daemon=True)]
        self.failure = None
        for t in self.threads:
            t.start()

    def receive(self, sender, tag, slots):
        """Always one receive posted for the sender's next put (its decisions are the trace's); each
        arrival is acknowledged."""
        try:
            ack = self.torch.ones(1)
            for k in self.schedule:
                for i, slot in enumerate(slots):
                    if self.sent[k][sender][i]:
                        self.dist.irecv(slot, sender, tag=tag).wait()
                        self.dist.isend(ack, sender, tag=tag + ACK_TAG).wait()
        except Exception as e:  # reported by finish()
            self.failure = e

    def put(self, tensor, peer, tag):
        import time
        begin = time.monotonic()
        acknowledged = self.dist.irecv(self.ack, peer, tag=tag + ACK_TAG)
        self.dist.isend(tensor, peer, tag=tag).wait()
        acknowledged.wait()
        self.puts += 1
        self.put_times.append((tensor.numel() * tensor.element_size(), time.monotonic() - begin))

    def step(self):
        import time
        k = self.schedule[self.position]
        self.position += 1
        self.compute_gradients()
        for i, tensor in enumerate(self.tensors):
            if self.sent[k][self.rank][i]:
                self.put(tensor, self.left, TO_LEFT)
                self.put(tensor, self.right, TO_RIGHT)
        begin = time.monotonic()
        for tensor, a, b in zip(self.tensors, self.from_left, self.from_right):
            tensor.add_(a).add_(b).div_(3.0)
        self.averaging.append(time.monotonic() - begin)
        self.optimizer.step()

    def restart(self):
        self.puts, self.put_times = 0, []

    def finish(self):
        """Joins the receiver threads; the puts made since restart()."""
        for t in self.threads:
            t.join()
        if self.failure is not None:
            raise self.failure
        return self.puts


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.status)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the lab is torn down", file=sys.stderr)
        sys.exit(130)
