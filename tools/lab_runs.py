"""Running real distributed PyTorch measurements: the parts tools/measure_collectives.py and
tools/measure_ddp.py share (docs/validation.md).

* Launching. Three modes. `lab`: one process per rank, rank i inside the lab's network namespace
  ddl-w<i> (tools/netlab/setup.sh), talking over the lab's shaped links; `local`: one process per
  rank on this machine's loopback, unshaped (for tests); `torchrun`: the processes are started by
  torchrun (or any launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT) on real hosts.
* Timing. In `lab` and `local` mode every rank runs on this machine, and network namespaces share
  CLOCK_MONOTONIC (time.monotonic()): rank 0 publishes a start time a little in the future through
  the TCPStore, every rank sleeps until it, runs, and records its finish; the operation's time is the
  latest finish minus the start. A rank that learns the start too late says so, and the repetition
  is run again with a longer lead. Under torchrun the hosts' clocks differ: every rank leaves a
  barrier, times its own run, and the time is the longest of the ranks' durations, which includes
  the skew with which the ranks leave the barrier (about one one-way latency).
* Files. CSV files whose lines starting with "#" are comments; a table is rewritten whole through
  a temporary file and a rename, so a reader never sees half a file and earlier rows are kept.

Only the standard library is imported at module level; torch is imported by the functions that
run inside a rank.
"""

import argparse
import csv
import io
import itertools
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
NETLAB = os.path.join(REPO, "tools", "netlab")
LAB_STATE = os.environ.get("DDLSIM_NETLAB_STATE", "/run/ddlsim-netlab")
LAB_HOST_PREFIX = "ddl-w"
LAB_SUBNET = "10.78.0"
# The interpreter that runs the ranks: the one running this tool (Debian's /usr/bin/python3 has torch),
# so a machine whose torch lives in another interpreter runs `that-python3 tools/measure_ddp.py ...`.
PYTHON = sys.executable or "/usr/bin/python3"


class ToolError(Exception):
    """A failure the tool reports in one line (exit 1), or a bad argument (status 2)."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def progress(prog, message):
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


# ---- units (ddlsim's spelling) ----

_SIZE_UNITS = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
_RATE_UNITS = {"bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12, "bit": 1, "kbit": 1e3, "mbit": 1e6,
               "gbit": 1e9, "Bps": 8, "KBps": 8e3, "MBps": 8e6, "GBps": 8e9, "KiBps": 8 * 1024.0,
               "MiBps": 8 * 1024.0 ** 2, "GiBps": 8 * 1024.0 ** 3}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


def _split(text, units, what, example):
    match = re.fullmatch(_NUMBER + r"\s*([A-Za-z]*)", text.strip())
    if not match or match.group(2) not in units:
        raise ValueError(f"not a {what}: {text!r} (e.g. {example}; units: {', '.join(u for u in units if u)})")
    return float(match.group(1)) * units[match.group(2)]


def parse_bytes(text):
    """'64KiB' -> 65536; a bare number is bytes."""
    return _split(text, _SIZE_UNITS, "size", "64KiB, 1MiB, 4096")


def parse_rate_bps(text):
    """'100Mbps' -> 1e8 bits/s (ddlsim's units: bps family in bits, Bps family in bytes; tc's mbit)."""
    value = _split(text, _RATE_UNITS, "rate", "100Mbps, 1Gbps, 12.5MBps")
    if value <= 0:
        raise ValueError(f"a rate must be > 0: {text!r}")
    return value


def parse_delay_s(text):
    """'2ms' -> 0.002; '0' is accepted bare."""
    if text.strip() == "0":
        return 0.0
    return _split(text, _TIME_UNITS, "time", "2ms, 500us, 0")


def parse_list(text, convert, what):
    """'a,b,c' converted item by item; a bad item raises ToolError(status 2) naming the option."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ToolError(f"{what}: expected a comma-separated list, got {text!r}", 2)
    out = []
    for item in items:
        try:
            out.append(convert(item))
        except ValueError as e:
            raise ToolError(f"{what}: {e}", 2) from None
    return out


