"""The axes of analysis/sweep.py: --grid and --set texts, the scenario's "sweep" section, and the
checks that refuse a path named twice. Python 3 standard library only. See docs/analysis.md.
"""

import json
import re

# The summary.json fields sweep.csv holds, after the axes (docs/outputs.md).
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

# With training.convergence (docs/convergence.md), sweep.csv also holds these, from summary.json's
# "convergence" (final_test_accuracy: its final evaluation's); empty where a point did not reach
# the target.
CONVERGENCE_FIELDS = [
    "time_to_target_s",
    "iterations_to_target",
    "epochs_to_target",
    "final_test_accuracy",
]


# Where a point's sync model has parameter servers (summary.json's "staleness"), sweep.csv also holds
# the mean staleness of the updates the servers applied (in updates; empty for other points).
STALENESS_FIELDS = [
    "staleness_mean_updates",
]


def staleness_cells(summary):
    return [(summary.get("staleness") or {}).get("mean")]


def convergence_cells(summary):
    c = summary.get("convergence") or {}
    return [c.get("time_to_target_s"), c.get("iterations_to_target"), c.get("epochs_to_target"),
            (c.get("final") or {}).get("test_accuracy")]


_PATH_RE = re.compile(r"^(/[^\s=]*|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)$")


class UsageError(Exception):
    pass


def canonical_path(path):
    """Dotted form of a --set/--grid path (a JSON pointer /a/b becomes a.b) for clash checks."""
    if path.startswith("/"):
        return ".".join(p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/"))
    return path


def check_path(path, where):
    if not path or not _PATH_RE.match(path):
        raise UsageError(f"{where}: {path!r} is not a dotted path (platform.workers) "
                         "or a JSON pointer (/platform/workers)")


def split_assignment(text, option):
    if "=" not in text:
        raise UsageError(f"{option} {text!r}: expected PATH=VALUE")
    path, value = text.split("=", 1)
    path = path.strip()
    check_path(path, f"{option} {text!r}")
    return path, value


def set_text(value):
    """A JSON value as `ddlsim run --set` reads it back: a string stays a string (quoted only when
    it would otherwise parse as JSON: "16", "true"), anything else is compact JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, separators=(",", ":"))


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
        values = [set_text(v) for v in items]
    else:
        values = [v.strip() for v in rhs.split(",")]
    if not values or any(v == "" for v in values):
        raise UsageError(f"--grid {text!r}: expected PATH=V1,V2,... with no empty value")
    if len(set(values)) != len(values):
        raise UsageError(f"--grid {text!r}: a value is listed twice")
    return path, values


def section_axes(scenario_file, doc):
    """The scenario's "sweep" section as axes, in the order written: [(path, [--set texts])]. Its
    shape is checked as `ddlsim validate` checks it (scenario/scenario_sweep.cpp)."""
    section = doc.get("sweep") if isinstance(doc, dict) else None
    if section is None:
        return []
    where = f"{scenario_file}: /sweep"
    if not isinstance(section, dict):
        raise UsageError(f"{where}: expected an object of override paths to arrays of values, "
                         f"e.g. {{\"platform.workers\": [1, 2, 4]}}")
    axes = []
    for path, values in section.items():
        key_where = f"{where}/{path.replace('~', '~0').replace('/', '~1')}"
        check_path(path, key_where)
        if canonical_path(path) == "sweep" or canonical_path(path).startswith("sweep."):
            raise UsageError(f"{key_where}: a sweep cannot vary its own section")
        if not isinstance(values, list) or not values:
            raise UsageError(f"{key_where}: expected a non-empty array of values")
        texts = [set_text(v) for v in values]
        if len(set(texts)) != len(texts):
            raise UsageError(f"{key_where}: a value is listed twice")
        axes.append((path, texts))
    return axes


def combine_axes(section, grid, overrides):
    """The section's axes, then the --grid axes; refuses a path named twice (exit 2, one line)."""
    seen = {}
    for path, _ in section:
        seen[canonical_path(path)] = "the scenario's sweep section"
    for path, _ in grid:
        key = canonical_path(path)
        if key in seen:
            raise UsageError(f"--grid {path}: {seen[key]} already varies this path; "
                             "edit the section or drop this --grid")
        seen[key] = "another --grid"
    for path, _ in overrides:
        key = canonical_path(path)
        if key in seen:
            raise UsageError(f"--set {path}: {seen[key].replace('another ', 'a ')} varies this path; "
                             "a path cannot be both an axis and an override")
        if key == "sweep" or key.startswith("sweep."):
            raise UsageError(f"--set {path}: the sweep section is read from the scenario file; "
                             "edit it or use --grid")
    axes = section + grid
    clash = [p for p, _ in axes if p in SUMMARY_FIELDS]
    if clash:
        raise UsageError(f"axis {clash[0]}: name clashes with a summary column; use the JSON pointer form")
    return axes
