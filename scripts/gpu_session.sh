#!/usr/bin/env bash
# One device-machine session for the GPU backend: configure (no GUI, no OpenCV,
# CUDA on, warnings as errors), build the GPU library, the GPU benchmark and
# `uot`, run the GPU tests, list the devices with their measured bandwidth, and
# run the benchmark. Logs and JSON go to $OUT (default ./out/gpu).
#
# The tests are Qt Test executables and the GPU machine has no Qt: they run
# from the bundle of scripts/qt_test_bundle.sh (dist/qt-test-bundle.tar.xz,
# carried with the work tree); without it, the test step fails and says so.
#
#   scripts/gpu_session.sh [all|test|bench] [extra gpu_bench arguments...]
#   scripts/gpu_session.sh mpi [extra bench/mpi_scaling.py arguments...]
#     uot-mpi on the host cores (the build finds the machine's OpenMPI): ctest -L mpi,
#     then strong and weak scaling at 16384^2 fp32 for P = 1, 2, 4, 8, 16 (one rank a core).
set -u
MODE=${1:-all}
shift || true
OUT=${OUT:-$PWD/out/gpu}
BUILD=${BUILD:-build-device}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
# The GPU machine has no Eigen (a required dependency): carry a copy of
# /usr/include/eigen3 as .carry/eigen3 (ignored by git), or name one in
# UOT_EIGEN_INCLUDE_DIR.
if [ -z "${UOT_EIGEN_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/eigen3/Eigen/Core ] && [ -f .carry/eigen3/Eigen/Core ]; then
  UOT_EIGEN_INCLUDE_DIR=$PWD/.carry/eigen3
fi

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
cmake -S . -B "$BUILD" -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON \
  -DUOT_WARNINGS_AS_ERRORS=ON -DCMAKE_BUILD_TYPE=Release \
  ${UOT_EIGEN_INCLUDE_DIR:+-DUOT_EIGEN_INCLUDE_DIR="$UOT_EIGEN_INCLUDE_DIR"} > "$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log"; exit 1; }
# Everything the headless build has: every test labelled gpu, gpu_bench and `uot`.
cmake --build "$BUILD" -j "$JOBS" >> "$OUT/build.log" 2>&1 \
  || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
echo "build ok"

status=0
if [ "$MODE" = all ] || [ "$MODE" = test ]; then
  if [ -f dist/qt-test-bundle.tar.xz ]; then
    tar -xJf dist/qt-test-bundle.tar.xz -C "$OUT" \
      && "$OUT/qt-test-bundle/run_tests.sh" --require-gpu --logs "$OUT/qt-tests" | tee "$OUT/tests_gpu.log" \
      || status=1
  else
    echo "no dist/qt-test-bundle.tar.xz: build it on a machine with Qt (scripts/qt_test_bundle.sh) and carry it" >&2
    status=1
  fi
fi
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
  [ -x "$BUILD/app/cli/uot" ] && "$BUILD/app/cli/uot" devices --bandwidth > "$OUT/devices.txt" 2>&1 && "$BUILD/app/cli/uot" devices --json >> "$OUT/devices.txt" 2>&1
  cat "$OUT/devices.txt" 2>/dev/null
  "$BUILD/tests/gpu/gpu_bench" "$@" > "$OUT/bench.jsonl" 2> "$OUT/bench.err" || status=1
  grep -v '"tune"' "$OUT/bench.jsonl" | grep -v '^{"solver"' ; tail -3 "$OUT/bench.err"
  "$BUILD/tests/gpu/gpu_bench" --precision fp64 --sizes 4096x4096,8192x8192 --solvers gpu-fused,gpu-mapuot,gpu-pot-style \
    > "$OUT/bench_fp64.jsonl" 2>&1 || status=1
  grep -A20 '^solver ' "$OUT/bench_fp64.jsonl"
  # Cross-check through the product's `uot bench` (other helper's command), when it built.
  if [ -x "$BUILD/app/cli/uot" ]; then
    timeout 200 "$BUILD/app/cli/uot" bench --device gpu --solver gpu-fused,gpu-mapuot,gpu-pot-style --size 4096x4096 \
      --size 16384x16384 --iterations 100 --repeats 3 --json > "$OUT/uot_bench.txt" 2>&1
    grep -v '^{' "$OUT/uot_bench.txt" | tail -12
  fi
fi
if [ "$MODE" = mpi ]; then
  if [ -x "$BUILD/app/mpi/uot-mpi" ]; then
    (cd "$BUILD" && ctest -L mpi --output-on-failure --timeout 600) > "$OUT/ctest_mpi.log" 2>&1 || status=1
    tail -4 "$OUT/ctest_mpi.log"
    python3 bench/mpi_scaling.py --uot-mpi "$BUILD/app/mpi/uot-mpi" --mpirun-args "--bind-to core --map-by core" \
      --json-out "$OUT/mpi_scaling.jsonl" "$@" 2> "$OUT/mpi_scaling.err" | tee "$OUT/mpi_scaling.txt" || status=1
  else
    echo "uot-mpi was not built: CMake found no MPI (see $OUT/build.log)"
    status=1
  fi
fi
exit $status
