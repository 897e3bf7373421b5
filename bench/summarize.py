#!/usr/bin/python3
"""Turns `uot bench --json` output (one object per line) into the Markdown tables of
docs/BENCHMARKS.md: speed and bandwidth, then memory.
Usage: bench/summarize.py bench.json [more.json ...]"""
import json
import sys

rows = []
for path in sys.argv[1:]:
    with open(path) as f:
        rows += [json.loads(l) for l in f if l.startswith("{")]


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


pot = {(r["m"], r["n"], r["precision"], r["threads"]): r["ms_per_iter"] for r in rows if r["solver"].endswith("pot-style")}
print("| solver | M x N | prec | thr | ms/iter (min-max) | GB/s | peak read / rw GB/s | matrix-sized read GB/s |"
      " % of peak (median) | % of peak (best/best) | GFLOP/s | vs pot-style | load |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    key = (r["m"], r["n"], r["precision"], r["threads"])
    ratio = f"{pot[key] / r['ms_per_iter']:.2f}x" if key in pot else "-"
    kind = "read" if r["peak_kind"] == "read" else "rw"
    print(f"| {r['solver']} | {r['m']}x{r['n']} | {r['precision']} | {r['threads']} |"
          f" {r['ms_per_iter']:.3f} ({r['ms_per_iter_min']:.3f}-{r['ms_per_iter_max']:.3f}) | {r['gbps']:.1f} |"
          f" {fmt(r['peak_read_gbps'], '.1f')} / {fmt(r['peak_rw_gbps'], '.1f')} |"
          f" {fmt(r.get('matrix_sized_read_gbps'), '.1f')} | {fmt(r['pct_of_peak'], '.1f')}% of {kind} |"
          f" {fmt(r.get('pct_of_peak_best'), '.1f')}% |"
          f" {r['gflops']:.1f} | {ratio} | {fmt(r.get('load_1m'), '.2f')} |")
print()
print("| solver | M x N | prec | peak RSS MiB | matrix MiB | RSS / matrix | budget 1.1 x matrix + 64 | within |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["threads"] != max(x["threads"] for x in rows):
        continue
    within = "yes" if r["peak_rss_mb"] <= r["memory_budget_mb"] else "NO"
    print(f"| {r['solver']} | {r['m']}x{r['n']} | {r['precision']} | {r['peak_rss_mb']:.1f} | {r['matrix_mb']:.1f} |"
          f" {r['peak_rss_mb'] / r['matrix_mb']:.3f} | {r['memory_budget_mb']:.1f} | {within} |")
