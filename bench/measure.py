"""Shared by the benchmark scripts: run one command, measure wall time and peak RSS."""
import os
import subprocess
import sys
import tempfile
import time


def run_measured(cmd):
    """Runs `cmd` (a list) in a child process; returns (wall_s, peak_rss_MiB, stdout)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.execv(cmd[0], cmd)
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        subprocess.run(cmd)  # show the error
        sys.exit("failed: " + " ".join(cmd))
    return wall, usage.ru_maxrss / 1024.0, text
