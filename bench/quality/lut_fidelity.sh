#!/usr/bin/env bash
# LUT fidelity: how closely an exported .cube, applied by ffmpeg's lut3d
# (tetrahedral), reproduces the result `uot recolor` writes (what the studio
# shows), over the ordered pairs of a folder's images, and where the error comes
# from. Per pair and size (17/33/65) it prints, in dB PSNR over R, G, B:
#   rendered  ffmpeg: the fitted LUT (the export's default) against the rendered result
#   rendered  uot:    the same, as `uot` evaluates it (its own tetrahedral + rounding)
#   global    ffmpeg: the global map baked node by node (--global-map) against the rendered result
#   noSmooth  ffmpeg: a LUT fitted to the `--no-smooth` render against that render
#                     (no local part: what is left is lattice resolution and the fit)
# The gap rendered - noSmooth is the look's local (edge-aware) part; noSmooth
# below ~50 dB is resolution/fit; ffmpeg vs uot is interpolation/rounding.
# Then the median and the share of pairs >= 40 dB (33^3) / >= 45 dB (65^3).
#
# Usage: bench/quality/lut_fidelity.sh [--images DIR] [--half all|tune|held] [--sizes 33,65]
#        [--uot build/app/cli/uot] [-- extra recolor options]
# The --half split is uot_quality_bench's (unordered pairs numbered (0,1), (0,2), ...,
# (1,2), ...; even ones tune, odd ones held). Needs ffmpeg. Sources are decoded once
# to PNG by ffmpeg, so uot and ffmpeg read the same pixels.
set -euo pipefail
images=resources/samples
half=tune
sizes=33,65
uot=build/app/cli/uot
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --images) images=$2; shift 2 ;;
    --half) half=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --uot) uot=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "lut_fidelity.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v ffmpeg >/dev/null || { echo "lut_fidelity.sh: needs ffmpeg" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t files < <(find "$images" -maxdepth 1 \( -name '*.jpg' -o -name '*.png' \) | sort)
n=${#files[@]}
for ((i = 0; i < n; ++i)); do
  ffmpeg -v error -y -i "${files[i]}" -pix_fmt rgb24 "$work/src$i.png"
done

# PSNR (dB, R G B together) of image A against image B.
psnr() {
  ffmpeg -v info -i "$1" -i "$2" -lavfi "[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]psnr" -f null - 2>&1 |
    sed -n 's/.*PSNR r:.* average:\([0-9.inf]*\).*/\1/p' | tail -1
}
apply() {  # apply LUT to image -> out
  ffmpeg -v error -y -i "$1" -vf "lut3d=file=$2:interp=tetrahedral" -pix_fmt rgb24 "$3"
}
IFS=, read -ra sizeList <<<"$sizes"
declare -A all
printf '%-40s %4s %9s %9s %9s %9s\n' pair size rendered uot global noSmooth
for ((i = 0; i < n; ++i)); do
  for ((j = 0; j < n; ++j)); do
    [ $i -eq $j ] && continue
    a=$((i < j ? i : j)); b=$((i < j ? j : i))
    index=$((a * n - a * (a + 1) / 2 + b - a - 1))
    if [ "$half" = tune ] && [ $((index % 2)) -ne 0 ]; then continue; fi
    if [ "$half" = held ] && [ $((index % 2)) -eq 0 ]; then continue; fi
    name="$(basename "${files[i]%.*}")<-$(basename "${files[j]%.*}")"
    for s in "${sizeList[@]}"; do
      out=$("$uot" recolor "$work/src$i.png" "${files[j]}" -o "$work/res.png" --overwrite --export-lut "$work/fit.cube" \
        --export-lut-size "$s" "${extra[@]}" 2>&1)
      ours=$(sed -n 's/.*: \([0-9.inf]*\) dB PSNR against it.*/\1/p' <<<"$out" | tail -1)
      "$uot" lut "$work/src$i.png" "${files[j]}" -o "$work/global.cube" --overwrite --size "$s" --global-map \
        "${extra[@]}" >/dev/null 2>&1
      "$uot" recolor "$work/src$i.png" "${files[j]}" -o "$work/flat.png" --overwrite --no-smooth \
        --export-lut "$work/flat.cube" --export-lut-size "$s" "${extra[@]}" >/dev/null 2>&1
      apply "$work/src$i.png" "$work/fit.cube" "$work/a.png"
      apply "$work/src$i.png" "$work/global.cube" "$work/g.png"
      apply "$work/src$i.png" "$work/flat.cube" "$work/f.png"
      r=$(psnr "$work/a.png" "$work/res.png")
      g=$(psnr "$work/g.png" "$work/res.png")
      f=$(psnr "$work/f.png" "$work/flat.png")
      printf '%-40s %4s %9s %9s %9s %9s\n' "$name" "$s" "$r" "$ours" "$g" "$f"
      all[$s]+="$r "
    done
  done
done
for s in "${sizeList[@]}"; do
  target=$([ "$s" -ge 65 ] && echo 45 || echo 40)
  tr ' ' '\n' <<<"${all[$s]}" | grep -v '^$' | sort -g |
    awk -v s="$s" -v t="$target" '{v[NR]=$1; if ($1 >= t) k++} END {
      m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
      printf "%d^3 ffmpeg vs rendered: median %.1f dB, min %.1f, %d of %d pairs >= %d dB\n", s, m, v[1], k, NR, t }'
done
