#!/usr/bin/python3
"""The conformance rule for the solve distributed by rows (`uot-mpi solve`), against
the float64 oracle (newton_oracle.py, Newton's method on the dual):

    every run either ends "converged" with exit 0 and a plan within 1e-9 (relative
    L1, float64) of the oracle's, or ends with converged = false and a non-zero exit;
    it never says "converged" on a wrong plan.

Cases: P = 1, 2, 3 ranks on a 13 x 11 problem (uneven row blocks) and P = 3 on a
2 x 6 problem (rank 0 holds no rows), crossed with eps in {0.05, 1e-3, 1e-4} and
tau in {0.5, 1, inf, asymmetric (tau_a 0.5, tau_b 2)}, for `--solver auto`
(translation-invariant + automatic over-relaxation), the named solver with the
same iteration (`--solver fused --mode ti --accel auto`) and with a fixed omega
(`--accel relax --omega 1.5`, P = 2), and the matrix-free one on the same points
(`--solver mapreduce --mode ti --accel auto`, --x/--y with --cost-scale 1). Costs are squared distances of random points
in the unit square (in [0, 2]), a and b in [0.5, 1.5) (b rescaled to the mass of a
when both taus are infinite); --tol 1e-12, --max-iter 5000, fp64, --mpi-wait
sleep (the ranks share the cores of the CI machine). Also the issue's silent wrong
answer: 301 x 257, eps 0.05, tau 1, `--solver auto` on 2 ranks reported converged
with mass 0.947 instead of 1.328 (here with uniform weights). And one case that must
converge: `--solver mapreduce --mode ti --accel auto` on 2 x 6 points in the unit cube, eps 1e-4,
costs in [0, 1] (the default --cost-scale), P = 1, 2, 3; it stopped "not-finite" at
iteration 1 (the log-sum-exp's shift overstated the maximum, every term underflowed).

Usage: mpi_conformance_test.py --uot-mpi path/to/uot-mpi --mpirun mpirun. Exit 0
when every case passes, 1 otherwise, 77 (skipped) with --uot-mpi none.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as error:
    print("FAIL: needs numpy for /usr/bin/python3 (apt-get install python3-numpy): %s" % error)
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from newton_oracle import oracle_plan  # noqa: E402

EPSILONS = (0.05, 1e-3, 1e-4)
TAUS = (("0.5", "0.5"), ("1", "1"), ("inf", "inf"), ("0.5", "2"))
# (name, options, rank counts of the 13 x 11 problem, on point clouds: --x/--y)
SOLVERS = (("auto", ["--solver", "auto"], (1, 2, 3), False),
           ("fused-ti-auto", ["--solver", "fused", "--mode", "ti", "--accel", "auto"], (1, 2, 3), False),
           ("fused-ti-relax", ["--solver", "fused", "--mode", "ti", "--accel", "relax", "--omega", "1.5"], (2,), False),
           ("mapreduce-ti-auto", ["--solver", "mapreduce", "--mode", "ti", "--accel", "auto"], (1, 2, 3), True))
TIMEOUT_S = 120


def problem(directory, m, n, seed, uniform=False):
    rng = np.random.default_rng(seed)
    x = rng.random((m, 2))
    y = rng.random((n, 2))
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    a = np.full(m, 1.0 / m) if uniform else rng.random(m) + 0.5
    b = np.full(n, 1.0 / n) if uniform else rng.random(n) + 0.5
    os.makedirs(directory, exist_ok=True)
    paths = {}
    for name, array in (("cost", cost), ("a", a), ("b", b), ("x", x), ("y", y)):
        paths[name] = os.path.join(directory, name + ".npy")
        np.save(paths[name], array)
    return cost, a, b, paths


def tau_value(text):
    return np.inf if text == "inf" else float(text)


class Suite:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.cases = 0
        self.failures = 0
        self.outcomes = {"converged": 0, "refused": 0}

    def mpirun(self, ranks):
        cmd = [self.args.mpirun, "--oversubscribe", "-np", str(ranks)]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        return cmd + [self.args.uot_mpi, "solve"]

    def fail(self, text):
        self.failures += 1
        print("FAIL: " + text)

    def run_case(self, what, ranks, files, options, cost, expected, tolerance=1e-9, must_converge=False):
        self.cases += 1
        out = os.path.join(self.work, "out%d" % self.cases)
        cmd = self.mpirun(ranks) + files + options + ["--out-dir", out, "--json"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.fail("%s: no answer within %d s: %s" % (what, TIMEOUT_S, " ".join(cmd)))
            return None
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if len(lines) != 1:
            if done.returncode == 0:
                self.fail("%s: exit 0 without one JSON summary:\n%s" % (what, done.stdout + done.stderr))
            else:  # refused before solving (e.g. a usage error): non-zero, nothing claimed
                self.outcomes["refused"] += 1
            return None
        summary = json.loads(lines[0])
        eps = summary["eps"]
        distance = None
        if os.path.exists(os.path.join(out, "logu.npy")):
            logu = np.load(os.path.join(out, "logu.npy"))
            logv = np.load(os.path.join(out, "logv.npy"))
            with np.errstate(over="ignore", invalid="ignore"):
                plan = np.exp(logu[:, None] + logv[None, :] - cost / eps)
            distance = float(np.abs(plan - expected).sum() / expected.sum())
        if summary["converged"] and done.returncode == 0:
            self.outcomes["converged"] += 1
            if distance is None or not distance <= tolerance:
                self.fail("%s: says converged after %d iterations with a plan %s from the oracle (> %g)" %
                          (what, summary["iterations"], distance, tolerance))
        elif done.returncode == 0 or summary["converged"]:
            self.fail("%s: exit %d with converged = %s" % (what, done.returncode, summary["converged"]))
        elif must_converge:
            self.fail("%s: must converge, ended %s (exit %d) after %d iterations" %
                      (what, summary["status"], done.returncode, summary["iterations"]))
        else:
            self.outcomes["refused"] += 1
        if self.args.verbose:
            print("%s: exit %d, converged %s, %d iterations, status %s, plan %s from the oracle" %
                  (what, done.returncode, summary["converged"], summary["iterations"], summary["status"], distance))
        return summary

    def grid(self):
        shapes = (("13x11", 13, 11, (1, 2, 3)), ("2x6-empty-rank", 2, 6, (3,)))
        for label, m, n, rank_counts in shapes:
            cost, a, b, paths = problem(os.path.join(self.work, label), m, n, seed=m * 100 + n)
            # The balanced problem (both taus infinite) needs |b| = |a|.
            balanced_b = b * (a.sum() / b.sum())
            paths["b_balanced"] = os.path.join(self.work, label, "b_balanced.npy")
            np.save(paths["b_balanced"], balanced_b)
            for eps in EPSILONS:
                for tau_a, tau_b in TAUS:
                    balanced = tau_a == "inf" and tau_b == "inf"
                    weights_b = balanced_b if balanced else b
                    weights = ["--a", paths["a"], "--b", paths["b_balanced" if balanced else "b"]]
                    expected = oracle_plan(cost, a, weights_b, eps, tau_value(tau_a), tau_value(tau_b))
                    base = ["--eps", repr(eps), "--tau-a", tau_a, "--tau-b", tau_b, "--precision", "fp64",
                            "--tol", "1e-12", "--max-iter", "5000", "--mpi-wait", "sleep", "--threads", "1"]
                    for name, solver, solver_ranks, clouds in SOLVERS:
                        # Point clouds with --cost-scale 1: C = |x - y|^2, the oracle's cost.
                        inputs = weights + (["--x", paths["x"], "--y", paths["y"], "--cost-scale", "1"] if clouds
                                            else ["--cost", paths["cost"]])
                        for p in rank_counts:
                            if p not in solver_ranks and label != "2x6-empty-rank":
                                continue
                            what = "%s P=%d eps=%g tau=(%s,%s) %s" % (label, p, eps, tau_a, tau_b, name)
                            self.run_case(what, p, inputs, base + solver, cost, expected)

    def issue_case(self):
        """The issue's silent wrong answer: uot-mpi --solver auto on 2 ranks said converged with mass 0.947."""
        cost, a, b, paths = problem(os.path.join(self.work, "issue"), 301, 257, seed=24, uniform=True)
        expected = oracle_plan(cost, a, b, 0.05, 1.0, 1.0)
        files = ["--cost", paths["cost"], "--a", paths["a"], "--b", paths["b"]]
        for p in (2, 3):
            self.run_case("issue 301x257 P=%d auto" % p, p, files,
                          ["--eps", "0.05", "--tau", "1", "--precision", "fp64", "--tol", "1e-12", "--solver", "auto",
                           "--max-iter", "20000", "--mpi-wait", "sleep"], cost, expected)


    def small_eps_matrix_free_case(self):
        """--solver mapreduce on 2 x 6 points, eps 1e-4, costs in [0, 1]: stopped not-finite at iteration 1."""
        directory = os.path.join(self.work, "small-eps-mapreduce")
        os.makedirs(directory, exist_ok=True)
        rng = np.random.default_rng(1)
        x = rng.random((2, 3))
        y = rng.random((6, 3))
        sq = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
        cost = sq / sq.max()  # --cost-scale's default: 1 / max |x - y|^2
        a = np.full(2, 0.5)
        b = np.full(6, 1.0 / 6)
        files = []
        for name, array in (("x", x), ("y", y), ("a", a), ("b", b)):
            np.save(os.path.join(directory, name + ".npy"), array)
            files += ["--" + name, os.path.join(directory, name + ".npy")]
        expected = oracle_plan(cost, a, b, 1e-4, 1.0, 1.0)
        for p in (1, 2, 3):
            self.run_case("small-eps 2x6 P=%d mapreduce ti auto" % p, p, files,
                          ["--eps", "1e-4", "--tau", "1", "--precision", "fp64", "--tol", "1e-11", "--solver",
                           "mapreduce", "--mode", "ti", "--accel", "auto", "--max-iter", "20000", "--mpi-wait", "sleep",
                           "--threads", "1"],
                          cost, expected, must_converge=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot-mpi", required=True, help="path of uot-mpi, or 'none' when it is not built")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--verbose", action="store_true", help="print every case's outcome")
    args = parser.parse_args()
    if args.uot_mpi == "none":
        print("SKIP: uot-mpi is not built (UOT_MPI=OFF, or CMake found no MPI)")
        return 77
    work = tempfile.mkdtemp(prefix="uot-mpi-conformance-")
    suite = Suite(args, work)
    try:
        suite.grid()
        suite.issue_case()
        suite.small_eps_matrix_free_case()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d cases: %d converged to the oracle, %d ended non-converged with a non-zero exit" %
          (suite.cases, suite.outcomes["converged"], suite.outcomes["refused"]))
    if suite.failures:
        print("%d case(s) failed" % suite.failures)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
