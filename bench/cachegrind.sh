#!/usr/bin/env bash
# Cache-miss comparison (the MAP-UOT paper's): simulated D1 and last-level data
# misses PER ITERATION for fused, mapuot and pot-style, with valgrind's
# cachegrind. Each variant runs twice in one process each (`uot bench
# --single-solve --in-process --no-probe --threads 1`) with N1 and N2
# iterations; misses per iteration = (misses(N2) - misses(N1)) / (N2 - N1), so
# set-up (building K) and start-up cancel out.
#
# Usage: bench/cachegrind.sh UOT_BINARY [OUT_DIR]
# Env:   SIZE (1024x1024), PRECISIONS (fp32 fp64), SOLVERS (fused mapuot pot-style),
#        N1 (4), N2 (12), D1 (49152,12,64 = this VM's L1D), LL_CONFIGS
#        ("33554432,16,64 1048576,16,64": a 32 MiB L3-like last level, and one the
#        size of this VM's 1 MiB L2, smaller than the matrix),
#        UOT_ROW_PIPELINE (on|off; default: what this host's CPU gets, see below).
# Writes OUT_DIR/cachegrind.json (one object per line) and prints a table.
set -euo pipefail
uot=${1:?usage: bench/cachegrind.sh UOT_BINARY [OUT_DIR]}
out=${2:-out/cachegrind}
size=${SIZE:-1024x1024}
precisions=${PRECISIONS:-fp32 fp64}
solvers=${SOLVERS:-fused mapuot pot-style}
n1=${N1:-4}
n2=${N2:-12}
d1=${D1:-49152,12,64}
ll_configs=${LL_CONFIGS:-33554432,16,64 1048576,16,64}
# valgrind reports a CPU of its own (Intel), so the solvers' automatic choice of
# the interleaved row kernels (row_kernels.h: on for Intel) would follow it, not
# this host: pin the choice this host's CPU gets.
if [ -z "${UOT_ROW_PIPELINE:-}" ]; then
  if grep -q GenuineIntel /proc/cpuinfo; then UOT_ROW_PIPELINE=on; else UOT_ROW_PIPELINE=off; fi
fi
export UOT_ROW_PIPELINE
command -v valgrind >/dev/null || { echo "cachegrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 4; }
mkdir -p "$out"
json="$out/cachegrind.json"
: > "$json"

# Prints "Drefs D1mr D1mw LLdmr LLdmw" from cachegrind's summary (numbers without commas).
run_one() {
  local solver=$1 prec=$2 iters=$3 ll=$4
  local log="$out/cg_${solver}_${prec}_${iters}_${ll//,/_}.log"
  valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1="$d1" --LL="$ll" \
    --cachegrind-out-file=/dev/null \
    "$uot" bench --solver "$solver" --size "$size" --precision "$prec" --threads 1 \
    --iterations "$iters" --single-solve --in-process --no-probe >"$log" 2>&1 || {
      echo "cachegrind.sh: valgrind run failed, see $log" >&2; exit 1; }
  /usr/bin/python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace(",", "")
def grab(label):
    m = re.search(r"==\d+== " + re.escape(label) + r":\s+(\d+)\s+\(\s*(\d+) rd\s+\+\s+(\d+) wr\)", text)
    if not m:
        sys.exit("cannot find '%s' in %s" % (label, sys.argv[1]))
    return int(m.group(2)), int(m.group(3))
drd, dwr = grab("D   refs")
d1r, d1w = grab("D1  misses")
llr, llw = grab("LLd misses")
print(drd + dwr, d1r, d1w, llr, llw)
PY
}

echo "row kernels: UOT_ROW_PIPELINE=$UOT_ROW_PIPELINE (interleaved when on)"
printf '%-10s %-5s %-16s %14s %14s %14s %12s\n' solver prec "LL (B,ways,line)" "D refs/it" "D1 miss/it" "LLd miss/it" "lines of K/it"
for ll in $ll_configs; do
  for prec in $precisions; do
    for solver in $solvers; do
      read -r r1 a1 b1 c1 d1m1 < <(run_one "$solver" "$prec" "$n1" "$ll")
      read -r r2 a2 b2 c2 d1m2 < <(run_one "$solver" "$prec" "$n2" "$ll")
      /usr/bin/python3 - "$solver" "$prec" "$ll" "$size" "$n1" "$n2" "$r1" "$a1" "$b1" "$c1" "$d1m1" \
        "$r2" "$a2" "$b2" "$c2" "$d1m2" "$d1" "$UOT_ROW_PIPELINE" >>"$json" <<'PY'
import json, sys
solver, prec, ll, size = sys.argv[1:5]
n1, n2 = int(sys.argv[5]), int(sys.argv[6])
v1 = [int(x) for x in sys.argv[7:12]]
v2 = [int(x) for x in sys.argv[12:17]]
d = [(b - a) / (n2 - n1) for a, b in zip(v1, v2)]
m, n = (int(t) for t in size.split("x"))
elem = 4 if prec == "fp32" else 8
print(json.dumps({
    "solver": solver, "m": m, "n": n, "precision": prec, "threads": 1,
    "d1_config": sys.argv[17], "ll_config": ll, "iterations": [n1, n2],
    "d_refs_per_iter": round(d[0]), "d1_read_misses_per_iter": round(d[1]),
    "d1_write_misses_per_iter": round(d[2]), "d1_misses_per_iter": round(d[1] + d[2]),
    "ll_read_misses_per_iter": round(d[3]), "ll_write_misses_per_iter": round(d[4]),
    "ll_misses_per_iter": round(d[3] + d[4]),
    "matrix_lines": m * n * elem // 64, "row_pipeline": sys.argv[18],
}))
PY
      tail -n 1 "$json" | /usr/bin/python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("%-10s %-5s %-16s %14d %14d %14d %12d" % (r["solver"], r["precision"], r["ll_config"], r["d_refs_per_iter"],
      r["d1_misses_per_iter"], r["ll_misses_per_iter"], r["matrix_lines"]))'
    done
  done
done
echo "wrote $json"
