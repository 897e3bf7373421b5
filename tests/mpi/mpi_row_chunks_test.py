#!/usr/bin/python3
"""`uot-mpi solve --row-chunks` on 1, 2 and 3 MPI ranks against the single-process
`uot solve`.

Run by CTest with Debian's /usr/bin/python3 (python3-numpy):

    /usr/bin/python3 mpi_row_chunks_test.py --uot path/to/uot --uot-mpi path/to/uot-mpi --mpirun mpirun

With --row-chunks the ranks of one machine share the kernel of their rows and take
each pass's rows in chunks (app/mpi/shared_row_chunks.h). Checks, with the helpers of
mpi_solve_test.py:

* P = 1, 2, 3 give u and v equal to `uot solve` to 1e-12 relative L1 in float64 (1e-5
  in float32) with the same iteration count, in the plain, translation-invariant and
  TI + automatic over-relaxation iterations (--solver auto), a fixed omega, and with
  fewer rows than ranks (a rank without rows of its own, which still takes chunks);
* in every case every chunk of every pass is done exactly once: the ranks' chunks add
  up to the chunks of a pass times the passes (mpi_solve_test.every_chunk_once);
* ranks that do not share a node keep their rows and reduce over the nodes: with
  UOT_MPI_TEST_NODE_RANKS=2 (nodes of two consecutive ranks; test only) P = 3 runs as
  a node of two ranks and a node of one, with 1 as three nodes of one rank (no rows
  shared), and with -2 as nodes of ranks apart (0 and 2, and 1: uot-mpi then makes
  every rank a node of its own), all against `uot solve` to 1e-12;
* two threads a rank take chunks too (P = 2, --threads 2);
* --row-chunks with --balance or with --solver mapreduce is a usage error (exit 2);
* a rank stopped with SIGSTOP does not hang the other, which waits in the node's
  barriers: with --timeout 3 the job ends with exit 7 and names the stopped rank.

With --uot-mpi none (uot-mpi not built) it exits 77, which CTest reports as skipped.
"""

import os
import sys

import mpi_solve_test as solve  # noqa: E402 (next to this script)

CHUNKS = ("--row-chunks",)


def with_test_nodes(group, case):
    """Runs case() with the ranks grouped into nodes of `group` consecutive ranks."""
    os.environ["UOT_MPI_TEST_NODE_RANKS"] = str(group)
    try:
        case()
    finally:
        del os.environ["UOT_MPI_TEST_NODE_RANKS"]


def usage_errors(r):
    directory = os.path.join(r.work, "usage")
    _, files = solve.write_problem(directory, 12, 8, seed=3)
    out = os.path.join(directory, "out")
    for extra, fragment in ((["--balance"], "--balance"), (["--solver", "mapreduce"], "mapreduce")):
        done = r.run(r.mpi_command(2) + files + ["--out-dir", out, "--row-chunks"] + extra)
        r.check(done is not None and done.returncode == 2 and fragment in done.stderr,
                "--row-chunks %s: expected exit 2 naming %s, got %s" %
                (" ".join(extra), fragment, None if done is None else (done.returncode, done.stderr[-300:])))


def all_cases(r):
    solve.compare_with_single_process(r, "chunks-plain-1000x61", 1000, 61, ["--mode", "plain", "--tol", "1e-10"],
                                      mpi_only=CHUNKS)
    solve.compare_with_single_process(r, "chunks-ti-120x90", 120, 90,
                                      ["--mode", "ti", "--tau-a", "0.5", "--tau-b", "2"], mpi_only=CHUNKS)
    solve.compare_with_single_process(r, "chunks-fewer-rows-than-ranks-2x6", 2, 6, ["--mode", "plain"],
                                      ranks=(3,), mpi_only=CHUNKS)
    solve.compare_with_single_process(r, "chunks-fp32-300x200", 300, 200, ["--mode", "plain"], precision="fp32",
                                      ranks=(2, 3), mpi_only=CHUNKS)
    solve.solver_matches_single_process(r, "chunks-auto-301x257", 301, 257, [], mpi_only=CHUNKS)
    solve.solver_matches_single_process(r, "chunks-auto-fewer-rows-than-ranks-2x6", 2, 6, [], ranks=(3,),
                                        mpi_only=CHUNKS)
    solve.solver_matches_single_process(r, "chunks-relax-64x80", 64, 80, ["--eps", "0.02"], ranks=(2, 3),
                                        solver=("--solver", "fused", "--mode", "ti", "--accel", "relax",
                                                "--omega", "1.6"), acceleration="relax", mpi_only=CHUNKS)
    with_test_nodes(2, lambda: solve.solver_matches_single_process(r, "chunks-two-nodes-auto-301x257", 301, 257,
                                                                   [], ranks=(3,), mpi_only=CHUNKS))
    with_test_nodes(1, lambda: solve.solver_matches_single_process(r, "chunks-no-shared-node-auto-150x97", 150,
                                                                   97, ["--tau-a", "0.5"], ranks=(3,),
                                                                   mpi_only=CHUNKS))
    # Nodes whose ranks are not consecutive (ranks 0 and 2, and 1): their rows are not one range,
    # so every rank is a node of its own.
    with_test_nodes(-2, lambda: solve.solver_matches_single_process(r, "chunks-nodes-apart-auto-150x97", 150, 97,
                                                                    [], ranks=(3,), mpi_only=CHUNKS))
    # Two threads a rank: the threads take chunks too.
    solve.compare_with_single_process(r, "chunks-threads-1000x61", 1000, 61, ["--mode", "ti", "--threads", "2"],
                                      ranks=(2,), mpi_only=CHUNKS)
    usage_errors(r)
    solve.stopped_rank_does_not_hang_the_others(r, 1, solver=("--solver", "auto", "--row-chunks"))


if __name__ == "__main__":
    sys.exit(solve.run_cases(__doc__.splitlines()[0], "uot-mpi-chunks-test-", all_cases))
