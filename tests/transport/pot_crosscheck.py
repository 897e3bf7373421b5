#!/usr/bin/python3
"""Cross-check of every CPU solver variant, through `uot solve`, against POT.

Run by CTest with Debian's /usr/bin/python3 (python3-numpy, python3-pot 0.8.2):

    /usr/bin/python3 pot_crosscheck.py --uot path/to/uot

Random problems are written to a temporary directory as .npy files, solved
with `uot solve --fixed-iterations --max-iter K` (a fixed number of iterations) and the
plan is compared with

* POT 0.8.2 ot.sinkhorn_unbalanced (tau_a == tau_b finite). POT 0.8.2 starts
  from u = 1/M, v = 1/N, so the solves are warm-started there too
  (--warm-u/--warm-v): the iterates are then the same, step for step.
  The product reference measure R = a b^T goes through POT on the shifted cost
  C - eps log(a_i b_j) (exp(-C'/eps) = exp(-C/eps) a_i b_j).
* a float64 numpy reimplementation of the same iteration where POT 0.8.2 has
  no equivalent (tau_a != tau_b, tau = inf on one or both sides).
* for `--mode ti`, the translation-invariant iteration (Sejourne, Vialard, Peyre
  2022), which POT 0.8.2 lacks: a float64 numpy implementation in log form,
  written here from the paper (numpy_ti_plan), step for step; and, run to
  convergence, POT's plain sinkhorn_unbalanced plan (the same fixed point).

Tolerance: plan relative L1 distance <= 1e-9 in float64, <= 1e-4 in float32
(against the float64 reference). Small eps (1e-3, costs in [0, 1]) is checked
against POT's sinkhorn_stabilized_unbalanced, run to convergence.

POT 0.8.2 note: with 1-D weights its sinkhorn_stabilized_unbalanced absorbs
only the scalar max(u) / max(v) and then resets v to ones, which loses v and
gives plans off by orders of magnitude at eps = 1e-3. Given b as an (N, 1)
column ("n_hists = 1"), it absorbs log u, log v row by row, as intended; the
plan is then rebuilt from the logu / logv it returns. That is what is used here.

Point clouds (`uot solve --x X.npy --y Y.npy`, C_ij = s |x_i - y_j|^2): the
matrix-free `mapreduce` variant and `fused` (which builds K from the clouds)
against POT on the cost matrix numpy computes from the same clouds, with the
default scale s = 1 / max C and an explicit --cost-scale; at eps = 1e-3 against
POT's stabilized solver run to convergence.

Exit status 0 when every case passes; 1 otherwise (also when POT is missing).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import numpy as np
    import ot
    import ot.unbalanced
except ImportError as error:  # never skip silently: the cross-check is the point
    print("FAIL: the POT cross-check needs numpy and POT (Python Optimal Transport) for "
          "/usr/bin/python3: %s. Install them with: apt-get install python3-numpy python3-pot "
          "(./test.sh and scripts/setup.sh install them)." % error)
    sys.exit(1)

VARIANTS = ["reference", "pot-style", "mapuot", "fused", "log"]
SIZES = [(1, 1), (1, 37), (37, 1), (33, 65), (200, 300), (257, 129)]
ITERATIONS = 50
EPS = 0.05
TOL = {"fp64": 1e-9, "fp32": 1e-4}

# (label, tau_a, tau_b, reference measure)
PARAMETERS = [
    ("unbalanced", 1.0, 1.0, "ones"),
    ("product", 0.5, 0.5, "product"),
    ("balanced", np.inf, np.inf, "ones"),
    ("semi", 0.7, np.inf, "ones"),
    ("asymmetric", 2.0, 0.3, "product"),
]

failures = []
runs = 0


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def random_problem(rng, m, n, balanced):
    cost = rng.random((m, n))
    a = rng.random(m) + 0.5
    b = rng.random(n) + 0.5
    a /= a.sum()
    b *= (1.0 if balanced else 1.5) / b.sum()
    return cost, a, b


def save_problem(directory, cost, a, b, cost_dtype=np.float64):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, "C.npy"), cost.astype(cost_dtype))
    np.save(os.path.join(directory, "a.npy"), a)
    np.save(os.path.join(directory, "b.npy"), b)
    m, n = cost.shape
    np.save(os.path.join(directory, "u0.npy"), np.full(m, 1.0 / m))
    np.save(os.path.join(directory, "v0.npy"), np.full(n, 1.0 / n))


def run_solve(uot, directory, out, flags, env=None, warm=True):
    global runs
    runs += 1
    cmd = [uot, "solve", "--cost", os.path.join(directory, "C.npy"), "--a", os.path.join(directory, "a.npy"),
           "--b", os.path.join(directory, "b.npy"), "--out-dir", out, "--plan", "--json"]
    if warm:
        cmd += ["--warm-u", os.path.join(directory, "u0.npy"), "--warm-v", os.path.join(directory, "v0.npy")]
    cmd += flags
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return None, None, "exit %d: %s" % (proc.returncode, proc.stderr.strip())
    summary = json.loads(proc.stdout)
    return summary, np.load(os.path.join(out, "plan.npy")), None


def numpy_plan(cost, a, b, eps, tau_a, tau_b, reference, iterations):
    """The scaling iteration in plain float64 numpy, from u = 1/M, v = 1/N."""
    m, n = cost.shape
    kernel = np.exp(-cost / eps)
    if reference == "product":
        kernel = kernel * np.outer(a, b)
    fa = 1.0 if np.isinf(tau_a) else tau_a / (tau_a + eps)
    fb = 1.0 if np.isinf(tau_b) else tau_b / (tau_b + eps)
    u = np.full(m, 1.0 / m)
    v = np.full(n, 1.0 / n)
    for _ in range(iterations):
        u = (a / kernel.dot(v)) ** fa
        v = (b / kernel.T.dot(u)) ** fb
    return u[:, None] * kernel * v[None, :]


def logsumexp(x, axis=None, weights=None):
    x = np.asarray(x, dtype=np.float64)
    if weights is not None:
        x = x + np.log(weights)
    top = np.max(x, axis=axis, keepdims=True)
    total = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return np.squeeze(total, axis=axis) if axis is not None else float(total.squeeze())


def numpy_ti_plan(cost, a, b, eps, tau_a, tau_b, reference, iterations):
    """Translation-invariant UOT Sinkhorn in float64 log form, from u = 1/M, v = 1/N.

    Each half-step is the plain one followed by the translation that maximises
    the dual over (f + lambda, g - lambda): with r = eps / tau and
    A(F) = sum a exp(-r_a F), B(G) = sum b exp(-r_b G),
      F = F^ + tau_b / (tau_a + tau_b + eps) (log B(G) - log A(F^)),
      G = G^ + tau_a / (tau_a + tau_b + eps) (log A(F) - log B(G^)).
    """
    m, n = cost.shape
    log_k = -cost / eps
    if reference == "product":
        log_k = log_k + np.log(np.outer(a, b))
    fa = 1.0 if np.isinf(tau_a) else tau_a / (tau_a + eps)
    fb = 1.0 if np.isinf(tau_b) else tau_b / (tau_b + eps)
    ra = 0.0 if np.isinf(tau_a) else eps / tau_a
    rb = 0.0 if np.isinf(tau_b) else eps / tau_b
    if np.isinf(tau_a) and np.isinf(tau_b):
        cs = ct = 0.0
    elif np.isinf(tau_a):
        cs, ct = 0.0, 1.0
    elif np.isinf(tau_b):
        cs, ct = 1.0, 0.0
    else:
        cs, ct = tau_b / (tau_a + tau_b + eps), tau_a / (tau_a + tau_b + eps)
    big_f = np.full(m, -np.log(m))
    big_g = np.full(n, -np.log(n))
    for _ in range(iterations):
        f_hat = fa * (np.log(a) - logsumexp(log_k + big_g[None, :], axis=1))
        big_f = f_hat + cs * (logsumexp(-rb * big_g, weights=b) - logsumexp(-ra * f_hat, weights=a))
        g_hat = fb * (np.log(b) - logsumexp(log_k + big_f[:, None], axis=0))
        big_g = g_hat + ct * (logsumexp(-ra * big_f, weights=a) - logsumexp(-rb * g_hat, weights=b))
    return np.exp(big_f[:, None] + log_k + big_g[None, :])


def pot_plan(cost, a, b, eps, tau, reference, iterations):
    shifted = cost - eps * np.log(np.outer(a, b)) if reference == "product" else cost
    return ot.sinkhorn_unbalanced(a, b, shifted, eps, tau, numItermax=iterations, stopThr=0.0)


def rel_l1(plan, expected):
    return float(np.abs(plan - expected).sum() / np.abs(expected).sum())


def check_summary(summary, label, iterations):
    check(summary["iterations"] == iterations, "%s: %s iterations, expected %d" % (label, summary["iterations"],
                                                                                 iterations))
    check(summary["status"] == "ok", "%s: status %s (%s)" % (label, summary["status"], summary["message"]))
    for key in ("solver", "error", "mass", "marginal_error_a", "marginal_error_b", "objective", "ms_per_iter",
                "converged", "cancelled"):
        check(key in summary, "%s: JSON summary lacks %s" % (label, key))


def variant_cases():
    """(variant, precision) of every CPU variant; the reference runs in float64 only."""
    return [(v, p) for v in VARIANTS for p in ("fp64", "fp32") if not (v == "reference" and p == "fp32")]


def tau_flags_of(tau_a, tau_b):
    return ["--tau-a", "inf" if np.isinf(tau_a) else repr(tau_a), "--tau-b", "inf" if np.isinf(tau_b) else repr(tau_b)]


def solve_and_compare(uot, directory, what, flags, expected, precision):
    """Runs `uot solve` with flags (exactly ITERATIONS iterations) and checks its plan and summary
    against `expected`; returns the summary, or None when the solve failed."""
    summary, plan, error = run_solve(uot, directory, os.path.join(directory, "out"), flags)
    if error:
        check(False, "%s: %s" % (what, error))
        return None
    distance = rel_l1(plan, expected)
    check(distance <= TOL[precision], "%s: plan rel L1 %.3g > %g" % (what, distance, TOL[precision]))
    check(np.isfinite(plan).all(), "%s: plan not finite" % what)
    check_summary(summary, what, ITERATIONS)
    return summary


def fixed_iteration_cases(uot, workdir, rng):
    case = 0
    for (m, n) in SIZES:
        for (label, tau_a, tau_b, reference) in PARAMETERS:
            balanced = np.isinf(tau_a) and np.isinf(tau_b)
            cost, a, b = random_problem(rng, m, n, balanced)
            directory = os.path.join(workdir, "p%d" % case)
            # Half of the problems hand the cost over as float32 (.npy '<f4'): the
            # reference then uses the same rounded values.
            cost_dtype = np.float32 if case % 2 else np.float64
            cost = cost.astype(cost_dtype).astype(np.float64)
            save_problem(directory, cost, a, b, cost_dtype)
            if tau_a == tau_b and not np.isinf(tau_a):
                expected, source = pot_plan(cost, a, b, EPS, tau_a, reference, ITERATIONS), "POT"
            else:
                expected, source = numpy_plan(cost, a, b, EPS, tau_a, tau_b, reference, ITERATIONS), "numpy"
            for variant, precision in variant_cases():
                threads = 1 + (case + len(variant) + len(precision)) % 2
                what = "%dx%d %s %s %s threads=%d vs %s" % (m, n, label, variant, precision, threads, source)
                flags = ["--solver", variant, "--precision", precision, "--threads", str(threads), "--eps",
                         repr(EPS), "--reference-measure", reference, "--fixed-iterations", "--max-iter",
                         str(ITERATIONS), "--check-every", "7"] + tau_flags_of(tau_a, tau_b)
                summary = solve_and_compare(uot, directory, what, flags, expected, precision)
                if summary:
                    check(abs(summary["mass"] - expected.sum()) <= 10 * TOL[precision] * expected.sum(),
                          "%s: mass %g vs %g" % (what, summary["mass"], expected.sum()))
            case += 1


def translation_invariant_cases(uot, workdir, rng):
    """`--mode ti`: every variant step for step against numpy_ti_plan, and to convergence
    against POT's plain plan (the same UOT solution) in fewer iterations."""
    parameters = [("unbalanced", 1.0, 1.0, "ones"), ("semi-b", 0.7, np.inf, "ones"),
                  ("semi-a", np.inf, 0.4, "ones"), ("asymmetric", 2.0, 0.3, "product")]
    for (m, n) in [(37, 1), (33, 65), (200, 300)]:
        for (label, tau_a, tau_b, reference) in parameters:
            cost, a, b = random_problem(rng, m, n, False)
            directory = os.path.join(workdir, "ti%dx%d%s" % (m, n, label))
            save_problem(directory, cost, a, b)
            expected = numpy_ti_plan(cost, a, b, EPS, tau_a, tau_b, reference, ITERATIONS)
            for variant, precision in variant_cases():
                what = "ti %dx%d %s %s %s vs numpy TI" % (m, n, label, variant, precision)
                flags = ["--solver", variant, "--mode", "ti", "--precision", precision, "--threads", "2",
                         "--eps", repr(EPS), "--reference-measure", reference, "--fixed-iterations", "--max-iter",
                         str(ITERATIONS), "--check-every", "7"] + tau_flags_of(tau_a, tau_b)
                summary = solve_and_compare(uot, directory, what, flags, expected, precision)
                if summary:
                    check(summary.get("mode") == "translation-invariant", "%s: mode %s" % (what, summary.get("mode")))
                    sweeps = 2 if variant in ("reference", "pot-style") else 1
                    check(summary.get("passes", 0) >= sweeps * ITERATIONS,
                          "%s: passes %s < %d" % (what, summary.get("passes"), sweeps * ITERATIONS))
    # To convergence: the plain fixed point (POT), reached in fewer iterations.
    cost, a, b = random_problem(rng, 60, 80, False)
    directory = os.path.join(workdir, "ticonverge")
    save_problem(directory, cost, a, b)
    eps, tau = 0.02, 5.0
    plan, log = ot.sinkhorn_unbalanced(a, b, cost, eps, tau, numItermax=200000, stopThr=1e-13, log=True)
    for variant in ("reference", "pot-style", "mapuot", "fused", "log"):
        counts = {}
        for mode in ("plain", "ti"):
            summary, ours, error = run_solve(uot, directory, os.path.join(directory, "out"),
                                             ["--solver", variant, "--mode", mode, "--precision", "fp64",
                                              "--eps", repr(eps), "--tau", repr(tau), "--tol", "1e-12",
                                              "--max-iter", "200000", "--check-every", "5"], warm=False)
            what = "converging %s --mode %s" % (variant, mode)
            if error:
                check(False, "%s: %s" % (what, error))
                continue
            check(summary["converged"], "%s: not converged" % what)
            check(rel_l1(ours, plan) <= 1e-9, "%s: plan rel L1 vs POT %.3g" % (what, rel_l1(ours, plan)))
            counts[mode] = summary["iterations"]
        if len(counts) == 2:
            check(counts["ti"] * 2 < counts["plain"], "%s: ti took %d iterations, plain %d (expected < half)" %
                  (variant, counts["ti"], counts["plain"]))


