#!/usr/bin/env bash
# Installs what is missing, builds in Release, runs the whole test suite (CTest),
# then the sanitizer flavours' suites (ASan + UBSan with fuzzing, TSan; UOT_SANITIZERS=OFF skips them).
# Extra arguments go to ctest, e.g. ./test.sh -L cpu   or   ./test.sh -R pot
set -euo pipefail
cd "$(dirname "$0")"
sanitizers=${UOT_SANITIZERS:-ON}
[ "${CI:-}" = "true" ] && sanitizers=ON
UOT_SANITIZERS=$sanitizers scripts/setup.sh
build_dir=${UOT_BUILD_DIR:-build}
jobs=${UOT_JOBS:-$(nproc)}
status=0
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" "$@" || status=$?
# The sanitizer flavours' suites (built by scripts/setup.sh; UOT_SANITIZERS=OFF skips them):
# ASan + UBSan with the fuzz targets' short runs, then ThreadSanitizer. Any report fails its test.
if [ "$sanitizers" = "ON" ]; then
  for flavour in asan tsan; do
    echo "test.sh: sanitizer flavour $flavour ($build_dir-$flavour)"
    ctest --test-dir "$build_dir-$flavour" -L sanitize --output-on-failure -j "$jobs" "$@" || status=$?
  done
fi
exit "$status"
