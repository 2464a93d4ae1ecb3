#!/usr/bin/env python3
"""Byte-for-byte golden test of every bundled output (docs/architecture.md, "Refactoring rule").

Runs every bundled scenario (at its own fidelity, at analytic and at flow fidelity, with pipelined
collectives, and one worker at a time), `validate` and `platform` on each, and a fixed set of
`collectives`, `schedule`, `calibrate` and `list` commands. Every output file, stdout, stderr and exit
code is hashed (SHA-256) and compared with tests/golden/outputs.sha256, written by the build this
layout was checked against. A refactoring must keep every line; a deliberate change of behaviour
regenerates the manifest (--update) in the same commit and says why.

usage: golden.py DDLSIM [--update] [--keep DIR]
"""
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "tests" / "golden" / "outputs.sha256"

# Variants of `run`: (name, extra arguments). A variant a scenario refuses is recorded as its
# message and exit code, which must not change either.
RUN_VARIANTS = [
    ("own", []),
    ("analytic", ["--set", "network.fidelity=analytic"]),
    ("flow", ["--set", "network.fidelity=flow"]),
    ("pipelined", ["--set", "network.collective_granularity=pipelined"]),
    ("every_worker", ["--every-worker"]),
]

OTHER_COMMANDS = [
    ("list", ["list"]),
    ("collectives_default", ["collectives"]),
    ("collectives_analytic_1024", ["collectives", "-n", "1024", "-m", "64MiB", "--fidelity", "analytic"]),
    ("collectives_fat_tree_gloo", ["collectives", "-n", "16", "-m", "4MiB", "-t", "fat_tree",
                                   "--topology-params", '{"k": 4}', "--software", "gloo", "--csv"]),
    ("collectives_nccl_100ms", ["collectives", "-n", "8", "-m", "256MiB", "-l", "100ms",
                                "--software", "nccl_simple", "--algorithms", "ring", "tree", "double_binary_tree"]),
    ("collectives_tcp_ps", ["collectives", "-n", "6", "-m", "1MiB", "--model", "tcp",
                            "--algorithms", "ring", "ps", "halving_doubling"]),
    ("schedule_ring", ["schedule", "-a", "ring", "-n", "5", "-m", "1MiB"]),
    ("schedule_multitree", ["schedule", "-a", "multitree", "-n", "6", "-m", "1MiB", "--granularity", "pipelined"]),
    ("schedule_auto", ["schedule", "-a", "auto", "-n", "8", "-m", "4MiB", "-b", "10Gbps", "-l", "5us"]),
    ("schedule_ps", ["schedule", "-a", "ps", "-n", "4", "--servers", "2", "-m", "64KiB"]),
    ("calibrate_lab", ["calibrate", "docs/data/lab_collectives.csv", "--rows"]),
    ("calibrate_lab_ring", ["calibrate", "docs/data/lab_collectives.csv", "--select", "algorithm=ring",
                            "--holdout", "every=3", "--rows"]),
    ("calibrate_loopback", ["calibrate", "docs/data/loopback_collectives.csv", "-b", "10Gbps", "-l", "5us"]),
    ("calibrate_loopback_no_rate", ["calibrate", "docs/data/loopback_collectives.csv"]),
]


def run(binary, args, out_dir, name):
    """Runs one command; writes its stdout, stderr and exit code beside its output files."""
    proc = subprocess.run([binary] + args, cwd=ROOT, capture_output=True, timeout=600)
    # The temporary folder's name is the one byte sequence allowed to change between runs.
    (out_dir / f"{name}.stdout").write_bytes(proc.stdout.replace(str(out_dir).encode(), b"OUT"))
    (out_dir / f"{name}.stderr").write_bytes(proc.stderr.replace(str(out_dir).encode(), b"OUT"))
    (out_dir / f"{name}.rc").write_text(f"{proc.returncode}\n")


def produce(binary, out_dir):
    for scenario in sorted((ROOT / "scenarios").glob("*.json")):
        stem = scenario.stem
        rel = str(scenario.relative_to(ROOT))
        for variant, extra in RUN_VARIANTS:
            name = f"run/{stem}/{variant}"
            target = out_dir / name
            target.mkdir(parents=True)
            run(binary, ["run", rel, "--out", str(target / "out"), "--progress", "none"] + extra,
                out_dir, name)
        (out_dir / "validate").mkdir(exist_ok=True)
        run(binary, ["validate", rel], out_dir, f"validate/{stem}")
        (out_dir / "platform").mkdir(exist_ok=True)
        run(binary, ["platform", rel], out_dir, f"platform/{stem}")
    (out_dir / "cmd").mkdir()
    for name, args in OTHER_COMMANDS:
        run(binary, args, out_dir, f"cmd/{name}")


def digest(out_dir):
    lines = []
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(out_dir)}")
    return lines


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ddlsim-golden-"))
    try:
        produce(binary, tmp)
        lines = digest(tmp)
        if update:
            MANIFEST.write_text("\n".join(lines) + "\n")
            print(f"wrote {len(lines)} hashes to {MANIFEST.relative_to(ROOT)}")
            return 0
        want = MANIFEST.read_text().splitlines()
        if lines == want:
            print(f"golden: {len(lines)} outputs byte-identical")
            return 0
        got_map = dict(reversed(l.split("  ", 1)) for l in lines)
        want_map = dict(reversed(l.split("  ", 1)) for l in want)
        for path in sorted(set(got_map) | set(want_map)):
            if got_map.get(path) != want_map.get(path):
                state = "missing" if path not in got_map else "new" if path not in want_map else "differs"
                print(f"golden: {path}: {state}")
        print(f"golden: outputs differ from {MANIFEST.relative_to(ROOT)} (keep them with --keep DIR to compare)")
        return 1
    finally:
        if keep:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(tmp, keep)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
