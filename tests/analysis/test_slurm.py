#!/usr/bin/python3
"""A real Slurm test of analysis/sweep.py --slurm: starts a one-node Slurm cluster on localhost
(munged with a generated key, slurmctld and slurmd with a generated slurm.conf, everything in a
temporary folder, free ports), submits the 12-point sweep of scenarios/sweep_workers_bandwidth.json
as a job array (3 tasks of 4 points), waits, collects, and compares sweep.csv with a local -j 2 run
of the same grid byte for byte; then deletes one point and checks that a second --slurm submits that
point alone. The daemons are stopped by their PIDs whatever happens (finally, atexit, SIGTERM/SIGINT/
SIGHUP handlers).

    /usr/bin/python3 tests/analysis/test_slurm.py build/ddlsim

Exit 0: passed; 1: failed; 77: skipped, with the reason (not root, or no Slurm/munge binaries:
`bash tools/install-deps.sh --slurm` installs Debian's slurm-wlm and munge). About 20 s.
"""

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SWEEP = os.path.join(ROOT, "analysis", "sweep.py")
SCENARIO = os.path.join(ROOT, "scenarios", "sweep_workers_bandwidth.json")
SKIP = 77
DAEMONS = ["munged", "slurmctld", "slurmd"]
CLIENTS = ["sbatch", "squeue", "scancel", "sinfo"]


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find(name):
    """A Slurm or munge binary: on PATH, or in the sbin folders a non-root PATH may lack."""
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)),
                                      None)


class LocalSlurm:
    """munged + slurmctld + slurmd on 127.0.0.1, all state under `tmp`; stop() is idempotent."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []  # (name, Popen), in start order
        self.conf = os.path.join(tmp, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.node = socket.gethostname().split(".")[0]

    def start(self):
        key = os.path.join(self.tmp, "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(os.urandom(1024))
        sock = os.path.join(self.tmp, "munge.socket")
        self._spawn("munged", [find("munged"), "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
                               f"--pid-file={self.tmp}/munged.pid", f"--log-file={self.tmp}/munged.log",
                               f"--seed-file={self.tmp}/munged.seed"])
        self._until(lambda: os.path.exists(sock), 10, "munged's socket")
        for d in ("state", "spool"):
            os.makedirs(os.path.join(self.tmp, d))
        with open(self.conf, "w") as f:
            f.write(self._slurm_conf(sock))
        self._spawn("slurmctld", [find("slurmctld"), "-D", "-i", "-f", self.conf])
        self._spawn("slurmd", [find("slurmd"), "-D", "-f", self.conf, "-N", self.node])
        self._until(self._node_idle, 40, f"node {self.node} idle in sinfo")

    def _slurm_conf(self, munge_socket):
        t = self.tmp
        return "\n".join([
            "ClusterName=ddlsimtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={munge_socket}",
            f"StateSaveLocation={t}/state",
            f"SlurmdSpoolDir={t}/spool",
            f"SlurmctldPidFile={t}/slurmctld.pid",
            f"SlurmdPidFile={t}/slurmd.pid",
            f"SlurmctldLogFile={t}/slurmctld.log",
            f"SlurmdLogFile={t}/slurmd.log",
            "ProctrackType=proctrack/linuxproc",  # no cgroups
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "ReturnToService=2",
            "SchedulerParameters=sched_interval=1",
            "KillWait=5",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n"

    def _spawn(self, name, argv):
        log = open(os.path.join(self.tmp, f"{name}.out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                                  env=self.env, start_new_session=True)))

    def _node_idle(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited with {p.returncode} while starting")
        r = subprocess.run([find("sinfo"), "-h", "-N", "-o", "%t"], env=self.env, capture_output=True, text=True)
        return r.returncode == 0 and r.stdout.strip() == "idle"

    @staticmethod
    def _until(ready, seconds, what):
        deadline = time.monotonic() + seconds
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {seconds} s waiting for {what}")
            time.sleep(0.2)

    def stop(self):
        """Cancels the cluster's jobs, then stops the daemons (SIGTERM, SIGKILL after 10 s) by PID."""
        if not self.procs:
            return
        if any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
            jobs = subprocess.run([find("squeue"), "-h", "-o", "%A"], env=self.env, capture_output=True, text=True,
                                  timeout=30).stdout.split()
            for job in sorted(set(jobs)):
                subprocess.run([find("scancel"), job], env=self.env, capture_output=True, timeout=30)
            if jobs:
                time.sleep(2)
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log", "slurmctld.out", "slurmd.out", "munged.out"):
            path = os.path.join(self.tmp, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f"--- {name} (last lines)\n" + "".join(f.readlines()[-15:]))
        return "\n".join(out)


