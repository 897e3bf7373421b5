#!/usr/bin/env python3
"""Images per second of `uot-mpi batch` for several rank counts, and the
speed-up over one rank, from one run. Python standard library only (runs on the
headless GPU machine).

Each rank count P of --ranks runs
    mpirun -np P [--mpirun-args] uot-mpi batch REFERENCE INPUTS --out-dir <fresh> --json [--batch-args]
into a fresh output folder (so that nothing is skipped); images/s = the images
done / the wall time of the whole mpirun (start-up, reference palette, every
file's decode, solve, mapping and encode included). speed-up(P) = images/s(P) /
images/s(first P of --ranks). As root it adds --allow-run-as-root, and
--oversubscribe with more ranks than cores.

Usage:
  bench/mpi_batch_scaling.py --uot-mpi build/app/mpi/uot-mpi --reference REF.jpg --inputs DIR
      [--ranks 1,2] [--mpirun-args "--bind-to none"] [--batch-args "--device gpu"] [--repeats 1]
      [--json-out FILE] [--placement PAIRS.json --placement-per-rank N [--placement-layout Q]]

--placement puts the ranks on distinct physical cores from the pairs that
bench/topology/cpu_topology_probe.cpp measured (scripts/mpi_placement.py's
rankfile; leave --map-by/--bind-to out of --mpirun-args), --placement-per-rank
vCPUs each (their threads); --placement-layout Q places P ranks where the first
P of Q ranks go, so that one rank gets exactly what each of Q ranks gets.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from mpi_placement import placement_mpirun_args  # noqa: E402

PHASES = ("decode", "palette", "cost", "solve", "map", "encode")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--uot-mpi", required=True)
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--mpirun-args", default="")
    p.add_argument("--reference", required=True)
    p.add_argument("--inputs", required=True, nargs="+", help="image files and/or folders")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--batch-args", default="", help="options of uot-mpi batch, e.g. '--device gpu --gpu-batch 16'")
    p.add_argument("--repeats", type=int, default=1, help="runs per rank count (the median is taken)")
    p.add_argument("--json-out")
    p.add_argument("--placement", help="uot_cpu_topology_probe --pairs JSON")
    p.add_argument("--placement-per-rank", type=int, default=1, help="vCPUs per rank with --placement")
    p.add_argument("--placement-layout", type=int, default=0, help="place P ranks as the first P of this many")
    return p.parse_args()


def run_once(args, ranks):
    out = tempfile.mkdtemp(prefix="uot-mpi-batch-bench-")
    cmd = [args.mpirun, "-np", str(ranks)] + shlex.split(args.mpirun_args)
    if args.placement:
        cmd += placement_mpirun_args(args.placement, ranks, args.placement_per_rank, args.placement_layout,
                                     args.placement_dir)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if ranks > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    cmd += [args.uot_mpi, "batch", args.reference] + args.inputs + ["--out-dir", out, "--json", "--quiet"]
    cmd += shlex.split(args.batch_args)
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    shutil.rmtree(out, ignore_errors=True)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        sys.exit("P=%d failed (exit %d): %s\n%s" % (ranks, done.returncode, " ".join(cmd), done.stderr[-2000:]))
    if report["failed"] or report["cancelled"]:
        sys.exit("P=%d: %d failed, %d cancelled: %s" % (ranks, report["failed"], report["cancelled"], done.stderr[-2000:]))
    # One image's time in each phase (the report's per-item timings), mean over the
    # images done: where a rank's time goes. In the batched GPU path the images
    # overlap (workers decode and map while the device solves), so the phases of
    # one image add up to more than the wall time per image.
    items = [i["timings"] for i in report["items"] if i["status"] == "done"]
    profile = {k: 1e3 * sum(t[k] for t in items) / max(1, len(items)) for k in PHASES}
    return {"ranks": ranks, "done": report["done"], "wall_s": wall, "batch_s": report["seconds"],
            "images_per_s": report["done"] / wall, "device": report["device"], "exit": done.returncode,
            "ms_per_image": profile}


def main():
    args = parse_args()
    args.placement_dir = tempfile.mkdtemp(prefix="uot-mpi-placement-")
    rows = []
    for ranks in [int(x) for x in args.ranks.split(",")]:
        runs = [run_once(args, ranks) for _ in range(args.repeats)]
        best = sorted(runs, key=lambda r: r["images_per_s"])[len(runs) // 2]
        best["runs_images_per_s"] = [round(r["images_per_s"], 3) for r in runs]
        rows.append(best)
    base = rows[0]["images_per_s"]
    print("uot-mpi batch: %s; %d images; mpirun %s; batch %s" %
          (args.reference, rows[0]["done"], args.mpirun_args or "-", args.batch_args or "-"))
    print("%6s %8s %10s %10s %11s %9s %10s" % ("ranks", "images", "wall s", "batch s", "images/s", "speed-up",
                                                  "efficiency"))
    for r in rows:
        r["speed_up"] = r["images_per_s"] / base
        r["efficiency"] = r["speed_up"] * rows[0]["ranks"] / r["ranks"]
        print("%6d %8d %10.2f %10.2f %11.2f %8.2fx %9.1f%%" % (r["ranks"], r["done"], r["wall_s"], r["batch_s"],
                                                              r["images_per_s"], r["speed_up"], 100 * r["efficiency"]))
    print("\nmean ms per image in each phase (the report's timings; images overlap on worker threads):")
    print("%6s" % "ranks" + "".join("%9s" % k for k in PHASES))
    for r in rows:
        print("%6d" % r["ranks"] + "".join("%9.1f" % r["ms_per_image"][k] for k in PHASES))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
