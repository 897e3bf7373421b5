#!/usr/bin/python3
"""The stopping test at a small eps, through the CLI: `uot solve` on 150 x 90 points
in 3-D (costs |x - y|^2, --cost-scale 1), eps 1e-4, tau 1, float64, --tol 1e-12.

Each solver either ends "converged" (exit 0) with a plan within 1e-9 (relative L1) of
the float64 oracle (newton_oracle.py, Newton's method on the dual), or ends with
converged = false and a non-zero exit code. Before the stopping test was computed on
the log-potentials, `--solver log` and `--solver mapreduce` stopped after a few
hundred iterations "converged" with error 0 (the change of the exponentiated
scalings, which had underflowed to 0) and a plan 10 % and more from the oracle.
`--solver auto` must also converge within 10,000 passes: its automatic eps-scaling
(eps below 1/200 of the cost range) takes 5,764; without it, 49,187.

Usage: small_eps_stop_test.py --uot path/to/uot [--gpu]. Exit 0 when every case
passes. --gpu runs the GPU variants instead (gpu-log, gpu-mapreduce, auto on the
GPU): the same rule on the GPU machine, where this is run by hand (no CTest there).
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

EPS = 1e-4
# (solver, precision, --max-iter, plan tolerance when converged, passes allowed: 0 = the
# solver may stop unconverged; else it must converge within that many passes)
CASES = [
    ("log", "fp64", 1000, 1e-9, 0),
    ("mapreduce", "fp64", 3000, 1e-9, 0),
    ("mapreduce", "fp32", 3000, 1e-4, 0),
    # auto's eps-scaling (eps < cost range / 200): 5,764 passes; 49,187 without it.
    ("auto", "fp64", 60000, 1e-9, 10000),
]
GPU_CASES = [
    ("gpu-log", "fp64", 3000, 1e-9, 0),
    ("gpu-log", "fp32", 3000, 1e-4, 0),
    ("gpu-mapreduce", "fp32", 3000, 1e-4, 0),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot", required=True)
    parser.add_argument("--gpu", action="store_true", help="the GPU variants (needs a GPU)")
    args = parser.parse_args()
    cases = GPU_CASES if args.gpu else CASES
    rng = np.random.default_rng(24)
    x = rng.random((150, 3))
    y = rng.random((90, 3))
    a = np.full(150, 1.0 / 150)
    b = np.full(90, 1.2 / 90)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    expected = oracle_plan(cost, a, b, EPS, 1.0, 1.0)
    work = tempfile.mkdtemp(prefix="uot-small-eps-")
    failures = 0
    try:
        files = []
        for name, array in (("x", x), ("y", y), ("a", a), ("b", b)):
            path = os.path.join(work, name + ".npy")
            np.save(path, array)
            files += ["--" + name, path]
        for solver, precision, max_iter, tolerance, max_passes in cases:
            out = os.path.join(work, solver + precision)
            cmd = [args.uot, "solve"] + files + ["--cost-scale", "1", "--eps", str(EPS), "--tau", "1", "--tol",
                                                 "1e-12", "--precision", precision, "--max-iter", str(max_iter),
                                                 "--solver", solver, "--threads", "2", "--out-dir", out, "--json"]
            if args.gpu:
                cmd += ["--device", "gpu"]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            what = "%s %s" % (solver, precision)
            try:
                summary = json.loads(done.stdout)
            except ValueError:
                print("FAIL: %s: no JSON summary (exit %d): %s" % (what, done.returncode, done.stderr))
                failures += 1
                continue
            logu = np.load(os.path.join(out, "logu.npy"))
            logv = np.load(os.path.join(out, "logv.npy"))
            plan = np.exp(logu[:, None] + logv[None, :] - cost / EPS)
            distance = float(np.abs(plan - expected).sum() / expected.sum())
            print("%s: exit %d, converged %s after %d iterations (error %.3g), plan %.3g from the oracle" %
                  (what, done.returncode, summary["converged"], summary["iterations"], summary["error"], distance))
            if summary["converged"] and done.returncode == 0:
                if not distance <= tolerance:
                    print("FAIL: %s says converged with a plan %.3g (> %g) from the oracle" %
                          (what, distance, tolerance))
                    failures += 1
            elif done.returncode == 0 or summary["converged"]:
                print("FAIL: %s: exit %d with converged = %s" % (what, done.returncode, summary["converged"]))
                failures += 1
            if max_passes and not (summary["converged"] and summary["passes"] <= max_passes):
                print("FAIL: %s: %d passes (converged %s), expected convergence within %d" %
                      (what, summary["passes"], summary["converged"], max_passes))
                failures += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d case(s) failed" % failures)
        return 1
    print("PASS: %d cases" % len(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