def sweep(args, env, timeout=120):
    r = subprocess.run(["/usr/bin/python3", SWEEP] + args, env=env, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(r.stderr)
    return r


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run(ddlsim, tmp, cluster):
    local = os.path.join(tmp, "local")
    r = sweep([SCENARIO, "-j", "2", "--ddlsim", ddlsim, "--out", local], cluster.env)
    check(r.returncode == 0, f"local sweep exited {r.returncode}")

    out = os.path.join(tmp, "slurm")
    common = [SCENARIO, "--slurm", "--wait", "--poll", "0.5", "--points-per-task", "4", "--time", "5",
              "--ddlsim", ddlsim, "--python", sys.executable, "--out", out]
    print("--- 12 points as a 3-task array")
    r = sweep(common, cluster.env)
    check(r.returncode == 0, f"--slurm --wait exited {r.returncode}")
    job = r.stdout.strip()
    check(job.isdigit(), f"expected the job id on stdout, got {r.stdout!r}")
    logs = sorted(os.listdir(os.path.join(out, "slurm", "logs")))
    check(logs == [f"{job}_{t}.out" for t in range(3)], f"task logs {logs}")
    check(read(os.path.join(out, "sweep.csv")) == read(os.path.join(local, "sweep.csv")),
          "sweep.csv of the Slurm job differs from the local -j 2 run's")

    print("--- one point lost: the second --slurm runs it alone")
    lost = os.path.join(out, "points", "platform.workers=4__platform.link.bandwidth=25Gbps")
    for name in ("summary.json", "point.json"):
        os.remove(os.path.join(lost, name))
    r = sweep(["--collect", out], cluster.env)
    check(r.returncode == 2 and "1 point(s) not finished" in r.stderr, f"--collect of 11/12 exited {r.returncode}")
    check(len(read(os.path.join(out, "sweep.csv")).splitlines()) == 1 + 11, "--collect should write 11 rows")
    r = sweep(common, cluster.env)
    check(r.returncode == 0, f"second --slurm --wait exited {r.returncode}")
    second = r.stdout.strip()
    check(second.isdigit() and second != job, f"second job id {r.stdout!r}")
    check(f"submitted job {second}: 1 point(s) in 1 array task(s) (11 already done)" in r.stderr,
          "the second job should hold the lost point alone")
    check(read(os.path.join(out, "sweep.csv")) == read(os.path.join(local, "sweep.csv")),
          "sweep.csv after the second job differs from the local run's")


def main(argv):
    if len(argv) != 1:
        print(f"usage: {sys.argv[0]} PATH/TO/ddlsim", file=sys.stderr)
        return 2
    ddlsim = os.path.abspath(argv[0])
    if os.geteuid() != 0:
        skip("needs root: slurmd runs as root to start jobs, and munged, slurmctld and slurmd share root's key")
    missing = [n for n in DAEMONS + CLIENTS if find(n) is None]
    if missing:
        skip(f"no {', '.join(missing)} (Debian: bash tools/install-deps.sh --slurm installs slurm-wlm and munge)")
    tmp = tempfile.mkdtemp(prefix="ddlsim-slurm-")
    os.chmod(tmp, 0o700)
    cluster = LocalSlurm(tmp)

    def cleanup():
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    atexit.register(cleanup)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))  # runs finally and atexit
    start = time.monotonic()
    try:
        cluster.start()
        print(f"--- cluster up in {time.monotonic() - start:.1f} s (node {cluster.node})")
        run(ddlsim, tmp, cluster)
    except (AssertionError, RuntimeError, OSError, subprocess.SubprocessError) as e:
        print(f"FAIL: {e}\n{cluster.logs()}")
        return 1
    finally:
        cleanup()
    print(f"PASS in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
