#!/usr/bin/env bash
# Builds the test executables here with CUDA (sm_90, no GUI, no OpenCV) and packs
# them with the shared libraries they need (Qt Core and Test, ICU, ...) and a
# CTest-independent runner into one archive for the GPU machine, which has no Qt:
#
#   scripts/qt_test_bundle.sh            -> dist/qt-test-bundle.tar.xz
#
# On the GPU machine (the archive carried with the work tree):
#
#   tar -xJf dist/qt-test-bundle.tar.xz -C /tmp &&
#     /tmp/qt-test-bundle/run_tests.sh --require-gpu --logs "$OUT/qt-tests"
#
# Here (no GPU) the same runner passes the CPU tests and reports the GPU ones
# skipped. Every test registered with CTest through uot_add_test travels;
# the Python and shell tests (POT cross-check, CLI, layering) need the source
# tree and stay with CTest. Environment: BUILD (build folder, default
# build-qt-bundle), DIST (default dist), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
BUILD=${BUILD:-build-qt-bundle}
DIST=${DIST:-dist}
JOBS=${JOBS:-2}
name=qt-test-bundle
stage="$DIST/$name"
mkdir -p "$DIST"
source scripts/bundle_closure.sh

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
echo "== configure $BUILD (CUDA on, sm_90, GUI and OpenCV off)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF \
  -DUOT_BUILD_TESTS=ON -DUOT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" > "$DIST/$name.configure.log" 2>&1 \
  || { tail -30 "$DIST/$name.configure.log"; exit 1; }

# The tests CTest knows, as NAME<TAB>LABELS<TAB>TIMEOUT<TAB>COMMAND<TAB>ARGUMENTS
# (COMMAND empty while the executable is not built yet; ARGUMENTS space-separated).
list_tests() {
  ctest --test-dir "$BUILD" --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    labels = ",".join(props.get("LABELS", [])) or "-"
    timeout = int(props.get("TIMEOUT", 1500))
    command = t.get("command") or [""]
    print("\t".join([t["name"], labels, str(timeout), command[0], " ".join(command[1:])]))
'
}
build_abs=$(cd "$BUILD" && pwd)
# Executables of this build: no command yet, or a command inside the build folder.
# The target is the executable's file name (several tests may run one executable
# with other arguments), or the test's name before the first build.
# A test whose executable is named otherwise and not built yet cannot be told
# from its name: then everything is built.
mapfile -t targets < <(list_tests | awk -F'\t' -v b="$build_abs/" '$4 == "" { print $1 } index($4, b) == 1 { n = split($4, p, "/"); print p[n] }' | sort -u)
known=" $(ninja -C "$BUILD" -t targets all 2> /dev/null | cut -d: -f1 | tr '\n' ' ') "
for t in "${targets[@]}"; do
  [[ "$known" == *" $t "* ]] || { targets=(all); break; }
done
[ "${#targets[@]}" -gt 0 ] || { echo "no test executables found" >&2; exit 1; }
echo "== build ${#targets[@]} test executables: ${targets[*]}"
# `uot` travels too: the CLI cases of the tests run it through $UOT_CLI (set by the runner).
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" uot > "$DIST/$name.build.log" 2>&1 \
  || { grep -E "error|FAILED" "$DIST/$name.build.log" | head -40; exit 1; }

rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
: > "$stage/tests.list"
executables=()
while IFS=$'\t' read -r test labels timeout command arguments; do
  case "$command" in
    "$build_abs"/*) ;;
    *) echo "   not bundled (runs a script from the source tree): $test"; continue ;;
  esac
  cp "$command" "$stage/bin/$test"
  executables+=("$stage/bin/$test")
  printf '%s\t%s\t%s\t%s\n' "$test" "$labels" "$timeout" "$arguments" >> "$stage/tests.list"
done < <(list_tests)
cp scripts/qt_test_bundle_run.sh "$stage/run_tests.sh"
chmod +x "$stage/run_tests.sh"
strip --strip-unneeded "$stage"/bin/* 2> /dev/null || true
cp "$BUILD/app/cli/uot" "$stage/bin/uot"
strip --strip-unneeded "$stage/bin/uot" 2> /dev/null || true
executables+=("$stage/bin/uot")
bundle_copy_closure "$stage/lib" "${executables[@]}"
{
  echo "Qt Test bundle of UOT Color Studio"
  echo "commit: $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)$(git -C "$root" diff --quiet 2> /dev/null || echo ' (with local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -m), CUDA $(/usr/local/cuda/bin/nvcc --version | grep -o 'release [0-9.]*')"
  echo "tests:"; cut -f1,2 "$stage/tests.list" | sed 's/^/  /'
  echo "libraries:"; (cd "$stage/lib" && ls -1) | sed 's/^/  /'
} > "$stage/MANIFEST.txt"

echo "== pack"
tar -C "$DIST" -cf - "$name" | xz -T0 -9 > "$DIST/$name.tar.xz"
echo "   $(wc -l < "$stage/tests.list") test executables, $(ls "$stage/lib" | wc -l) libraries: $(du -sh "$stage" | cut -f1) unpacked"
echo "   $DIST/$name.tar.xz: $(stat -c %s "$DIST/$name.tar.xz") bytes ($(du -h "$DIST/$name.tar.xz" | cut -f1))"
