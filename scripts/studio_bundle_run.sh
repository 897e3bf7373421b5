#!/usr/bin/env bash
# The runner inside the studio bundle (scripts/studio_bundle.sh copies it in as
# run_studio.sh). With the bundled libraries, the offscreen platform and the
# bundled font, it runs:
#   1. every GUI test (Qt Test, offscreen);
#   2. a recolor of the sample pair on the CPU and one on the GPU
#      (uot-studio --device cpu|gpu --run), each with a screenshot;
#   3. the comparison view (CPU vs GPU; two CPU variants without a GPU), with a screenshot.
#
#   run_studio.sh [--require-gpu] [--out DIR]
#
#   --require-gpu  no usable GPU is a failure (use it on the GPU machine)
#   --out DIR      screenshots and logs (default ./studio-out)
#
# Without a GPU the GPU recolor reports "no GPU device" and is not a failure
# unless --require-gpu is given. Exits 1 when a step failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
require_gpu=0
out=$PWD/studio-out
while [ $# -gt 0 ]; do
  case "$1" in
    --require-gpu) require_gpu=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "run_studio.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="$here/plugins"
export QT_QPA_PLATFORM=offscreen
export QT_QPA_FONTDIR="$here/fonts"
export UOT_SAMPLES_DIR="$here/samples"
export UOT_STUDIO_EXECUTABLE="$here/bin/uot-studio"
export UOT_CLI="$here/bin/uot"
# Fresh settings: nothing saved by an earlier run (or a user) changes the parameters.
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config" XDG_CACHE_HOME="$scratch/cache"
export XDG_RUNTIME_DIR="$scratch/runtime"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
export FONTCONFIG_FILE="$scratch/fonts.conf"
cat > "$FONTCONFIG_FILE" << CONF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>$here/fonts</dir>
  <cachedir>$scratch/fontconfig</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
</fontconfig>
CONF

pass=0 fail=0 nodevice=0
failed=()
report() {  # VERDICT NAME SECONDS DETAIL
  printf '%-9s %-32s %7s s  %s\n' "$1" "$2" "$3" "$4"
  case $1 in
    PASS) pass=$((pass + 1)) ;;
    NO-DEVICE) nodevice=$((nodevice + 1)) ;;
    *) fail=$((fail + 1)); failed+=("$2") ;;
  esac
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

echo "== GUI tests (offscreen)"
while IFS=$'\t' read -r name limit; do
  [ -n "$name" ] || continue
  start=$(date +%s.%N)
  (cd "$scratch" && timeout "$limit" "$here/bin/$name") > "$out/logs/$name.log" 2>&1
  rc=$?
  totals=$(grep -m1 "^Totals:" "$out/logs/$name.log" || echo "no Qt Test totals")
  if [ "$rc" -eq 0 ]; then report PASS "$name" "$(elapsed "$start")" "$totals"
  else report FAIL "$name" "$(elapsed "$start")" "exit $rc; $totals"; fi
done < "$here/tests.list"

# studio STEP SCREENSHOT ARGS...: one scripted studio run with a screenshot.
studio() {
  local step=$1 shot=$2
  shift 2
  local start rc
  start=$(date +%s.%N)
  timeout 900 "$here/bin/uot-studio" --source "$here/samples/home.jpg" --reference "$here/samples/starry_night.jpg" \
    --size 1600x1000 --screenshot "$out/$shot" --quit "$@" > "$out/logs/$step.log" 2>&1
  rc=$?
  local detail
  detail="$(tail -1 "$out/logs/$step.log")"
  if [ "$rc" -eq 3 ]; then
    if [ "$require_gpu" = 1 ]; then report FAIL "$step" "$(elapsed "$start")" "$detail"
    else report NO-DEVICE "$step" "$(elapsed "$start")" "$detail"; fi
  elif [ "$rc" -eq 0 ] && [ -s "$out/$shot" ]; then
    report PASS "$step" "$(elapsed "$start")" "$out/$shot"
  else
    report FAIL "$step" "$(elapsed "$start")" "exit $rc: $detail"
  fi
}

echo "== the studio on the sample pair"
studio recolor-cpu studio-cpu.png --device cpu --run
studio recolor-gpu studio-gpu.png --device gpu --run
# The comparison view compares the CPU with the GPU when there is one, else two CPU variants.
if [ -s "$out/studio-gpu.png" ]; then
  studio compare-cpu-gpu studio-compare.png --device gpu --compare
else
  echo "   no GPU device: the comparison shows two CPU variants"
  studio compare-cpu-cpu studio-compare.png --compare
fi

echo "$pass passed, $nodevice without a GPU device, $fail failed (screenshots and logs in $out)"
if [ "$fail" -gt 0 ]; then
  for name in "${failed[@]}"; do
    echo "---- $name"
    grep -E "^(FAIL!|   Loc:|QFATAL)" "$out/logs/$name.log" | head -10
    tail -5 "$out/logs/$name.log"
  done
  exit 1
fi
exit 0
