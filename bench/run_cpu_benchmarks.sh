#!/usr/bin/env bash
# Every CPU benchmark of docs/BENCHMARKS.md, in one session, JSON under one folder:
#   1. uot bench: fused, mapuot, pot-style at 4096^2 and 1024x10240, fp32 and fp64, 2 threads
#   2. bench/pot_compare.py: ours vs POT 0.8.2 at 4096^2 (fp32, fp64)
#   3. bench/cachegrind.sh: simulated D1 / LL misses per iteration at 1024^2
# Usage: bench/run_cpu_benchmarks.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR defaults to build (a Release build with the `uot` target built);
#   OUT_DIR defaults to out/bench-YYYYmmdd-HHMMSS.
# Env: THREADS (2), ITERATIONS (50), SKIP_CACHEGRIND=1, SKIP_POT=1, WAIT_QUIET=SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/bench-$(date -u +%Y%m%d-%H%M%S)}
uot="$build/app/cli/uot"
threads=${THREADS:-2}
iterations=${ITERATIONS:-50}
[ -x "$uot" ] || { echo "run_cpu_benchmarks.sh: $uot not found; build the 'uot' target first" >&2; exit 2; }
mkdir -p "$out"
# WAIT_QUIET=SECONDS: wait (at most that long) for the 1-minute load average to drop below 0.5.
if [ -n "${WAIT_QUIET:-}" ]; then
  end=$(( $(date +%s) + WAIT_QUIET ))
  while awk '{exit !($1 >= 0.5)}' /proc/loadavg && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
fi
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "cores: $(nproc)"
  echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"
cat "$out/machine.txt"

echo "== 1. uot bench =="
"$uot" bench --solver fused,mapuot,pot-style --size 4096x4096 --size 1024x10240 --precision fp32,fp64 \
  --threads "$threads" --iterations "$iterations" --json > "$out/bench.json" 2> "$out/bench_table.txt"
cat "$out/bench_table.txt"

if [ -z "${SKIP_POT:-}" ]; then
  echo "== 2. ours vs POT =="
  /usr/bin/python3 bench/pot_compare.py --uot "$uot" --size 4096x4096 --precision fp32,fp64 \
    --threads "$threads" --iterations "$iterations" --solver fused,mapuot,pot-style \
    --json-out "$out/pot_compare.json" 2> "$out/pot_compare_log.txt" | tee "$out/pot_compare_table.txt"
fi

if [ -z "${SKIP_CACHEGRIND:-}" ]; then
  echo "== 3. cachegrind =="
  bench/cachegrind.sh "$uot" "$out/cachegrind" | tee "$out/cachegrind_table.txt"
fi
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "results in $out"
