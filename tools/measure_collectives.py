#!/usr/bin/python3
"""Measure real collectives with torch.distributed and write the measurement CSV that `ddlsim calibrate`
reads (docs/validation.md, "Measurement CSV").

Two kinds of algorithm:

* `library`: torch.distributed's own collective (all_reduce, all_gather, broadcast, and reduce_scatter
  where the backend has one; gloo has none). ddlsim predicts it with its `ring` algorithm under a library
  software preset.
* a ddlsim collective (ring, tree, ps, direct, any registered name): the tool asks `ddlsim schedule` for
  every rank's steps and runs exactly those with point-to-point isend/irecv on float32 tensors: in a
  step a rank posts all its sends and receives, then waits for all of them (ddlsim's executor
  semantics, engine/schedule_executor.hpp); received data is really summed (all-reduce, reduce-scatter)
  or copied (all-gather, broadcast). Byte counts may be fractional in ddlsim; every message carries a
  whole number of float32 elements. For ring, tree, ps, direct, ring_allgather, ring_reduce_scatter
  and binomial_broadcast the tool knows which part of the vector every message carries, so messages
  partition the vector exactly and every result is checked against the true sum; other algorithms
  run with each message rounded to the nearest element count, sending from and summing into the start
  of the vector (the traffic and the summing work of the schedule, but no checkable result).

Launch modes:

  --lab     on this machine, over the lab's emulated links (tools/netlab/setup.sh; root): for every
            --rate x --delay the tool sets up the lab, starts rank i inside namespace ddl-w<i>
            (GLOO_SOCKET_IFNAME=eth0, MASTER_ADDR = rank 0's lab address), and tears the lab down
            at the end, also on failure or Ctrl-C. Parameter servers are extra ranks (namespaces).
  --local   on this machine's loopback, unshaped (a test of the tool, not a measurement of a network).
  torchrun  neither flag, under torchrun (or anything that sets RANK, WORLD_SIZE, MASTER_ADDR,
            MASTER_PORT) on real hosts; every host needs the ddlsim binary (--ddlsim) for the explicit
            algorithms. WORLD_SIZE must equal the ranks (+ servers) of the single --ranks value.

Timing (tools/lab_runs.py): on one machine every rank sleeps until a common start time published
through the TCPStore and the operation's time is the latest finish minus that start; under torchrun
every rank leaves a barrier and times itself, and the time is the longest rank's duration (it includes
the barrier's exit skew, about one one-way latency). --warmup rounds, then --repeat timed rounds; a
row carries their median and count.

Example:
  sudo /usr/bin/python3 tools/measure_collectives.py --lab --rate 100Mbps --delay 1ms \\
      --algorithms library,ring,tree,ps --ranks 2,3,4 --bytes 64KiB,1MiB --out lab.csv
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_runs  # noqa: E402
from lab_runs import ToolError  # noqa: E402

PROG = "measure_collectives.py"
HEADER = ["op", "algorithm", "ranks", "servers", "bytes", "seconds", "repeats", "backend", "bandwidth_bps",
          "latency_s", "source"]
OPS = ["allreduce", "allgather", "broadcast", "reduce_scatter"]
ELEMENT = 4  # float32
REDUCING = {"allreduce", "reduce_scatter"}


# ---- which part of the vector every message carries ----

def bounds(total, parts):
    """Boundaries of `parts` nearly equal contiguous pieces of `total` elements."""
    return [total * i // parts for i in range(parts + 1)]


class Region:
    """What one op moves: elements [lo, hi) of the rank's vector; for a receive, whether it is
    summed into them ("add") or copied ("copy")."""
    __slots__ = ("lo", "hi", "action")

    def __init__(self, lo, hi, action=None):
        self.lo, self.hi, self.action = lo, hi, action

    def __repr__(self):
        return f"Region({self.lo}, {self.hi}, {self.action})"


class PlanMismatch(Exception):
    """The schedule is not the shape the tool's data plan for that algorithm expects."""


def expect(condition, what):
    if not condition:
        raise PlanMismatch(what)


