#!/usr/bin/python3
"""Run a ddlsim scenario over a parameter grid and collect the summaries in one CSV.

    analysis/sweep.py SCENARIO --grid platform.workers=1,2,4,8 \
        --grid platform.link.bandwidth=10Gbps,25Gbps [--set PATH=VALUE ...] \
        [-j N] [--out DIR] [--ddlsim build/ddlsim] [--fidelity analytic|flow] [--force]

Every point of the Cartesian product of the --grid axes is one `ddlsim run SCENARIO --quiet
--set output.timeline=false --set ... --out DIR/points/<slug>` process (SimGrid allows one engine per
process); -j of them run at a time. A point whose summary.json already exists (from a run with the
same scenario file and overrides) is not run again unless --force. DIR/sweep.csv gets one row per
successful point, in grid order (the first --grid axis varies slowest), whatever -j is: the grid
columns, named by their paths, then SUMMARY_FIELDS. DIR/sweep.json records how the sweep was made.

Exit status: 0 when every point succeeded, 2 on bad arguments or when any point failed (its stderr is
printed; the other points still run and the CSV holds only the successful ones), 130 on Ctrl-C.
Python 3 standard library only. See docs/analysis.md.
"""

import argparse
import concurrent.futures
import csv
import hashlib
import io
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time

SUMMARY_FIELDS = [
    "workers",
    "iteration_time_s",
    "throughput_samples_per_s",
    "speedup",
    "scaling_efficiency",
    "compute_time_per_iteration_s",
    "exposed_comm_time_per_iteration_s",
    "overlap_fraction",
    "comm_bytes_per_iteration",
    "fidelity",
    "collective_granularity",
    "network_model",
    "sync_model",
    "collective",
]

POINT_RECORD = "point.json"  # what the point was run with; written after a successful run
ERROR_LOG = "ddlsim.stderr"  # ddlsim's stderr of a failed run

_PATH_RE = re.compile(r"^(/[^\s=]*|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)$")


class UsageError(Exception):
    pass


def canonical_path(path):
    """Dotted form of a --set/--grid path (a JSON pointer /a/b becomes a.b) for clash checks."""
    if path.startswith("/"):
        return ".".join(p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/"))
    return path


def split_assignment(text, option):
    if "=" not in text:
        raise UsageError(f"{option} {text!r}: expected PATH=VALUE")
    path, value = text.split("=", 1)
    path = path.strip()
    if not path or not _PATH_RE.match(path):
        raise UsageError(f"{option} {text!r}: {path!r} is not a dotted path (platform.workers) "
                         "or a JSON pointer (/platform/workers)")
    return path, value


def parse_grid(text):
    """'path=v1,v2,...' or 'path=[json, array]' -> (path, [value strings as passed to --set])."""
    path, rhs = split_assignment(text, "--grid")
    rhs = rhs.strip()
    if rhs.startswith("["):
        try:
            items = json.loads(rhs)
        except json.JSONDecodeError as e:
            raise UsageError(f"--grid {text!r}: values starting with '[' must be a JSON array ({e})")
        if not isinstance(items, list):
            raise UsageError(f"--grid {text!r}: expected a JSON array of values")
        values = [v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in items]
    else:
        values = [v.strip() for v in rhs.split(",")]
    if not values or any(v == "" for v in values):
        raise UsageError(f"--grid {text!r}: expected PATH=V1,V2,... with no empty value")
    if len(set(values)) != len(values):
        raise UsageError(f"--grid {text!r}: a value is listed twice")
    return path, values


def slug_for(point):
    """Directory name of a point: 'platform.workers=4__platform.link.bandwidth=25Gbps', made safe."""
    if not point:
        return "base"
    raw = "__".join(f"{canonical_path(p)}={v}" for p, v in point)
    slug = re.sub(r"[^A-Za-z0-9._=+-]", "_", raw).lstrip(".") or "point"
    if slug != raw or len(slug) > 150:
        # Sanitising may merge distinct points: a hash of the exact assignment keeps them apart.
        slug = slug[:150] + "-" + hashlib.sha1(raw.encode()).hexdigest()[:8]
    return slug


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def find_ddlsim(explicit):
    if explicit:
        candidates = [explicit]
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        candidates = ["build/ddlsim", os.path.join(here, "..", "build", "ddlsim")]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    if explicit:
        raise UsageError(f"--ddlsim {explicit}: not an executable file")
    raise UsageError("cannot find build/ddlsim: build it (cmake --build build --target ddlsim) or pass --ddlsim")


def write_atomically(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def format_cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same double
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="sweep.py",
        description="Run a ddlsim scenario over the Cartesian product of --grid axes (one process per point) "
                    "and write DIR/sweep.csv.",
        epilog="Example: analysis/sweep.py scenarios/resnet50_bsp_ring_25gbps.json "
               "--grid platform.workers=1,2,4,8 --grid platform.link.bandwidth=10Gbps,25Gbps -j 4")
    ap.add_argument("scenario", help="scenario JSON file")
    ap.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2,...",
                    help="one sweep axis: a dotted path (or JSON pointer) and its comma-separated values "
                         "(or a JSON array: PATH=[...]); repeatable, the first axis varies slowest")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="override applied to every point (as ddlsim run --set); repeatable")
    ap.add_argument("--fidelity", choices=["analytic", "flow"],
                    help="shorthand for --set network.fidelity=...")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="points simulated at once (default: number of CPUs, %(default)s here)")
    ap.add_argument("--out", help="output directory (default: out/sweep/<scenario file stem>)")
    ap.add_argument("--ddlsim", help="ddlsim binary (default: build/ddlsim)")
    ap.add_argument("--force", action="store_true", help="rerun points that already have a summary.json")
    ap.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="kill a point after S seconds of wall time (counts as a failure)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        raise UsageError(f"-j {args.jobs}: must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout}: must be positive")
    return args


