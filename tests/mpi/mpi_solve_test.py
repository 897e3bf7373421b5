#!/usr/bin/python3
"""`uot-mpi solve` on 1, 2 and 3 MPI ranks against the single-process `uot solve`
and a float64 numpy implementation of the iteration.

Run by CTest with Debian's /usr/bin/python3 (python3-numpy):

    /usr/bin/python3 mpi_solve_test.py --uot path/to/uot --uot-mpi path/to/uot-mpi --mpirun mpirun

Checks, on problems written as .npy files to a temporary directory:

* every rank count P = 1, 2, 3 (`mpirun --oversubscribe`; the 2-core CI machine
  runs the ranks on shared cores) gives u and v equal to the single-process
  `uot solve --solver fused` result to 1e-12 relative L1 in float64 (1e-5 in
  float32), with the same iteration count, and the same mass, marginal errors
  and objective; this includes uneven row splits (7 rows on 2 and 3 ranks),
  fewer rows than ranks (2 rows on 3 ranks: rank 0 owns none), tau_b = inf,
  the product reference measure, a warm start, the translation-invariant mode and
  --mpi-wait sleep;
* `--solver auto` (translation-invariant + automatic over-relaxation) on P = 1, 2, 3,
  including a rank with no rows, gives the single-process `uot solve --solver auto`
  iterates to 1e-12 with the same iteration count, and so does the named solver with
  the same iteration or a fixed omega (--solver fused --mode ti --accel auto|relax);
* `--solver mapreduce` on point clouds (--x/--y), plain, TI + automatic or fixed
  over-relaxation, gives the single-process `uot solve --solver mapreduce` iterates to
  1e-12 on P = 1, 2, 3 and a rank without rows;
* the iteration loop makes at most 3 all-reduces per pass with over-relaxation and 2
  in the plain TI iteration (plus 2 per check): the row totals of each O(M + N)
  step travel packed (before: 10 and 4.6 per iteration);
* after a fixed number of iterations (--fixed-iterations) the scalings equal a float64
  numpy implementation of POT's sinkhorn_unbalanced iteration written here
  (numpy_plain_scalings) to 1e-10;
* `--random MxN` (each rank generates its rows) gives the same solution for
  every P;
* a NaN in the rows of one rank, an unreadable weight file and a missing cost
  file make every rank stop, within a timeout, with the same one message that
  names the place and a non-zero exit code, and no output is written;
* --threads above the documented maximum (1024) is a usage error (exit 2) on
  every rank, not a crash; a subnormal weight is refused with one message; an
  underflow's advice never names the log-domain solver uot-mpi does not have;
* a rank stopped with SIGSTOP (rank 1, then rank 0, then rank 1 under --solver auto,
  whose ranks wait mostly in the packed reductions; then rank 1 stopping itself at
  a --rebalance check and in the gathers after the solve, through the test hook
  UOT_MPI_TEST_STOP) does not hang the others: with --timeout 3 the job ends with
  exit 7 within 30 s, and a live rank names the rank that did not answer.

With --uot-mpi none (uot-mpi not built: UOT_MPI=OFF or no MPI found) it exits
77, which CTest reports as skipped. Exit 0 when every case passes, 1 otherwise.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as error:
    print("FAIL: needs numpy for /usr/bin/python3 (apt-get install python3-numpy): %s" % error)
    sys.exit(1)

import mpi_test_runner  # noqa: E402 (next to this script)

TIMEOUT_S = 120  # per mpirun: a hung rank fails the test instead of hanging it


class Runner(mpi_test_runner.Runner):
    def __init__(self, args, work):
        super().__init__(args, TIMEOUT_S)
        self.work = work

    def mpi_command(self, ranks):
        return super().mpi_command("solve", ranks)


def save(directory, name, array):
    path = os.path.join(directory, name)
    np.save(path, array)
    return path


def write_problem(directory, m, n, seed, dtype=np.float64):
    """C = squared distances of random points, a, b in [0.5, 1.5); returns (arrays, cli args)."""
    rng = np.random.default_rng(seed)
    x = rng.random((m, 2))
    y = rng.random((n, 2))
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    a = rng.random(m) + 0.5
    b = rng.random(n) + 0.5
    os.makedirs(directory, exist_ok=True)
    args = ["--cost", save(directory, "C.npy", cost.astype(dtype)),
            "--a", save(directory, "a.npy", a), "--b", save(directory, "b.npy", b)]
    return (cost.astype(dtype).astype(np.float64), a, b), args


def numpy_plain_scalings(cost, a, b, eps, tau_a, tau_b, iterations):
    """POT's sinkhorn_unbalanced iteration in float64, from u = v = 1."""
    k = np.exp(-cost / eps)
    fa = 1.0 if np.isinf(tau_a) else tau_a / (tau_a + eps)
    fb = 1.0 if np.isinf(tau_b) else tau_b / (tau_b + eps)
    u = np.ones(len(a))
    v = np.ones(len(b))
    for _ in range(iterations):
        u = (a / (k @ v)) ** fa
        v = (b / (k.T @ u)) ** fb
    return u, v