def plan_ring(rank, steps, workers, servers, elements, params):
    n, s = workers, int(params.get("segments", 1))
    expect(len(steps) == 2 * (n - 1) * s, f"{len(steps)} steps, expected 2(N-1)S = {2 * (n - 1) * s}")
    chunk = bounds(elements, n)

    def segment(c, j):
        c %= n
        inner = bounds(chunk[c + 1] - chunk[c], s)
        return chunk[c] + inner[j], chunk[c] + inner[j + 1]

    out = []
    for t, step in enumerate(steps):
        gather = t >= (n - 1) * s
        k, j = (t % ((n - 1) * s)) // s, t % s
        regions = []
        for op in step:
            if op["kind"] == "send":
                expect(op["peer"] == (rank + 1) % n, "ring sends to rank + 1")
                regions.append(Region(*segment(rank - k + 1 if gather else rank - k, j)))
            else:
                expect(op["peer"] == (rank - 1) % n, "ring receives from rank - 1")
                regions.append(Region(*segment(rank - k if gather else rank - k - 1, j), "copy" if gather else "add"))
        out.append(regions)
    return out


def plan_ring_pass(action):
    def plan(rank, steps, workers, servers, elements, params):
        n = workers
        expect(len(steps) == n - 1, f"{len(steps)} steps, expected N-1")
        block = bounds(elements, n)
        out = []
        for k, step in enumerate(steps):
            regions = []
            for op in step:
                # all-gather: rank r starts with block r; reduce-scatter: it ends with block r+1.
                c = (rank - k) % n if op["kind"] == "send" else (rank - k - 1) % n
                regions.append(Region(block[c], block[c + 1], None if op["kind"] == "send" else action))
            out.append(regions)
        return out
    return plan


