#!/usr/bin/env bash
# Device-machine session for the scale-out work (issue 12): headless configure
# (GUI and OpenCV off, CUDA on, NCCL found from /usr/include/nccl.h and
# libnccl.so, warnings as errors), build batched_bench and nccl_bench, then
#   check   the Qt-free checks: batched_bench --check, nccl_bench --check
#           (on 1 GPU the two-GPU checks report skipped), and the Qt Test
#           bundle's batched/NCCL tests when dist/qt-test-bundle.tar.xz travels;
#   bench   batched recolor images/s vs the per-image GPU loop (100 synthetic
#           1 MP images) and gpu-nccl per-iteration speed over every visible GPU;
#   all     both (default).
# Logs and JSON lines go to $OUT (default ./out/scaleout). On a 2-GPU machine
# (kind nvidia-h200-x2) the same command runs the two-GPU checks and the 2-GPU
# speed-up: `scripts/gpu_scaleout.sh all` (NCCL_NVLS_ENABLE=0 is set here).
set -u
MODE=${1:-all}
OUT=${OUT:-$PWD/out/scaleout}
BUILD=${BUILD:-build-device}
JOBS=${JOBS:-$(nproc)}
IMAGES=${IMAGES:-100}
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
  "$BUILD/tests/gpu/batched_bench" --images "$IMAGES" --size 1024x1024 > "$OUT/batched_bench.jsonl" 2> "$OUT/batched_bench.err" || status=1
  cat "$OUT/batched_bench.jsonl"; tail -3 "$OUT/batched_bench.err"
  "$BUILD/tests/gpu/nccl_bench" --sizes "$NCCL_SIZES" --iterations 100 > "$OUT/nccl_bench.jsonl" 2> "$OUT/nccl_bench.err" || status=1
  cat "$OUT/nccl_bench.jsonl"; tail -3 "$OUT/nccl_bench.err"
fi
exit $status
