"""What the MPI test scripts (mpi_solve_test.py, mpi_batch_test.py) share: the
count of checks and failures, the mpirun command line of a uot-mpi command on P
ranks (--oversubscribe; --allow-run-as-root where CI runs as root), and a run
with a time limit (None when it runs past it: a hung rank fails the test
instead of hanging it)."""

import os
import subprocess


class Runner:
    def __init__(self, args, timeout_s):
        self.uot = args.uot
        self.uot_mpi = args.uot_mpi
        self.mpirun = args.mpirun
        self.timeout_s = timeout_s
        self.failures = 0
        self.checks = 0

    def check(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures += 1
            print("FAIL: " + what)
        return ok

    def mpi_command(self, command, ranks, extra=()):
        """mpirun ... -np RANKS EXTRA... uot-mpi COMMAND."""
        cmd = [self.mpirun, "--oversubscribe", "-np", str(ranks)] + list(extra)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        return cmd + [self.uot_mpi, command]

    def run(self, cmd, env=None):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s, env=env)
        except subprocess.TimeoutExpired:
            print("FAIL: timed out: " + " ".join(cmd))
            return None
