#!/usr/bin/env bash
# Session 21, call D (final code): the studio bundle (GUI tests offscreen, CPU and GPU recolor, CPU vs
# GPU) and the 12 MP pipeline from decoded buffers (GPU, CPU) with the final code.
set -u
R=$PWD; O=${OUT:-/tmp/out}; mkdir -p "$O"
cmake -S . -B bd -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_BUILD_TYPE=Release -DUOT_EIGEN_INCLUDE_DIR="$R/.carry/eigen3" > "$O/build.log" 2>&1 \
  && cmake --build bd -j 8 --target uot_pipeline_buffers_speed >> "$O/build.log" 2>&1 && echo "build ok" > "$O/build_status.txt" &
b=$!
tar -xJf dist/studio-bundle.tar.xz -C /tmp && /tmp/studio-bundle/run_studio.sh --require-gpu --out "$O/studio" > "$O/studio_summary.txt" 2>&1
tail -20 "$O/studio_summary.txt"
wait $b; cat "$O/build_status.txt" 2>/dev/null || grep -E "error" "$O/build.log" | head
for s in gpu-fused fused; do bd/bench/quality/uot_pipeline_buffers_speed .carry/ppm/leuvenA.ppm .carry/ppm/starry_night.ppm 12 5 $s; done > "$O/pipe12.txt" 2>&1
grep -E "^median" "$O/pipe12.txt"
cd "$O" && tar czf studio.tgz studio && rm -rf studio
