#!/usr/bin/env bash
# run_fuzz.sh FUZZER SEEDS RUNS ARTIFACTS [libFuzzer options...]
# A fixed-length libFuzzer run (RUNS inputs, fixed random seed) starting from a
# fresh copy of the seed folder, so that repeated runs do the same work. A crash
# or sanitizer report fails the test; its input is kept in ARTIFACTS.
set -euo pipefail
fuzzer=$1 seeds=$2 runs=$3 artifacts=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
name=$(basename "$fuzzer")
TMPDIR=$work "$fuzzer" -runs="$runs" -seed=1 -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts/$name-" "$@" "$work" "$seeds"
