#!/usr/bin/env bash
# End-to-end checks of the masks and several references of `uot recolor` and
# `uot batch` (docs/REGIONS.md): pixels under black keep the source's bytes,
# pixels under white change, several references pooled with equal weights
# give the result of their side-by-side image, clear refusals (exit 2) and a
# missing batch mask reported for its file (exit 3), and `uot batch --reference`
# giving the files of `uot recolor` with the same references. Images are BMP and PNG
# made by the script (Python standard library only).
set -u
uot=$(realpath "$1")
samples=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fail=1; else echo "ok: $2"; fi; }

cat > "$tmp/img.py" <<'PY'
import struct, sys, zlib

def read_bmp(path):
    d = open(path, 'rb').read()
    off, w, h, bpp = struct.unpack_from('<I', d, 10)[0], *struct.unpack_from('<ii', d, 18), struct.unpack_from('<H', d, 28)[0]
    step = bpp // 8
    row = (w * step + 3) & ~3
    px = {}
    for y in range(abs(h)):
        r = d[off + (abs(h) - 1 - y if h > 0 else y) * row:]
        for x in range(w):
            b, g, rr = r[x * step:x * step + 3]
            px[x, y] = (rr, g, b)
    return w, abs(h), px

def write_bmp(path, w, h, f):
    row = (w * 3 + 3) & ~3
    data = b''.join(b''.join(bytes(f(x, y)[::-1]) for x in range(w)) + b'\0' * (row - 3 * w) for y in reversed(range(h)))
    head = struct.pack('<2sIHHI', b'BM', 54 + len(data), 0, 0, 54) + struct.pack('<IiiHHIIiiII', 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    open(path, 'wb').write(head + data)

def write_gray_png(path, w, h, f):
    raw = b''.join(b'\0' + bytes(f(x, y) for x in range(w)) for y in range(h))
    chunk = lambda t, c: struct.pack('>I', len(c)) + t + c + struct.pack('>I', zlib.crc32(t + c) & 0xffffffff)
    open(path, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0)) +
                           chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))

cmd = sys.argv[1]
if cmd == 'refs':  # two references and their side-by-side image
    a = lambda x, y: (200 - 2 * y, 90 + x, 40 + (x * y) % 50)
    b = lambda x, y: (30 + (x * 7) % 60, 60 + y, 180 + x % 40)
    write_bmp(sys.argv[2], 64, 48, a)
    write_bmp(sys.argv[3], 64, 48, b)
    write_bmp(sys.argv[4], 128, 48, lambda x, y: a(x, y) if x < 64 else b(x - 64, y))
elif cmd == 'mask':  # a half-size mask: white on the left third of the source (x < 2 * split)
    w, h, split = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    write_gray_png(sys.argv[2], w, h, lambda x, y: 255 if x < split else 0)
elif cmd == 'masked':  # source kept for x > edge, changed for most of x < edge - 1 (the mask is enlarged
    # bilinearly: the pixels on either side of the edge are blends)
    _, _, s = read_bmp(sys.argv[2]); w, h, o = read_bmp(sys.argv[3]); edge = int(sys.argv[4])
    kept = all(s[x, y] == o[x, y] for y in range(h) for x in range(edge + 1, w))
    changed = sum(s[x, y] != o[x, y] for y in range(h) for x in range(edge - 1))
    sys.exit(0 if kept and changed > 0.9 * (edge - 1) * h else 1)
elif cmd == 'right':  # a half-size mask: white from column split on
    w, h, split = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    write_gray_png(sys.argv[2], w, h, lambda x, y: 255 if x >= split else 0)
elif cmd == 'regions':  # two regions: left (x < left - 1) as the first result, right (x > right) as the second,
    # between them the source
    _, _, s = read_bmp(sys.argv[2]); w, h, o = read_bmp(sys.argv[3]); _, _, a = read_bmp(sys.argv[4]); _, _, b = read_bmp(sys.argv[5])
    left, right = int(sys.argv[6]), int(sys.argv[7])
    ok = all(o[x, y] == (a[x, y] if x < left - 1 else s[x, y] if left < x < right - 1 else b[x, y])
             for y in range(h) for x in list(range(left - 1)) + list(range(left + 1, right - 1)) + list(range(right + 1, w)))
    sys.exit(0 if ok else 1)
elif cmd == 'close':  # mean absolute difference of two images below a bound
    w, h, a = read_bmp(sys.argv[2]); _, _, b = read_bmp(sys.argv[3])
    mad = sum(abs(p - q) for k in a for p, q in zip(a[k], b[k])) / (3 * w * h)
    print('mean absolute difference', mad)
    sys.exit(0 if mad <= float(sys.argv[4]) else 1)
PY
py() { python3 "$tmp/img.py" "$@"; }
small="--palette-size 128 --eps 0.01 --quiet"

# The source as BMP (--fade 0 writes the source's pixels).
"$uot" recolor "$samples/home.jpg" "$samples/starry_night.jpg" -o "$tmp/src.bmp" --fade 0 --quiet
py mask "$tmp/mask.png" 256 192 85
"$uot" recolor "$tmp/src.bmp" "$samples/starry_night.jpg" -o "$tmp/masked.bmp" --mask "$tmp/mask.png" $small; rc=$?
check "[ $rc -eq 0 ] && py masked '$tmp/src.bmp' '$tmp/masked.bmp' 170" \
  "--mask: every pixel under black keeps the source's bytes, those under white change"

