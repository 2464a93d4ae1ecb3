#!/usr/bin/python3
"""Run a ddlsim scenario over a parameter grid and collect the summaries in one CSV, on this machine
or as a Slurm job array.

    analysis/sweep.py SCENARIO [--grid platform.workers=1,2,4,8 ...] [--set PATH=VALUE ...] \
        [-j N] [--out DIR] [--ddlsim build/ddlsim] [--fidelity analytic|flow] [--force] [--quiet]
    analysis/sweep.py SCENARIO --slurm [--points-per-task K] [--partition P] [--time T] [--max-array-size N] \
        [--sbatch-arg ARG ...] [--wait] [--no-submit] ...
    analysis/sweep.py --collect DIR

The grid is the scenario's "sweep" section ({"platform.workers": [1, 2, 4, 8], ...}, axes in the order
written) followed by the --grid axes; a path named by both is refused. Every point of the Cartesian
product is one `ddlsim run SCENARIO --quiet --set output.timeline=false --set ... --out
DIR/points/<slug>` process (SimGrid allows one engine per process): -j of them at a time here, or
one array task per K points with --slurm. A point whose summary.json already exists (from a run with
the same scenario file and overrides) is not run again unless --force. DIR/sweep.csv gets one row per
successful point, in grid order (the first axis varies slowest), whatever -j or K is: the axes,
named by their paths, then SUMMARY_FIELDS. DIR/sweep.json records how the sweep was made; --collect
DIR rebuilds sweep.csv from whatever points have finished.

Exit status: 0 when every point succeeded (or, with --slurm and no --wait, the job was submitted),
2 on bad arguments or when any point failed or is missing (the CSV holds the successful ones), 130 on
Ctrl-C. Python 3 standard library only. See docs/analysis.md.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_axes import UsageError, combine_axes, parse_grid, section_axes, split_assignment  # noqa: E402
from sweep_grid import Sweep  # noqa: E402
from sweep_progress import Progress, format_duration  # noqa: E402
import sweep_slurm  # noqa: E402


def find_ddlsim(explicit, slurm):
    """The local binary; with --slurm, a bare name (default "ddlsim") is looked up on the nodes' PATH."""
    if slurm and (explicit is None or "/" not in explicit):
        return explicit or "ddlsim"
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


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="sweep.py",
        description="Run a ddlsim scenario over its sweep section and the --grid axes (one process per point), "
                    "here or as a Slurm job array, and write DIR/sweep.csv.",
        epilog="Example: analysis/sweep.py scenarios/resnet50_bsp_ring_25gbps.json "
               "--grid platform.workers=1,2,4,8 --grid platform.link.bandwidth=10Gbps,25Gbps -j 4")
    ap.add_argument("scenario", nargs="?", help="scenario JSON file (its \"sweep\" section gives the first axes)")
    ap.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2,...",
                    help="one sweep axis: a dotted path (or JSON pointer) and its comma-separated values "
                         "(or a JSON array: PATH=[...]); repeatable, after the scenario's sweep section")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="override applied to every point (as ddlsim run --set); repeatable")
    ap.add_argument("--fidelity", choices=["analytic", "flow"], help="shorthand for --set network.fidelity=...")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="points simulated at once here (default: number of CPUs, %(default)s here)")
    ap.add_argument("--out", help="output directory (default: out/sweep/<scenario file stem>)")
    ap.add_argument("--ddlsim", help="ddlsim binary (default: build/ddlsim; with --slurm: ddlsim on the nodes' PATH)")
    ap.add_argument("--force", action="store_true", help="rerun points that already have a summary.json")
    ap.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="kill a point after S seconds of wall time (counts as a failure)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress; failures and errors only")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per finished point")
    slurm = ap.add_argument_group("Slurm (docs/analysis.md)")
    slurm.add_argument("--slurm", action="store_true", help="write DIR/slurm/sweep.sbatch, a job array, and submit it")
    slurm.add_argument("--points-per-task", type=int, default=1, metavar="K",
                       help="points per array task, run one after another (default %(default)s)")
    slurm.add_argument("--partition", help="#SBATCH --partition")
    slurm.add_argument("--time", help="#SBATCH --time: one task's limit (e.g. 30 or 2:00:00)")
    slurm.add_argument("--max-running", type=int, metavar="N", help="at most N array tasks at once (--array=...%%N)")
    slurm.add_argument("--max-array-size", type=int, metavar="N",
                       help="the cluster's MaxArraySize (default: scontrol show config's, else Slurm's default 1001); "
                            "more array tasks than this are refused")
    slurm.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                       help="an #SBATCH line, e.g. --sbatch-arg=--mem=4G; repeatable")
    slurm.add_argument("--python", default="python3", help="Python 3 on the nodes (default %(default)s)")
    slurm.add_argument("--wait", action="store_true", help="wait for the job (polling squeue), then collect")
    slurm.add_argument("--poll", type=float, default=10.0, metavar="S", help="squeue every S seconds (default 10)")
    slurm.add_argument("--no-submit", action="store_true", help="write the script and plan, do not run sbatch")
    slurm.add_argument("--collect", metavar="DIR", help="write DIR/sweep.csv from the points that finished")
    slurm.add_argument("--slurm-task", nargs=2, metavar=("PLAN", "INDEX"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.jobs < 1:
        raise UsageError(f"-j {args.jobs}: must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout}: must be positive")
    if args.max_array_size is not None and args.max_array_size < 1:
        raise UsageError(f"--max-array-size {args.max_array_size}: must be at least 1")
    if args.points_per_task < 1:
        raise UsageError(f"--points-per-task {args.points_per_task}: must be at least 1")
    if args.max_running is not None and args.max_running < 1:
        raise UsageError(f"--max-running {args.max_running}: must be at least 1")
    if args.poll <= 0:
        raise UsageError(f"--poll {args.poll}: must be positive")
    if args.collect:
        if args.scenario or args.grid or args.set or args.fidelity or args.slurm:
            raise UsageError(f"--collect {args.collect}: takes no scenario, --grid, --set, --fidelity or --slurm "
                             "(DIR/sweep.json has them)")
    elif not args.scenario:
        raise UsageError("expected a SCENARIO file (or --collect DIR)")
    slurm_only = [o for o, given in (("--wait", args.wait), ("--no-submit", args.no_submit),
                                     ("--partition", args.partition), ("--time", args.time),
                                     ("--sbatch-arg", args.sbatch_arg), ("--max-running", args.max_running),
                                     ("--max-array-size", args.max_array_size is not None))
                  if given]
    if slurm_only and not args.slurm:
        raise UsageError(f"{slurm_only[0]}: only with --slurm")
    return args


def load_sweep(args):
    """The Sweep the arguments describe (exit 2 on any inconsistency, before anything runs)."""
    if not os.path.isfile(args.scenario):
        raise UsageError(f"{args.scenario}: no such scenario file")
    try:
        with open(args.scenario) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{args.scenario}: cannot read it as JSON ({e})")
    overrides = [split_assignment(s, "--set") for s in args.set]
    if args.fidelity:
        overrides.append(("network.fidelity", args.fidelity))
    axes = combine_axes(section_axes(args.scenario, doc), [parse_grid(g) for g in args.grid], overrides)
    stem = os.path.splitext(os.path.basename(args.scenario))[0]
    sweep = Sweep(args.scenario, axes, overrides, args.out or os.path.join("out", "sweep", stem))
    sweep.name = doc.get("name") if isinstance(doc, dict) and isinstance(doc.get("name"), str) else None
    return sweep


def progress_mode(args):
    return "quiet" if args.quiet else "auto"


def report_failure(progress, p, err_text=None):
    what, err = p.error if p.error else ("failed", err_text or "")
    progress.print(f"{p.label}: FAILED ({what}, {p.seconds:.1f} s); {p.error_log}:")
    for line in (err.rstrip("\n").splitlines() or ["(nothing on stderr)"]):
        progress.print(f"    {line}")


def run_local(sweep, args, ddlsim):
    total = len(sweep.points)
    progress = Progress(total, mode=progress_mode(args))
    wall = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(args.jobs, max(total, 1)))
    futures = []
    try:
        futures = [pool.submit(sweep.run_point, p, ddlsim, args.force, args.timeout) for p in sweep.points]
        for f in concurrent.futures.as_completed(futures):
            p = f.result()
            if p.error:
                report_failure(progress, p)
            elif args.verbose:
                it = p.summary.get("iteration_time_s")
                it_text = f"{it:.3g} s/iter" if isinstance(it, (int, float)) else "? s/iter"
                progress.note(f"[{progress.done + 1}/{total}] {p.label}: {it_text} "
                              f"({'cached' if p.cached else f'{p.seconds:.1f} s'})")
            progress.point_finished(failed=p.error is not None, cached=p.cached)
    except KeyboardInterrupt:
        for f in futures:
            f.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        progress.finish()
        print("sweep.py: interrupted; sweep.csv not written (rerun to resume)", file=sys.stderr)
        return 130
    pool.shutdown(wait=True)
    progress.finish()
    rows, missing = sweep.write_csv()
    if missing:
        print(f"sweep.py: warning: summary.json lacks {', '.join(sorted(missing))}; those cells are empty",
              file=sys.stderr)
    failed = [p for p in sweep.points if p.error]
    if not args.quiet:
        cached = sum(p.cached for p in sweep.points)
        print(f"sweep.py: {rows}/{total} points ({cached} cached) in {format_duration(time.monotonic() - wall)} "
              f"-> {sweep.csv_path}", file=sys.stderr)
    if failed:
        print(f"sweep.py: {len(failed)} point(s) failed: " + "; ".join(p.label for p in failed), file=sys.stderr)
        return 2
    return 0


def collect(sweep, quiet):
    """sweep.csv from the points that finished; failed ones are named with their stderr file."""
    failed, missing = [], []
    for p in sweep.points:
        p.summary = sweep.finished_summary(p)
        if p.summary is None:
            (failed if os.path.isfile(p.error_log) else missing).append(p)
    rows, _ = sweep.write_csv()
    if not quiet:
        print(f"sweep.py: collected {rows}/{len(sweep.points)} points -> {sweep.csv_path}", file=sys.stderr)
    for p in failed:
        with open(p.error_log, errors="replace") as f:
            first = (f.readline().strip() or "(nothing on stderr)")
        print(f"sweep.py: FAILED {p.label}: {first} (all of it: {p.error_log})", file=sys.stderr)
    if missing:
        logs = os.path.join(sweep_slurm.slurm_dir(sweep.out), "logs")
        names = "; ".join(p.label for p in missing[:5]) + ("; ..." if len(missing) > 5 else "")
        print(f"sweep.py: {len(missing)} point(s) not finished (not run yet, running, or killed: see {logs}/): "
              f"{names}", file=sys.stderr)
    job = sweep_slurm.active_job(sweep.out)
    if job:
        print(f"sweep.py: job {job} is still queued or running; --collect again when it is done", file=sys.stderr)
    return 2 if failed or missing else 0


def run_slurm(sweep, args, ddlsim):
    todo = [p for p in sweep.points if args.force or sweep.finished_summary(p) is None]
    if not todo:
        print(f"sweep.py: all {len(sweep.points)} points have finished; nothing to submit", file=sys.stderr)
        return collect(sweep, args.quiet)
    script, tasks = sweep_slurm.prepare(sweep, todo, ddlsim, args)
    what = f"{len(todo)} point(s) in {len(tasks)} array task(s)"
    if args.no_submit:
        print(f"sweep.py: wrote {script}: {what}; submit it with: sbatch {script}", file=sys.stderr)
        return 0
    if shutil.which("sbatch") is None:
        raise UsageError(f"--slurm: no sbatch on PATH; the script is {script} (or use --no-submit)")
    sweep_slurm.forget_outcomes(todo)
    job = sweep_slurm.submit(script, sweep.out)
    print(job)
    done = len(sweep.points) - len(todo)
    print(f"sweep.py: submitted job {job}: {what}" + (f" ({done} already done)" if done else "")
          + f"; logs in {os.path.join(sweep_slurm.slurm_dir(sweep.out), 'logs')}", file=sys.stderr)
    if not args.wait:
        print(f"sweep.py: collect with: {sys.argv[0]} --collect {sweep.out}", file=sys.stderr)
        return 0
    progress = Progress(len(todo), mode=progress_mode(args))
    try:
        sweep_slurm.wait(job, todo, progress, args.poll)
    except KeyboardInterrupt:
        progress.finish()
        print(f"sweep.py: stopped waiting; job {job} goes on (scancel {job} stops it); "
              f"collect with --collect {sweep.out}", file=sys.stderr)
        return 130
    progress.finish()
    return collect(sweep, args.quiet)


def main(argv):
    if argv[:1] == ["--slurm-task"] and len(argv) == 3:
        return sweep_slurm.run_task(argv[1], argv[2])
    try:
        args = parse_args(argv)
        if args.collect:
            return collect(Sweep.from_description(os.path.abspath(args.collect)), args.quiet)
        ddlsim = find_ddlsim(args.ddlsim, args.slurm)
        sweep = load_sweep(args)
        if args.slurm:
            sweep_slurm.check(sweep)
        sweep.describe(ddlsim, [os.path.basename(sys.argv[0])] + list(argv), sweep.name)
        return run_slurm(sweep, args, ddlsim) if args.slurm else run_local(sweep, args, ddlsim)
    except UsageError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