def simd_path_cases(uot, workdir, rng):
    """The AVX2 and portable kernels, forced through UOT_SIMD (the CPU's best path ran above),
    with and without the interleaved row kernels (UOT_ROW_PIPELINE)."""
    for (m, n) in [(33, 65), (257, 129)]:
        cost, a, b = random_problem(rng, m, n, False)
        directory = os.path.join(workdir, "simd%dx%d" % (m, n))
        save_problem(directory, cost, a, b)
        expected = pot_plan(cost, a, b, EPS, 1.0, "ones", ITERATIONS)
        for path in ("generic", "avx2"):
            # The interleaved row kernels (default on Intel only) are exercised on one path.
            env = dict(os.environ, UOT_SIMD=path, UOT_ROW_PIPELINE="on" if path == "avx2" else "off")
            for variant in ("pot-style", "mapuot", "fused", "log"):
                for precision in ("fp64", "fp32"):
                    what = "%dx%d UOT_SIMD=%s %s %s" % (m, n, path, variant, precision)
                    flags = ["--solver", variant, "--precision", precision, "--threads", "2", "--fixed-iterations",
                             "--max-iter", str(ITERATIONS)]
                    summary, plan, error = run_solve(uot, directory, os.path.join(directory, "out"), flags, env)
                    if error:
                        check(False, "%s: %s" % (what, error))
                        continue
                    distance = rel_l1(plan, expected)
                    check(distance <= TOL[precision], "%s: plan rel L1 %.3g" % (what, distance))


