#!/usr/bin/env bash
# Device-machine session for the scale-out work (issue 12): headless configure
# (GUI and OpenCV off, CUDA on, NCCL found from /usr/include/nccl.h and
# libnccl.so, warnings as errors), build batched_bench and nccl_bench, then
#   check   the Qt-free checks: batched_bench --check, nccl_bench --check
#           (on 1 GPU the two-GPU checks report skipped), and the Qt Test
#           bundle's batched/NCCL tests when dist/qt-test-bundle.tar.xz travels;
#   bench   batched recolor images/s vs the per-image GPU loop (100 synthetic
#           1 MP images) and gpu-nccl per-iteration speed over every visible GPU;
#   ceiling the memory-bandwidth ceiling of uot-mpi's strong scaling on the host
#           cores: `uot bench --solver fused` at 16384^2 fp32 (host read
#           bandwidth probe + ms/iter) with 1, 2, 4, 8, 16 OpenMP threads, and
#           one rank's share (2048 x 16384) solved by 1 process alone and by 8
#           processes at once (mpirun -np 8, one core each);
#   all     check and bench (default); `all ceiling` runs the three.
# Logs and JSON lines go to $OUT (default ./out/scaleout). On a 2-GPU machine
# (kind nvidia-h200-x2) the same command runs the two-GPU checks and the 2-GPU
# speed-up: `scripts/gpu_scaleout.sh all` (NCCL_NVLS_ENABLE=0 is set here).
set -u
MODE=${1:-all}
EXTRA=${2:-}
OUT=${OUT:-$PWD/out/scaleout}
BUILD=${BUILD:-build-device}
JOBS=${JOBS:-$(nproc)}
IMAGES=${IMAGES:-100}
GROUP_SIZES=${GROUP_SIZES:-8,16,32}
NCCL_SIZES=${NCCL_SIZES:-16384x16384,32768x32768}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi -L > "$OUT/gpus.txt" 2>&1 || true
cmake -S . -B "$BUILD" -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_NCCL=ON \
  -DUOT_WARNINGS_AS_ERRORS=ON -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" --target batched_bench nccl_bench >> "$OUT/build.log" 2>&1 \
  || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(grep -o 'NCCL=[A-Z]*' "$OUT/build.log" | head -1))"
status=0
if [ "$MODE" = all ] || [ "$MODE" = check ]; then
  "$BUILD/tests/gpu/batched_bench" --check > "$OUT/batched_check.txt" 2>&1 || status=1
  tail -20 "$OUT/batched_check.txt"
  "$BUILD/tests/gpu/nccl_bench" --check > "$OUT/nccl_check.txt" 2>&1 || status=1
  tail -16 "$OUT/nccl_check.txt"
  if [ -f dist/qt-test-bundle.tar.xz ]; then
    tar -xJf dist/qt-test-bundle.tar.xz -C "$OUT" && for t in test_gpu_batched test_gpu_nccl; do
      "$OUT/qt-test-bundle/run_tests.sh" --require-gpu --logs "$OUT/qt-tests" "$t" | tail -2 || status=1
    done
    "$OUT/qt-test-bundle/run_tests.sh" --logs "$OUT/qt-tests" test_gpu_nccl_two | tail -2 || status=1
  fi
fi
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
  "$BUILD/tests/gpu/batched_bench" --images "$IMAGES" --size 1024x1024 --group "$GROUP_SIZES" > "$OUT/batched_bench.jsonl" 2> "$OUT/batched_bench.err" || status=1
  cat "$OUT/batched_bench.jsonl"; tail -3 "$OUT/batched_bench.err"
  "$BUILD/tests/gpu/nccl_bench" --sizes "$NCCL_SIZES" --iterations 100 > "$OUT/nccl_bench.jsonl" 2> "$OUT/nccl_bench.err" || status=1
  cat "$OUT/nccl_bench.jsonl"; tail -3 "$OUT/nccl_bench.err"
fi
if [ "$MODE" = ceiling ] || [ "$EXTRA" = ceiling ]; then
  cmake --build "$BUILD" -j "$JOBS" --target uot >> "$OUT/build.log" 2>&1 || { echo "uot did not build"; exit 1; }
  uot="$BUILD/app/cli/uot"
  : > "$OUT/ceiling_threads.jsonl"
  for t in 1 2 4 8 16; do
    "$uot" bench --solver fused --size 16384x16384 --precision fp32 --threads "$t" --iterations 10 --warmup 2 \
      --repeats 3 --json 2>> "$OUT/ceiling.err" | grep '^{' >> "$OUT/ceiling_threads.jsonl"
  done
  share=(bench --solver fused --size 2048x16384 --precision fp32 --threads 1 --iterations 20 --warmup 2 --repeats 3 --json)
  mpi=(mpirun --allow-run-as-root --bind-to core --map-by core)
  "${mpi[@]}" -np 1 "$uot" "${share[@]}" 2>> "$OUT/ceiling.err" | grep '^{' > "$OUT/ceiling_share_1proc.jsonl"
  "${mpi[@]}" -np 8 "$uot" "${share[@]}" 2>> "$OUT/ceiling.err" | grep '^{' > "$OUT/ceiling_share_8proc.jsonl"
  python3 - "$OUT" <<'PY'
import json, sys, statistics
out = sys.argv[1]
def rows(name):
    return [json.loads(l) for l in open(f"{out}/{name}") if l.strip()]
for r in rows("ceiling_threads.jsonl"):
    print(f"threads {r.get('threads')}: fused {r.get('ms_per_iter')} ms/iter, probe read {r.get('peak_read_gbps')} GB/s, {r.get('pct_of_peak')}% of it")
one = rows("ceiling_share_1proc.jsonl"); eight = rows("ceiling_share_8proc.jsonl")
if one and eight:
    a = one[0]["ms_per_iter"]; b = statistics.median(r["ms_per_iter"] for r in eight)
    ra = one[0].get("peak_read_gbps"); rb = sum(r.get("peak_read_gbps") or 0 for r in eight)
    print(f"rank share 2048x16384: alone {a} ms/iter, 8 at once median {b} ms/iter: ceiling of 8-rank efficiency {a / b:.3f}")
    print(f"read probe: 1 process {ra} GB/s, 8 processes at once (sum) {rb:.1f} GB/s ({rb / ra if ra else 0:.2f}x)")
PY
fi
exit $status
