#!/usr/bin/env bash
# End-to-end checks of `uot recolor` and `uot batch` on the bundled samples:
# outputs written, same seed = byte-identical files, the source is never
# replaced, documented exit codes (1 failure, 2 usage, 3 partial batch).
set -u
uot=$1
samples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fail=1; else echo "ok: $2"; fi; }

cp "$samples/home.jpg" "$tmp/src.jpg"
before=$(sha256sum "$tmp/src.jpg" | cut -d' ' -f1)
small="--palette-size 256 --max-iter 40 --quiet"

"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/a.png" $small; rc=$?
check "[ $rc -eq 0 ] && [ -s '$tmp/a.png' ]" "recolor writes the output"
"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/b.png" $small
check "cmp -s '$tmp/a.png' '$tmp/b.png'" "same seed gives a byte-identical file"
"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/a.png" $small 2>/dev/null; rc=$?
check "[ $rc -eq 1 ]" "an existing output is not replaced without --overwrite (exit 1)"
"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/src.jpg" --overwrite $small 2>"$tmp/err.txt"; rc=$?
check "[ $rc -eq 1 ] && grep -q 'refusing to overwrite the source' '$tmp/err.txt'" "the source is never replaced (exit 1)"
check "[ \"\$(sha256sum '$tmp/src.jpg' | cut -d' ' -f1)\" = '$before' ]" "the source bytes are unchanged"
"$uot" recolor "$tmp/src.jpg" -o "$tmp/c.png" 2>/dev/null; rc=$?
check "[ $rc -eq 2 ]" "a missing argument is a usage error (exit 2)"
"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/c.png" --strength -1 2>/dev/null; rc=$?
check "[ $rc -eq 2 ]" "an invalid value is a usage error (exit 2)"
"$uot" recolor "$tmp/src.jpg" "$samples/starry_night.jpg" -o "$tmp/j.json.png" --json $small > "$tmp/out.json"; rc=$?
check "[ $rc -eq 0 ] && grep -q '\"solve\"' '$tmp/out.json' && grep -q '\"iterations\"' '$tmp/out.json'" "--json prints timings and solver statistics"
check "python3 -m json.tool '$tmp/out.json' > /dev/null" "recolor --json is well-formed JSON"
"$uot" devices --json > "$tmp/devices.json" 2>/dev/null; rc=$?
check "python3 -m json.tool '$tmp/devices.json' > /dev/null && { [ $rc -eq 0 ] || { [ $rc -eq 4 ] && grep -q unavailable '$tmp/devices.json'; }; }" \
  "devices --json is well-formed JSON, with the reason when there is no GPU (exit 4)"
check "\"$uot\" recolor --help | grep -q -- '--preserve-luminance'" "--help documents the options"

mkdir -p "$tmp/in"
cp "$samples/fruits.jpg" "$samples/butterfly.jpg" "$tmp/in/"
head -c 3000 "$samples/leuvenA.jpg" > "$tmp/in/truncated.jpg"
"$uot" batch "$samples/starry_night.jpg" "$tmp/in" --out-dir "$tmp/out" $small 2>"$tmp/batch.txt"; rc=$?
check "[ $rc -eq 3 ]" "a batch with one bad file exits 3"
check "[ -s '$tmp/out/fruits_recolored.jpg' ] && [ -s '$tmp/out/butterfly_recolored.jpg' ]" "the other files are done"
check "grep -q 'truncated.jpg' '$tmp/batch.txt'" "the bad file is reported"
"$uot" batch "$samples/starry_night.jpg" "$tmp/in/fruits.jpg" --out-dir "$tmp/out" $small 2>"$tmp/batch2.txt"; rc=$?
check "[ $rc -eq 0 ] && grep -q '1 skipped' '$tmp/batch2.txt'" "existing outputs are skipped (exit 0)"
# The look controls (docs/LOOK_CONTROLS.md): colour intensity 0 gives grey pixels,
# in the recolor and in the LUT; ranges refused with the control's range; --fade = --strength.
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/grey.png" --color-intensity 0 $small; rc=$?
check "[ $rc -eq 0 ] && [ -s '$tmp/grey.png' ]" "recolor --color-intensity 0 writes the output"
if command -v ffmpeg > /dev/null; then
  ffmpeg -loglevel error -i "$tmp/grey.png" -f rawvideo -pix_fmt rgb24 "$tmp/grey.rgb"
  check "python3 -c \"import sys; d=open(sys.argv[1],'rb').read(); sys.exit(max(max(d[i:i+3])-min(d[i:i+3]) for i in range(0,len(d),3))>1)\" '$tmp/grey.rgb'" \
    "--color-intensity 0 gives grey pixels (R = G = B within 1)"