def convergence_case(uot, workdir, rng):
    """With POT's stopping rule (--stop pot) checked every iteration, the same iteration count as POT."""
    cost, a, b = random_problem(rng, 40, 30, False)
    directory = os.path.join(workdir, "converge")
    save_problem(directory, cost, a, b)
    plan, log = ot.sinkhorn_unbalanced(a, b, cost, EPS, 1.0, numItermax=10000, stopThr=1e-9, log=True)
    pot_iterations = len(log["err"])
    for variant in ("pot-style", "mapuot", "fused", "log"):
        summary, ours, error = run_solve(uot, directory, os.path.join(directory, "out"),
                                         ["--solver", variant, "--precision", "fp64", "--tol", "1e-9",
                                          "--max-iter", "10000", "--check-every", "1", "--stop", "pot"])
        what = "converging %s" % variant
        if error:
            check(False, "%s: %s" % (what, error))
            continue
        check(summary["converged"], "%s: not converged" % what)
        check(summary["iterations"] == pot_iterations, "%s: %d iterations, POT %d" % (what, summary["iterations"],
                                                                                    pot_iterations))
        check(rel_l1(ours, plan) <= 1e-9, "%s: plan rel L1 %.3g" % (what, rel_l1(ours, plan)))


def pot_stabilized_plan(cost, a, b, eps, tau):
    # b as an (N, 1) column: see the module docstring (POT 0.8.2's 1-D absorption bug).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, log = ot.unbalanced.sinkhorn_stabilized_unbalanced(a, b[:, None], cost, eps, tau, numItermax=20000,
                                                              stopThr=1e-14, log=True)
    return np.exp(log["logu"][:, 0][:, None] + log["logv"][:, 0][None, :] - cost / eps)


