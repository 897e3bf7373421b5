#!/usr/bin/env bash
# Installs what is missing, builds in Release, then runs the main job:
#  - the desktop app with the bundled sample pair, when it was built and a display exists;
#  - otherwise the command-line demo: recolor the bundled sample pair, then a short
#    solver benchmark.
# UOT_RUN_CLI=1 forces the command-line demo; UOT_RUN_SCREENSHOT=FILE runs the app once
# under xvfb-run (no display needed) and saves a screenshot of the window.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
build=${UOT_BUILD_DIR:-build}
samples=resources/samples
studio="$build/app/studio/uot-studio"
uot="$build/app/cli/uot"

if [ -z "${UOT_RUN_CLI:-}" ] && [ -x "$studio" ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$studio" --source "$samples/home.jpg" --reference "$samples/starry_night.jpg"
fi

if [ -n "${UOT_RUN_SCREENSHOT:-}" ] && [ -x "$studio" ] && command -v xvfb-run >/dev/null; then
  exec xvfb-run -a -s "-screen 0 1920x1200x24" "$studio" --source "$samples/home.jpg" \
    --reference "$samples/starry_night.jpg" --run --screenshot "$UOT_RUN_SCREENSHOT" --quit
fi

echo "== command-line demo (no display or no desktop app built) =="
mkdir -p out
if [ -f "$samples/home.jpg" ] && "$uot" recolor --help >/dev/null 2>&1; then
  "$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o out/home_starry.png --overwrite
  echo "wrote out/home_starry.png"
fi
"$uot" bench --solver fused,pot-style --size 1024x1024 --precision fp32 --iterations 20
