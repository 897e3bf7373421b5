#!/usr/bin/env bash
# The studio tried as a new user would, under Xvfb with xdotool: start on the
# bundled samples, resize to 1280x720, open every menu and dialog, run, cancel,
# re-run, show the advanced panels, simulate the caches, compare, open the
# batch dialog, and take a screenshot (ImageMagick's `import`) after each step.
# The screenshots are for a person to look at; the script checks only that the
# studio is still running after every step, and exits 1 when it is not.
#
#   scripts/studio_walkthrough.sh [BUILD_DIR] [OUT_DIR]    (defaults: build, out/walkthrough)
#
# Needs Xvfb, xdotool and ImageMagick (apt-get install xvfb xdotool imagemagick).
# Settings start fresh (a temporary HOME), so nothing of the user's is changed.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/walkthrough}
studio="$build/app/studio/uot-studio"
for tool in Xvfb xdotool import; do
  command -v "$tool" > /dev/null || { echo "studio_walkthrough: $tool is not installed" >&2; exit 2; }
done
[ -x "$studio" ] || { echo "studio_walkthrough: $studio not built" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d)
display=":$((70 + $$ % 20))"
Xvfb "$display" -screen 0 1600x1000x24 -nolisten tcp > "$scratch/xvfb.log" 2>&1 &
xvfb=$!
export DISPLAY=$display
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config" XDG_CACHE_HOME="$scratch/cache"
export XDG_RUNTIME_DIR="$scratch/runtime"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
studio_pid=""
cleanup() {
  [ -n "$studio_pid" ] && kill "$studio_pid" 2> /dev/null
  kill "$xvfb" 2> /dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
sleep 1

"$studio" > "$out/studio.log" 2>&1 &
studio_pid=$!
win=$(xdotool search --sync --name "UOT Color Studio" | head -1)
n=0
failures=0
shot() {  # NAME: a screenshot of the whole screen
  n=$((n + 1))
  sleep "${2:-0.7}"
  import -window root "$out/$(printf '%02d' "$n")-$1.png"
  if ! kill -0 "$studio_pid" 2> /dev/null; then
    echo "step $n ($1): the studio is no longer running" >&2
    failures=$((failures + 1))
    exit 1
  fi
  echo "$(printf '%02d' "$n")-$1.png"
}
focus() { xdotool windowfocus --sync "$win" 2> /dev/null || true; }
# Keys to the main window as typed (events sent to a window with --window are
# synthetic, and Qt's shortcuts do not all take them).
key() { focus; xdotool key --clearmodifiers "$@"; }

xdotool windowmove "$win" 0 0
sleep 4  # the sample pair loads
shot start-1600x1000
xdotool windowsize "$win" 1280 720
focus
shot resized-1280x720

# Every menu, opened with its Alt key and closed with Escape.
for menu in f e r v h; do
  focus
  xdotool key --clearmodifiers "alt+$menu"
  shot "menu-alt-$menu"
  xdotool key Escape
  sleep 0.3
done

# Dialogs: open, look, close with Escape.
dialog() {  # NAME KEYS...
  local name=$1
  shift
  focus
  xdotool key --clearmodifiers "$@"
  shot "dialog-$name" 1.5
  xdotool key Escape
  sleep 0.5
}
dialog open-source ctrl+o
dialog open-reference ctrl+shift+o
dialog batch ctrl+b
dialog export-lut ctrl+l
dialog about alt+h Return

# Run, cancel, re-run to the end.
focus
key ctrl+r
shot running 1.5
key Escape
shot cancelled
key ctrl+r
shot rerun-started 1
for _ in $(seq 1 90); do
  sleep 1
  grep -q "Done" <(xdotool getwindowname "$win") 2> /dev/null && break
done
shot rerun-done 20
key ctrl+shift+a
shot advanced-panels 1.5
# Run > Simulate CPU Caches (the last entry of the Run menu).
xdotool key --clearmodifiers alt+r
sleep 0.5
xdotool key Up Return
shot simulating 2
shot simulated 40
key ctrl+k
shot compare-started 2
shot compare-done 60
key ctrl+d
shot split 1
key ctrl+shift+a
shot back-to-simple 1
xdotool windowsize "$win" 1600 1000
shot last-1600x1000 1.5
echo "screenshots in $out ($n); studio log: $out/studio.log"
[ "$failures" -eq 0 ]
