"""The Slurm mode of analysis/sweep.py: a batch script and a job array, one array task per chunk of
points, each running `ddlsim run` for its points into the shared output tree (points/<slug>/, the
layout and point.json records of the local mode); waiting for the job; the array task's own entry
point (sweep.py --slurm-task PLAN INDEX).

Files under DIR/slurm/: sweep.sbatch (the batch script), plan.json (which points each task runs),
code/ (a copy of sweep*.py, so the tasks do not depend on the checkout that submitted them),
jobs.json (every submission), logs/JOB_TASK.out (each task's stdout and stderr).

Python 3 standard library only. See docs/analysis.md.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from sweep_axes import UsageError
from sweep_grid import ERROR_LOG, POINT_RECORD, Sweep, write_atomically

CODE_FILES = ["sweep.py", "sweep_axes.py", "sweep_grid.py", "sweep_progress.py", "sweep_slurm.py"]


def slurm_dir(out):
    return os.path.join(out, "slurm")


def deal(points, per_task):
    """ceil(n / per_task) tasks; points dealt round-robin in grid order, so every task gets n / tasks
    points (give or take one) of mixed cost rather than all the largest ones."""
    tasks = max(1, -(-len(points) // per_task)) if points else 0
    return [points[t::tasks] for t in range(tasks)]


def batch_script(sweep, tasks, opts):
    """The sbatch script's text: #SBATCH directives, then the task's one command."""
    sdir = slurm_dir(sweep.out)
    n = sum(len(t) for t in tasks)
    array = f"0-{len(tasks) - 1}" + (f"%{opts.max_running}" if opts.max_running else "")
    stem = os.path.splitext(os.path.basename(sweep.scenario))[0]
    lines = [
        "#!/bin/bash",
        f"# ddlsim sweep of {sweep.scenario}: {n} point(s) in {len(tasks)} array task(s) of at most "
        f"{max(len(t) for t in tasks)}.",
        "# Written by analysis/sweep.py --slurm. Each task runs `ddlsim run` for its points (plan.json)",
        f"# one after another into {sweep.out}/points/<slug>/. Collect: analysis/sweep.py --collect {sweep.out}",
        f"#SBATCH --job-name=ddlsim-sweep-{stem}",
        f"#SBATCH --array={array}",
        f"#SBATCH --output={sdir}/logs/%A_%a.out",
        "#SBATCH --ntasks=1",
        "#SBATCH --cpus-per-task=1",
    ]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    if opts.time:
        lines.append(f"#SBATCH --time={opts.time}")
    lines += [f"#SBATCH {arg}" for arg in opts.sbatch_arg]
    command = [opts.python, os.path.join(sdir, "code", "sweep.py"), "--slurm-task", os.path.join(sdir, "plan.json")]
    lines += [
        "set -eu",
        "exec " + " ".join(shlex.quote(c) for c in command)
        + ' "${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}"',
    ]
    return "\n".join(lines) + "\n"


def check(sweep):
    """Refuses, before anything is written, what would break the job or run points twice."""
    if any(c.isspace() for c in sweep.out):
        raise UsageError(f"--out {sweep.out}: #SBATCH lines cannot hold a path with white space; choose another")
    job = active_job(sweep.out)
    if job:
        raise UsageError(f"--slurm: job {job} of this sweep is still queued or running; wait for it "
                         f"(or scancel {job}), then rerun to submit what is missing")


DEFAULT_MAX_ARRAY_SIZE = 1001  # Slurm's default MaxArraySize (slurm.conf(5)): task indices 0..1000


def cluster_max_array_size():
    """(MaxArraySize, where it came from): `scontrol show config`'s value, or Slurm's default when
    scontrol is absent or does not say."""
    try:
        proc = subprocess.run(["scontrol", "show", "config"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60)
        for line in proc.stdout.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "MaxArraySize" and value.strip().isdigit():
                return int(value.strip()), "scontrol show config"
    except (OSError, subprocess.TimeoutExpired):
        pass
    return DEFAULT_MAX_ARRAY_SIZE, "Slurm's default; scontrol did not say"


def check_array_size(points, opts):
    """Refuses a job array with more tasks than the cluster takes (sbatch would reject it after the
    plan is written), naming the smallest --points-per-task that fits."""
    if opts.max_array_size is not None:
        limit, source = opts.max_array_size, "--max-array-size"
    else:
        limit, source = cluster_max_array_size()
    tasks = -(-points // opts.points_per_task)
    if tasks > limit:
        raise UsageError(f"--points-per-task {opts.points_per_task}: {points} point(s) make {tasks} array tasks, "
                         f"more than MaxArraySize {limit} ({source}) allows; use --points-per-task "
                         f"{-(-points // limit)} or more")


def prepare(sweep, todo, ddlsim, opts):
    """Writes DIR/slurm/{plan.json,sweep.sbatch,code/} for the points `todo`; returns (script, tasks)."""
    check_array_size(len(todo), opts)
    sdir = slurm_dir(sweep.out)
    os.makedirs(os.path.join(sdir, "logs"), exist_ok=True)
    os.makedirs(os.path.join(sdir, "code"), exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in CODE_FILES:
        shutil.copyfile(os.path.join(here, name), os.path.join(sdir, "code", name))
    tasks = deal(todo, opts.points_per_task)
    write_atomically(os.path.join(sdir, "plan.json"), json.dumps({
        "scenario": sweep.scenario,
        "grid": [[p, v] for p, v in sweep.axes],
        "overrides": [[p, v] for p, v in sweep.overrides],
        "out": sweep.out,
        "ddlsim": ddlsim,
        "timeout": opts.timeout,
        "tasks": [[p.index for p in t] for t in tasks],
    }, indent=1) + "\n")
    script = os.path.join(sdir, "sweep.sbatch")
    write_atomically(script, batch_script(sweep, tasks, opts))
    os.chmod(script, 0o755)
    return script, tasks


def forget_outcomes(points):
    """Removes what earlier runs of these points left, so waiting counts only the new job's."""
    for p in points:
        for name in ("summary.json", POINT_RECORD, ERROR_LOG):
            try:
                os.remove(os.path.join(p.dir, name))
            except FileNotFoundError:
                pass


