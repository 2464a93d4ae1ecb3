#!/usr/bin/python3
"""Measure real PyTorch DistributedDataParallel iteration times, to compare with ddlsim's predicted
iteration time for the same model, workers, bucket size and overlap (docs/validation.md).

Every rank trains the model (tools/profile_torch.py's build_model: torchvision names, mnist_cnn,
eventgrad_cnn) on a synthetic batch (torch.randn inputs, random labels; no data set) with SGD
(momentum 0.9), one thread per rank. An iteration is zero_grad, forward, cross-entropy loss,
backward, optimizer step.

* overlap (default): DDP as users run it. Its reducer all-reduces each gradient bucket
  (bucket_cap_mb; DDP's first bucket is capped at 1 MiB) as soon as the bucket's gradients are
  ready, overlapping the rest of the backward pass.
* --no-overlap: the same buckets, all-reduced only after the whole backward pass, one after the
  other, which is what ddlsim's `bucketing.overlap: false` models. Forward and backward run under
  DDP's no_sync() (its reducer then communicates nothing), then the gradients are cut into buckets
  the way DDP cuts them (parameters in reverse order, the first bucket capped at 1 MiB, the others
  at bucket_cap_mb), each bucket is flattened, all-reduced (sum), divided by the world size and
  copied back.

Timing: --warmup untimed iterations, then --iterations timed ones. On one machine (--lab,
--local) all ranks share CLOCK_MONOTONIC: they start the timed loop at a common time published
through the TCPStore and record when each iteration ends; iteration i lasts from the latest end
of iteration i-1 (or the start) to the latest end of iteration i. Under torchrun every rank leaves a
barrier and times its own iterations; an iteration's time is the longest rank's. Rows carry the
median and the 90th percentile.

One rank (--ranks 1) is allowed: DDP's whole iteration on a process group of one (the reducer, its
bucket copies and a one-rank all-reduce, no network), which against the single-process profile of
the same model and batch (tools/profile_torch.py) measures the framework's own compute.

Launch modes are those of tools/measure_collectives.py: --lab (root; the tool sets up the lab for
every --rate x --delay and tears it down at the end), --local (loopback, unshaped), or torchrun.

Example:
  sudo /usr/bin/python3 tools/measure_ddp.py --lab --model mnist_cnn --ranks 2,3 --batch-size 16 \\
      --rate 100Mbps --delay 1ms --iterations 10 --out ddp.csv
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_runs  # noqa: E402
from lab_runs import ToolError  # noqa: E402

PROG = "measure_ddp.py"
HEADER = ["model", "ranks", "batch_size", "bucket_cap_mb", "overlap", "backend", "bandwidth_bps", "latency_s",
          "iteration_s_median", "iteration_s_p90", "iterations", "source"]
FIRST_BUCKET_BYTES = 1024 * 1024  # DDP's cap on its first bucket (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES)


def gradient_buckets(parameters, bucket_cap_bytes, first_bucket_bytes=FIRST_BUCKET_BYTES):
    """DDP's bucket assignment for --no-overlap: parameters (those with gradients) in reverse order,
    a bucket closes once it holds at least its cap (first_bucket_bytes for the first, then
    bucket_cap_bytes). Returns lists of indices into `parameters`. Works on anything with
    .numel(), .element_size() and .requires_grad."""
    buckets, current, size = [], [], 0
    cap = first_bucket_bytes
    for index in reversed(range(len(parameters))):
        p = parameters[index]
        if not p.requires_grad:
            continue
        current.append(index)
        size += p.numel() * p.element_size()
        if size >= cap:
            buckets.append(current)
            current, size, cap = [], 0, bucket_cap_bytes
    if current:
        buckets.append(current)
    return buckets


def iteration_times(ends_per_rank, start=None):
    """Per iteration, the time it lasted. With `start` (shared clock): ends_per_rank[r][i] are
    absolute end times; iteration i runs from the latest end of i-1 (start for i = 0) to the
    latest end of i. Without (torchrun): ends_per_rank[r][i] are each rank's own durations; the
    iteration's time is the longest."""
    count = min(len(e) for e in ends_per_rank)
    if start is None:
        return [max(e[i] for e in ends_per_rank) for i in range(count)]
    latest = [max(e[i] for e in ends_per_rank) for i in range(count)]
    return [latest[i] - (latest[i - 1] if i > 0 else start) for i in range(count)]


