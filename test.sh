#!/usr/bin/env bash
# Installs what is missing, builds in Release, runs the whole test suite (CTest).
# Extra arguments go to ctest, e.g. ./test.sh -L cpu   or   ./test.sh -R pot
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
ctest --test-dir "${UOT_BUILD_DIR:-build}" --output-on-failure -j "${UOT_JOBS:-$(nproc)}" "$@"