def submit(script, out):
    """sbatch --parsable SCRIPT; records the job in DIR/slurm/jobs.json; returns the job id."""
    try:
        proc = subprocess.run(["sbatch", "--parsable", script], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"--slurm: cannot run sbatch ({e}); the script is {script}")
    if proc.returncode != 0:
        msg = " ".join(proc.stderr.split()) or f"exit {proc.returncode}"
        raise UsageError(f"--slurm: sbatch refused {script}: {msg}")
    job = proc.stdout.strip().split(";")[0]
    jobs_path = os.path.join(slurm_dir(out), "jobs.json")
    jobs = read_jobs(out)
    jobs.append({"job_id": job, "script": script, "submitted": time.strftime("%Y-%m-%dT%H:%M:%S")})
    write_atomically(jobs_path, json.dumps(jobs, indent=1) + "\n")
    return job


def read_jobs(out):
    try:
        with open(os.path.join(slurm_dir(out), "jobs.json")) as f:
            jobs = json.load(f)
        return jobs if isinstance(jobs, list) else []
    except (OSError, ValueError):
        return []


def queued_tasks(job):
    """{state: count} of the job's array tasks still known to squeue (pending, running, completing);
    {} once the job has left the queue. Raises OSError when squeue cannot answer."""
    proc = subprocess.run(["squeue", "-h", "-r", "-j", str(job), "-o", "%t"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        if "invalid job id" in proc.stderr.lower():
            return {}
        raise OSError(" ".join(proc.stderr.split()) or f"squeue exit {proc.returncode}")
    states = {}
    for state in proc.stdout.split():
        states[state] = states.get(state, 0) + 1
    return states


def active_job(out):
    """The id of this sweep's last job if it is still queued or running (None without squeue)."""
    jobs = read_jobs(out)
    if not jobs or shutil.which("squeue") is None:
        return None
    try:
        return jobs[-1]["job_id"] if queued_tasks(jobs[-1]["job_id"]) else None
    except (OSError, subprocess.TimeoutExpired, KeyError, TypeError):
        return None


def outcomes(points):
    """(finished, failed) among `points`, from the files their runs leave."""
    finished = sum(os.path.isfile(os.path.join(p.dir, POINT_RECORD)) for p in points)
    failed = sum(os.path.isfile(p.error_log) for p in points)
    return finished, failed


def wait(job, points, progress, poll_s):
    """Polls squeue until the job has left the queue, showing how many points are done."""
    errors = 0
    while True:
        try:
            states = queued_tasks(job)
            errors = 0
        except (OSError, subprocess.TimeoutExpired) as e:
            errors += 1
            if errors >= 5:
                raise UsageError(f"--wait: squeue keeps failing ({e}); job {job} goes on: "
                                 "collect it later with --collect")
            states = None
        finished, failed = outcomes(points)
        if states is not None:
            running = states.get("R", 0) + states.get("CG", 0)
            extra = f"job {job}: {running} task(s) running, {states.get('PD', 0)} queued" if states else ""
            progress.update(done=finished + failed, ran=finished + failed, failed=failed, extra=extra)
            if not states:
                return
        time.sleep(poll_s)


def run_task(plan_path, index_text):
    """An array task: runs its points of plan.json one after another; exit 2 if any failed."""
    try:
        with open(plan_path) as f:
            plan = json.load(f)
        index = int(index_text)
        sweep = Sweep(plan["scenario"], [(p, v) for p, v in plan["grid"]],
                      [(p, v) for p, v in plan["overrides"]], plan["out"])
        if not 0 <= index < len(plan["tasks"]):
            raise UsageError(f"--slurm-task {index}: the plan has tasks 0 to {len(plan['tasks']) - 1}")
        points = [sweep.points[i] for i in plan["tasks"][index]]
    except (OSError, ValueError, KeyError, TypeError, IndexError, UsageError) as e:
        print(f"sweep.py: error: --slurm-task {plan_path} {index_text}: {e}", file=sys.stderr)
        return 2
    failed = 0
    for p in points:
        sweep.run_point(p, plan["ddlsim"], False, plan.get("timeout"))
        if p.error:
            failed += 1
            print(f"{p.label}: FAILED ({p.error[0]}, {p.seconds:.1f} s); see {p.error_log}", flush=True)
        else:
            print(f"{p.label}: {'cached' if p.cached else f'{p.seconds:.1f} s'}", flush=True)
    return 2 if failed else 0
