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


def run_status(cmd, timeout_s):
    """Runs `cmd` (a list) with a wall-clock limit; returns (exit_code, wall_s, peak_rss_MiB, stdout, stderr).
    exit_code is None when the command ran past timeout_s (it is then killed)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        code = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.perf_counter() - start > timeout_s:
                proc.kill()
                _, _, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9  # reaped here, not by Popen
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return code, wall, usage.ru_maxrss / 1024.0, out.read().decode(), err.read().decode(errors="replace")
