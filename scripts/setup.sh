#!/usr/bin/env bash
# Shared set-up for ./run.sh and ./test.sh: installs missing Debian packages
# (as root; otherwise prints the exact apt-get line), then configures and builds
# the project in Release into ${UOT_BUILD_DIR:-build}.
#
# Environment knobs (all optional):
#   UOT_BUILD_DIR=build   UOT_BUILD_GUI=ON   UOT_WITH_OPENCV=ON   UOT_CUDA=AUTO
#   UOT_MPI=AUTO          UOT_JOBS=<n>       UOT_WARNINGS_AS_ERRORS=OFF (CI sets ON)
#   UOT_SANITIZERS=OFF    ON (./test.sh's default) also builds the sanitizer flavours'
#                         suites with clang: ${UOT_BUILD_DIR}-asan (ASan + UBSan, and the
#                         fuzz targets) and ${UOT_BUILD_DIR}-tsan (ThreadSanitizer)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${UOT_BUILD_DIR:-build}
gui=${UOT_BUILD_GUI:-ON}
opencv=${UOT_WITH_OPENCV:-ON}
cuda=${UOT_CUDA:-AUTO}
mpi=${UOT_MPI:-AUTO}
werror=${UOT_WARNINGS_AS_ERRORS:-OFF}
sanitizers=${UOT_SANITIZERS:-OFF}  # ./test.sh turns it ON
[ "${CI:-}" = "true" ] && werror=ON

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev python3 python3-numpy python3-pot qt6-base-dev)
[ "$opencv" = "ON" ] && packages+=(libopencv-dev libexiv2-dev liblcms2-dev libimage-exiftool-perl)
# libjpeg (the one OpenCV links): a JPEG is checked in full before OpenCV decodes it (core/imageio/jpeg_check)
[ "$opencv" = "ON" ] && packages+=(libjpeg62-turbo-dev)
# LUT clients for test_lut_clients: the exported .cube applied by ffmpeg's lut3d and OpenColorIO.
[ "$opencv" = "ON" ] && packages+=(ffmpeg opencolorio-tools)
# FFmpeg's libraries for clips in uot recolor / lut / batch (core/video; optional in CMake: UOT_VIDEO)
[ "$opencv" = "ON" ] && packages+=(libavformat-dev libavcodec-dev libavutil-dev libswscale-dev)
[ "$gui" = "ON" ] && packages+=(qt6-charts-dev libgl-dev libqt6opengl6-dev)
# valgrind: the studio's simulated cache figures (cachegrind) and bench/cachegrind.sh
[ "$gui" = "ON" ] && packages+=(valgrind)
# OpenMPI for uot-mpi and its test (mpirun from openmpi-bin)
[ "$mpi" != "OFF" ] && packages+=(libopenmpi-dev openmpi-bin)
# The sanitizer flavours: clang, its sanitizer and libFuzzer runtimes, LLVM's
# OpenMP with Archer (OpenMP under ThreadSanitizer)
[ "$sanitizers" = "ON" ] && packages+=(clang libclang-rt-dev libomp-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

jobs=${UOT_JOBS:-$(nproc)}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DUOT_BUILD_GUI="$gui" -DUOT_WITH_OPENCV="$opencv" -DUOT_CUDA="$cuda" -DUOT_MPI="$mpi" \
  -DUOT_WARNINGS_AS_ERRORS="$werror" >/dev/null
cmake --build "$build_dir" -j "$jobs"

# The sanitizer flavours (cmake/UotSanitize.cmake): only what their suites run
# (target uot_sanitize_suite), no CUDA, no MPI. ASan: no GUI. TSan: the studio's
# library for its worker and batch dialog tests (docs/sanitizers.md).
if [ "$sanitizers" = "ON" ]; then
  for flavour in asan tsan; do
    if [ "$flavour" = asan ]; then options=(-DUOT_SANITIZE=address,undefined -DUOT_FUZZ=ON -DUOT_BUILD_GUI=OFF)
    else options=(-DUOT_SANITIZE=thread -DUOT_BUILD_GUI="$gui"); fi
    cmake -S . -B "$build_dir-$flavour" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${options[@]}" \
      -DUOT_WITH_OPENCV="$opencv" -DUOT_CUDA=OFF -DUOT_MPI=OFF >/dev/null
    cmake --build "$build_dir-$flavour" -j "$jobs" --target uot_sanitize_suite
  done
fi