def small_eps_cases(uot, workdir, rng):
    eps, tau = 1e-3, 0.05
    m, n = 60, 50
    cost, a, b = random_problem(rng, m, n, False)
    # Second problem: some rows far from every column, so that exp(-C/eps)
    # underflows to zero even in float64 and `fused` must hand over to `log`.
    far = cost.copy()
    far[:5, :] = 0.8 + 0.2 * far[:5, :]
    for name, problem in (("costs in [0,1]", cost), ("rows of K zero in fp64", far)):
        directory = os.path.join(workdir, "smalleps-%d" % int(problem is far))
        save_problem(directory, problem, a, b)
        expected = pot_stabilized_plan(problem, a, b, eps, tau)
        check(np.isfinite(expected).all(), "%s: POT's stabilized plan is not finite" % name)
        runs_to_check = [("log", ["--solver", "log"], "ok")]
        if problem is far:
            runs_to_check.append(("auto", [], "switched-to-log-domain"))
            runs_to_check.append(("forced fused", ["--solver", "fused", "--allow-unconverged"], "underflow"))
        for label, solver_flags, status in runs_to_check:
            for precision in ("fp64",):
                what = "eps=1e-3 %s: %s %s" % (name, label, precision)
                flags = solver_flags + ["--precision", precision, "--eps", repr(eps), "--tau", repr(tau), "--tol",
                                        "1e-13", "--max-iter", "20000", "--threads", "2"]
                summary, plan, error = run_solve(uot, directory, os.path.join(directory, "out"), flags,
                                                 warm=False)
                if error:
                    check(False, "%s: %s" % (what, error))
                    continue
                logu = np.load(os.path.join(directory, "out", "logu.npy"))
                logv = np.load(os.path.join(directory, "out", "logv.npy"))
                check(np.isfinite(plan).all() and np.isfinite(logu).all() and np.isfinite(logv).all(),
                      "%s: NaN or Inf in the output" % what)
                check(summary["status"] == status, "%s: status %s, expected %s" % (what, summary["status"], status))
                if status == "underflow":
                    check("log" in summary["message"], "%s: message does not point to --solver log" % what)
                    continue
                check(summary["converged"], "%s: did not converge" % what)
                distance = rel_l1(plan, expected)
                check(distance <= 1e-8, "%s: plan rel L1 vs POT stabilized %.3g" % (what, distance))