def positive_int(text):
    value = int(text)
    if value < 1:
        raise ValueError(f"expected an integer >= 1, got {text!r}")
    return value


# ---- statistics ----

def median(values):
    return statistics.median(values)


def percentile(values, q):
    """The q-th percentile (0..100) with linear interpolation between order statistics."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# ---- CSV tables with comment lines ----

class CsvTable:
    """A CSV file with a fixed header whose lines starting with '#' are comments.

    append() rewrites the file (its old content, then the new comments and rows) into a temporary
    file in the same folder and renames it over the old one, so earlier rows survive and a reader
    never sees a partial file. An existing file with another header is refused.
    """

    def __init__(self, path, header):
        self.path = path
        self.header = list(header)
        if os.path.exists(path):
            read_table(path, self.header)  # refuses another header early, before measuring

    def append(self, rows, comments=()):
        old = ""
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as f:
                old = f.read()
            if old and not old.endswith("\n"):
                old += "\n"
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        if not any(line and not line.startswith("#") for line in old.splitlines()):
            # No header yet: the file is new or holds only comments.
            writer.writerow(self.header)
        for comment in comments:
            for line in str(comment).splitlines() or [""]:
                buffer.write(f"# {line}\n")
        for row in rows:
            missing = [k for k in self.header if k not in row]
            if missing:
                raise ValueError(f"row lacks {missing}")
            writer.writerow([format_cell(row[k]) for k in self.header])
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".csv", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(old)
                f.write(buffer.getvalue())
            os.replace(temp, self.path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise


def format_cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if value == value else ""
    return str(value)


def read_table(path, header):
    """The rows of a CSV table written by CsvTable, as dicts of strings; raises ValueError if the
    first non-comment line is not exactly `header` or a row has the wrong number of cells."""
    with open(path, encoding="utf-8", newline="") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    if not lines:
        return []
    reader = csv.reader(lines)
    first = next(reader)
    if first != list(header):
        raise ValueError(f"{path}: the header is {','.join(first)!r}, expected {','.join(header)!r}")
    rows = []
    for number, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            raise ValueError(f"{path}: data row {number} has {len(cells)} cells, expected {len(header)}")
        rows.append(dict(zip(header, cells)))
    return rows


def command_comment(argv):
    """The '# command:' comment that records how a table's rows were measured."""
    return "command: " + " ".join(_quote(a) for a in argv)


