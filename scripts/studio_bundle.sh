#!/usr/bin/env bash
# Builds the studio here (GUI, OpenCV and CUDA on, sm_90) with its GUI tests and
# packs them for the GPU machine, which has neither Qt nor OpenCV: executables,
# their shared-library closure, Qt's offscreen platform plugin (and the JPEG
# image plugin), a font with a fontconfig file, the sample images and a runner.
# Libraries linked but never used (BUNDLE_STUBS below says which and why) travel
# as stand-ins (scripts/make_stub_library.py), so that the archive plus the work
# tree fit the 64 MiB that travel to the GPU machine. Since the studio reads and
# writes clips (libav), all 20 GUI tests no longer fit beside it: GUI_TESTS
# picks them.
#
#   scripts/studio_bundle.sh             -> dist/studio-bundle.tar.xz
#
# On the GPU machine (the archive carried with the work tree):
#
#   tar -xJf dist/studio-bundle.tar.xz -C /tmp &&
#     /tmp/studio-bundle/run_studio.sh --require-gpu --out "$OUT/studio"
#
# The runner runs the GUI tests (offscreen), a recolor on the GPU and a CPU vs
# GPU comparison, with screenshots; here (no GPU) the GPU parts say "no GPU
# device" and the rest runs. Environment: BUILD (default build-studio-bundle),
# DIST (default dist), JOBS (default 2), GUI_TESTS (a CTest -R pattern over the
# GUI tests, label ui; default: the two that drive the GPU through the studio,
# test_comparison_view and test_studio_script; "." for all of them, which with
# the clips' libraries is more than travels).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-studio-bundle}
DIST=${DIST:-dist}
JOBS=${JOBS:-2}
GUI_TESTS=${GUI_TESTS:-^test_comparison_view$|^test_studio_script$}
name=studio-bundle
stage="$DIST/$name"
mkdir -p "$DIST"
source scripts/bundle_closure.sh

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
echo "== configure $BUILD (GUI, OpenCV and CUDA on, sm_90)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUOT_BUILD_GUI=ON -DUOT_WITH_OPENCV=ON \
  -DUOT_BUILD_TESTS=ON -DUOT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" > "$DIST/$name.configure.log" 2>&1 \
  || { tail -30 "$DIST/$name.configure.log"; exit 1; }

# The GUI tests: CTest label ui, NAME<TAB>TIMEOUT.
list_ui_tests() {
  ctest --test-dir "$BUILD" --show-only=json-v1 -L ui -R "$GUI_TESTS" | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    print(t["name"] + "\t" + str(int(props.get("TIMEOUT", 1500))))
'
}
mapfile -t tests < <(list_ui_tests | cut -f1)
[ "${#tests[@]}" -gt 0 ] || { echo "no GUI tests found (label ui)" >&2; exit 1; }
echo "== build uot-studio and ${#tests[@]} GUI tests: ${tests[*]}"
cmake --build "$BUILD" -j "$JOBS" --target uot-studio uot "${tests[@]}" > "$DIST/$name.build.log" 2>&1 \
  || { grep -E "error|FAILED" "$DIST/$name.build.log" | head -40; exit 1; }

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/plugins/platforms" "$stage/plugins/imageformats" "$stage/fonts"
cp "$BUILD/app/studio/uot-studio" "$BUILD/app/cli/uot" "$stage/bin/"  # uot: the wrapped solve of simulated caches
list_ui_tests > "$stage/tests.list"
for test in "${tests[@]}"; do
  exe=$(find "$BUILD/tests" -type f -name "$test" -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "built test $test not found" >&2; exit 1; }
  cp "$exe" "$stage/bin/"
done
strip --strip-unneeded "$stage"/bin/* 2> /dev/null || true

# Qt's plugins: the offscreen platform, and JPEG for QImage (the bundled samples).
qt_plugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2> /dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
cp "$qt_plugins/platforms/libqoffscreen.so" "$stage/plugins/platforms/"
cp "$qt_plugins/imageformats/libqjpeg.so" "$stage/plugins/imageformats/" 2> /dev/null || true
# GDAL, GDCM, OpenJPEG and OpenEXR are behind OpenCV's image codecs, ICU's data
# behind Qt Core. The clips are written with libx264 or libvpx-vp9 (core/video/libav_clip_writer.cpp),
# their audio is copied, not decoded, AV1 is decoded by libdav1d, and files are read
# from disk: the other encoders, the audio codecs, the network protocols and the
# hardware interfaces of libavcodec and libavformat are never called. (Never a
# demuxer's library: opening a file probes every demuxer, and with stand-ins for
# libgme, libopenmpt and libbluray that probe crashed.) Of OpenCV the
# studio calls cvtColor, imdecode and imencode, none of which reaches LAPACK.
BUNDLE_STUBS="libgdal.so libgdcmMSFF.so libgdcmDSED.so libopenjp2.so libOpenEXR-3_1.so libicudata.so liblapack.so \
  libx265.so libSvtAv1Enc.so librav1e.so libaom.so libcodec2.so librsvg-2.so libcairo.so libxvidcore.so \
  libmp3lame.so libopus.so libshine.so libspeex.so libtwolame.so libvorbis.so libvorbisenc.so libgsm.so \
  libsoxr.so libzvbi.so libsnappy.so libchromaprint.so \
  librabbitmq.so librist.so libsrt-gnutls.so libzmq.so libva-drm.so libva-x11.so libvdpau.so libdrm.so" \
  bundle_copy_closure "$stage/lib" "$stage"/bin/* "$stage"/plugins/*/*.so
strip --strip-unneeded "$stage"/lib/* "$stage"/plugins/*/*.so 2> /dev/null || true

# One font family (regular and bold) found through a fontconfig file written by the runner.
for font in DejaVuSans.ttf DejaVuSans-Bold.ttf; do
  cp "/usr/share/fonts/truetype/dejavu/$font" "$stage/fonts/"
done
cp -r resources/samples "$stage/samples"
cp scripts/studio_bundle_run.sh "$stage/run_studio.sh"
chmod +x "$stage/run_studio.sh"
{
  echo "Studio bundle of UOT Color Studio"
  echo "commit: $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet 2> /dev/null || echo ' (with local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ), CUDA $(/usr/local/cuda/bin/nvcc --version | grep -o 'release [0-9.]*')"
  echo "GUI tests:"; cut -f1 "$stage/tests.list" | sed 's/^/  /'
  echo "libraries:"; (cd "$stage/lib" && ls -1) | sed 's/^/  /'
} > "$stage/MANIFEST.txt"

echo "== pack"
# One xz stream over the sorted files: the test executables share most of their code.
tar -C "$DIST" --sort=name -cf - "$name" | xz -T1 -9e > "$DIST/$name.tar.xz"
bytes=$(stat -c %s "$DIST/$name.tar.xz")
# What else travels: the files git tracks and the untracked ones it does not ignore.
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2> /dev/null | tail -n 1 | cut -f1)
limit=$((64 * 1024 * 1024))
echo "   $(ls "$stage/lib" | wc -l) libraries, $(du -sh "$stage" | cut -f1) unpacked"
echo "   $DIST/$name.tar.xz: $bytes bytes ($(du -h "$DIST/$name.tar.xz" | cut -f1)); work tree $tree bytes;" \
  "together $(( (bytes + tree) * 100 / limit )) % of the 64 MiB that travel"
if [ $((bytes + tree)) -gt $((limit * 9 / 10)) ]; then
  echo "   archive + work tree above 90 % of the 64 MiB that travel to the GPU machine" >&2
  exit 1
fi