# ---- the launcher ----

def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)

    def tool_arguments(ap):
        ap.add_argument("--model", default="mnist_cnn", help="model (tools/profile_torch.py names; default mnist_cnn)")
        ap.add_argument("--ranks", default="2", help="worker counts, comma-separated (default 2)")
        ap.add_argument("--batch-size", type=int, default=32, help="samples per rank and iteration (default 32)")
        ap.add_argument("--bucket-cap-mb", default="25",
                        help="DDP bucket caps in MB (MiB, as DDP), comma-separated (default 25)")
        ap.add_argument("--no-overlap", action="store_true", help="all-reduce the buckets after the backward pass")
        ap.add_argument("--iterations", type=int, default=10, help="timed iterations (default 10)")
        ap.add_argument("--warmup", type=int, default=3, help="untimed iterations first (default 3)")

    def check_tool_arguments(args):
        args.ranks = lab_runs.parse_list(args.ranks, lab_runs.positive_int, "--ranks")

        def cap(text):
            value = float(text)
            if value <= 0:
                raise ValueError(f"expected a size in MB > 0, got {text!r}")
            return value
        args.bucket_caps = lab_runs.parse_list(args.bucket_cap_mb, cap, "--bucket-cap-mb")
        lab_runs.check_counts((("--batch-size", args.batch_size, 1), ("--iterations", args.iterations, 1),
                               ("--warmup", args.warmup, 0)))

    lab_runs.add_common_arguments(ap, 3600, tool_arguments)
    return lab_runs.parse_common_arguments(ap, argv, check_tool_arguments)


def job_for(args, ranks):
    return {"backend": args.backend, "mode": args.mode, "model": args.model, "ranks": ranks,
            "batch_size": args.batch_size, "bucket_caps": args.bucket_caps, "overlap": not args.no_overlap,
            "iterations": args.iterations, "warmup": args.warmup, "lead_s": 0.05}


def rows_from_results(args, job, results, network, table):
    for result in results:
        times = result["times"]
        row = {"model": args.model, "ranks": job["ranks"], "batch_size": args.batch_size,
               "bucket_cap_mb": f"{result['bucket_cap_mb']:g}", "overlap": "true" if job["overlap"] else "false",
               "backend": args.backend, "bandwidth_bps": network["bandwidth_bps"], "latency_s": network["latency_s"],
               "iteration_s_median": lab_runs.median(times), "iteration_s_p90": lab_runs.percentile(times, 90),
               "iterations": len(times), "source": lab_runs.source_label(args.mode)}
        table.append([row], [f"{args.model} N={job['ranks']} bucket_cap_mb={result['bucket_cap_mb']}: "
                             f"{result['parameters']} parameters, buckets of {result['bucket_bytes']} bytes"])
        lab_runs.progress(PROG, f"{args.model} N={job['ranks']} batch {args.batch_size} cap {result['bucket_cap_mb']} MB "
                                f"overlap {row['overlap']}: median {row['iteration_s_median'] * 1e3:.1f} ms, "
                                f"p90 {row['iteration_s_p90'] * 1e3:.1f} ms over {len(times)}")


def run_group(args, ranks, network, table, port):
    job = job_for(args, ranks)
    lab_runs.progress(PROG, f"{ranks} ranks: {args.model}, bucket caps {args.bucket_caps} MB")
    results = lab_runs.run_job(job, __file__, args.mode, ranks, args.backend, port, args.timeout, "ddlsim-ddp-")
    rows_from_results(args, job, results, network, table)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    if args.mode == "torchrun":
        return torchrun_main(args, argv)
    lab_runs.sigterm_as_interrupt()
    table = lab_runs.CsvTable(args.out, HEADER)
    table.append([], [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + argv)])
    lab_runs.run_groups(PROG, args, table, run_group, 29300)
    lab_runs.progress(PROG, f"wrote {args.out}")
    return 0


