#!/usr/bin/env python3
"""Strong and weak scaling of `uot-mpi solve` (the fused solver distributed by
rows over MPI ranks), with parallel efficiency and the communication share of
each iteration. Python standard library only (runs on the headless GPU machine).

Strong scaling: one problem (--size, default 16384x16384), P = --ranks.
    speed-up S(P) = t(1) / t(P), efficiency E(P) = S(P) / P.
Weak scaling: --weak-rows rows per rank, N = the columns of --size, M = rows x P.
    efficiency E(P) = t(1) / t(P) (same work per rank).
t = ms per iteration: the iteration loop's time over --iterations iterations
(--fixed-iterations: exactly that many; the kernel build is set-up and excluded), the
median over --repeats runs. comm = the slowest rank's time inside MPI_Allreduce
per iteration, waiting for the other ranks included; share = comm / t.

The problem is uot-mpi's --random MxN (points in the unit square, squared
distances): each rank generates its own rows, the same problem for every P.
One thread per rank by default (--threads), as MAP-UOT's MPI runs: one process
a core. With more ranks than cores mpirun gets --oversubscribe and the ranks
share cores: the figures then measure sharing, not scaling.

--pot runs POT 0.8.2's sinkhorn_unbalanced single-threaded on the strong-scaling
problem size (bench/pot_compare.py --pot-only --threads 1; needs numpy and
python3-pot) and adds "x POT-1t" = POT ms / our ms per iteration: the
normalisation of MAP-UOT's MPI figures (speed-up over single-threaded POT).
--pot-ms-per-iter X gives that time instead (measured elsewhere).

Usage:
  bench/mpi_scaling.py --uot-mpi build/app/mpi/uot-mpi [--size 16384x16384]
      [--ranks 1,2,4,8,16] [--weak-rows 1024] [--precision fp32] [--iterations 50]
      [--repeats 3] [--threads 1] [--mpi-wait spin|sleep] [--mpirun mpirun] [--mpirun-args "--bind-to core"]
      [--solve-args "--balance"] [--placement PAIRS.json [--placement-layout Q]]
      [--pot | --pot-ms-per-iter X] [--json-out FILE] [--skip-weak] [--skip-strong]
      [--compare "even=;chunks=--row-chunks"]
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from mpi_placement import placement_mpirun_args  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--uot-mpi", required=True, help="path of the uot-mpi executable")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--mpirun-args", default="", help="extra mpirun arguments, e.g. '--bind-to core --map-by core'")
    p.add_argument("--size", default="16384x16384", help="strong-scaling problem MxN")
    p.add_argument("--ranks", default="1,2,4,8,16")
    p.add_argument("--weak-rows", type=int, default=1024, help="rows per rank of the weak-scaling problems")
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp64"])
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="OpenMP threads per rank")
    p.add_argument("--mpi-wait", default="spin", choices=["spin", "sleep"],
                   help="uot-mpi --mpi-wait: sleep on machines shared with other work")
    p.add_argument("--solver", default="fused", help="uot-mpi --solver (fused, auto, mapreduce)")
    p.add_argument("--mode", default="plain", help="uot-mpi --mode (plain, ti, auto)")
    p.add_argument("--eps", default="0.05")
    p.add_argument("--tau", default="1")
    p.add_argument("--solve-args", default="", help="more uot-mpi solve options, e.g. '--balance'")
    p.add_argument("--placement", help="uot_cpu_topology_probe --pairs JSON: each rank on its own physical core(s) "
                   "(scripts/mpi_placement.py's rankfile; leave --map-by/--bind-to out of --mpirun-args)")
    p.add_argument("--placement-layout", type=int, default=0,
                   help="place P ranks where the first P of this many go (default: P's own spread)")
    p.add_argument("--pot", action="store_true", help="time single-threaded POT on --size for the paper's normalisation")
    p.add_argument("--pot-ms-per-iter", type=float, help="single-threaded POT ms per iteration at --size, measured elsewhere")
    p.add_argument("--pot-python", default="/usr/bin/python3")
    p.add_argument("--skip-strong", action="store_true")
    p.add_argument("--skip-weak", action="store_true")
    p.add_argument("--json-out", help="append one JSON object per run here")
    p.add_argument("--compare", help="strong scaling of several option sets in one call, 'NAME=OPTIONS;NAME=OPTIONS' "
                   "(e.g. 'even=;chunks=--row-chunks'): every repeat runs each rank count with each set in turn, and "
                   "each run's efficiency is against the fastest P = 1 run of the call (replaces the strong table)")
    return p.parse_args()


def mpirun_command(args, ranks):
    cmd = [args.mpirun, "-np", str(ranks)]
    if ranks > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += shlex.split(args.mpirun_args)
    if args.placement:
        cmd += placement_mpirun_args(args.placement, ranks, args.threads, args.placement_layout, args.placement_dir)
    return cmd


def run_once(args, ranks, size, out_dir, extra=""):
    cmd = mpirun_command(args, ranks) + [
        args.uot_mpi, "solve", "--random", size, "--precision", args.precision, "--threads", str(args.threads),
        "--eps", args.eps, "--tau", args.tau, "--mpi-wait", args.mpi_wait, "--solver", args.solver, "--mode", args.mode, "--fixed-iterations", "--max-iter", str(args.iterations),
        "--out-dir", out_dir, "--json"] + shlex.split(args.solve_args) + shlex.split(extra)
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or len(lines) != 1:
        sys.exit("mpi_scaling: failed (exit %d): %s\n%s%s" % (done.returncode, " ".join(cmd), done.stdout, done.stderr))
    return json.loads(lines[0])


def measure(args, ranks, size, out_dir, kind):
    runs = [run_once(args, ranks, size, out_dir) for _ in range(args.repeats)]
    runs.sort(key=lambda r: r["ms_per_iter"])
    median = runs[len(runs) // 2]
    record = {"kind": kind, "ranks": ranks, "size": size, "precision": args.precision, "threads_per_rank": args.threads,
              "rows_per_rank_max": median["rows_per_rank_max"], "ms_per_iter": median["ms_per_iter"],
              "comm_ms_per_iter": median["comm_ms_per_iter"], "comm_share": median["comm_share"],
              "ms_per_iter_all": [r["ms_per_iter"] for r in runs], "iterations": median["iterations"],
              "setup_ms": median["setup_ms"], "allreduce_per_iter": median.get("allreduce_per_iter"),
              "balance_ms": median.get("balance_ms"), "rows_per_rank_min": median.get("rows_per_rank_min"),
              "rebalances": median.get("rebalances"), "rows_moved": median.get("rows_moved"),
              "move_ms": median.get("move_ms"),
              "rank_ms_per_iter": median.get("rank_ms_per_iter"), "rank_wait_ms_per_iter": median.get("rank_wait_ms_per_iter")}
    # Each rank's compute (its time per iteration less its wait in the reductions).
    compute = [t - w for t, w in zip(record["rank_ms_per_iter"] or [], record["rank_wait_ms_per_iter"] or [])]
    record["rank_compute_ms_per_iter"] = compute
    spread = "  compute %.2f..%.2f ms (slowest rank %d)" % (min(compute), max(compute), compute.index(max(compute))) \
        if compute else ""
    print("  %-6s P=%-3d %-12s %9.3f ms/iter  comm %8.3f ms (%4.1f%%)  all-reduces/iter %s%s" % (
        kind, ranks, size, record["ms_per_iter"], record["comm_ms_per_iter"], 100 * record["comm_share"],
        record["allreduce_per_iter"], spread),
        file=sys.stderr, flush=True)
    if args.json_out:
        with open(args.json_out, "a") as f:
            f.write(json.dumps(record) + "\n")
    return record


def compare(args, ranks, out_dir):
    """--compare: every run of every option set, interleaved, against the fastest P = 1 of the call."""
    sets = [item.split("=", 1) for item in args.compare.split(";") if item]
    runs = []
    for repeat in range(args.repeats):
        for p in ranks:
            for name, extra in sets:
                run = run_once(args, p, args.size, out_dir, extra)
                times, waits = run.get("rank_ms_per_iter") or [], run.get("rank_wait_ms_per_iter") or []
                compute = [t - w for t, w in zip(times, waits)]
                runs.append({"set": name, "options": extra, "repeat": repeat + 1, "ranks": p, "size": args.size,
                             "ms_per_iter": run["ms_per_iter"], "comm_ms_per_iter": run["comm_ms_per_iter"],
                             "rank_ms_per_iter": run.get("rank_ms_per_iter"),
                             "rank_wait_ms_per_iter": run.get("rank_wait_ms_per_iter"),
                             "rank_compute_ms_per_iter": compute, "rank_chunks": run.get("rank_chunks"),
                             "rank_chunks_stolen": run.get("rank_chunks_stolen")})
                print("  %-8s P=%-3d repeat %d: %9.3f ms/iter" % (name, p, repeat + 1, run["ms_per_iter"]),
                      file=sys.stderr, flush=True)
    base = min((r["ms_per_iter"] for r in runs if r["ranks"] == 1), default=float("nan"))
    print("\nstrong scaling, %s %s, each run against the fastest P = 1 run of this call (%.3f ms/iter)" % (
        args.size, args.precision, base))
    print("%-8s %4s %6s %10s %8s %9s %12s %12s %14s" % ("set", "P", "repeat", "ms/iter", "effic.", "wait ms",
                                                       "compute min", "compute max", "chunks stolen"))
    for r in runs:
        compute = r["rank_compute_ms_per_iter"] or [float("nan")]
        stolen = sum(r["rank_chunks_stolen"] or [0])
        r["efficiency"] = base / (r["ranks"] * r["ms_per_iter"])
        print("%-8s %4d %6d %10.3f %7.1f%% %9.3f %12.3f %12.3f %14s" % (
            r["set"], r["ranks"], r["repeat"], r["ms_per_iter"], 100 * r["efficiency"], r["comm_ms_per_iter"],
            min(compute), max(compute), "%d of %d" % (stolen, sum(r["rank_chunks"] or [0])) if stolen else "-"))
        if args.json_out:
            with open(args.json_out, "a") as f:
                f.write(json.dumps(r) + "\n")
    print("\nlowest efficiency over the repeats:")
    for name, _ in sets:
        for p in ranks:
            mine = [r["efficiency"] for r in runs if r["set"] == name and r["ranks"] == p]
            print("  %-8s P=%-3d %5.1f%% (repeats %s)" % (name, p, 100 * min(mine),
                                                        ", ".join("%.1f%%" % (100 * e) for e in mine)))


def pot_ms(args):
    if args.pot_ms_per_iter:
        return args.pot_ms_per_iter
    if not args.pot:
        return None
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pot_compare.py")
    cmd = [args.pot_python, script, "--pot-only", "--size", args.size, "--precision", args.precision,
           "--threads", "1", "--iterations", "10", "--warmup", "2", "--repeats", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)["ms_per_iter"]
    print("mpi_scaling: POT timing failed (%s): %s" % (" ".join(cmd), done.stderr.strip()[-500:]), file=sys.stderr)
    return None


def main():
    args = parse_args()
    ranks = [int(x) for x in args.ranks.split(",")]
    cores = os.cpu_count() or 1
    m, n = (int(x) for x in args.size.split("x"))
    out_dir = tempfile.mkdtemp(prefix="uot-mpi-bench-")
    args.placement_dir = out_dir
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
    print("uot-mpi scaling: --solver %s --mode %s%s, %s, %d iterations, %d thread(s) per rank, --mpi-wait %s, median of %d; %d cores, load %s, %s" % (
        args.solver, args.mode, " " + args.solve_args if args.solve_args else "", args.precision, args.iterations, args.threads, args.mpi_wait, args.repeats, cores, " ".join(load),
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
    if max(ranks) * args.threads > cores:
        print("note: up to %d ranks x %d threads on %d cores: the ranks beyond %d share cores (oversubscribed)" % (
            max(ranks), args.threads, cores, cores // max(1, args.threads)))
    try:
        if args.compare:
            compare(args, ranks, out_dir)
        elif not args.skip_strong:
            strong = [measure(args, p, args.size, out_dir, "strong") for p in ranks]
            base = next((r for r in strong if r["ranks"] == 1), None)
            pot = pot_ms(args)
            print("\nstrong scaling, %s %s (speed-up and efficiency against P = 1)" % (args.size, args.precision))
            header = "%5s %10s %11s %9s %8s %11s %7s %12s %12s" % ("P", "rows/rank", "ms/iter", "speed-up", "effic.",
                                                                   "comm ms", "comm%", "compute min", "compute max")
            if pot:
                header += " %9s" % "x POT-1t"
            print(header)
            for r in strong:
                speedup = base["ms_per_iter"] / r["ms_per_iter"] if base else float("nan")
                line = "%5d %10d %11.3f %9.2f %7.1f%% %11.3f %6.1f%%" % (
                    r["ranks"], r["rows_per_rank_max"], r["ms_per_iter"], speedup, 100 * speedup / r["ranks"],
                    r["comm_ms_per_iter"], 100 * r["comm_share"])
                compute = r["rank_compute_ms_per_iter"]
                line += " %12s %12s" % (("%.3f" % min(compute), "%.3f" % max(compute)) if compute else ("-", "-"))
                if pot:
                    line += " %9.1f" % (pot / r["ms_per_iter"])
                print(line)
            if pot:
                print("POT 0.8.2 single-threaded (numpy, 1 BLAS thread): %.3f ms/iter at %s %s" % (
                    pot, args.size, args.precision))
        if not args.skip_weak:
            weak = [measure(args, p, "%dx%d" % (args.weak_rows * p, n), out_dir, "weak") for p in ranks]
            base = next((r for r in weak if r["ranks"] == 1), None)
            print("\nweak scaling, %d rows per rank x %d columns, %s (efficiency = t(1) / t(P))" % (
                args.weak_rows, n, args.precision))
            print("%5s %12s %11s %8s %11s %7s" % ("P", "problem", "ms/iter", "effic.", "comm ms", "comm%"))
            for r in weak:
                eff = base["ms_per_iter"] / r["ms_per_iter"] if base else float("nan")
                print("%5d %12s %11.3f %7.1f%% %11.3f %6.1f%%" % (
                    r["ranks"], r["size"], r["ms_per_iter"], 100 * eff, r["comm_ms_per_iter"], 100 * r["comm_share"]))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    print("\nms/iter: iteration loop only (kernel build excluded), median of %d runs; comm: the slowest rank's time "
          "in MPI_Allreduce per iteration, waiting for other ranks included; compute: a rank's time per iteration less its "
          "wait, the least and the most over the ranks (the most is the slowest rank, whom the others wait for)." % args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
