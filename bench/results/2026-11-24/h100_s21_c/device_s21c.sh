#!/usr/bin/env bash
# Session 21, call C (after the logspeed merge): headless CUDA build (warnings as errors) and the 12 MP pipeline
# from decoded buffers (GPU and CPU, defaults: residual match through the field), the
# Qt test bundle (all suites, --require-gpu).
set -u
R=$PWD; O=${OUT:-/tmp/out}; mkdir -p "$O"
cmake -S . -B bd -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_BUILD_TYPE=Release -DUOT_EIGEN_INCLUDE_DIR="$R/.carry/eigen3" > "$O/build.log" 2>&1 \
  && cmake --build bd -j 8 >> "$O/build.log" 2>&1 && echo "build ok" > "$O/build_status.txt" &
b=$!
tar -xJf dist/qt-test-bundle.tar.xz -C /tmp && /tmp/qt-test-bundle/run_tests.sh --require-gpu --logs "$O/qt" > "$O/qt_summary.txt" 2>&1
tail -3 "$O/qt_summary.txt"; grep -E "FAIL" "$O/qt_summary.txt"
wait $b; cat "$O/build_status.txt" 2>/dev/null || grep -E "error" "$O/build.log" | head
for s in gpu-fused fused; do bd/bench/quality/uot_pipeline_buffers_speed .carry/ppm/leuvenA.ppm .carry/ppm/starry_night.ppm 12 5 $s; done > "$O/pipe12.txt" 2>&1
grep -E "^median|solve on" "$O/pipe12.txt" | head -4
nvidia-smi --query-gpu=name --format=csv,noheader > "$O/gpu.txt"
cd "$O" && tar czf logs.tgz qt && rm -rf qt