def point_cloud_cases(uot, workdir, rng):
    """`uot solve --x --y`: mapreduce (matrix-free) and fused on the clouds vs POT on numpy's cost matrix."""
    global runs
    for case, (m, n, d, explicit_scale) in enumerate([(1, 7, 3, False), (7, 1, 3, True), (37, 53, 3, False),
                                                      (64, 48, 5, True), (30, 40, 1, False), (20, 25, 8, False)]):
        x = rng.random((m, d))
        y = rng.random((n, d))
        if case % 2:  # handed over as float32 (.npy '<f4'): the reference uses the same rounded points
            y = y.astype(np.float32).astype(np.float64)
        sq = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
        scale = 0.37 if explicit_scale else 1.0 / sq.max()
        cost = scale * sq
        a = rng.random(m) + 0.5
        b = rng.random(n) + 0.5
        a /= a.sum()
        b *= 1.5 / b.sum()
        directory = os.path.join(workdir, "cloud%d" % case)
        save_problem(directory, cost, a, b)
        np.save(os.path.join(directory, "X.npy"), x)
        np.save(os.path.join(directory, "Y.npy"), y.astype(np.float32) if case % 2 else y)
        tau = 1.0
        expected = pot_plan(cost, a, b, EPS, tau, "ones", ITERATIONS)
        for variant, precision in (("mapreduce", "fp64"), ("mapreduce", "fp32"), ("fused", "fp64")):
            what = "clouds %dx%d d=%d %s %s vs POT" % (m, n, d, variant, precision)
            cmd = [uot, "solve", "--x", os.path.join(directory, "X.npy"), "--y", os.path.join(directory, "Y.npy"),
                   "--a", os.path.join(directory, "a.npy"), "--b", os.path.join(directory, "b.npy"),
                   "--out-dir", os.path.join(directory, "out"), "--plan", "--json",
                   "--warm-u", os.path.join(directory, "u0.npy"), "--warm-v", os.path.join(directory, "v0.npy"),
                   "--solver", variant, "--precision", precision, "--eps", repr(EPS), "--tau", repr(tau),
                   "--fixed-iterations", "--max-iter", str(ITERATIONS), "--threads", "2"]
            if explicit_scale:
                cmd += ["--cost-scale", repr(scale)]
            runs += 1
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                check(False, "%s: exit %d: %s" % (what, proc.returncode, proc.stderr.strip()))
                continue
            summary = json.loads(proc.stdout)
            plan = np.load(os.path.join(directory, "out", "plan.npy"))
            distance = rel_l1(plan, expected)
            check(distance <= TOL[precision], "%s: plan rel L1 %.3g > %g" % (what, distance, TOL[precision]))
            check(summary["plan_written"] and summary["cost"] == "point-clouds" and summary["dim"] == d,
                  "%s: JSON summary does not describe the clouds" % what)
            check(abs(summary["cost_scale"] - scale) <= 1e-12 * scale,
                  "%s: cost scale %g, expected %g" % (what, summary["cost_scale"], scale))
            check_summary(summary, what, ITERATIONS)
    # Small eps: never NaN, and the converged plan of POT's stabilized solver.
    x = rng.random((60, 3))
    y = rng.random((50, 3))
    sq = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    cost = sq / sq.max()
    a = rng.random(60) + 0.5
    b = rng.random(50) + 0.5
    a /= a.sum()
    b *= 1.5 / b.sum()
    directory = os.path.join(workdir, "cloud-small-eps")
    save_problem(directory, cost, a, b)
    np.save(os.path.join(directory, "X.npy"), x)
    np.save(os.path.join(directory, "Y.npy"), y)
    eps, tau = 1e-3, 0.05
    expected = pot_stabilized_plan(cost, a, b, eps, tau)
    what = "clouds eps=1e-3 mapreduce fp64 vs POT stabilized"
    runs += 1
    proc = subprocess.run([uot, "solve", "--x", os.path.join(directory, "X.npy"), "--y",
                           os.path.join(directory, "Y.npy"), "--a", os.path.join(directory, "a.npy"), "--b",
                           os.path.join(directory, "b.npy"), "--out-dir", os.path.join(directory, "out"), "--plan",
                           "--json", "--solver", "mapreduce", "--precision", "fp64", "--eps", repr(eps), "--tau",
                           repr(tau), "--tol", "1e-13", "--max-iter", "20000", "--threads", "2"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        check(False, "%s: exit %d: %s" % (what, proc.returncode, proc.stderr.strip()))
        return
    summary = json.loads(proc.stdout)
    plan = np.load(os.path.join(directory, "out", "plan.npy"))
    check(np.isfinite(plan).all(), "%s: NaN or Inf in the plan" % what)
    check(summary["converged"], "%s: did not converge" % what)
    distance = rel_l1(plan, expected)
    check(distance <= 1e-8, "%s: plan rel L1 %.3g" % (what, distance))


def error_cases(uot, workdir, rng):
    """Bad input gives a message naming the problem and a non-zero exit, never NaN output."""
    cost, a, b = random_problem(rng, 4, 3, False)
    directory = os.path.join(workdir, "bad")
    save_problem(directory, cost, a, b)
    base = [uot, "solve", "--a", os.path.join(directory, "a.npy"), "--b", os.path.join(directory, "b.npy"),
            "--out-dir", os.path.join(directory, "out")]

    def expect_failure(args, fragment, what):
        proc = subprocess.run(args, capture_output=True, text=True)
        check(proc.returncode != 0, "%s: exit status 0" % what)
        check(fragment in proc.stderr, "%s: message %r lacks %r" % (what, proc.stderr.strip(), fragment))

    missing = os.path.join(directory, "missing.npy")
    expect_failure(base + ["--cost", missing], "missing.npy", "missing cost file")
    negative = cost.copy()
    negative[2, 1] = -1.0
    np.save(os.path.join(directory, "neg.npy"), negative)
    expect_failure(base + ["--cost", os.path.join(directory, "neg.npy")], "(2, 1)", "negative cost")
    np.save(os.path.join(directory, "fortran.npy"), np.asfortranarray(cost))
    expect_failure(base + ["--cost", os.path.join(directory, "fortran.npy")], "Fortran", "Fortran-order cost")
    np.save(os.path.join(directory, "int.npy"), (cost * 10).astype(np.int64))
    expect_failure(base + ["--cost", os.path.join(directory, "int.npy")], "dtype", "integer cost")
    with open(os.path.join(directory, "C.npy"), "rb") as f:
        data = f.read()
    with open(os.path.join(directory, "trunc.npy"), "wb") as f:
        f.write(data[:-5])
    expect_failure(base + ["--cost", os.path.join(directory, "trunc.npy")], "truncated", "truncated cost")
    expect_failure(base + ["--cost", os.path.join(directory, "C.npy"), "--eps", "0"], "--eps", "eps = 0")
    # Bad stopping and schedule parameters: a usage error naming the option, never a silent run.
    for flags, needle, what in ((["--tol", "0"], "--tol", "tol = 0"), (["--tol", "-1e-6"], "--tol", "negative tol"),
                                (["--tol", "nan"], "--tol", "tol NaN"), (["--max-iter", "0"], "--max-iter", "max-iter 0"),
                                (["--eps", "nan"], "--eps", "eps NaN"),
                                (["--eps-schedule", "0.001,0.5"], "--eps-schedule", "schedule below the target"),
                                (["--eps-schedule", "1,1.5"], "--eps-schedule", "schedule that grows")):
        expect_failure(base + ["--cost", os.path.join(directory, "C.npy")] + flags, needle, what)
    # Exit codes of a solve that did not reach a solution (outputs are written either way).
    far = np.full((4, 3), 0.9)
    np.save(os.path.join(directory, "far.npy"), far)
    for args, code, what in (
            (["--cost", os.path.join(directory, "far.npy"), "--solver", "fused", "--eps", "1e-3"], 5, "forced underflow"),
            (["--cost", os.path.join(directory, "C.npy"), "--max-iter", "3", "--tol", "1e-12"], 6, "iteration cap"),
            (["--cost", os.path.join(directory, "C.npy"), "--max-iter", "3", "--tol", "1e-12", "--allow-unconverged"],
             0, "iteration cap allowed"),
            (["--cost", os.path.join(directory, "C.npy"), "--max-iter", "3", "--fixed-iterations"], 0, "exact iteration count")):
        shutil.rmtree(os.path.join(directory, "out"), ignore_errors=True)
        proc = subprocess.run(base + args, capture_output=True, text=True)
        check(proc.returncode == code, "%s: exit %d, expected %d (%s)" % (what, proc.returncode, code,
                                                                         proc.stderr.strip()))
        check(os.path.exists(os.path.join(directory, "out", "u.npy")), "%s: u.npy not written" % what)
        if code:
            check("--allow-unconverged" in proc.stderr, "%s: message does not say how to accept it" % what)
    np.save(os.path.join(directory, "short.npy"), cost[:, :2])
    expect_failure(base + ["--cost", os.path.join(directory, "short.npy")], "size mismatch", "size mismatch")


def accelerated_cases(uot, workdir, rng):
    """Over-relaxation (--accel relax|auto, plain and TI) and eps-scaling reach the converged
    plan of POT's plain sinkhorn_unbalanced (equal taus) or the numpy plain iteration
    (unequal or infinite taus) run to convergence, to 1e-9 in float64."""
    for (label, tau_a, tau_b) in (("tau 1", 1.0, 1.0), ("tau 0.5/2", 0.5, 2.0), ("semi", np.inf, 0.7)):
        cost, a, b = random_problem(rng, 45, 35, False)
        directory = os.path.join(workdir, "accel-" + label.replace(" ", "").replace("/", "-"))
        save_problem(directory, cost, a, b)
        if tau_a == tau_b:
            expected = ot.sinkhorn_unbalanced(a, b, cost, EPS, tau_a, numItermax=100000, stopThr=1e-16)
            source = "POT"
        else:
            expected, source = numpy_plan(cost, a, b, EPS, tau_a, tau_b, "ones", 20000), "numpy"
        for variant in ("pot-style", "mapuot", "fused", "log"):
            for accel, mode, schedule in (("relax", "plain", None), ("auto", "ti", None), ("auto", "ti", "0.8,0.5"),
                                          ("relax", "ti", "0.4,0.25")):
                what = "%s %s --accel %s --mode %s --eps-schedule %s vs converged %s" % (
                    label, variant, accel, mode, schedule or "none", source)
                # --tol 1e-10 with a schedule: the relaxed TI iteration after an eps schedule from
                # a warm start can plateau near 1e-11 on the row violation (docs/TIME_TO_SOLUTION.md).
                flags = ["--solver", variant, "--precision", "fp64", "--accel", accel, "--mode", mode, "--eps",
                         repr(EPS), "--tol", "1e-12" if schedule is None else "1e-10", "--max-iter",
                         "100000"] + tau_flags_of(tau_a, tau_b)
                if schedule:
                    flags += ["--eps-schedule", schedule]
                summary, plan, error = run_solve(uot, directory, os.path.join(directory, "out"), flags)
                if error:
                    check(False, "%s: %s" % (what, error))
                    continue
                distance = rel_l1(plan, expected)
                check(distance <= TOL["fp64"], "%s: plan rel L1 %.3g" % (what, distance))
                check(summary["converged"] and summary["acceleration"] == accel, "%s: summary %r" % (what, summary))
                stages = summary["stages"]
                check((schedule is None and not stages) or
                      (schedule is not None and len(stages) >= 2 and stages[-1]["eps"] == EPS),
                      "%s: stages %r" % (what, stages))
    # Bad schedules and omegas: a usage error naming the fault.
    directory = os.path.join(workdir, "accel-tau1")
    for flags, fragment in ((["--eps-schedule", "nan,0.5"], "finite number > 0"),
                            (["--eps-schedule", "1,1"], "must be in (0, 1)"),
                            (["--eps-schedule", "0.01,0.5"], "below the target eps"),
                            (["--eps-schedule", "1;0.5"], "is not a number"),
                            (["--accel", "relax", "--omega", "2"], "--omega"),
                            (["--accel", "fast"], "acceleration takes one of none, relax, auto"),
                            (["--solver", "reference", "--accel", "relax"], "has no over-relaxation")):
        summary, plan, error = run_solve(uot, directory, os.path.join(directory, "out"), flags)
        check(error is not None and fragment in error, "%s: %r lacks %r" % (" ".join(flags), error, fragment))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uot", required=True, help="path to the uot executable")
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args()
    print("POT %s, numpy %s, seed %d" % (ot.__version__, np.__version__, args.seed))
    rng = np.random.default_rng(args.seed)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="uot-pot-") as workdir:
        fixed_iteration_cases(args.uot, workdir, rng)
        translation_invariant_cases(args.uot, workdir, rng)
        simd_path_cases(args.uot, workdir, rng)
        convergence_case(args.uot, workdir, rng)
        small_eps_cases(args.uot, workdir, rng)
        point_cloud_cases(args.uot, workdir, rng)
        error_cases(args.uot, workdir, rng)
        accelerated_cases(args.uot, workdir, rng)
    print("%d solves in %.1f s, %d failures" % (runs, time.time() - start, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
