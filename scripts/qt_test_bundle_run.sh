#!/usr/bin/env bash
# The runner inside the Qt Test bundle (scripts/qt_test_bundle.sh copies it in
# as run_tests.sh): runs every test executable of the bundle with the bundled
# libraries, without CTest (its files hold this machine's absolute paths).
#
#   run_tests.sh [--require-gpu] [--logs DIR] [-L LABEL] [NAME_FILTER]
#
#   --require-gpu  a GPU test that skips for want of a device counts as a failure
#                  (use it on the GPU machine, so that a missing driver cannot pass)
#   --logs DIR     each test's full output goes to DIR/NAME.log (default: ./logs)
#   -L LABEL       only the tests with this CTest label (gpu, cpu)
#   NAME_FILTER    only the tests whose name contains it
#
# Prints one line a test (PASS / SKIP / FAIL, seconds, Qt Test's totals) and a
# summary; exits 1 when a test failed, timed out or crashed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
require_gpu=0
logs=$PWD/logs
label=""
filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --require-gpu) require_gpu=1 ;;
    --logs) logs=$2; shift ;;
    -L) label=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "run_tests.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) filter=$1 ;;
  esac
  shift
done
mkdir -p "$logs"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_QPA_PLATFORM=offscreen
export UOT_CLI="$here/bin/uot"  # the CLI cases of the tests run the bundled `uot`

pass=0 skip=0 fail=0
failed=()
# tests.list: NAME<TAB>LABELS (comma-separated)<TAB>TIMEOUT seconds<TAB>ARGUMENTS
while IFS=$'\t' read -r name labels limit arguments; do
  [ -n "$name" ] || continue
  [ -z "$filter" ] || [[ "$name" == *"$filter"* ]] || continue
  [ -z "$label" ] || [[ ",$labels," == *",$label,"* ]] || continue
  log="$logs/$name.log"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # ARGUMENTS are words without spaces
  (cd "$here/bin" && timeout "$limit" "./$name" $arguments) > "$log" 2>&1
  rc=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  totals=$(grep -m1 "^Totals:" "$log" || echo "no Qt Test totals")
  if [ "$rc" -eq 0 ] && grep -qE "^SKIP   : [A-Za-z0-9_]+::initTestCase\(\) no GPU" "$log"; then
    reason=$(grep -m1 -oE "no GPU: .*" "$log")
    if [ "$require_gpu" = 1 ]; then
      verdict=FAIL
    else
      verdict=SKIP
    fi
    totals="$reason"
  elif [ "$rc" -eq 77 ]; then
    # CTest's skip code: the test needs more than this machine has (e.g. 2 GPUs).
    verdict=SKIP
    totals=$(grep -m1 "^SKIP" "$log" || echo "exit 77: skipped")
  elif [ "$rc" -eq 0 ]; then
    verdict=PASS
  elif [ "$rc" -eq 124 ]; then
    verdict=FAIL
    totals="timed out after ${limit} s; $totals"
  else
    verdict=FAIL
    totals="exit $rc; $totals"
  fi
  printf '%-4s %-34s %7s s  %s\n' "$verdict" "$name" "$seconds" "$totals"
  case $verdict in
    PASS) pass=$((pass + 1)) ;;
    SKIP) skip=$((skip + 1)) ;;
    FAIL) fail=$((fail + 1)); failed+=("$name") ;;
  esac
done < "$here/tests.list"

total=$((pass + skip + fail))
echo "$pass passed, $skip skipped, $fail failed of $total test executables (logs in $logs)"
if [ "$total" -eq 0 ]; then
  echo "no test matched" >&2
  exit 1
fi
if [ "$fail" -gt 0 ]; then
  for name in "${failed[@]}"; do
    echo "---- $name (last lines of $logs/$name.log)"
    grep -E "^(FAIL!|   Loc:|QWARN|QFATAL|Totals)" "$logs/$name.log" | head -20
    tail -5 "$logs/$name.log"
  done
  exit 1
fi
exit 0
