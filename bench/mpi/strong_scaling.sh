#!/usr/bin/env bash
# Strong scaling of `uot-mpi solve` on one host: one problem (uot-mpi's --random
# MxN: random points in the unit square, squared distances, each rank generating
# its own rows), fp64 (--precision), a fixed number of iterations, for P = 1, 2, 4, 8 ranks, one
# thread per rank, each rank bound to its own core. Prints, from this one run,
# the time per iteration (the iteration loop only: the kernel build is set-up),
# the speed-up T1 / TP and the efficiency E = T1 / (P TP) (T1: the first P of
# --ranks, which is 1 by default; otherwise E = P1 T_P1 / (P TP)), with the slowest
# rank's time waiting in reductions per iteration and the reductions per
# iteration (docs/mpi.md).
#
# Needs only the built uot-mpi and mpirun (Open MPI) plus the shell's awk.
#
# Usage:
#   bench/mpi/strong_scaling.sh [--uot-mpi PATH] [--size 16384x16384] [--ranks "1 2 4 8"]
#                               [--iterations 100] [--solver auto] [--mode auto] [--seed 1]
#                               [--precision fp64]
#                               [--mpirun-args "..."]
# Environment:
#   UOT_MPI_ROOT=1   running as root (the device host): passes --allow-run-as-root
#                    and --oversubscribe to mpirun
#   UOT_MPI_BIND=core|none   rank binding (default core: --bind-to core --map-by core)
#   MPIRUN=mpirun    the mpirun to use
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
uot_mpi="$here/build/app/mpi/uot-mpi"
size=16384x16384
ranks="1 2 4 8"
iterations=100
solver=auto
mode=auto
seed=1
precision=fp64
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --uot-mpi) uot_mpi=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --solver) solver=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    --mpirun-args) read -r -a extra <<< "$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "strong_scaling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$uot_mpi" ] || { echo "strong_scaling.sh: no uot-mpi at '$uot_mpi' (build it, or pass --uot-mpi)" >&2; exit 2; }
mpirun=${MPIRUN:-mpirun}
command -v "$mpirun" >/dev/null || { echo "strong_scaling.sh: no '$mpirun' (apt-get install openmpi-bin)" >&2; exit 2; }

launch=("$mpirun")
if [ "${UOT_MPI_ROOT:-0}" = 1 ]; then launch+=(--allow-run-as-root --oversubscribe); fi
case "${UOT_MPI_BIND:-core}" in
  core) launch+=(--bind-to core --map-by core) ;;
  none) launch+=(--bind-to none) ;;
  *) echo "strong_scaling.sh: UOT_MPI_BIND must be core or none" >&2; exit 2 ;;
esac
launch+=("${extra[@]}")

work=$(mktemp -d "${TMPDIR:-/tmp}/uot-strong-scaling.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The value of a numeric member of the one-line JSON summary.
field() { sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p" <<< "$2"; }

echo "uot-mpi strong scaling: --random $size, $precision, $iterations fixed iterations, --solver $solver --mode $mode," \
     "1 thread per rank, binding ${UOT_MPI_BIND:-core}, $(nproc) cores"
printf "%5s %12s %9s %11s %14s %11s %12s\n" P ms/iter speed-up efficiency comm-ms/iter comm-share reductions
t1=""
p1=""
for p in $ranks; do
  out="$work/p$p"
  log="$work/p$p.log"
  if ! "${launch[@]}" -np "$p" "$uot_mpi" solve --random "$size" --seed "$seed" --precision "$precision" \
       --fixed-iterations --max-iter "$iterations" --solver "$solver" --mode "$mode" --threads 1 \
       --out-dir "$out" --json > "$log" 2>&1; then
    echo "strong_scaling.sh: the run on $p ranks failed:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  json=$(grep '^{' "$log" | tail -1)
  ms=$(field ms_per_iter "$json")
  comm=$(field comm_ms_per_iter "$json")
  share=$(field comm_share "$json")
  calls=$(field allreduce_per_iter "$json")
  if [ -z "$t1" ]; then t1=$ms; p1=$p; fi
  awk -v p="$p" -v t="$ms" -v t1="$t1" -v p1="$p1" -v c="$comm" -v s="$share" -v r="$calls" 'BEGIN {
    printf "%5d %12.3f %9.2f %10.1f%% %14.4f %10.1f%% %12.2f\n", p, t, t1 / t, 100 * p1 * t1 / (p * t), c, 100 * s, r }'
done
