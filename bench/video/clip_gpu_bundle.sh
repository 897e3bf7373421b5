#!/usr/bin/env bash
# Packs what the GPU clip figures need on the headless GPU machine (no OpenCV,
# no FFmpeg libraries, no Qt there): uot-image from BUILD (configured with
# CUDA, OpenCV and UOT_VIDEO, no GUI; the image commands of uot, run directly),
# uot_clip_map_bench, test_clip_gpu and their shared-library closure (libav*
# included; the codecs, protocols and formats that libavcodec, libavformat and
# OpenCV link but an H.264/AAC clip never calls are stand-ins, as GDAL is for
# OpenCV: scripts/make_stub_library.py), two 1080p clips made here with ffmpeg's testsrc2
# (300 frames with AAC audio; 40 frames), and DEST/run.sh, which runs there:
#   - test_clip_gpu (a clip mapped on the GPU inside the pipeline);
#   - the look of the clip (uot lut, --device gpu), then uot_clip_map_bench:
#     decode alone, the map alone on the CPU and on the GPU (same frames,
#     compared), and the whole pipeline on both into PNG sequences (40 frames);
#   - the whole run, `uot recolor --device cpu` against `--device gpu`, twice.
#
#   bench/video/clip_gpu_bundle.sh BUILD DEST      # here
#   OUT=/some/folder DEST/run.sh                   # there
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/video/clip_gpu_bundle.sh BUILD DEST}
dest=${2:?usage: bench/video/clip_gpu_bundle.sh BUILD DEST}
source scripts/bundle_closure.sh
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/clips"
bins=("$build/app/cli/uot-image" "$build/bench/video/uot_clip_map_bench"
      "$build/tests/video/test_clip_gpu")
for b in "${bins[@]}"; do
  cp "$b" "$dest/bin/"
  strip "$dest/bin/$(basename "$b")"
done
cp resources/samples/starry_night.jpg "$dest/reference.jpg"
BUNDLE_STUBS="libgdal.so libgdcmMSFF.so libgdcmDSED.so libopenjp2.so libicudata.so libcodec2.so libx265.so \
libSvtAv1Enc.so libaom.so librav1e.so librsvg-2.so libopenmpt.so libzvbi.so libdav1d.so liblapack.so libOpenEXR-3_1.so \
librabbitmq.so libvpx.so libsrt-gnutls.so libbluray.so libchromaprint.so libzmq.so libshine.so libtwolame.so \
libmp3lame.so libspeex.so libvorbisenc.so libopus.so libgsm.so" \
  bundle_copy_closure "$dest/lib" "$dest"/bin/*
ffmpeg -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 \
  -t 12 -c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 \
  -color_trc bt709 -color_range tv -c:a aac -shortest "$dest/clips/c1080.mp4"
ffmpeg -v error -y -i "$dest/clips/c1080.mp4" -frames:v 40 -c:v libx264 -preset veryfast -crf 26 -an \
  "$dest/clips/short1080.mp4"
bundle_start_run_script "$dest/run.sh" "The GPU clip figures (bench/video/clip_gpu_bundle.sh made this folder); logs under \$OUT."
cat >> "$dest/run.sh" <<'RUN'
work=$(mktemp -d)
clip=$here/clips/c1080.mp4
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc
  "$here/bin/test_clip_gpu" 2>&1 | tail -6
  "$here/bin/uot-image" lut "$clip" "$here/reference.jpg" -o "$work/look.cube" --device gpu --json --quiet
  "$here/bin/uot_clip_map_bench" "$clip" "$work/look.cube"
  mkdir -p "$work/check"
  "$here/bin/uot_clip_map_bench" "$here/clips/short1080.mp4" "$work/look.cube" --frames 1 --check-dir "$work/check"
  for device in cpu gpu cpu gpu; do
    "$here/bin/uot-image" recolor "$clip" "$here/reference.jpg" -o "$work/out_$device.mp4" --device "$device" --json \
      --quiet --overwrite | tr -d '\n'
    echo
  done
} > "$out/clip_gpu.txt" 2>&1
rm -rf "$work"
cat "$out/clip_gpu.txt"
RUN
du -sh "$dest"