def _quote(arg):
    return arg if re.fullmatch(r"[A-Za-z0-9_./:=,@%+-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def source_label(mode):
    return f"{mode}:{socket.gethostname()}"


# ---- the lab ----

def lab_address(rank):
    return f"{LAB_SUBNET}.{rank + 1}"


def read_lab_config(state=LAB_STATE):
    """The key=value configuration setup.sh recorded, or None when no lab is recorded."""
    path = os.path.join(state, "config")
    if not os.path.exists(path):
        return None
    config = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                config[key] = value
    return config


class Lab:
    """The lab for one (hosts, rate, delay): set up on entry with tools/netlab/setup.sh, torn down on
    exit (normal, exception or Ctrl-C). Reads back the rate and delay setup.sh recorded."""

    def __init__(self, prog, hosts, rate, delay):
        self.prog, self.hosts, self.rate, self.delay = prog, hosts, rate, delay
        self.rate_bps = None
        self.delay_s = None

    def __enter__(self):
        try:
            return self._set_up()
        except BaseException:  # Ctrl-C during setup too: leave nothing behind
            self.__exit__(None, None, None)
            raise

    def _set_up(self):
        progress(self.prog, f"lab: setting up {self.hosts} hosts, {self.rate}, one-way delay {self.delay}")
        result = subprocess.run(["bash", os.path.join(NETLAB, "setup.sh"), str(self.hosts), self.rate, self.delay],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in result.stdout.splitlines():
            progress(self.prog, f"  {line}")
        if result.returncode != 0:
            raise ToolError(f"the lab's setup failed (tools/netlab/setup.sh {self.hosts} {self.rate} {self.delay}, "
                            f"exit {result.returncode})", 2 if result.returncode == 2 else 1)
        config = read_lab_config()
        if config is None:
            raise ToolError("setup.sh recorded no configuration")
        self.rate_bps = float(config["rate_bps"])
        self.delay_s = float(config["delay_us"]) * 1e-6
        return self

    def __exit__(self, *exc):
        subprocess.run(["bash", os.path.join(NETLAB, "teardown.sh")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return False


def lab_check():
    """(True, message) when tools/netlab/setup.sh --check says the lab can run here."""
    result = subprocess.run(["bash", os.path.join(NETLAB, "setup.sh"), "--check"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    return result.returncode == 0, result.stdout.strip()


# ---- the command line both tools share ----

def add_common_arguments(ap, timeout_s, tool_arguments=None, after_out=None):
    """Adds the options every measurement tool has, in their --help order: the launch mode (--lab or
    --local, exclusive), then the tool's own options (`tool_arguments(ap)`), then --rate, --delay,
    --backend, --out, any options `after_out(ap)` adds, --timeout (default `timeout_s` seconds per
    process group) and the hidden --worker and --rank that the launcher passes to every rank."""
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--lab", action="store_true", help="run over the one-machine lab (root)")
    mode.add_argument("--local", action="store_true", help="run on loopback, unshaped (tests)")
    if tool_arguments is not None:
        tool_arguments(ap)
    ap.add_argument("--rate", default="100Mbps", help="lab: link rates per direction, comma-separated (default 100Mbps)")
    ap.add_argument("--delay", default="1ms", help="lab: one-way delays, comma-separated (default 1ms)")
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"], help="torch.distributed backend")
    ap.add_argument("--out", required=False, help="CSV to append to (created with its header)")
    if after_out is not None:
        after_out(ap)
    ap.add_argument("--timeout", type=float, default=timeout_s,
                    help=f"seconds allowed per process group (default {timeout_s})")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)


def parse_common_arguments(ap, argv, check_tool_arguments=None):
    """Parses argv with a parser built by add_common_arguments and checks the shared options.

    A rank (--worker) gets its arguments unchecked. Otherwise: args.mode is "lab", "local" or
    "torchrun" (neither flag: only under a launcher that sets RANK), --out is required, then
    `check_tool_arguments(args)` checks the tool's own options, and last args.rates and args.delays
    are the --rate and --delay lists as (text, bits/s) and (text, seconds) pairs. Every refusal is a
    ToolError with status 2 naming the option."""
    args = ap.parse_args(argv)
    if args.worker:
        return args
    args.mode = "lab" if args.lab else "local" if args.local else "torchrun"
    if args.mode == "torchrun" and not os.environ.get("RANK"):
        raise ToolError("choose --lab (the one-machine lab), --local (loopback), or run under torchrun", 2)
    if not args.out:
        raise ToolError("--out is required", 2)
    if check_tool_arguments is not None:
        check_tool_arguments(args)
    args.rates = parse_list(args.rate, lambda t: (t, parse_rate_bps(t)), "--rate")
    args.delays = parse_list(args.delay, lambda t: (t, parse_delay_s(t)), "--delay")
    return args


def check_counts(checks):
    """Refuses (ToolError, status 2) the first (option name, value, lowest allowed) whose value is lower."""
    for name, value, low in checks:
        if value < low:
            raise ToolError(f"{name}: expected an integer >= {low}, got {value}", 2)


# ---- launching ranks ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_ranks(mode, world, command, env, timeout_s):
    """Starts `world` processes running `command + ['--rank', str(i)]` and waits for all of them.

    lab: rank i runs inside namespace ddl-w<i> (`ip netns exec`); local: on this machine. `env`
    is added to every rank's environment. If a rank fails, the others are stopped (by the PIDs this
    function started) and ToolError names the first failure; on timeout or Ctrl-C all are stopped.
    """
    processes = []
    base = dict(os.environ)
    base.update(env)
    try:
        for rank in range(world):
            argv = list(command) + ["--rank", str(rank)]
            if mode == "lab":
                argv = ["ip", "netns", "exec", f"{LAB_HOST_PREFIX}{rank}"] + argv
            processes.append(subprocess.Popen(argv, env=base, stdin=subprocess.DEVNULL))
        deadline = time.monotonic() + timeout_s
        pending = set(range(world))
        while pending:
            for rank in sorted(pending):
                code = processes[rank].poll()
                if code is None:
                    continue
                pending.discard(rank)
                if code != 0:
                    raise ToolError(f"rank {rank} exited with status {code}")
            if time.monotonic() > deadline:
                raise ToolError(f"the ranks did not finish within {timeout_s:.0f} s")
            time.sleep(0.05)
    finally:
        for p in processes:
            if p.poll() is None:
                p.terminate()
        for p in processes:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run_job(job, script, mode, ranks, backend, port, timeout_s, prefix):
    """Runs `script --worker SPEC --rank i` on `ranks` ranks (launch_ranks) with `job` written to SPEC
    in a fresh folder (readable by the ranks, which may run as another user in the lab's namespaces),
    and returns what rank 0 wrote to job["results"] (JSON). The folder is removed afterwards."""
    folder = tempfile.mkdtemp(prefix=prefix)
    job = dict(job, results=os.path.join(folder, "results.json"))
    spec = os.path.join(folder, "job.json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump(job, f)
    os.chmod(folder, 0o755)
    address = lab_address(0) if mode == "lab" else "127.0.0.1"
    env = rank_environment(address, port, "eth0" if mode == "lab" else "lo", backend)
    try:
        launch_ranks(mode, ranks, [PYTHON, os.path.abspath(script), "--worker", spec], env, timeout_s)
        with open(job["results"], encoding="utf-8") as f:
            return json.load(f)
    finally:
        for name in (spec, job["results"]):
            if os.path.exists(name):
                os.unlink(name)
        os.rmdir(folder)


def run_groups(prog, args, table, run_group, base_port, extra_ranks=0):
    """Calls run_group(args, ranks, network, table, port) for every --ranks value: on loopback once
    (network unknown), in the lab once per --rate x --delay, the lab set up for the largest rank count
    (plus `extra_ranks`: processes beside the workers, such as a parameter server)."""
    if args.mode == "local":
        for ranks in args.ranks:
            run_group(args, ranks, {"bandwidth_bps": None, "latency_s": None}, table, free_port())
        return
    for (rate, _), (delay, _) in itertools.product(args.rates, args.delays):
        with Lab(prog, max(args.ranks) + extra_ranks, rate, delay) as lab:
            network = {"bandwidth_bps": lab.rate_bps, "latency_s": lab.delay_s}
            for index, ranks in enumerate(args.ranks):
                run_group(args, ranks, network, table, base_port + index)


def sigterm_as_interrupt():
    """SIGTERM raises KeyboardInterrupt, so `finally` blocks (lab teardown) run as for Ctrl-C."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


# ---- inside a rank ----

def rank_environment(master_address, port, ifname, backend):
    """What every rank's environment needs, set by the launcher."""
    env = {"MASTER_ADDR": master_address, "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    if backend == "gloo":
        env["GLOO_SOCKET_IFNAME"] = ifname
    else:
        env["NCCL_SOCKET_IFNAME"] = ifname
    return env


def init_rank(torch, backend, rank, world, mode="lab", timeout_s=600):
    """The default process group, and a store every rank can reach; one thread per rank (the lab's
    ranks share this machine's cores). lab/local: rank 0 hosts a TCPStore at MASTER_ADDR:MASTER_PORT
    and the group is built on it. torchrun: env:// (torchrun may already serve MASTER_PORT), and
    the group's own store, under the prefix "ddlsim"."""
    import datetime
    dist = torch.distributed
    torch.set_num_threads(1)
    timeout = datetime.timedelta(seconds=timeout_s)
    if mode == "torchrun":
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world, timeout=timeout)
        return dist.PrefixStore("ddlsim", dist.distributed_c10d._get_default_store())
    addr = os.environ["MASTER_ADDR"]
    port = int(os.environ["MASTER_PORT"])
    store = dist.TCPStore(addr, port, world, rank == 0, timeout)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=timeout)
    return store


class SharedClockRounds:
    """The start protocol of `lab` and `local` mode (one CLOCK_MONOTONIC for every rank).

    Every round: rank 0 waits until every rank has reported the previous round, then publishes
    start = now + lead (or "stop") under "round/<tag>/<i>"; every rank sleeps until start, runs,
    and reports "late" if it learned the start only after it had passed. A late round doubles the
    lead (up to 2 s) and is not counted. Control messages cross the lab's links before the start.
    """

    def __init__(self, store, rank, world, lead_s):
        self.store, self.rank, self.world = store, rank, world
        self.lead_s = lead_s
        self.tag, self.round, self.late = "", 0, False

    def begin(self, tag):
        self.tag, self.round = tag, 0

    def collect(self):
        """Rank 0: waits for the previous round's reports; the ranks that were late in it."""
        if self.round == 0:
            return []
        keys = [f"done/{self.tag}/{self.round - 1}/{r}" for r in range(self.world)]
        self.store.wait(keys)
        late = [r for r, key in enumerate(keys) if self.store.get(key) == b"late"]
        if late:
            self.lead_s = min(2.0, self.lead_s * 2)
        return late

    def announce(self, go):
        """Rank 0: publishes the next round's start (go) or the stop."""
        self.store.set(f"round/{self.tag}/{self.round}", repr(time.monotonic() + self.lead_s) if go else "stop")

    def wait_start(self):
        """Every rank: sleeps until this round's start and returns it; None on stop."""
        value = self.store.get(f"round/{self.tag}/{self.round}").decode()
        if value == "stop":
            return None
        start = float(value)
        self.late = time.monotonic() > start
        # A high-resolution sleep, then a short spin: the ranks may outnumber the cores, so a long
        # spin would keep another rank from waking on time.
        remaining = start - time.monotonic()
        if remaining > 0.0003:
            time.sleep(remaining - 0.0002)
        while time.monotonic() < start:
            pass
        return start

    def report(self):
        self.store.set(f"done/{self.tag}/{self.round}/{self.rank}", "late" if self.late else "ok")
        self.round += 1


def timed_rounds(rounds, rank, warmup, repeat, run_once, after=lambda: None, barrier=None):
    """Runs `run_once()` for warmup + repeat counted rounds on every rank, and `after()` (untimed,
    e.g. check the result and restore the input) after each.

    With `rounds` (a SharedClockRounds), returns (labels, durations): rank 0's labels say which
    rounds are "warmup", "timed" or "late" (others get None); durations[i] = this rank's finish -
    the common start of round i. Late rounds are repeated, at most 2 * repeat + warmup rounds in all.
    Without `rounds` (torchrun), `barrier()` precedes every round and durations are this rank's own.
    """
    durations = []
    if rounds is None:
        for _ in range(warmup + repeat):
            barrier()
            start = time.monotonic()
            run_once()
            durations.append(time.monotonic() - start)
            after()
        return ["warmup"] * warmup + ["timed"] * repeat, durations
    labels = [] if rank == 0 else None
    limit = warmup + 2 * repeat
    while True:
        if rank == 0:
            if rounds.collect() and labels[-1] == "timed":
                labels[-1] = "late"
            warm = labels.count("warmup")
            timed = labels.count("timed")
            go = len(labels) < limit and timed < repeat
            if go:
                labels.append("warmup" if warm < warmup else "timed")
            rounds.announce(go)
        start = rounds.wait_start()
        if start is None:
            return labels, durations
        run_once()
        durations.append(time.monotonic() - start)
        rounds.report()
        after()


def gather_json(store, rank, world, key, value):
    """Every rank contributes `value`; rank 0 gets the list of all ranks' values, others None."""
    store.set(f"{key}/{rank}", json.dumps(value))
    if rank != 0:
        return None
    keys = [f"{key}/{r}" for r in range(world)]
    store.wait(keys)
    return [json.loads(store.get(k)) for k in keys]