class Point:
    def __init__(self, index, assignment, out_root):
        self.index = index
        self.assignment = assignment  # [(path, value)] in grid order
        self.slug = slug_for(assignment)
        self.dir = os.path.join(out_root, "points", self.slug)
        self.label = " ".join(f"{p}={v}" for p, v in assignment) or "(base scenario)"
        self.summary = None
        self.error = None
        self.cached = False
        self.seconds = 0.0


def run_point(point, ddlsim, scenario, overrides, record, force, timeout):
    """Runs (or reuses) one point; fills point.summary or point.error."""
    summary_path = os.path.join(point.dir, "summary.json")
    record_path = os.path.join(point.dir, POINT_RECORD)
    if not force and os.path.isfile(summary_path):
        previous = None
        if os.path.isfile(record_path):
            try:
                with open(record_path) as f:
                    previous = json.load(f)
            except (OSError, json.JSONDecodeError):
                previous = {}
        if previous is None or previous == record:
            try:
                with open(summary_path) as f:
                    summary = json.load(f)
                # A run stopped by a signal wrote what it had completed ("complete": false): run it again.
                if summary.get("complete", True) is not False:
                    point.summary = summary
                    point.cached = True
                    return point
            except (OSError, json.JSONDecodeError):
                pass  # unreadable: simulate again
    # A stale or forced point: remove what the earlier run left so nothing old is read back.
    for name in ("summary.json", POINT_RECORD, ERROR_LOG):
        try:
            os.remove(os.path.join(point.dir, name))
        except FileNotFoundError:
            pass
    os.makedirs(point.dir, exist_ok=True)
    cmd = [ddlsim, "run", scenario, "--quiet", "--set", "output.timeline=false"]
    for path, value in overrides + point.assignment:
        cmd += ["--set", f"{path}={value}"]
    cmd += ["--out", point.dir]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc, err = None, stderr + f"killed after --timeout {timeout:g} s\n"
    except OSError as e:
        rc, err = None, f"cannot run {ddlsim}: {e}\n"
    point.seconds = time.monotonic() - start
    if rc != 0:
        point.error = (f"exit {rc}" if rc is not None else "not finished", err)
        try:
            write_atomically(os.path.join(point.dir, ERROR_LOG), err)
        except OSError:
            pass
        return point
    try:
        with open(summary_path) as f:
            point.summary = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        point.error = ("no summary", f"ddlsim exited 0 but {summary_path} is unreadable: {e}\n{err}")
        return point
    write_atomically(record_path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return point


def main(argv):
    try:
        args = parse_args(argv)
        if not os.path.isfile(args.scenario):
            raise UsageError(f"{args.scenario}: no such scenario file")
        ddlsim = find_ddlsim(args.ddlsim)

        axes = [parse_grid(g) for g in args.grid]
        overrides = [split_assignment(s, "--set") for s in args.set]
        if args.fidelity:
            overrides.append(("network.fidelity", args.fidelity))
        seen = {}
        for path, _ in axes:
            key = canonical_path(path)
            if key in seen:
                raise UsageError(f"--grid {path}: this path has two --grid axes")
            seen[key] = "--grid"
        for path, _ in overrides:
            key = canonical_path(path)
            if seen.get(key) == "--grid":
                raise UsageError(f"{path} is both a --grid axis and a --set/--fidelity override")
        clash = [p for p, _ in axes if p in SUMMARY_FIELDS]
        if clash:
            raise UsageError(f"--grid {clash[0]}: name clashes with a summary column; use the JSON pointer form")
    except UsageError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 2

    stem = os.path.splitext(os.path.basename(args.scenario))[0]
    out = os.path.abspath(args.out or os.path.join("out", "sweep", stem))
    os.makedirs(os.path.join(out, "points"), exist_ok=True)

    paths = [p for p, _ in axes]
    points = [Point(i, list(zip(paths, combo)), out)
              for i, combo in enumerate(itertools.product(*[vals for _, vals in axes]))]
    slugs = [p.slug for p in points]
    if len(set(slugs)) != len(slugs):  # only if sanitised names collide and the hash did not separate them
        for p in points:
            p.slug = f"{p.index:05d}-{p.slug}"
            p.dir = os.path.join(out, "points", p.slug)

    record_base = {
        "scenario": os.path.abspath(args.scenario),
        "scenario_sha256": file_sha256(args.scenario),
        "overrides": [f"{p}={v}" for p, v in overrides],
    }
    write_atomically(os.path.join(out, "sweep.json"), json.dumps({
        "scenario": args.scenario,
        "scenario_name": next((v for p, v in overrides if canonical_path(p) == "name"),
                              _scenario_name(args.scenario)),
        "grid": {p: v for p, v in axes},
        "overrides": record_base["overrides"],
        "ddlsim": ddlsim,
        "points": len(points),
        "command": [os.path.basename(sys.argv[0])] + list(argv),
    }, indent=2) + "\n")

    total = len(points)
    done = 0
    failed = []
    lock = threading.Lock()
    wall = time.monotonic()

    def report(p):
        nonlocal done
        with lock:
            done += 1
            if p.error:
                what, err = p.error
                print(f"[{done}/{total}] {p.label}: FAILED ({what}, {p.seconds:.1f} s); ddlsim said:",
                      file=sys.stderr)
                for line in (err.rstrip("\n").splitlines() or ["(nothing on stderr)"]):
                    print(f"    {line}", file=sys.stderr)
            else:
                it = p.summary.get("iteration_time_s")
                it_text = f"{it:.3g} s/iter" if isinstance(it, (int, float)) else "? s/iter"
                when = "cached" if p.cached else f"{p.seconds:.1f} s"
                print(f"[{done}/{total}] {p.label}: {it_text} ({when})", file=sys.stderr)
            sys.stderr.flush()

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(args.jobs, max(total, 1)))
    futures = []
    try:
        for p in points:
            record = dict(record_base, point=[f"{a}={v}" for a, v in p.assignment])
            futures.append(pool.submit(run_point, p, ddlsim, args.scenario, overrides, record, args.force,
                                       args.timeout))
        for f in concurrent.futures.as_completed(futures):
            report(f.result())
    except KeyboardInterrupt:
        for f in futures:
            f.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        print("sweep.py: interrupted; sweep.csv not written (rerun to resume)", file=sys.stderr)
        return 130
    pool.shutdown(wait=True)

    failed = [p for p in points if p.error]
    header = paths + SUMMARY_FIELDS
    lines = []
    with_missing = set()
    for p in points:  # grid order, whatever order they finished in
        if p.error:
            continue
        row = [v for _, v in p.assignment]
        for field in SUMMARY_FIELDS:
            if field not in p.summary:
                with_missing.add(field)
            row.append(format_cell(p.summary.get(field)))
        lines.append(row)
    csv_path = os.path.join(out, "sweep.csv")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(lines)
    write_atomically(csv_path, buf.getvalue())

    if with_missing:
        print(f"sweep.py: warning: summary.json lacks {', '.join(sorted(with_missing))}; "
              "those cells are empty", file=sys.stderr)
    elapsed = time.monotonic() - wall
    print(f"sweep.py: {len(lines)}/{total} points in {elapsed:.1f} s -> {csv_path}", file=sys.stderr)
    if failed:
        print(f"sweep.py: {len(failed)} point(s) failed: " + "; ".join(p.label for p in failed), file=sys.stderr)
        return 2
    return 0


def _scenario_name(path):
    try:
        with open(path) as f:
            name = json.load(f).get("name")
        return name if isinstance(name, str) else None
    except (OSError, ValueError, AttributeError):
        return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
