#!/usr/bin/python3
"""Smoke test of `uot bench`: runs the real command on a tiny problem and checks
that every JSON line carries the documented fields with sane values, that the
table goes to stderr with --json, and that bad input is a usage error.
No timing thresholds: only presence, types, signs and exact accounting."""
import json
import math
import subprocess
import sys

uot = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run([uot, "bench", *args], capture_output=True, text=True, timeout=120)


# --single-solve: time per iteration = one solve's iteration loop / N, always > 0,
# so the field checks below cannot be upset by a busy machine.
p = run("--solver", "reference", "--size", "64x48", "--size", "33x17", "--precision", "fp32,fp64",
        "--threads", "1,2", "--iterations", "3", "--single-solve", "--probe-mib", "16", "--json")
check(p.returncode == 0, f"exit code {p.returncode}: {p.stderr}")
lines = [l for l in p.stdout.splitlines() if l.strip()]
check(len(lines) == 8, f"expected 8 JSON lines (2 sizes x 2 precisions x 2 thread counts), got {len(lines)}")
required = ["solver", "m", "n", "precision", "threads", "ms_per_iter", "gbps", "peak_read_gbps", "peak_rw_gbps",
            "pct_of_peak", "peak_rss_mb", "matrix_mb", "iterations_per_s", "operational_intensity", "gflops",
            "bytes_per_iter", "flops_per_iter"]
seen = set()
for line in lines:
    try:
        r = json.loads(line)
    except ValueError as e:
        failures.append(f"not JSON: {line!r} ({e})")
        continue
    for key in required:
        check(key in r, f"missing {key} in {line}")
    if any(key not in r for key in required):
        continue
    seen.add((r["m"], r["n"], r["precision"], r["threads"]))
    check(r["solver"] == "reference", f"solver {r['solver']}")
    check(r["precision"] in ("fp32", "fp64"), f"precision {r['precision']}")
    for key in ["ms_per_iter", "gbps", "peak_read_gbps", "peak_rw_gbps", "pct_of_peak", "peak_rss_mb",
                "iterations_per_s", "gflops"]:
        check(isinstance(r[key], (int, float)) and math.isfinite(r[key]) and r[key] > 0, f"{key} = {r[key]}")
    m, n = r["m"], r["n"]
    # Exact accounting: the reference moves two float64 passes; 4 flops per element.
    check(r["bytes_per_iter"] > 0, f"bytes_per_iter {r['bytes_per_iter']}")
    check(r["flops_per_iter"] == 4 * m * n, f"flops_per_iter {r['flops_per_iter']} for {m}x{n}")
    elem = 4 if r["precision"] == "fp32" else 8
    check(abs(r["matrix_mb"] - m * n * elem / 2**20) < 0.06, f"matrix_mb {r['matrix_mb']}")
    check(abs(r["iterations_per_s"] * r["ms_per_iter"] - 1000) < 1e-2 * 1000, "iterations_per_s != 1000/ms")
    gbps = r["bytes_per_iter"] / (r["ms_per_iter"] * 1e-3) / 1e9
    check(abs(r["gbps"] - gbps) <= 0.02 * gbps + 0.01, f"gbps {r['gbps']} vs bytes/time {gbps}")
    peak = r["peak_read_gbps"] if r.get("peak_kind") == "read" else r["peak_rw_gbps"]
    check(abs(r["pct_of_peak"] - 100 * r["gbps"] / peak) <= 0.02 * r["pct_of_peak"] + 0.1, "pct_of_peak")
    check(r["peak_rss_mb"] < 1024, f"peak_rss_mb {r['peak_rss_mb']} for a tiny problem")
    check(r["threads"] in (1, 2), f"threads {r['threads']}")
    check(r["status"] == "ok" or r["status"] != "", "status")
check(len(seen) == 8, f"cases not distinct: {seen}")
check("ms/iter" in p.stderr, "the table should go to stderr with --json")

# The default difference method ((T(K+N) - T(K)) / N, median of repeats) on the size of the
# brief. On a tiny problem a busy machine can make the difference <= 0: the command must then
# say so (exit 1, "timing noise") rather than print a zero or negative time.
d = run("--solver", "reference", "--size", "64x48", "--iterations", "3", "--json", "--probe-mib", "16")
if d.returncode == 0:
    r = json.loads(d.stdout.splitlines()[0])
    check(r["ms_per_iter"] > 0 and r["repeats"] == 5 and r["warmup"] == 5, f"difference method: {r}")
else:
    check(d.returncode == 1 and "timing noise" in d.stderr, f"difference method: exit {d.returncode} {d.stderr!r}")

# Table mode: no JSON on stdout, a header and one row.
t = run("--solver", "reference", "--size", "16x8", "--iterations", "2", "--single-solve", "--no-probe")
check(t.returncode == 0 and "ms/iter" in t.stdout and "{" not in t.stdout, f"table mode: {t.stdout} {t.stderr}")

# Matrix-free cases: the compute probe's peaks and the shares derived from them,
# exact pair accounting, and the comparison with fused (table on stderr).
mf = run("--solver", "mapreduce,fused", "--size", "96x80", "--iterations", "3", "--single-solve", "--json",
         "--probe-mib", "16")
check(mf.returncode == 0, f"mapreduce bench: exit {mf.returncode}: {mf.stderr}")
rows = [json.loads(l) for l in mf.stdout.splitlines() if l.strip()]
mr = [r for r in rows if r["solver"] == "mapreduce"]
check(len(mr) == 1 and len(rows) == 2, f"mapreduce bench: {len(rows)} rows")
for r in mr:
    pairs = 2 * 96 * 80 / (r["ms_per_iter"] / 1e3)
    check(abs(r["pairs_per_s"] - pairs) <= 1e-3 * pairs, f"pairs_per_s {r['pairs_per_s']} vs {pairs}")
    check(r["bytes_per_iter"] == 0, "a matrix-free variant moves no matrix bytes")
    for key in ("peak_exps_per_s", "peak_pairs_per_s", "peak_fma_gflops"):
        check(isinstance(r.get(key), (int, float)) and r[key] > 0, f"{key} {r.get(key)}")
    if r.get("peak_exps_per_s"):
        check(abs(r["pct_of_exp_peak"] - 100 * r["pairs_per_s"] / r["peak_exps_per_s"]) <= 0.01 * r["pct_of_exp_peak"] + 0.1,
              "pct_of_exp_peak")
        check(abs(r["pct_of_pair_peak"] - 100 * r["pairs_per_s"] / r["peak_pairs_per_s"]) <= 0.01 * r["pct_of_pair_peak"] + 0.1,
              "pct_of_pair_peak")
check("matrix-free" in mf.stderr and "crossover" in mf.stderr, f"matrix-free table: {mf.stderr}")

# Usage errors.
for bad in (["--size", "12"], ["--solver", "no-such-solver"], ["--iterations", "0"], ["--precision", "fp16"]):
    b = run(*bad)
    check(b.returncode == 2 and b.stderr.strip() != "", f"{bad}: exit {b.returncode}, stderr {b.stderr!r}")
# A GPU variant without a GPU in this build: exit 4 with the reason (skipped where a GPU exists).
g = run("--solver", "gpu-fused", "--size", "16x8", "--iterations", "2", "--device", "gpu", "--no-probe")
check(g.returncode in (0, 4), f"gpu case: exit {g.returncode}")
if g.returncode == 4:
    check("GPU" in g.stderr or "CUDA" in g.stderr, f"gpu reason: {g.stderr!r}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print(f"ok: {len(lines)} cases checked")
