#!/usr/bin/env bash
# The host's vCPU topology behind uot-mpi's placement (docs/mpi.md, "Placement"):
# what the guest is told (lscpu, /sys), which vCPUs slow each other down (the pair
# probe of bench/topology/cpu_topology_probe.cpp; scripts/mpi_placement.py reads the
# sibling pairs from it), and the memory bandwidth of 1, 2, 4, ... threads on distinct
# physical cores, spread, then on every vCPU.
#
#   bench/mpi_placement_probe.sh PROBE OUT [MS]
#     PROBE: the uot_cpu_topology_probe executable; MS: milliseconds per probe (30)
#   writes OUT/topology.txt, OUT/pairs.json and OUT/pairs.txt (the probe's table and the
#   pairs found), OUT/bandwidth.jsonl (one line per thread count); then, e.g.,
#   scripts/mpi_placement.py --probe OUT/pairs.json --ranks 8 --rankfile rf8
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
probe=${1:?usage: bench/mpi_placement_probe.sh PROBE OUT [MS]}
out=${2:?usage: bench/mpi_placement_probe.sh PROBE OUT [MS]}
ms=${3:-30}
mkdir -p "$out"
{
  lscpu
  for c in /sys/devices/system/cpu/cpu[0-9]*; do
    t=$c/topology
    echo "$(basename "$c"): package $(cat "$t/physical_package_id") core_id $(cat "$t/core_id")" \
      "siblings $(cat "$t/thread_siblings_list")"
  done
} > "$out/topology.txt"
"$probe" --pairs --ms "$ms" --json "$out/pairs.json" > "$out/pairs.txt"
cpu_set() { python3 "$root/scripts/mpi_placement.py" --probe "$out/pairs.json" --ranks "$1" | sed -n 's/^cpu-set: //p'; }
summary=$(python3 "$root/scripts/mpi_placement.py" --probe "$out/pairs.json" --ranks 1)
echo "$summary" | head -2 >> "$out/pairs.txt"
cat "$out/pairs.txt"
cores=$(echo "$summary" | sed -n 's/^cores: \([0-9]*\) of.*/\1/p')
all=$(python3 -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))['cpus'])))" "$out/pairs.json")
: > "$out/bandwidth.jsonl"
for k in 1 2 4 8 16 32 64 128; do
  [ "$k" -le "$cores" ] || break
  "$probe" --bandwidth --cpus "$(cpu_set "$k")" | tee -a "$out/bandwidth.jsonl"
done
"$probe" --bandwidth --cpus "$all" | tee -a "$out/bandwidth.jsonl"