def torchrun_main(args, argv):
    import torch
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.ranks != [world]:
        raise ToolError(f"under torchrun, --ranks must be the WORLD_SIZE ({world})", 2)
    store = lab_runs.init_rank(torch, args.backend, rank, world, mode="torchrun")
    job = job_for(args, world)
    results = train_and_time(torch, store, job, rank)
    if rank == 0:
        table = lab_runs.CsvTable(args.out, HEADER)
        table.append([], [lab_runs.command_comment(["torchrun", "...", os.path.abspath(__file__)] + argv),
                          "timing: barrier, then per iteration the longest rank's own duration"])
        rows_from_results(args, job, results, {"bandwidth_bps": None, "latency_s": None}, table)
        lab_runs.progress(PROG, f"wrote {args.out}")
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


# ---- inside a rank ----

def worker_main(args):
    import torch
    with open(args.worker, encoding="utf-8") as f:
        job = json.load(f)
    store = lab_runs.init_rank(torch, job["backend"], args.rank, job["ranks"], mode=job["mode"])
    results = train_and_time(torch, store, job, args.rank)
    if args.rank == 0:
        with open(job["results"], "w", encoding="utf-8") as f:
            json.dump(results, f)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


def train_and_time(torch, store, job, rank):
    """Every bucket cap of the job on this rank; rank 0 returns one result per cap."""
    import profile_torch
    import time
    dist = torch.distributed
    world = job["ranks"]
    device = "cpu" if job["backend"] == "gloo" else f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}"
    shared_clock = job["mode"] in ("lab", "local")
    results = []
    for index, cap_mb in enumerate(job["bucket_caps"]):
        torch.manual_seed(0)
        model, input_shape, classes = profile_torch.build_model(torch, job["model"], 10)
        model = model.to(device)
        ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap_mb,
                                                        device_ids=None if device == "cpu" else [device])
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
        generator = torch.Generator().manual_seed(1 + rank)
        inputs = torch.randn((job["batch_size"],) + tuple(input_shape), generator=generator).to(device)
        labels = torch.randint(0, classes, (job["batch_size"],), generator=generator).to(device)
        parameters = [p for p in model.parameters()]
        buckets = gradient_buckets(parameters, int(cap_mb * 1024 * 1024))

        def step():
            optimizer.zero_grad(set_to_none=False)
            if job["overlap"]:
                loss = torch.nn.functional.cross_entropy(logits(ddp(inputs)), labels)
                loss.backward()
            else:
                with ddp.no_sync():
                    loss = torch.nn.functional.cross_entropy(logits(ddp(inputs)), labels)
                    loss.backward()
                for bucket in buckets:
                    grads = [parameters[i].grad for i in bucket]
                    flat = torch.cat([g.reshape(-1) for g in grads])
                    dist.all_reduce(flat)
                    flat.div_(world)
                    offset = 0
                    for g in grads:
                        g.copy_(flat[offset:offset + g.numel()].view_as(g))
                        offset += g.numel()
            optimizer.step()
            if device != "cpu":
                torch.cuda.synchronize()

        for _ in range(job["warmup"]):
            step()
        ends = []
        if shared_clock:
            if rank == 0:
                store.set(f"ddp/start/{index}", repr(time.monotonic() + job["lead_s"] + 0.02 * world))
            start = float(store.get(f"ddp/start/{index}"))
            while time.monotonic() < start:
                time.sleep(min(0.001, max(0.0, start - time.monotonic())))
            for _ in range(job["iterations"]):
                step()
                ends.append(time.monotonic())
        else:
            dist.barrier()
            last = time.monotonic()
            for _ in range(job["iterations"]):
                step()
                now = time.monotonic()
                ends.append(now - last)
                last = now
        gathered = lab_runs.gather_json(store, rank, world, f"ddp/ends/{index}", ends)
        if rank == 0:
            results.append({"bucket_cap_mb": cap_mb,
                            "times": iteration_times(gathered, start if shared_clock else None),
                            "parameters": sum(p.numel() for p in parameters),
                            "bucket_bytes": [sum(parameters[i].numel() * parameters[i].element_size() for i in b)
                                             for b in buckets]})
    return results if rank == 0 else None


def logits(output):
    """The tensor to put the loss on (inception-style models return several outputs in training)."""
    if isinstance(output, (tuple, list)):
        return output[0]
    return getattr(output, "logits", output)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.status)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the lab is torn down", file=sys.stderr)
        sys.exit(130)
