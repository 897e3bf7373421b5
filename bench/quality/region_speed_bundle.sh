#!/usr/bin/env bash
# Packs what the regions' GPU figures need on the headless GPU machine (no Qt,
# no OpenCV there): uot_region_speed and test_gpu_regions from BUILD (a CUDA
# build with OpenCV), their shared-library closure, the three sample photos the
# bench reads, and DEST/run.sh, which runs there:
#   test_gpu_regions (the batched regions against float64 solves);
#   uot_region_speed --regions --device gpu at 12 MP and at 1 MP (one region
#   against two, concurrently and one by one, the ratios from one run);
#   uot_region_speed --regions on that machine's CPU at 12 MP (at most 60 s).
# Also packs DEST.tar.xz (about 21 MB; the folder is about 81 MB). BUILD should
# leave out what the two programs do not need, or the closure outgrows what the
# device takes (64 MiB): clips (libav*), the studio and MPI:
#
#   cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DUOT_VIDEO=OFF -DUOT_BUILD_GUI=OFF -DUOT_MPI=OFF
#   cmake --build build-gpu --target uot_region_speed test_gpu_regions
#   bench/quality/region_speed_bundle.sh build-gpu DEST    # here
#   OUT=/some/folder DEST/run.sh                            # there
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/quality/region_speed_bundle.sh BUILD DEST}
dest=${2:?usage: bench/quality/region_speed_bundle.sh BUILD DEST}
source scripts/bundle_closure.sh
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/resources/samples"
cp "$build/bench/quality/uot_region_speed" "$build/tests/gpu/test_gpu_regions" "$dest/bin/"
strip "$dest"/bin/*
cp resources/samples/leuvenA.jpg resources/samples/starry_night.jpg resources/samples/fruits.jpg "$dest/resources/samples/"
BUNDLE_STUBS="libgdal.so libgdcmMSFF.so libgdcmDSED.so libopenjp2.so libicudata.so" \
  bundle_copy_closure "$dest/lib" "$dest"/bin/*
bundle_start_run_script "$dest/run.sh" "The regions' GPU figures (bench/quality/region_speed_bundle.sh made this folder); logs under \$OUT."
cat >> "$dest/run.sh" <<'RUN'
cd "$here"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device.txt" 2>&1
bin/test_gpu_regions > "$out/test_gpu_regions.txt" 2>&1
echo "test_gpu_regions exit $?" >> "$out/test_gpu_regions.txt"
for mp in 12 1; do
  bin/uot_region_speed --regions --device gpu --megapixels "$mp" --repeat 5 > "$out/region_speed_gpu_${mp}mp.txt" 2>&1
  echo "exit $?" >> "$out/region_speed_gpu_${mp}mp.txt"
done
nproc > "$out/cpu.txt"
timeout 60 bin/uot_region_speed --regions --megapixels 12 --repeat 3 > "$out/region_speed_cpu_12mp.txt" 2>&1
echo "exit $?" >> "$out/region_speed_cpu_12mp.txt"
RUN
du -sh "$dest"
tar -C "$(dirname "$dest")" -cJf "$dest.tar.xz" "$(basename "$dest")"
du -sh "$dest.tar.xz"