def rel_l1(x, y):
    return float(np.abs(x - y).sum() / max(np.abs(y).sum(), 1e-300))


def load_scalings(directory):
    return np.load(os.path.join(directory, "u.npy")), np.load(os.path.join(directory, "v.npy"))


def single_process(r, files, options, out):
    cmd = [r.uot, "solve"] + files + ["--out-dir", out, "--solver", "fused", "--json"] + options
    done = r.run(cmd)
    if not r.check(done is not None and done.returncode == 0,
                   "uot solve failed: %s\n%s" % (" ".join(cmd), done.stderr if done else "timeout")):
        return None
    return json.loads(done.stdout)


def distributed(r, ranks, args, out):
    cmd = r.mpi_command(ranks) + args + ["--out-dir", out, "--json"]
    done = r.run(cmd)
    if not r.check(done is not None and done.returncode == 0,
                   "uot-mpi failed on %d ranks: %s\n%s" % (ranks, " ".join(cmd),
                                                          (done.stdout + done.stderr) if done else "timeout")):
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not r.check(len(lines) == 1, "expected one JSON summary (rank 0 only), got:\n" + done.stdout):
        return None
    return json.loads(lines[0])


def compare_with_single_process(r, name, m, n, options, precision="fp64", ranks=(1, 2, 3), warm=False,
                                mpi_only=()):
    directory = os.path.join(r.work, name)
    dtype = np.float32 if precision == "fp32" else np.float64
    _, files = write_problem(directory, m, n, seed=m * 1000 + n, dtype=dtype)
    options = options + ["--precision", precision]
    if warm:
        rng = np.random.default_rng(7)
        options += ["--warm-u", save(directory, "wu.npy", rng.random(m) + 0.5),
                    "--warm-v", save(directory, "wv.npy", rng.random(n) + 0.5)]
    single = single_process(r, files, options, os.path.join(directory, "single"))
    if single is None:
        return
    u1, v1 = load_scalings(os.path.join(directory, "single"))
    tolerance = 1e-12 if precision == "fp64" else 1e-5
    for p in ranks:
        out = os.path.join(directory, "mpi%d" % p)
        summary = distributed(r, p, files + options + list(mpi_only), out)
        if summary is None:
            continue
        what = "%s on %d ranks (%s)" % (name, p, " ".join(options + list(mpi_only)))
        u, v = load_scalings(out)
        r.check(summary["ranks"] == p, what + ": summary says %s ranks" % summary["ranks"])
        if "--balance" in mpi_only:
            # Rows in proportion to the ranks' measured speeds: any split, the same iterates.
            r.check(summary["balanced"] is True and summary["rows_per_rank_max"] <= m, what + ": %s" % summary)
            if "always" in mpi_only:
                rows_moved_at_every_check(r, what, summary, p)
        else:
            r.check(summary["rows_per_rank_max"] == (m + p - 1) // p, what + ": rows per rank %s" % summary)
        if "--row-chunks" in mpi_only:
            every_chunk_once(r, what, summary, m, p)
        r.check(summary["mode"] == single["mode"], what + ": mode %s vs %s" % (summary["mode"], single["mode"]))
        r.check(summary["iterations"] == single["iterations"],
                what + ": %d iterations vs %d in one process" % (summary["iterations"], single["iterations"]))
        r.check(u.shape == (m,) and v.shape == (n,), what + ": shapes %s %s" % (u.shape, v.shape))
        r.check(rel_l1(u, u1) <= tolerance and rel_l1(v, v1) <= tolerance,
                what + ": u off by %.3g, v by %.3g (relative L1) from uot solve" % (rel_l1(u, u1), rel_l1(v, v1)))
        for key in ("mass", "marginal_error_a", "marginal_error_b", "objective"):
            a, b = summary[key], single[key]
            r.check(abs(a - b) <= 1e3 * tolerance * max(1.0, abs(b)), what + ": %s %r vs %r" % (key, a, b))
        for key in ("comm_ms_per_iter", "comm_share", "threads_per_rank", "allreduce_per_iter"):
            r.check(key in summary, what + ": summary lacks " + key)
        # Each rank's time per iteration and its wait: one of each per rank, the wait
        # within the time, and the slowest rank's wait is the summary's comm figure.
        times, waits = summary.get("rank_ms_per_iter", []), summary.get("rank_wait_ms_per_iter", [])
        r.check(len(times) == p and len(waits) == p, what + ": per-rank times %r and waits %r" % (times, waits))
        # (two clocks: a rank that only waits, one without rows, may see its wait a hair above its time)
        r.check(all(0 <= w <= 1.05 * t + 0.05 for t, w in zip(times, waits)),
                what + ": a wait beyond its rank's time: %r, %r" % (times, waits))
        r.check(not waits or abs(max(waits) - summary["comm_ms_per_iter"]) <= 1e-9 * max(1.0, max(waits)),
                what + ": largest wait %r, comm_ms_per_iter %r" % (max(waits or [0]), summary["comm_ms_per_iter"]))
        if summary["mode"] == "translation-invariant" and summary["acceleration"] == "none":
            reductions_within_budget(r, what, summary, 2, per_check=2)


def reductions_within_budget(r, what, summary, per_iteration, per_check=0, check_every=10):
    """The all-reduces of the iteration loop: one for the pass's column sums and
    per_iteration - 1 packed ones for the O(M + N) step (row_block_reduction.h), per
    pass (a step the safeguard rejects costs its pass too), per_check more at each
    check, and at the end one for the final row marginal, one for the fp32
    precision-floor test (the matrix-free fp32 passes) and the column reduction of the
    pass that the deferred check (scaling_loop.cpp) runs after the last iterate and
    drops. Before the row totals were packed, --solver auto made 10 per iteration and
    the plain TI iteration 4.6."""
    iterations = summary["iterations"]
    passes = iterations + summary.get("rejected_steps", 0)
    budget = per_iteration * passes + per_check * (iterations // check_every + 1) + 3
    calls = summary["allreduce_per_iter"] * max(1, iterations)
    r.check(calls <= budget + 1e-6,
            what + ": %.0f all-reduces in %d iterations (%d passes), expected at most %d" %
            (calls, iterations, passes, budget))


def single_then_ranks(r, name, directory, files, options, ranks, check_single=None, mpi_only=()):
    """Runs `uot solve` once (files + options), then uot-mpi on each of `ranks` with the
    same options (and mpi_only); yields (single summary, what, rank summary, (u, v), (u1, v1)) for every
    rank that finished, u1, v1 being the single process's scalings. Nothing when the
    single-process solve failed (that is checked here). check_single(single), when
    given, runs once, before the ranks."""
    out1 = os.path.join(directory, "single")
    cmd = [r.uot, "solve"] + files + ["--out-dir", out1, "--json"] + options
    done = r.run(cmd)
    if not r.check(done is not None and done.returncode == 0,
                   "uot solve failed: %s\n%s" % (" ".join(cmd), done.stderr if done else "timeout")):
        return
    single = json.loads(done.stdout)
    if check_single:
        check_single(single)
    single_scalings = load_scalings(out1)
    for p in ranks:
        out = os.path.join(directory, "mpi%d" % p)
        summary = distributed(r, p, files + options + list(mpi_only), out)
        if summary is None:
            continue
        what = "%s on %d ranks (%s)" % (name, p, " ".join(options + list(mpi_only)))
        if "always" in mpi_only:
            rows_moved_at_every_check(r, what, summary, p)
        if "--row-chunks" in mpi_only:
            every_chunk_once(r, what, summary, single_scalings[0].shape[0], p)
        yield single, what, summary, load_scalings(out), single_scalings


def rows_moved_at_every_check(r, what, summary, ranks, check_every=10):
    """--balance --rebalance always: rows move at every check before the last
    iteration (none after a check that converges), on 2 or more ranks; none on 1."""
    checks = (summary["iterations"] - 1) // check_every if ranks > 1 else 0
    r.check(summary["rebalances"] == checks and summary["rows_moved"] >= checks,
            what + ": %s moves of %s rows, expected %d moves" % (summary["rebalances"], summary["rows_moved"], checks))


def node_rows(m, ranks):
    """The rows of each node of `ranks` ranks, the even split: one node, or nodes of
    UOT_MPI_TEST_NODE_RANKS consecutive ranks (the test's stand-in for several machines;
    a negative value: nodes of ranks apart, which uot-mpi splits into one node a rank)."""
    group = int(os.environ.get("UOT_MPI_TEST_NODE_RANKS", "0")) or ranks
    if group < 0:
        group = 1  # nodes of ranks apart: uot-mpi makes every rank a node of its own
    bounds = [m * r // ranks for r in range(ranks + 1)]
    return [bounds[min(first + group, ranks)] - bounds[first] for first in range(0, ranks, group)]


def every_chunk_once(r, what, summary, m, ranks):
    """--row-chunks: in every pass each node's rows are split into rows / 64 chunks (1 to 256)
    and every chunk is done by exactly one rank: the ranks' chunks over the solve add up
    to the chunks of a pass times the passes (a chunk lost or done twice fails it), the
    passes cover the iterations, and a rank takes from other ranks' blocks only chunks
    it counts."""
    per_pass = sum(min(max(rows // 64, 1 if rows else 0), 256) for rows in node_rows(m, ranks))
    chunks, stolen = summary.get("rank_chunks", []), summary.get("rank_chunks_stolen", [])
    passes = summary.get("chunk_passes", 0)
    r.check(summary.get("row_chunks") is True and summary.get("chunks_per_pass") == per_pass,
            what + ": chunks per pass %r, expected %d" % (summary.get("chunks_per_pass"), per_pass))
    r.check(passes >= summary["iterations"], what + ": %r chunk passes for %d iterations" %
            (passes, summary["iterations"]))
    r.check(len(chunks) == ranks and sum(chunks) == per_pass * passes,
            what + ": the ranks did %r chunks (%d in all), expected %d a pass x %r passes = %d" %
            (chunks, sum(chunks), per_pass, passes, per_pass * passes))
    r.check(len(stolen) == ranks and all(0 <= s <= c for s, c in zip(stolen, chunks)),
            what + ": chunks from other ranks' blocks %r of %r" % (stolen, chunks))


def solver_matches_single_process(r, name, m, n, options, ranks=(1, 2, 3), solver=("--solver", "auto"),
                                  acceleration="auto", mpi_only=()):
    """`--solver auto` (translation-invariant + automatic over-relaxation, uot-mpi's
    documented default iteration), or a named solver with the same iteration
    (--solver fused --mode ti --accel auto|relax): every P gives the single-process
    `uot solve` iterates (same options) to 1e-12 and the same iteration count. The TI
    shift's row sums and the safeguard's decisions are reduced over the ranks; before
    they were, 2 ranks reported "converged" with another plan (mass 0.99 vs 1.39) and
    a rank without rows aborted inside MPI (its reductions no longer matched). Each
    pass costs at most 3 all-reduces (reductions_within_budget)."""
    directory = os.path.join(r.work, name)
    _, files = write_problem(directory, m, n, seed=m * 1000 + n + 1)
    options = options + ["--precision", "fp64"] + list(solver)
    def check_single(single):
        r.check(single["solver"] == "fused" and single["acceleration"] == acceleration and single["mode"] ==
                "translation-invariant", name + ": single process ran %s %s %s" % (
                    single["solver"], single["acceleration"], single["mode"]))

    for single, what, summary, (u, v), (u1, v1) in single_then_ranks(r, name, directory, files, options, ranks,
                                                                     check_single, mpi_only):
        r.check(summary["acceleration"] == acceleration, what + ": acceleration %s" % summary["acceleration"])
        r.check(summary["iterations"] == single["iterations"],
                what + ": %d iterations vs %d in one process" % (summary["iterations"], single["iterations"]))
        r.check(rel_l1(u, u1) <= 1e-12 and rel_l1(v, v1) <= 1e-12,
                what + ": u off by %.3g, v by %.3g (relative L1) from uot solve" % (rel_l1(u, u1), rel_l1(v, v1)))
        r.check(abs(summary["mass"] - single["mass"]) <= 1e-9 * single["mass"],
                what + ": mass %r vs %r in one process" % (summary["mass"], single["mass"]))
        reductions_within_budget(r, what, summary, 3)


def write_clouds(directory, m, n, dim, seed):
    """X (M x dim), Y (N x dim) in the unit cube, a, b in [0.5, 1.5); returns the cli args."""
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    arrays = (("x", rng.random((m, dim))), ("y", rng.random((n, dim))), ("a", rng.random(m) + 0.5),
              ("b", rng.random(n) + 0.5))
    args = []
    for name, array in arrays:
        args += ["--" + name, save(directory, name + ".npy", array)]
    return args


def matrix_free_matches_single_process(r, name, m, n, options, ranks=(1, 2, 3), per_iteration=3, per_check=0,
                                       precision="fp64"):
    """`--solver mapreduce` on point clouds (--x/--y: each rank reads its rows of X),
    the matrix-free log-domain solver through the same driver as fused: every P gives
    the single-process `uot solve --solver mapreduce` iterates (same options) to 1e-12
    with the same iteration count, including a rank without rows; each pass combines
    the column LSEs of every rank in one packed reduction (fp32: to 1e-5, through the
    precision-floor test, which takes its maximum over the ranks). Before, uot-mpi
    refused --solver mapreduce."""
    directory = os.path.join(r.work, name)
    files = write_clouds(directory, m, n, 3, seed=m * 1000 + n + 2)
    options = options + ["--precision", precision, "--solver", "mapreduce"]
    tolerance = 1e-12 if precision == "fp64" else 1e-5
    for single, what, summary, (u, v), (u1, v1) in single_then_ranks(r, name, directory, files, options, ranks):
        r.check(summary["solver"] == "mapreduce" and summary["mode"] == single["mode"] and
                summary["acceleration"] == single["acceleration"],
                what + ": ran %s %s %s" % (summary["solver"], summary["mode"], summary["acceleration"]))
        # fp32: the column sums' order changes the rounding, and with it a step or two.
        r.check(abs(summary["iterations"] - single["iterations"]) <= (0 if precision == "fp64" else 3),
                what + ": %d iterations vs %d in one process" % (summary["iterations"], single["iterations"]))
        r.check(rel_l1(u, u1) <= tolerance and rel_l1(v, v1) <= tolerance,
                what + ": u off by %.3g, v by %.3g (relative L1) from uot solve" % (rel_l1(u, u1), rel_l1(v, v1)))
        for key in ("mass", "marginal_error_a", "marginal_error_b", "objective"):
            a, b = summary[key], single[key]
            r.check(abs(a - b) <= 1e3 * tolerance * max(1.0, abs(b)), what + ": %s %r vs %r" % (key, a, b))
        reductions_within_budget(r, what, summary, per_iteration, per_check=per_check)


def compare_with_numpy(r):
    directory = os.path.join(r.work, "numpy")
    m, n, eps, tau, iterations = 40, 30, 0.05, 0.7, 60
    (cost, a, b), files = write_problem(directory, m, n, seed=3)
    u_ref, v_ref = numpy_plain_scalings(cost, a, b, eps, tau, tau, iterations)
    for p in (1, 3):
        out = os.path.join(directory, "mpi%d" % p)
        summary = distributed(r, p, files + ["--eps", str(eps), "--tau", str(tau), "--precision", "fp64",
                                             "--fixed-iterations", "--max-iter", str(iterations), "--mode", "plain"], out)
        if summary is None:
            continue
        u, v = load_scalings(out)
        r.check(summary["iterations"] == iterations, "numpy case: %d iterations" % summary["iterations"])
        r.check(rel_l1(u, u_ref) <= 1e-10 and rel_l1(v, v_ref) <= 1e-10,
                "numpy case on %d ranks: u off by %.3g, v by %.3g" % (p, rel_l1(u, u_ref), rel_l1(v, v_ref)))


def random_problem_is_the_same_for_every_rank_count(r):
    results = []
    for p in (1, 2, 3):
        out = os.path.join(r.work, "random%d" % p)
        summary = distributed(r, p, ["--random", "50x40", "--seed", "5", "--precision", "fp64"], out)
        if summary is None:
            return
        r.check(summary["m"] == 50 and summary["n"] == 40, "random: size %s x %s" % (summary["m"], summary["n"]))
        results.append(load_scalings(out))
    u1, v1 = results[0]
    for p, (u, v) in zip((2, 3), results[1:]):
        r.check(rel_l1(u, u1) <= 1e-12 and rel_l1(v, v1) <= 1e-12,
                "random problem on %d ranks differs from 1 rank: u %.3g, v %.3g" % (p, rel_l1(u, u1), rel_l1(v, v1)))


def expect_failure(r, name, ranks, args, fragments):
    out = os.path.join(r.work, name + "-out")
    cmd = r.mpi_command(ranks) + args + ["--out-dir", out]
    done = r.run(cmd)
    if not r.check(done is not None, "%s: no answer within %d s (a rank hangs): %s" % (name, TIMEOUT_S, " ".join(cmd))):
        return
    text = done.stdout + done.stderr
    r.check(done.returncode != 0, "%s: exit code 0 for a bad input" % name)
    message_lines = [line for line in text.splitlines() if line.startswith("uot-mpi solve:")]
    r.check(len(message_lines) == 1, "%s: expected the error once (rank 0 speaks for all), got:\n%s" % (name, text))
    for fragment in fragments:
        r.check(fragment in text, "%s: message lacks '%s':\n%s" % (name, fragment, text))
    r.check(not os.path.exists(os.path.join(out, "u.npy")), "%s: u.npy written despite the error" % name)


def bad_inputs_stop_every_rank(r):
    directory = os.path.join(r.work, "bad")
    (cost, a, b), files = write_problem(directory, 6, 4, seed=11)
    cost[4, 1] = np.nan  # row 4: rank 2 of 3 (rows 4 and 5)
    save(directory, "C.npy", cost)
    expect_failure(r, "nan-in-rank-2", 3, files, ["rank 2:", "cost matrix entry (4, 1) is nan", "C.npy"])
    missing_a = list(files)
    missing_a[3] = os.path.join(directory, "no-such-a.npy")
    expect_failure(r, "missing-a", 2, missing_a, ["rank 0:", "no-such-a.npy", "cannot open"])
    missing_cost = list(files)
    missing_cost[1] = os.path.join(directory, "no-such-C.npy")
    expect_failure(r, "missing-cost", 3, missing_cost, ["no-such-C.npy"])
    expect_failure(r, "log-solver", 2, files + ["--solver", "log"], ["fused"])


def options_and_advice(r):
    directory = os.path.join(r.work, "advice")
    os.makedirs(directory)
    _, files = write_problem(directory, 12, 8, seed=5)
    out = os.path.join(directory, "out")
    done = r.run(r.mpi_command(2) + files + ["--out-dir", out, "--threads", "100000"])
    r.check(done is not None and done.returncode == 2 and "threads takes a whole number from 0 to 1024" in done.stderr,
            "--threads 100000: expected exit 2 naming the maximum, got %s" %
            ("a hang" if done is None else "%d: %s" % (done.returncode, done.stderr.strip()[-300:])))
    a = np.full(12, 1.0 / 12)
    a[4] = 1e-320
    subnormal = list(files)
    subnormal[3] = save(directory, "a_subnormal.npy", a)
    expect_failure(r, "subnormal-weight", 2, subnormal, ["a[4]", "subnormal"])
    done = r.run(r.mpi_command(2) + files + ["--out-dir", out, "--eps", "1e-6"])
    r.check(done is not None and done.returncode == 5, "eps 1e-6: expected exit 5 (underflow), got %s" %
            (None if done is None else done.returncode))
    if done is not None:
        r.check("use the log-domain solver" not in (done.stderr + done.stdout).lower() and
                "no log-domain solver" in done.stderr and "--solver mapreduce" in done.stderr,
                "eps 1e-6: the advice names a solver uot-mpi does not have, or not the one it has:\n" + done.stderr)


def rank_pids(mpirun_pid):
    """{rank: pid} of the uot-mpi processes started by this mpirun (read from /proc)."""
    pids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            if parent != mpirun_pid:
                continue
            with open("/proc/%s/environ" % entry, "rb") as f:
                for item in f.read().split(b"\0"):
                    if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                        pids[int(item.split(b"=")[1])] = int(entry)
        except (OSError, ValueError, IndexError):
            continue
    return pids


def cpu_seconds(pid):
    """User + system CPU time of process pid so far (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_until_busy(pids, seconds, limit):
    """Whether every process of pids used `seconds` of CPU within `limit` s: the
    ranks spin in the iteration, while MPI_Init mostly sleeps, so a rank stopped
    after this is stopped in the iteration (a fixed sleep is not enough on a
    loaded machine, where MPI_Init alone can take seconds)."""
    deadline = time.time() + limit
    while time.time() < deadline:
        if all(cpu_seconds(pid) >= seconds for pid in pids):
            return True
        time.sleep(0.1)
    return False


def stopped_rank_does_not_hang_the_others(r, victim, solver=("--solver", "fused"), stop_at=None):
    """solver: --solver auto waits mostly in the packed reductions of the step after
    each pass (MpiRowReduction::finishCombine), fused in the column sums'.
    stop_at: instead of a SIGSTOP from outside once the ranks iterate, the victim
    stops itself at that place (uot-mpi's test hook UOT_MPI_TEST_STOP=RANK:PLACE):
    "rebalance" (a --rebalance check during the solve) or "summary" (the gathers
    after it), places an outside signal seldom hits."""
    name = "sigstop-rank-%d-%s" % (victim, stop_at or solver[-1])
    out = os.path.join(r.work, name)
    iterations = "300" if stop_at else "1000000000"
    cmd = r.mpi_command(2) + ["--random", "400x400", "--fixed-iterations", "--max-iter", iterations,
                              "--out-dir", out, "--timeout", "3"] + list(solver)
    env = dict(os.environ, UOT_MPI_TEST_STOP="%d:%s" % (victim, stop_at)) if stop_at else None
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    pids = {}
    try:
        deadline = time.time() + 20
        while time.time() < deadline and len(pids) < 2:
            time.sleep(0.2)
            pids = rank_pids(job.pid)
        if not r.check(len(pids) == 2, "%s: could not find the two ranks of mpirun %d" % (name, job.pid)):
            return
        if not stop_at:
            if not r.check(wait_until_busy(pids.values(), 0.5, 60),
                           "%s: the ranks did not start iterating within 60 s" % name):
                return
            os.kill(pids[victim], signal.SIGSTOP)
        start = time.time()
        try:
            stdout, stderr = job.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            r.check(False, "%s: the live rank still waits 30 s after rank %d was stopped (--timeout 3 did not end the job)" %
                    (name, victim))
            return
        elapsed = time.time() - start
        r.check(job.returncode == 7, "%s: expected exit 7, got %d:\n%s" % (name, job.returncode, stderr[-500:]))
        r.check("no answer from rank %d" % victim in stderr,
                "%s: no live rank named rank %d:\n%s" % (name, victim, stderr[-500:]))
        print("%s: the job stopped %.1f s after the %s (--timeout 3)" %
              (name, elapsed, "ranks started" if stop_at else "SIGSTOP"))
    finally:
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if job.poll() is None:
            job.kill()
            job.communicate()


def run_cases(description, prefix, cases):
    """The main of the uot-mpi solve test scripts: the arguments (--uot, --uot-mpi,
    --mpirun), exit 77 when uot-mpi is not built, cases(runner) in a fresh work folder,
    then the count of checks and exit 0 or 1."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--uot", required=True)
    parser.add_argument("--uot-mpi", required=True, help="path of uot-mpi, or 'none' when it is not built")
    parser.add_argument("--mpirun", default="mpirun")
    args = parser.parse_args()
    if args.uot_mpi == "none":
        print("SKIP: uot-mpi is not built (UOT_MPI=OFF, or CMake found no MPI: apt-get install libopenmpi-dev "
              "openmpi-bin)")
        return 77
    work = tempfile.mkdtemp(prefix=prefix)
    r = Runner(args, work)
    try:
        cases(r)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if r.failures:
        print("%d of %d checks failed" % (r.failures, r.checks))
        return 1
    print("PASS: %d checks" % r.checks)
    return 0


def all_cases(r):
    compare_with_single_process(r, "uneven-7x5", 7, 5, ["--mode", "plain"])
    compare_with_single_process(r, "fewer-rows-than-ranks-2x6", 2, 6, ["--mode", "plain"], ranks=(3,))
    compare_with_single_process(r, "sleeping-wait-33x20", 33, 20, ["--mode", "plain"], ranks=(2, 3),
                                mpi_only=("--mpi-wait", "sleep"))
    compare_with_single_process(r, "one-row-1x9", 1, 9, ["--mode", "plain"], ranks=(2, 3))
    compare_with_single_process(r, "taub-inf-product-65x33", 65, 33,
                                ["--mode", "plain", "--tau-b", "inf", "--reference-measure", "product"])
    compare_with_single_process(r, "ti-120x90", 120, 90, ["--mode", "ti", "--tau-a", "0.5", "--tau-b", "2"])
    compare_with_single_process(r, "warm-40x50", 40, 50, ["--mode", "plain", "--eps", "0.1"], ranks=(2,),
                                warm=True)
    compare_with_single_process(r, "fp32-300x200", 300, 200, ["--mode", "plain"], precision="fp32",
                                ranks=(2, 3))
    # --balance: the rows set up again in proportion to the measured speeds (warm
    # start included: each rank's rows of u follow its new rows).
    compare_with_single_process(r, "balanced-ti-auto-97x61", 97, 61,
                                ["--solver", "fused", "--mode", "ti", "--accel", "auto"], mpi_only=("--balance",))
    compare_with_single_process(r, "balanced-warm-40x50", 40, 50, ["--mode", "plain", "--eps", "0.1"],
                                ranks=(2, 3), warm=True, mpi_only=("--balance",))
    compare_with_single_process(r, "balanced-fewer-rows-than-ranks-2x6", 2, 6, ["--mode", "plain"], ranks=(3,),
                                mpi_only=("--balance",))
    # --balance --rebalance always: rows move between the ranks at every check during the
    # solve (a rank's kernel rows it keeps, the others set up again, u handed over):
    # the single-process iterates still, in the plain, TI and TI + auto iterations.
    rebalance = ("--balance", "--rebalance", "always")
    compare_with_single_process(r, "rebalanced-plain-97x61", 97, 61, ["--mode", "plain", "--tol", "1e-10"],
                                mpi_only=rebalance)
    compare_with_single_process(r, "rebalanced-ti-120x90", 120, 90,
                                ["--mode", "ti", "--tau-a", "0.5", "--tau-b", "2", "--tol", "1e-10"],
                                mpi_only=rebalance)
    compare_with_single_process(r, "rebalanced-fp32-150x70", 150, 70, ["--mode", "plain", "--tol", "1e-5"],
                                precision="fp32", ranks=(2, 3), mpi_only=rebalance)
    solver_matches_single_process(r, "rebalanced-auto-301x257", 301, 257, ["--tol", "1e-10"], mpi_only=rebalance)
    solver_matches_single_process(r, "rebalanced-auto-5x40", 5, 40, ["--tol", "1e-10"], ranks=(3,),
                                  mpi_only=rebalance)
    solver_matches_single_process(r, "auto-301x257", 301, 257, [])
    solver_matches_single_process(r, "auto-fewer-rows-than-ranks-2x6", 2, 6, [], ranks=(3,))
    solver_matches_single_process(r, "auto-taua-inf-product-33x40", 33, 40,
                                  ["--tau-a", "inf", "--reference-measure", "product"], ranks=(2, 3))
    named_auto = ("--solver", "fused", "--mode", "ti", "--accel", "auto")
    solver_matches_single_process(r, "fused-ti-auto-150x97", 150, 97, ["--tau-a", "0.5", "--tau-b", "2"],
                                  solver=named_auto)
    solver_matches_single_process(r, "fused-ti-auto-fewer-rows-than-ranks-2x6", 2, 6, [], ranks=(3,),
                                  solver=named_auto)
    solver_matches_single_process(r, "fused-ti-relax-64x80", 64, 80, ["--eps", "0.02"], ranks=(1, 2, 3),
                                  solver=("--solver", "fused", "--mode", "ti", "--accel", "relax", "--omega",
                                          "1.6"), acceleration="relax")
    matrix_free_matches_single_process(r, "mapreduce-ti-auto-151x97", 151, 97,
                                       ["--mode", "ti", "--accel", "auto", "--tau-a", "0.5", "--tau-b", "2",
                                        "--eps", "0.01"])
    matrix_free_matches_single_process(r, "mapreduce-ti-auto-fewer-rows-than-ranks-2x6", 2, 6,
                                       ["--mode", "ti", "--accel", "auto"], ranks=(3,))
    matrix_free_matches_single_process(r, "mapreduce-relax-40x30", 40, 30,
                                       ["--mode", "ti", "--accel", "relax", "--omega", "1.5", "--eps", "0.02"],
                                       ranks=(2, 3))
    matrix_free_matches_single_process(r, "mapreduce-plain-33x20", 33, 20, ["--mode", "plain"], ranks=(2,),
                                       per_iteration=1, per_check=2)
    matrix_free_matches_single_process(r, "mapreduce-fp32-ti-auto-120x90", 120, 90,
                                       ["--mode", "ti", "--accel", "auto"], ranks=(2, 3), precision="fp32")
    compare_with_numpy(r)
    random_problem_is_the_same_for_every_rank_count(r)
    bad_inputs_stop_every_rank(r)
    options_and_advice(r)
    stopped_rank_does_not_hang_the_others(r, 1)
    stopped_rank_does_not_hang_the_others(r, 0)
    stopped_rank_does_not_hang_the_others(r, 1, solver=("--solver", "auto"))
    stopped_rank_does_not_hang_the_others(r, 1, solver=("--balance", "--rebalance", "always"), stop_at="rebalance")
    stopped_rank_does_not_hang_the_others(r, 1, stop_at="summary")


def main():
    return run_cases(__doc__.splitlines()[0], "uot-mpi-test-", all_cases)


if __name__ == "__main__":
    sys.exit(main())
