"""The points of analysis/sweep.py (the Cartesian product of its axes, sweep_axes.py), their
folders and records, running one point, and sweep.csv. Shared by the local mode, the Slurm array
tasks and --collect, so every mode writes and reads the same points/<slug>/ tree.

Python 3 standard library only. See docs/analysis.md.
"""

import csv
import hashlib
import io
import itertools
import json
import os
import re
import subprocess
import time

from sweep_axes import (CONVERGENCE_FIELDS, STALENESS_FIELDS, SUMMARY_FIELDS, UsageError, canonical_path,
                        convergence_cells, staleness_cells)

POINT_RECORD = "point.json"  # what the point was run with; written after a successful run
ERROR_LOG = "ddlsim.stderr"  # ddlsim's stderr of a failed run
DESCRIPTION = "sweep.json"  # how the sweep was made: what --collect rebuilds the grid from


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


class Point:
    def __init__(self, index, assignment, out_root, slug=None):
        self.index = index
        self.assignment = assignment  # [(path, value)] in grid order
        self.slug = slug or slug_for(assignment)
        self.dir = os.path.join(out_root, "points", self.slug)
        self.label = " ".join(f"{p}={v}" for p, v in assignment) or "(base scenario)"
        self.record = None
        self.summary = None
        self.error = None
        self.cached = False
        self.seconds = 0.0

    @property
    def error_log(self):
        return os.path.join(self.dir, ERROR_LOG)


class Sweep:
    """A scenario, its overrides and axes, and the points under `out`."""

    def __init__(self, scenario, axes, overrides, out):
        self.scenario = os.path.abspath(scenario)
        self.axes = axes
        self.overrides = overrides
        self.out = os.path.abspath(out)
        self.paths = [p for p, _ in axes]
        self.record_base = {
            "scenario": self.scenario,
            "scenario_sha256": file_sha256(self.scenario),
            "overrides": [f"{p}={v}" for p, v in overrides],
        }
        combos = itertools.product(*[vals for _, vals in axes])
        self.points = [Point(i, list(zip(self.paths, combo)), self.out) for i, combo in enumerate(combos)]
        if len({p.slug for p in self.points}) != len(self.points):
            for p in self.points:  # only if sanitised names collide and the hash did not separate them
                p.slug = f"{p.index:05d}-{p.slug}"
                p.dir = os.path.join(self.out, "points", p.slug)
        for p in self.points:
            p.record = dict(self.record_base, point=[f"{a}={v}" for a, v in p.assignment])

    def describe(self, ddlsim, command, name):
        """Writes sweep.json: how the sweep was made (`name`: the scenario's); --collect rebuilds the
        grid from it."""
        os.makedirs(os.path.join(self.out, "points"), exist_ok=True)
        write_atomically(os.path.join(self.out, DESCRIPTION), json.dumps({
            "scenario": self.scenario,
            "scenario_name": next((v for p, v in self.overrides if canonical_path(p) == "name"), name),
            "grid": {p: v for p, v in self.axes},
            "overrides": self.record_base["overrides"],
            "ddlsim": ddlsim,
            "points": len(self.points),
            "command": command,
        }, indent=2) + "\n")

    @classmethod
    def from_description(cls, out):
        path = os.path.join(out, DESCRIPTION)
        try:
            with open(path) as f:
                d = json.load(f)
            axes = [(p, list(v)) for p, v in d["grid"].items()]
            overrides = [tuple(o.split("=", 1)) for o in d["overrides"]]
            scenario = d["scenario"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise UsageError(f"--collect {out}: cannot read {path} ({e}); is it a sweep's output directory?")
        if not os.path.isfile(scenario):
            raise UsageError(f"--collect {out}: the sweep's scenario {scenario} no longer exists")
        return cls(scenario, axes, overrides, out)

    def finished_summary(self, point):
        """The point's summary.json if a complete run with the same record left it, else None."""
        summary_path = os.path.join(point.dir, "summary.json")
        if not os.path.isfile(summary_path):
            return None
        previous = None
        record_path = os.path.join(point.dir, POINT_RECORD)
        if os.path.isfile(record_path):
            try:
                with open(record_path) as f:
                    previous = json.load(f)
            except (OSError, ValueError):
                previous = {}
        if previous is not None and previous != point.record:
            return None
        try:
            with open(summary_path) as f:
                summary = json.load(f)
        except (OSError, ValueError):
            return None  # unreadable: simulate again
        # A run stopped by a signal wrote what it had completed ("complete": false): run it again.
        return summary if isinstance(summary, dict) and summary.get("complete", True) is not False else None

    def run_point(self, point, ddlsim, force, timeout):
        """Runs (or reuses) one point; fills point.summary or point.error."""
        if not force:
            point.summary = self.finished_summary(point)
            if point.summary is not None:
                point.cached = True
                return point
        # A stale or forced point: remove what the earlier run left so nothing old is read back.
        for name in ("summary.json", POINT_RECORD, ERROR_LOG):
            try:
                os.remove(os.path.join(point.dir, name))
            except FileNotFoundError:
                pass
        os.makedirs(point.dir, exist_ok=True)
        cmd = [ddlsim, "run", self.scenario, "--quiet", "--set", "output.timeline=false"]
        for path, value in self.overrides + point.assignment:
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
                write_atomically(point.error_log, err)
            except OSError:
                pass
            return point
        summary_path = os.path.join(point.dir, "summary.json")
        try:
            with open(summary_path) as f:
                point.summary = json.load(f)
        except (OSError, ValueError) as e:
            point.error = ("no summary", f"ddlsim exited 0 but {summary_path} is unreadable: {e}\n{err}")
            return point
        write_atomically(os.path.join(point.dir, POINT_RECORD), json.dumps(point.record, indent=2, sort_keys=True) + "\n")
        return point

    def write_csv(self):
        """sweep.csv from the points with a summary, in grid order; returns (rows, fields missing)."""
        rows, missing = [], set()
        convergence = any(p.summary is not None and "convergence" in p.summary for p in self.points)
        staleness = any(p.summary is not None and "staleness" in p.summary for p in self.points)
        for p in self.points:
            if p.summary is None:
                continue
            row = [v for _, v in p.assignment]
            for field in SUMMARY_FIELDS:
                if field not in p.summary:
                    missing.add(field)
                row.append(format_cell(p.summary.get(field)))
            if convergence:
                row += [format_cell(v) for v in convergence_cells(p.summary)]
            if staleness:
                row += [format_cell(v) for v in staleness_cells(p.summary)]
            rows.append(row)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.paths + SUMMARY_FIELDS + (CONVERGENCE_FIELDS if convergence else [])
                   + (STALENESS_FIELDS if staleness else []))
        w.writerows(rows)
        write_atomically(self.csv_path, buf.getvalue())
        return len(rows), missing

    @property
    def csv_path(self):
        return os.path.join(self.out, "sweep.csv")