fi
"$uot" lut "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/grey.cube" --global-map --color-intensity 0 $small; rc=$?
check "[ $rc -eq 0 ] && python3 -c \"import sys
rows=[l.split() for l in open(sys.argv[1]) if l[:1] in '0123456789.-']
sys.exit(not rows or any(max(map(float,r))-min(map(float,r))>2e-3 for r in rows))\" '$tmp/grey.cube'" \
  "lut --color-intensity 0: every node of the LUT is grey"
"$uot" lut "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/grey-fit.cube" --color-intensity 0 $small; rc=$?
check "[ $rc -eq 0 ] && python3 -c \"import sys
rows=[l.split() for l in open(sys.argv[1]) if l[:1] in '0123456789.-']
sys.exit(not rows or any(max(map(float,r))-min(map(float,r))>2e-3 for r in rows))\" '$tmp/grey-fit.cube'" \
  "lut --color-intensity 0 (fitted to the render): every node of the LUT is grey"
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/x.png" --luminance 250 $small 2>"$tmp/err.txt"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'luminance intensity must be between 0 % and 200 %' '$tmp/err.txt'" "--luminance 250 is refused with the range"
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/x.png" --protect-neutrals 101 $small 2>"$tmp/err.txt"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'protect neutrals must be between 0 % and 100 %' '$tmp/err.txt'" "--protect-neutrals 101 is refused with the range"
for bad in -1 nan; do
  "$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/x.png" --color-range $bad $small 2>"$tmp/err.txt"; rc=$?
  check "[ $rc -eq 2 ] && grep -q \"option '--color-range': color range takes a finite number >= 0 or inf, got '$bad'\" '$tmp/err.txt'" \
    "--color-range $bad is refused with the range (exit 2)"
done
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/fade.png" --fade 0.5 $small
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/strength.png" --strength 0.5 $small
check "cmp -s '$tmp/fade.png' '$tmp/strength.png' && ! cmp -s '$tmp/fade.png' '$tmp/a.png'" "--fade is --strength"
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/x.png" --fade 0.5 --strength 0.7 $small 2>/dev/null; rc=$?
check "[ $rc -eq 2 ]" "--fade and --strength that disagree are a usage error"
"$uot" batch "$samples/starry_night.jpg" "$samples/fruits.jpg" --out-dir "$tmp/greyout" --color-intensity 0 $small 2>/dev/null; rc=$?
if command -v ffmpeg > /dev/null; then
  ffmpeg -loglevel error -i "$tmp/greyout/fruits_recolored.jpg" -f rawvideo -pix_fmt rgb24 "$tmp/greyb.rgb"
  check "[ $rc -eq 0 ] && python3 -c \"import sys; d=open(sys.argv[1],'rb').read(); sys.exit(max(max(d[i:i+3])-min(d[i:i+3]) for i in range(0,len(d),3))>6)\" '$tmp/greyb.rgb'" \
    "batch --color-intensity 0 gives grey pixels (JPEG: within 6)"
  # A clip with no video stream is refused with exit 1, and the opened file is released
  # (the ASan flavour runs this script: a leak is reported by LeakSanitizer on stderr).
  ffmpeg -loglevel error -f lavfi -i anullsrc=r=8000:cl=mono -t 0.2 -c:a aac "$tmp/audio_only.mp4"
  "$uot" recolor "$tmp/audio_only.mp4" "$samples/starry_night.jpg" -o "$tmp/clip.mp4" $small 2>"$tmp/err.txt"; rc=$?
  check "[ $rc -eq 1 ] && grep -q 'holds no video stream' '$tmp/err.txt' && ! grep -q 'LeakSanitizer' '$tmp/err.txt'" \
    "a clip without a video stream: exit 1, said so, nothing leaked"
fi
exit $fail
