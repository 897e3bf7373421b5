#!/usr/bin/python3
"""Ours vs POT, in one session: runs `uot bench --json` for the chosen variants,
then POT 0.8.2's ot.unbalanced.sinkhorn_unbalanced (numpy backend) on problems of
the same sizes, recipe and precision right after, and prints ms/iteration for
both and the speed ratio (POT ms / ours ms; > 1 means ours is faster).

Per-iteration time for POT uses the same difference method as `uot bench`:
(T(warmup + N) - T(warmup)) / N around the whole call, median over repeats, so
POT's set-up (K = exp(-M/reg)) and its final plan cancel out.

Usage: bench/pot_compare.py --uot build/app/cli/uot [--size 4096x4096 ...]
       [--precision fp32,fp64] [--threads 2] [--solver fused,mapuot,pot-style]
       [--iterations 50] [--warmup 5] [--repeats 3] [--json-out FILE]
Use Debian's /usr/bin/python3 (numpy + python3-pot)."""
import argparse
import json
import os
import subprocess
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--uot", help="path to the uot executable (not needed with --pot-only)")
    p.add_argument("--size", action="append", help="MxN (repeatable; default 4096x4096)")
    p.add_argument("--precision", default="fp32,fp64")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--solver", default="fused,mapuot,pot-style")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3, help="repeats for POT (ours uses 5)")
    p.add_argument("--eps", type=float, default=0.05)
    p.add_argument("--tau", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json-out", help="write the comparison, one JSON object per line, here")
    p.add_argument("--pot-only", action="store_true",
                   help="time POT only (one JSON object per size x precision), e.g. to sample it in quiet moments")
    return p.parse_args()


def pot_problem(m, n, dtype, seed):
    """Same recipe as `uot bench` (points in [0,1)^3, cost scaled to max 1, weights
    in [0.5, 1.5) normalised to masses 1 and 1.5); numpy's generator, not the same
    numbers, which does not matter for the time per iteration."""
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.random((m, 3))
    y = rng.random((n, 3))
    M = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * x @ y.T
    np.maximum(M, 0, out=M)
    M /= M.max()
    a = rng.uniform(0.5, 1.5, m)
    b = rng.uniform(0.5, 1.5, n)
    a /= a.sum()
    b *= 1.5 / b.sum()
    return M.astype(dtype), a.astype(dtype), b.astype(dtype)


def time_pot(m, n, precision, args):
    import numpy as np
    import ot
    dtype = np.float32 if precision == "fp32" else np.float64
    M, a, b = pot_problem(m, n, dtype, args.seed)

    def run(iters):
        t0 = time.perf_counter()
        P = ot.unbalanced.sinkhorn_unbalanced(a, b, M, args.eps, args.tau, method="sinkhorn",
                                              numItermax=iters, stopThr=0.0)
        t = time.perf_counter() - t0
        assert P.dtype == dtype, f"POT returned {P.dtype} for {precision}"
        return t

    run(args.warmup)  # warm-up: imports, first-touch of the arrays
    per_iter = []
    for _ in range(args.repeats):
        lo = run(args.warmup)
        hi = run(args.warmup + args.iterations)
        per_iter.append((hi - lo) / args.iterations)
    per_iter.sort()
    return 1e3 * per_iter[len(per_iter) // 2], ot.__version__, np.__version__


def main():
    args = parse_args()
    sizes = args.size or ["4096x4096"]
    precisions = [p for p in args.precision.split(",") if p]
    # POT's numpy calls BLAS: give it the same number of threads as ours.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    if args.pot_only:
        for s in sizes:
            m, n = (int(t) for t in s.lower().split("x"))
            for prec in precisions:
                pot_ms, pot_version, np_version = time_pot(m, n, prec, args)
                print(json.dumps({"solver": "pot-0.8.2-numpy", "m": m, "n": n, "precision": prec,
                                  "threads": args.threads, "ms_per_iter": round(pot_ms, 4),
                                  "pot_version": pot_version, "numpy_version": np_version}))
        return 0

    if not args.uot:
        print("--uot is required unless --pot-only", file=sys.stderr)
        return 2
    cmd = [args.uot, "bench", "--solver", args.solver, "--precision", ",".join(precisions),
           "--threads", str(args.threads), "--iterations", str(args.iterations), "--warmup", str(args.warmup),
           "--eps", str(args.eps), "--tau", str(args.tau), "--seed", str(args.seed), "--json"]
    for s in sizes:
        cmd += ["--size", s]
    print("ours:", " ".join(cmd), file=sys.stderr)
    ours_run = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(ours_run.stderr)
    ours = [json.loads(l) for l in ours_run.stdout.splitlines() if l.startswith("{")]
    if not ours:
        print("uot bench produced no results", file=sys.stderr)
        return 1

    rows = []
    for s in sizes:
        m, n = (int(t) for t in s.lower().split("x"))
        for prec in precisions:
            print(f"POT: sinkhorn_unbalanced {m}x{n} {prec} ...", file=sys.stderr)
            pot_ms, pot_version, np_version = time_pot(m, n, prec, args)
            for r in ours:
                if r["m"] != m or r["n"] != n or r["precision"] != prec:
                    continue
                rows.append({
                    "solver": r["solver"], "m": m, "n": n, "precision": prec, "threads": r["threads"],
                    "ours_ms_per_iter": r["ms_per_iter"], "pot_ms_per_iter": round(pot_ms, 4),
                    "speedup_vs_pot": round(pot_ms / r["ms_per_iter"], 2),
                    "ours_pct_of_peak": r.get("pct_of_peak"), "peak_read_gbps": r.get("peak_read_gbps"),
                    "pot_version": pot_version, "numpy_version": np_version,
                    "iterations": args.iterations, "warmup": args.warmup,
                })

    print(f"{'solver':<12} {'size':<11} {'prec':<5} {'thr':>3} {'ours ms':>9} {'POT ms':>9} {'POT/ours':>9}"
          f" {'%peak':>6}")
    for r in rows:
        print(f"{r['solver']:<12} {r['m']}x{r['n']:<6} {r['precision']:<5} {r['threads']:>3}"
              f" {r['ours_ms_per_iter']:>9.3f} {r['pot_ms_per_iter']:>9.3f} {r['speedup_vs_pot']:>8.2f}x"
              f" {r['ours_pct_of_peak'] if r['ours_pct_of_peak'] is not None else float('nan'):>5.1f}%")
    lines = "\n".join(json.dumps(r) for r in rows) + "\n"
    if args.json_out:
        with open(args.json_out, "w") as f:
            f.write(lines)
    else:
        sys.stdout.write(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