def plan_tree(rank, steps, workers, servers, elements, params):
    n, s = workers, int(params.get("segments", 1))
    seg = bounds(elements, s)
    children = [c for c in (2 * rank + 1, 2 * rank + 2) if c < n]
    has_parent = rank > 0
    reduce_steps = s if not children else s + (1 if has_parent else 0)
    broadcast_steps = s + (1 if children else 0) if has_parent else s
    expect(len(steps) == reduce_steps + broadcast_steps, f"{len(steps)} steps, expected {reduce_steps + broadcast_steps}")
    out = []
    for t, step in enumerate(steps):
        reducing = t < reduce_steps
        u = t if reducing else t - reduce_steps
        regions = []
        for op in step:
            if reducing:
                if op["kind"] == "recv":
                    expect(op["peer"] in children, "tree reduce receives from a child")
                    j, action = u, "add"
                else:
                    expect(op["peer"] == (rank - 1) // 2, "tree reduce sends to the parent")
                    j, action = (u if not children else u - 1), None
            else:
                if op["kind"] == "recv":
                    expect(op["peer"] == (rank - 1) // 2, "tree broadcast receives from the parent")
                    j, action = u, "copy"
                else:
                    expect(op["peer"] in children, "tree broadcast sends to a child")
                    j, action = (u if not has_parent else u - 1), None
            regions.append(Region(seg[j], seg[j + 1], action))
        out.append(regions)
    return out


def plan_ps(rank, steps, workers, servers, elements, params):
    shard = bounds(elements, servers)
    expect(len(steps) == 2, f"{len(steps)} steps, expected 2")
    out = []
    for t, step in enumerate(steps):
        regions = []
        for op in step:
            if rank < workers:  # push shard s to server s, then pull it back
                s = op["peer"] - workers
                expect(0 <= s < servers, "a worker talks to servers only")
                action = None if op["kind"] == "send" else "copy"
            else:  # server: sum the workers' pushes of its shard, then send the sum back
                s = rank - workers
                expect(0 <= op["peer"] < workers, "a server talks to workers only")
                action = None if op["kind"] == "send" else "add"
            expect((op["kind"] == "send") == (t == 0) if rank < workers else (op["kind"] == "recv") == (t == 0),
                   "push then pull")
            regions.append(Region(shard[s], shard[s + 1], action))
        out.append(regions)
    return out


def plan_direct(rank, steps, workers, servers, elements, params):
    shard = bounds(elements, workers)
    expect(len(steps) == 2, f"{len(steps)} steps, expected 2")
    out = []
    for t, step in enumerate(steps):
        regions = []
        for op in step:
            q = op["peer"]
            if t == 0:  # reduce-scatter: shard q to rank q; shard rank from everyone, summed
                c, action = (q, None) if op["kind"] == "send" else (rank, "add")
            else:  # all-gather: the reduced shard rank to everyone; shard q from rank q
                c, action = (rank, None) if op["kind"] == "send" else (q, "copy")
            regions.append(Region(shard[c], shard[c + 1], action))
        out.append(regions)
    return out


def plan_binomial_broadcast(rank, steps, workers, servers, elements, params):
    return [[Region(0, elements, None if op["kind"] == "send" else "copy") for op in step] for step in steps]


DATA_PLANS = {
    "ring": plan_ring,
    "tree": plan_tree,
    "ps": plan_ps,
    "direct": plan_direct,
    "ring_allgather": plan_ring_pass("copy"),
    "ring_reduce_scatter": plan_ring_pass("add"),
    "binomial_broadcast": plan_binomial_broadcast,
}


def generic_plan(steps, elements, operation):
    """Any other schedule: every message rounded to whole elements (at least one), sent from the
    start of a send buffer, and received into the start of the vector (summed or copied)."""
    action = "add" if operation in REDUCING else "copy"
    out = []
    for step in steps:
        regions = []
        for op in step:
            count = max(1, round(op["bytes"] / ELEMENT))
            regions.append(Region(0, count, None if op["kind"] == "send" else action))
        out.append(regions)
    return out


def data_plan(schedule, rank, elements):
    """(regions per step, checked): the regions of `rank`'s ops, and whether they are the exact data
    movement of the algorithm (so its result can be checked). Raises PlanMismatch when a known
    algorithm's schedule has an unexpected shape, or when a region is more than one element away
    from the bytes ddlsim counts."""
    steps = schedule["ranks"][rank]
    algorithm = schedule["runs"]
    planner = DATA_PLANS.get(algorithm)
    if planner is None:
        return generic_plan(steps, elements, schedule["operation"]), False
    regions = planner(rank, steps, schedule["workers"], schedule["servers"], elements, schedule["params"])
    for step, step_regions in zip(steps, regions):
        for op, region in zip(step, step_regions):
            expect(abs((region.hi - region.lo) - op["bytes"] / ELEMENT) < 1 + 1e-9,
                   f"a message of {region.hi - region.lo} elements where ddlsim counts {op['bytes']} bytes")
    return regions, True


def traffic(schedule, regions, rank):
    """(bytes this rank sends, messages, the bytes ddlsim counts for them)."""
    sent = messages = 0
    counted = 0.0
    for step, step_regions in zip(schedule["ranks"][rank], regions):
        for op, region in zip(step, step_regions):
            if op["kind"] == "send":
                sent += (region.hi - region.lo) * ELEMENT
                counted += op["bytes"]
                messages += 1
    return sent, messages, counted


# ---- the launcher ----

def ddlsim_schedule(ddlsim, algorithm, workers, servers, nbytes, params):
    argv = [ddlsim, "schedule", "--algorithm", algorithm, "--workers", str(workers), "--bytes", str(nbytes),
            "--params", json.dumps(params)]
    if servers is not None:
        argv += ["--servers", str(servers)]
    result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise ToolError(f"ddlsim schedule failed for {algorithm}: {result.stderr.strip()}",
                        2 if result.returncode == 2 else 1)
    schedule = json.loads(result.stdout)
    if "window" in schedule:  # steps kept in flight (gloo_ring): this tool runs steps one at a time
        raise ToolError(f"--algorithms: {algorithm} keeps steps in flight, which this tool does not run; it models "
                        f"gloo's own all-reduce: measure that as --algorithms library", 2)
    return schedule


def find_ddlsim(path):
    candidates = [path] if path else [os.path.join(lab_runs.REPO, "build", "ddlsim"), "ddlsim"]
    for candidate in candidates:
        found = candidate if os.path.sep in candidate else None
        if found is None:
            from shutil import which
            found = which(candidate)
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return os.path.abspath(found)
    raise ToolError(f"no ddlsim binary at {path or candidates[0]} (build it, or pass --ddlsim)", 2)


class Grid:
    """The measurement tasks, grouped by the process group (workers, servers) they need."""

    def __init__(self, args, ddlsim):
        self.args = args
        self.ddlsim = ddlsim
        self.params = args.params
        self.info = {}  # algorithm -> (operation, uses servers)
        for algorithm in args.algorithms:
            if algorithm == "library":
                continue
            probe = ddlsim_schedule(ddlsim, algorithm, 2, None, 4096, self.params.get(algorithm, {}))
            self.info[algorithm] = (probe["operation"], probe["servers"] > 0)
            if probe["operation"] not in args.ops:
                lab_runs.progress(PROG, f"note: {algorithm} is a {probe['operation']}, not in --ops; not measured")

    def groups(self):
        """[(workers, servers, [task, ...])] with task = (op, algorithm, bytes)."""
        out = []
        for workers in self.args.ranks:
            plain, served = [], []
            for op, algorithm, nbytes in itertools.product(self.args.ops, self.args.algorithms, self.args.bytes):
                if algorithm == "library":
                    if op == "reduce_scatter" and self.args.backend == "gloo":
                        continue  # noted once in main
                    plain.append((op, algorithm, nbytes))
                    continue
                operation, uses_servers = self.info[algorithm]
                if operation != op:
                    continue
                (served if uses_servers else plain).append((op, algorithm, nbytes))
            if plain:
                out.append((workers, 0, plain))
            if served:
                out.append((workers, self.args.servers, served))
        return out

    def task_spec(self, op, algorithm, nbytes, workers, servers):
        world = workers + servers
        elements = max(1, round(nbytes / ELEMENT))
        spec = {"op": op, "algorithm": algorithm, "schedule": None}
        if algorithm == "library" and op == "allgather":
            per_rank = max(1, round(elements / world))
            elements = per_rank * world  # all_gather needs equal pieces; M = the output size
        spec["elements"] = elements
        spec["bytes"] = elements * ELEMENT
        if algorithm != "library":
            spec["schedule"] = ddlsim_schedule(self.ddlsim, algorithm, workers, servers if servers else None,
                                               spec["bytes"], self.params.get(algorithm, {}))
        return spec


def run_group(args, grid, workers, servers, tasks, network, table, port):
    """Measures one process group's tasks: launches the ranks, reads rank 0's results, appends rows."""
    world = workers + servers
    specs = [grid.task_spec(op, algorithm, nbytes, workers, servers) for op, algorithm, nbytes in tasks]
    folder = tempfile.mkdtemp(prefix="ddlsim-measure-")
    spec_path = os.path.join(folder, "spec.json")
    results_path = os.path.join(folder, "results.json")
    lead = 0.02 + 4 * (network["latency_s"] or 0)
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump({"backend": args.backend, "mode": args.mode, "workers": workers, "servers": servers,
                   "repeat": args.repeat, "warmup": args.warmup, "lead_s": lead, "tasks": specs,
                   "results": results_path}, f)
    os.chmod(folder, 0o755)
    address = lab_runs.lab_address(0) if args.mode == "lab" else "127.0.0.1"
    ifname = "eth0" if args.mode == "lab" else "lo"
    env = lab_runs.rank_environment(address, port, ifname, args.backend)
    lab_runs.progress(PROG, f"{workers} workers" + (f" + {servers} servers" if servers else "") +
                      f": {len(specs)} measurements")
    try:
        lab_runs.launch_ranks(args.mode, world, [lab_runs.PYTHON, os.path.abspath(__file__), "--worker", spec_path],
                              env, args.timeout)
        with open(results_path, encoding="utf-8") as f:
            results = json.load(f)
    finally:
        for name in (spec_path, results_path):
            if os.path.exists(name):
                os.unlink(name)
        os.rmdir(folder)
    return rows_from_results(args, specs, results, workers, servers, network, table)


def rows_from_results(args, specs, results, workers, servers, network, table):
    failures = []
    for spec, result in zip(specs, results):
        label = f"{spec['op']} {spec['algorithm']} N={workers}" + (f"+{servers}" if servers else "") + \
                f" {spec['bytes']} B"
        if result["errors"]:
            failures.append(f"{label}: {result['errors'][0]}")
            lab_runs.progress(PROG, f"FAILED {label}: {result['errors'][0]}")
            continue
        seconds = lab_runs.median(result["seconds"])
        comments = []
        if spec["schedule"] is not None:
            sent = result["sent"]
            comments.append(f"{label}: per rank bytes sent {sent['bytes']} in {sent['messages']} messages "
                            f"(ddlsim counts {[round(c, 3) for c in sent['counted']]}); "
                            f"result {'checked' if result['checked'] else 'not checkable (generic data plan)'}")
        if result["late_rounds"]:
            comments.append(f"{label}: {result['late_rounds']} round(s) repeated after a rank learned the start late")
        row = {"op": spec["op"], "algorithm": spec["algorithm"], "ranks": workers, "servers": servers,
               "bytes": spec["bytes"], "seconds": seconds, "repeats": len(result["seconds"]),
               "backend": args.backend, "bandwidth_bps": network["bandwidth_bps"],
               "latency_s": network["latency_s"], "source": lab_runs.source_label(args.mode)}
        table.append([row], comments)
        extra = f", min {min(result['seconds']) * 1e3:.3f} ms, max {max(result['seconds']) * 1e3:.3f} ms"
        lab_runs.progress(PROG, f"{label}: median {seconds * 1e3:.3f} ms over {row['repeats']}{extra}")
    return failures


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)

    def tool_arguments(ap):
        ap.add_argument("--ops", default="allreduce", help=f"operations among {','.join(OPS)} (default allreduce)")
        ap.add_argument("--algorithms", default="library,ring,tree,ps,direct",
                        help="'library' and/or ddlsim collective names (default library,ring,tree,ps,direct)")
        ap.add_argument("--ranks", default="2,3,4", help="worker counts (default 2,3,4)")
        ap.add_argument("--servers", type=int, default=1, help="parameter servers for ps-like algorithms (default 1)")
        ap.add_argument("--bytes", default="64KiB,256KiB,1MiB,4MiB", help="sizes M (default 64KiB,256KiB,1MiB,4MiB)")
        ap.add_argument("--params", default="{}",
                        help="per-algorithm ddlsim params, JSON: {\"ring\": {\"segments\": 2}}")
        ap.add_argument("--repeat", type=int, default=10, help="timed repetitions (default 10)")
        ap.add_argument("--warmup", type=int, default=2, help="warm-up repetitions (default 2)")

    def after_out(ap):
        ap.add_argument("--ddlsim", help="the ddlsim binary (default build/ddlsim, then PATH)")

    def check_tool_arguments(args):
        args.ops = lab_runs.parse_list(args.ops, str, "--ops")
        for op in args.ops:
            if op not in OPS:
                raise ToolError(f"--ops: unknown operation {op!r}; valid: {', '.join(OPS)}", 2)
        args.algorithms = lab_runs.parse_list(args.algorithms, str, "--algorithms")
        args.ranks = lab_runs.parse_list(args.ranks, lab_runs.positive_int, "--ranks")
        if min(args.ranks) < 2:
            raise ToolError("--ranks: a collective needs at least 2 workers", 2)
        args.bytes = lab_runs.parse_list(args.bytes, lab_runs.parse_bytes, "--bytes")
        if min(args.bytes) < ELEMENT:
            raise ToolError("--bytes: at least one float32 element (4 bytes)", 2)
        lab_runs.check_counts((("--repeat", args.repeat, 1), ("--warmup", args.warmup, 0),
                               ("--servers", args.servers, 1)))
        try:
            args.params = json.loads(args.params)
        except json.JSONDecodeError as e:
            raise ToolError(f"--params: malformed JSON: {e}", 2) from None
        if not isinstance(args.params, dict):
            raise ToolError("--params: expected a JSON object of algorithm name -> params", 2)

    lab_runs.add_common_arguments(ap, 1800, tool_arguments, after_out)
    return lab_runs.parse_common_arguments(ap, argv, check_tool_arguments)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    if args.backend == "gloo" and "reduce_scatter" in args.ops and "library" in args.algorithms:
        lab_runs.progress(PROG, "note: gloo has no reduce_scatter; library reduce_scatter is not measured")
    if args.mode == "torchrun":
        return torchrun_main(args, argv)
    lab_runs.sigterm_as_interrupt()
    needs_ddlsim = any(a != "library" for a in args.algorithms)
    ddlsim = find_ddlsim(args.ddlsim) if needs_ddlsim else None
    table = lab_runs.CsvTable(args.out, HEADER)
    grid = Grid(args, ddlsim)
    groups = grid.groups()
    if not groups:
        raise ToolError("nothing to measure: no algorithm in --algorithms implements an operation in --ops", 2)
    table.append([], [lab_runs.command_comment([sys.executable, os.path.abspath(__file__)] + argv)])
    failures = []
    if args.mode == "local":
        network = {"bandwidth_bps": None, "latency_s": None}
        for workers, servers, tasks in groups:
            failures += run_group(args, grid, workers, servers, tasks, network, table, lab_runs.free_port())
    else:
        hosts = max(w + s for w, s, _ in groups)
        for (rate, _), (delay, _) in itertools.product(args.rates, args.delays):
            with lab_runs.Lab(PROG, hosts, rate, delay) as lab:
                network = {"bandwidth_bps": lab.rate_bps, "latency_s": lab.delay_s}
                for index, (workers, servers, tasks) in enumerate(groups):
                    failures += run_group(args, grid, workers, servers, tasks, network, table, 29400 + index)
    if failures:
        raise ToolError(f"{len(failures)} measurement(s) failed; the others are in {args.out}")
    lab_runs.progress(PROG, f"wrote {args.out}")
    return 0


def torchrun_main(args, argv):
    """Under torchrun this process is one rank of one process group: WORLD_SIZE = N runs the
    worker-only measurements of --ranks N, WORLD_SIZE = N + S the parameter-server ones. Rank 0
    builds the task list (it alone needs ddlsim), publishes it through the store, and writes the CSV."""
    import torch
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if len(args.ranks) != 1:
        raise ToolError("under torchrun, give one --ranks value (the process group is fixed)", 2)
    store = lab_runs.init_rank(torch, args.backend, rank, world, mode="torchrun")
    if rank == 0:
        try:
            ddlsim = find_ddlsim(args.ddlsim) if any(a != "library" for a in args.algorithms) else None
            grid = Grid(args, ddlsim)
            chosen = [(w, s, t) for w, s, t in grid.groups() if w + s == world]
            if not chosen:
                raise ToolError(f"WORLD_SIZE {world} fits no measurement: {args.ranks[0]} workers need WORLD_SIZE "
                                f"{args.ranks[0]}, or {args.ranks[0] + args.servers} with --servers {args.servers} "
                                "for parameter-server algorithms", 2)
            workers, servers, tasks = chosen[0]
            specs = [grid.task_spec(op, a, b, workers, servers) for op, a, b in tasks]
            job = {"backend": args.backend, "mode": "torchrun", "workers": workers, "servers": servers,
                   "repeat": args.repeat, "warmup": args.warmup, "lead_s": 0, "tasks": specs}
            store.set("ddlsim/job", json.dumps(job))
        except ToolError as e:
            store.set("ddlsim/job", json.dumps({"error": str(e)}))
            raise
    job = json.loads(store.get("ddlsim/job"))
    if "error" in job:
        raise ToolError("rank 0 could not prepare the measurements")
    results = run_tasks(torch, store, job, rank, job["workers"], job["servers"])
    if rank == 0:
        table = lab_runs.CsvTable(args.out, HEADER)
        table.append([], [lab_runs.command_comment(["torchrun", "...", os.path.abspath(__file__)] + argv),
                          "timing: barrier, then the longest rank's own duration (includes the barrier's exit skew)"])
        network = {"bandwidth_bps": None, "latency_s": None}
        failures = rows_from_results(args, job["tasks"], results, job["workers"], job["servers"], network, table)
        if failures:
            raise ToolError(f"{len(failures)} measurement(s) failed; the others are in {args.out}")
        lab_runs.progress(PROG, f"wrote {args.out}")
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


# ---- inside a rank ----

class RankTask:
    """One measurement prepared on one rank: its tensors allocated, its data plan resolved."""

    def __init__(self, torch, spec, rank, workers, servers, device):
        self.torch, self.spec, self.rank = torch, spec, rank
        self.workers, self.servers = workers, servers
        self.world = workers + servers
        self.device = device
        self.dist = torch.distributed
        self.errors = []
        self.checked = False
        self.sent = (0, 0, 0.0)
        n = spec["elements"]
        base = torch.arange(n, dtype=torch.float32, device=device).remainder_(5)
        op = spec["op"]
        self.is_worker = rank < workers
        # Small integers: every partial sum is exact in float32, so results compare exactly.
        self.initial = base + (rank + 1) if self.is_worker else torch.zeros(n, dtype=torch.float32, device=device)
        self.expected = None
        total_rank_sum = workers * (workers + 1) / 2
        if op in REDUCING:
            self.expected = base * workers + total_rank_sum
        elif op == "broadcast":
            self.expected = base + 1
        self.vector = self.initial.clone()
        if spec["schedule"] is None:
            self._prepare_library()
        else:
            self._prepare_schedule()

    # library collectives
    def _prepare_library(self):
        torch, spec = self.torch, self.spec
        op = spec["op"]
        if op == "allgather":
            per_rank = spec["elements"] // self.world
            self.piece = self.initial[:per_rank].clone()
            self.outputs = [torch.empty(per_rank, dtype=torch.float32, device=self.device) for _ in range(self.world)]
        elif op == "reduce_scatter":
            per_rank = spec["elements"] // self.world
            self.inputs = [self.initial[i * per_rank:(i + 1) * per_rank].clone() for i in range(self.world)]
            self.output = torch.empty(per_rank, dtype=torch.float32, device=self.device)

    # explicit schedules
    def _prepare_schedule(self):
        torch, schedule = self.torch, self.spec["schedule"]
        regions, self.checked = data_plan(schedule, self.rank, self.spec["elements"])
        self.sent = traffic(schedule, regions, self.rank)
        if self.spec["op"] == "allgather" and self.checked:
            # Rank r contributes block r of the output; the rest arrives from the others.
            block = bounds(self.spec["elements"], self.workers)
            self.initial = torch.full((self.spec["elements"],), -1.0, device=self.device)
            self.initial[block[self.rank]:block[self.rank + 1]] = self.rank + 1
            self.expected = torch.empty(self.spec["elements"], device=self.device)
            for r in range(self.workers):
                self.expected[block[r]:block[r + 1]] = r + 1
            self.vector = self.initial.clone()
        elif self.spec["op"] == "broadcast" and self.rank != 0 and self.checked:
            self.initial = torch.zeros_like(self.initial)
            self.vector = self.initial.clone()
        largest = max([r.hi for step in regions for r in step] + [self.spec["elements"]])
        self.send_source = None
        if not self.checked and largest > self.spec["elements"]:
            self.send_source = torch.ones(largest, dtype=torch.float32, device=self.device)
        self.steps = []
        for step, step_regions in zip(schedule["ranks"][self.rank], regions):
            posted = []
            for op, region in zip(step, step_regions):
                if op["kind"] == "send":
                    posted.append(("send", op["peer"], region, None))
                else:
                    scratch = torch.empty(region.hi - region.lo, dtype=torch.float32, device=self.device)
                    posted.append(("recv", op["peer"], region, scratch))
            self.steps.append(posted)

    def check_and_reset(self):
        self.check()
        self.vector.copy_(self.initial)

    def run(self):
        dist, spec = self.dist, self.spec
        if spec["schedule"] is None:
            op = spec["op"]
            if op == "allreduce":
                dist.all_reduce(self.vector)
            elif op == "broadcast":
                dist.broadcast(self.vector, src=0)
            elif op == "allgather":
                dist.all_gather(self.outputs, self.piece)
            else:
                dist.reduce_scatter(self.output, self.inputs)
        else:
            self._run_steps()
        if self.device != "cpu":
            self.torch.cuda.synchronize()

    def _run_steps(self):
        dist, vector = self.dist, self.vector
        length = vector.numel()
        for posted in self.steps:
            # Receives first: a step posts all its ops at once, in no order; gloo holds back the data
            # of a send whose receive is not posted yet (an all-to-all step of 1 MiB messages over
            # the lab took 1.8x longer with the sends posted first).
            buffers = [(dist.irecv, scratch, peer) for kind, peer, region, scratch in posted if kind == "recv"]
            for kind, peer, region, scratch in posted:
                if kind == "send":
                    source = vector if (self.send_source is None or region.hi <= length) else self.send_source
                    buffers.append((dist.isend, source[region.lo:region.hi], peer))
            if self.device == "cpu":
                requests = [post(tensor, peer) for post, tensor, peer in buffers]
            else:  # NCCL: the step's point-to-point operations as one group
                requests = dist.batch_isend_irecv([dist.P2POp(post, tensor, peer) for post, tensor, peer in buffers])
            for request in requests:
                request.wait()
            for kind, peer, region, scratch in posted:
                if kind != "recv":
                    continue
                hi = min(region.hi, length)
                target = vector[region.lo:hi]
                if region.action == "add":
                    target.add_(scratch[:hi - region.lo])
                else:
                    target.copy_(scratch[:hi - region.lo])

    def check(self):
        """After a round: appends an error if the result is not the true one (where it is known)."""
        torch, spec = self.torch, self.spec
        if self.errors or (spec["schedule"] is not None and not self.checked):
            return
        op = spec["op"]
        if spec["schedule"] is None:
            if op == "allgather":
                got = torch.cat(self.outputs)
                per = spec["elements"] // self.world
                want = torch.cat([self.initial_of(r)[:per] for r in range(self.world)])
            elif op == "reduce_scatter":
                per = spec["elements"] // self.world
                got, want = self.output, self.expected[self.rank * per:(self.rank + 1) * per]
            else:
                got, want = self.vector, self.expected
        else:
            if not self.is_worker:
                return  # a server's vector holds only its shard's sum
            if op == "reduce_scatter":
                block = bounds(spec["elements"], self.workers)
                c = (self.rank + 1) % self.workers
                got, want = self.vector[block[c]:block[c + 1]], self.expected[block[c]:block[c + 1]]
            else:
                got, want = self.vector, self.expected
        if not torch.equal(got, want):
            wrong = int((got != want).sum())
            self.errors.append(f"rank {self.rank}: {wrong} of {got.numel()} elements differ from the true result")

    def initial_of(self, rank):
        base = self.torch.arange(self.spec["elements"], dtype=self.torch.float32, device=self.device).remainder_(5)
        return base + (rank + 1)


def worker_main(args):
    import torch
    with open(args.worker, encoding="utf-8") as f:
        job = json.load(f)
    rank, workers, servers = args.rank, job["workers"], job["servers"]
    world = workers + servers
    store = lab_runs.init_rank(torch, job["backend"], rank, world)
    results = run_tasks(torch, store, job, rank, workers, servers)
    if rank == 0:
        with open(job["results"], "w", encoding="utf-8") as f:
            json.dump(results, f)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    return 0


def run_tasks(torch, store, job, rank, workers, servers):
    """Every task of the job on this rank; rank 0 returns the results (others None)."""
    world = workers + servers
    device = "cpu" if job["backend"] == "gloo" else f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}"
    if device != "cpu":
        torch.cuda.set_device(device)
    shared_clock = job["mode"] in ("lab", "local")
    rounds = lab_runs.SharedClockRounds(store, rank, world, job["lead_s"]) if shared_clock else None
    results = []
    for index, spec in enumerate(job["tasks"]):
        try:
            task = RankTask(torch, spec, rank, workers, servers, device)
        except PlanMismatch as e:
            task = None
            error = f"the {spec['algorithm']} schedule does not match its data plan: {e}"
        if rounds is not None:
            rounds.begin(f"t{index}")

        labels, durations = lab_runs.timed_rounds(
            rounds, rank, job["warmup"], job["repeat"], task.run if task else (lambda: None),
            after=task.check_and_reset if task else (lambda: None), barrier=torch.distributed.barrier)
        report = {"durations": durations, "errors": task.errors if task else [error],
                  "sent": list(task.sent) if task else [0, 0, 0.0], "checked": bool(task and task.checked)}
        gathered = lab_runs.gather_json(store, rank, world, f"result/{index}", report)
        if rank != 0:
            continue
        if not shared_clock:
            labels = ["warmup"] * job["warmup"] + ["timed"] * job["repeat"]
        seconds = [max(r["durations"][i] for r in gathered) for i, label in enumerate(labels) if label == "timed"]
        results.append({
            "seconds": seconds,
            "late_rounds": labels.count("late"),
            "errors": [e for r in gathered for e in r["errors"]],
            "checked": all(r["checked"] for r in gathered),
            "sent": {"bytes": [r["sent"][0] for r in gathered], "messages": [r["sent"][1] for r in gathered],
                     "counted": [r["sent"][2] for r in gathered]},
        })
    return results if rank == 0 else None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ToolError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(e.status)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the lab is torn down", file=sys.stderr)
        sys.exit(130)