py refs "$tmp/a.bmp" "$tmp/b.bmp" "$tmp/ab.bmp"
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" "$tmp/b.bmp" -o "$tmp/pooled.bmp" $small; rc1=$?
"$uot" recolor "$tmp/src.bmp" "$tmp/ab.bmp" -o "$tmp/side.bmp" $small; rc2=$?
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/only_a.bmp" $small
check "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && py close '$tmp/pooled.bmp' '$tmp/side.bmp' 0.5" \
  "two references pooled with equal weights give their side-by-side image's result"
check "! py close '$tmp/pooled.bmp' '$tmp/only_a.bmp' 2" "... which the first reference alone does not"
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" "$tmp/b.bmp" -o "$tmp/w.bmp" --reference-weights 1,1 $small
check "cmp -s '$tmp/pooled.bmp' '$tmp/w.bmp'" "--reference-weights 1,1 is the default"

# The same references in a batch: the first as REFERENCE, the second with --reference.
"$uot" batch "$tmp/a.bmp" "$tmp/src.bmp" --reference "$tmp/b.bmp" --out-dir "$tmp/batch_refs" --pattern '{name}.bmp' $small; rc=$?
check "[ $rc -eq 0 ] && cmp -s '$tmp/pooled.bmp' '$tmp/batch_refs/src.bmp' && py close '$tmp/batch_refs/src.bmp' '$tmp/side.bmp' 0.5" \
  "batch --reference: the pooled palette of recolor with both references (and so the side-by-side image's result)"
"$uot" batch "$tmp/a.bmp" "$tmp/src.bmp" --reference "$tmp/b.bmp" --out-dir "$tmp/batch_w" --pattern '{name}.bmp' --reference-weights 1,3 $small
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" "$tmp/b.bmp" -o "$tmp/w13.bmp" --reference-weights 1,3 $small
check "cmp -s '$tmp/w13.bmp' '$tmp/batch_w/src.bmp' && ! cmp -s '$tmp/w13.bmp' '$tmp/pooled.bmp'" \
  "batch --reference-weights 1,3: recolor's result with the same weights (not the equal-weight one)"
"$uot" batch "$tmp/a.bmp" "$tmp/src.bmp" --out-dir "$tmp/batch_x" --reference-weights 1,3 $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q '2 weights for 1 reference images' '$tmp/err'" "batch: two weights for one reference: exit 2"

"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" "$tmp/b.bmp" -o "$tmp/x.bmp" --reference-weights 1 $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q '1 weights for 2 reference images' '$tmp/err'" "a weight count that does not match: exit 2"
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/x.bmp" --mask "$tmp/none.png" $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 1 ] && grep -q 'none.png' '$tmp/err'" "a missing mask names the file (exit 1)"
py mask "$tmp/black.png" 256 192 0
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/x.bmp" --mask "$tmp/black.png" $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'black everywhere' '$tmp/err'" "a black mask is refused (exit 2)"
py mask "$tmp/square.png" 100 100 50
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/x.bmp" --mask "$tmp/square.png" $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'aspect ratios differ' '$tmp/err'" "a mask of another shape is refused (exit 2)"
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/x.bmp" --mask "$tmp/mask.png" --export-lut "$tmp/x.cube" $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'cannot hold a mask' '$tmp/err'" "--export-lut with --mask is refused (exit 2)"

# Two regions, each with its own reference: each side as its own masked recolor, the middle kept.
py right "$tmp/right.png" 256 192 171
"$uot" recolor "$tmp/src.bmp" -o "$tmp/regions.bmp" --region "$tmp/mask.png=$tmp/a.bmp" --region "$tmp/right.png=$tmp/b.bmp" $small; rc=$?
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/left_a.bmp" --mask "$tmp/mask.png" $small
"$uot" recolor "$tmp/src.bmp" "$tmp/b.bmp" -o "$tmp/right_b.bmp" --mask "$tmp/right.png" $small
check "[ $rc -eq 0 ] && py regions '$tmp/src.bmp' '$tmp/regions.bmp' '$tmp/left_a.bmp' '$tmp/right_b.bmp' 170 342" \
  "--region twice: each region as its own masked recolor, pixels under neither keep the source"
"$uot" recolor "$tmp/src.bmp" "$tmp/a.bmp" -o "$tmp/x.bmp" --region "$tmp/mask.png=$tmp/a.bmp" $small 2>"$tmp/err"; rc=$?
check "[ $rc -eq 2 ] && grep -q 'give SOURCE only' '$tmp/err'" "--region with a REFERENCE argument is a usage error (exit 2)"

mkdir -p "$tmp/in" "$tmp/masks" "$tmp/out"
cp "$tmp/src.bmp" "$tmp/in/one.bmp"
cp "$tmp/src.bmp" "$tmp/in/two.bmp"
cp "$tmp/mask.png" "$tmp/masks/one.png"
(cd "$tmp" && "$uot" batch a.bmp in --out-dir out --pattern '{name}.bmp' --mask-pattern 'masks/{name}.png' $small 2>"$tmp/err"); rc=$?
check "[ $rc -eq 3 ] && grep -q 'two.bmp: no mask masks/two.png' '$tmp/err' && py masked '$tmp/src.bmp' '$tmp/out/one.bmp' 170" \
  "batch --mask-pattern: each input through its mask, a missing mask fails its file (exit 3)"
exit $fail
