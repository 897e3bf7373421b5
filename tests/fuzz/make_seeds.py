#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora: small valid files of each kind and
hostile ones (lying headers, overflowing shapes, truncations, huge declared
sizes, non-numbers), all generated here.

    make_seeds.py OUTDIR      -> OUTDIR/{npy,image,cube,settings}/*
"""
import os
import struct
import sys
import zlib


# --- .npy -------------------------------------------------------------------

def npy(header, data=b"", version=(1, 0), pad=True):
    """A .npy file with the given header dict text (padded like numpy does)."""
    head = header.encode("latin1")
    prefix = 10 if version[0] == 1 else 12
    if pad:
        total = prefix + len(head) + 1
        head += b" " * ((64 - total % 64) % 64) + b"\n"
    length = struct.pack("<H", len(head)) if version[0] == 1 else struct.pack("<I", len(head))
    return b"\x93NUMPY" + bytes(version) + length + head + data


def npy_seeds():
    f8 = struct.pack("<6d", 1.0, -2.5, 0.0, 3.25, 1e300, -0.0)
    f4 = struct.pack("<4f", 0.5, 1.5, -3.0, 7.0)
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }"
    return {
        # valid
        "f8_3x2.npy": npy(d % ("<f8", "False", "(3, 2)"), f8),
        "f4_4.npy": npy(d % ("<f4", "False", "(4,)"), f4),
        "f4_2x2_v2.npy": npy(d % ("<f4", "False", "(2, 2)"), f4, version=(2, 0)),
        "f8_6_v3.npy": npy(d % ("<f8", "False", "(6,)"), f8, version=(3, 0)),
        "empty_0x3.npy": npy(d % ("<f8", "False", "(0, 3)")),
        "nan_inf.npy": npy(d % ("<f8", "False", "(2,)"), struct.pack("<2d", float("nan"), float("inf"))),
        # hostile
        "truncated_data.npy": npy(d % ("<f8", "False", "(3, 2)"), f8[:20]),
        # 3 x 0xAAAAAAAAAAAAAAAB wraps to 1 element in 64 bits (one element present)
        "shape_wraps_to_1.npy": npy(d % ("<f8", "False", "(3, 12297829382473034411)"), f8[:8]),
        "shape_wraps_to_0.npy": npy(d % ("<f8", "False", "(4294967296, 4294967296)")),
        "shape_huge.npy": npy(d % ("<f8", "False", "(18446744073709551615,)")),
        "shape_too_big_for_u64.npy": npy(d % ("<f8", "False", "(99999999999999999999999, 1)"), f8),
        "shape_negative.npy": npy(d % ("<f8", "False", "(-1, 2)"), f8),
        "shape_3d.npy": npy(d % ("<f8", "False", "(1, 2, 3)"), f8),
        "shape_0d.npy": npy(d % ("<f8", "False", "()"), f8[:8]),
        "shape_unterminated.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2", f8),
        "fortran.npy": npy(d % ("<f8", "True", "(3, 2)"), f8),
        "big_endian.npy": npy(d % (">f8", "False", "(3, 2)"), f8),
        "int32.npy": npy(d % ("<i4", "False", "(4,)"), f4),
        "object.npy": npy(d % ("|O", "False", "(1,)"), b"\0" * 8),
        "no_shape.npy": npy("{'descr': '<f8', 'fortran_order': False, }", f8),
        "no_descr.npy": npy("{'fortran_order': False, 'shape': (6,), }", f8),
        "header_len_past_end.npy": b"\x93NUMPY\x01\x00\xff\xff{'descr'",
        "header_len_v2_huge.npy": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr': '<f8'",
        "magic_only.npy": b"\x93NUMPY",
        "bad_magic.npy": b"\x93NUMPZ\x01\x00" + npy(d % ("<f8", "False", "(6,)"), f8)[8:],
        "version_9.npy": npy(d % ("<f8", "False", "(6,)"), f8, version=(9, 0)),
        "unpadded_no_newline.npy": npy(d % ("<f8", "False", "(6,)"), f8, pad=False),
        "keys_repeated.npy": npy("{'shape': (1,), 'descr': '<f8', 'shape': (6,), 'fortran_order': False}", f8),
        "nul_in_header.npy": npy("{'descr': '<f8\0', 'fortran_order': False, 'shape': (6,), }", f8),
    }


# --- images -----------------------------------------------------------------

def png_chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)


def png(width, height, color_type=2, depth=8, rows=None, ihdr_size=None):
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
    if rows is None:
        bpp = channels * depth // 8
        rows = b"".join(b"\0" + bytes((x * 37 + y * 11) % 256 for x in range(width * bpp)) for y in range(height))
    w, h = ihdr_size or (width, height)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0)) +
            png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""))


def jpeg_gray_8x8(sof_size=(8, 8), extra_before_eoi=b""):
    """A baseline 8x8 gray JPEG, all blocks mid-gray: one Huffman code per table
    (DC category 0, AC end-of-block), so the scan is the bits 0 0 padded with 1s."""
    out = b"\xff\xd8"
    out += b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes([1] * 64)          # DQT, all ones
    out += b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, sof_size[1], sof_size[0], 1) + b"\x01\x11\x00"
    out += b"\xff\xc4" + struct.pack(">H", 20) + b"\x00" + bytes([1] + [0] * 15) + b"\x00"  # DC: one code, symbol 0
    out += b"\xff\xc4" + struct.pack(">H", 20) + b"\x10" + bytes([1] + [0] * 15) + b"\x00"  # AC: one code, EOB
    out += b"\xff\xda" + struct.pack(">HB", 8, 1) + b"\x01\x00" + b"\x00\x3f\x00"
    blocks = ((sof_size[0] + 7) // 8) * ((sof_size[1] + 7) // 8)
    bits = "00" * blocks
    bits += "1" * (-len(bits) % 8)
    scan = bytes(int(bits[k:k + 8], 2) for k in range(0, len(bits), 8))
    scan = scan.replace(b"\xff", b"\xff\x00")
    return out + scan + extra_before_eoi + b"\xff\xd9"


def tiff_gray(width, height, declared=None, compression=1, bits=8):
    """Little-endian, one strip, uncompressed 8-bit gray."""
    w, h = declared or (width, height)
    pixels = bytes((k * 7) % 256 for k in range(width * height))
    entries = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 1, bits), (259, 3, 1, compression), (262, 3, 1, 1),
               (273, 4, 1, 0), (277, 3, 1, 1), (278, 4, 1, h), (279, 4, 1, len(pixels))]
    ifd_size = 2 + 12 * len(entries) + 4
    data_offset = 8 + ifd_size
    entries[5] = (273, 4, 1, data_offset)
    ifd = struct.pack("<H", len(entries))
    for tag, typ, count, value in entries:
        ifd += struct.pack("<HHI", tag, typ, count) + (struct.pack("<HH", value, 0) if typ == 3 else struct.pack("<I", value))
    ifd += struct.pack("<I", 0)
    return b"II*\x00" + struct.pack("<I", 8) + ifd + pixels


def bmp24(width, height, declared=None):
    w, h = declared or (width, height)
    row = (width * 3 + 3) // 4 * 4
    pixels = b"".join(bytes((x * 40 + y * 90 + c * 60) % 256 for x in range(width) for c in range(3)).ljust(row, b"\0")
                      for y in range(height))
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40 + len(pixels), 0, 0, 54) + info + pixels


def webp_vp8x(width, height):
    """A WebP container whose extended header declares a canvas; no image data."""
    payload = bytes([0, 0, 0, 0]) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    chunk = b"VP8X" + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def image_seeds():
    valid_png = png(4, 3)
    valid_jpeg = jpeg_gray_8x8()
    return {
        # valid
        "rgb_4x3.png": valid_png,
        "gray16_3x2.png": png(3, 2, color_type=0, depth=16),
        "rgba_2x2.png": png(2, 2, color_type=6),
        "gray_8x8.jpg": valid_jpeg,
        "gray_16x8.jpg": jpeg_gray_8x8((16, 8)),
        "gray_4x3.tif": tiff_gray(4, 3),
        "rgb_3x2.bmp": bmp24(3, 2),
        # hostile
        "png_ihdr_65535x65535.png": png(4, 3, ihdr_size=(65535, 65535)),
        "png_ihdr_2p31.png": png(4, 3, ihdr_size=(2 ** 31 - 1, 2 ** 31 - 1)),
        "png_ihdr_zero.png": png(4, 3, ihdr_size=(0, 3)),
        "png_no_iend.png": valid_png[:-12],
        "png_truncated_idat.png": valid_png[:40],
        "png_bad_crc.png": valid_png[:29] + b"\0\0\0\0" + valid_png[33:],
        "jpeg_sof_65535x65535.jpg": jpeg_gray_8x8((65535, 65535)),
        "jpeg_sof_zero.jpg": jpeg_gray_8x8((0, 8)),
        "jpeg_no_eoi.jpg": valid_jpeg[:-2],
        "jpeg_garbage_then_eoi.jpg": valid_jpeg[:-2] + b"\x12\x34" * 40 + b"\xff\xd9",
        "jpeg_marker_length_past_end.jpg": b"\xff\xd8\xff\xe1\xff\xff" + b"Exif\0\0" + b"\xff\xd9",
        "jpeg_soi_only.jpg": b"\xff\xd8\xff",
        "tiff_declares_30000x30000.tif": tiff_gray(4, 3, declared=(30000, 30000)),
        "tiff_declares_5000x5000.tif": tiff_gray(4, 3, declared=(5000, 5000)),
        "tiff_strip_past_end.tif": tiff_gray(4, 3)[:-6],
        "tiff_big_endian_header_only.tif": b"MM\x00*\x00\x00\x00\x08",
        "bmp_declares_5000x5000.bmp": bmp24(3, 2, declared=(5000, 5000)),
        "bmp_negative_height.bmp": bmp24(3, 2, declared=(3, -2)),
        "bmp_truncated.bmp": bmp24(3, 2)[:60],
        "webp_vp8x_16384x16384.webp": webp_vp8x(16384, 16384),
        "webp_vp8x_1x1.webp": webp_vp8x(1, 1),
        "not_an_image.txt": b"hello, this is not an image\n",
        "one_byte": b"\xff",
    }


# --- .cube ------------------------------------------------------------------

def cube(size, title="seed", domain=((0, 0, 0), (1, 1, 1)), f=lambda r, g, b: (r, g, b), body_lines=None, crlf=False):
    lines = ["# seed", 'TITLE "%s"' % title, "LUT_3D_SIZE %d" % size,
             "DOMAIN_MIN %g %g %g" % domain[0], "DOMAIN_MAX %g %g %g" % domain[1]]
    if body_lines is None:
        n = size - 1
        for b in range(size):
            for g in range(size):
                for r in range(size):
                    lines.append("%.6f %.6f %.6f" % f(r / n, g / n, b / n))
    else:
        lines += body_lines
    return (("\r\n" if crlf else "\n").join(lines) + "\n").encode()


def cube_seeds():
    warm = lambda r, g, b: (min(1.0, r * 1.1), g, b * 0.9)
    return {
        "identity_2.cube": cube(2),
        "warm_3.cube": cube(3, f=warm),
        "crlf_2.cube": cube(2, crlf=True),
        "domain_0_255.cube": cube(2, domain=((0, 0, 0), (255, 255, 255))),
        "input_range.cube": b"LUT_3D_SIZE 2\nLUT_3D_INPUT_RANGE 0 1\n" + b"0 0 0\n" * 8,
        # hostile
        "size_256_no_data.cube": b"LUT_3D_SIZE 256\n",
        "size_huge.cube": b"LUT_3D_SIZE 99999999999\n0 0 0\n",
        "size_zero.cube": b"LUT_3D_SIZE 0\n",
        "size_negative.cube": b"LUT_3D_SIZE -8\n0 0 0\n",
        "short_table.cube": cube(2, body_lines=["0 0 0"] * 7),
        "long_table.cube": cube(2, body_lines=["0 0 0"] * 9),
        "nan_value.cube": cube(2, body_lines=["nan 0 0"] + ["0 0 0"] * 7),
        "overflow_value.cube": cube(2, body_lines=["1e400 0 0"] + ["0 0 0"] * 7),
        "float_overflow_value.cube": cube(2, body_lines=["1e39 0 0"] + ["0 0 0"] * 7),
        "two_numbers.cube": cube(2, body_lines=["0 0"] + ["0 0 0"] * 7),
        "four_numbers.cube": cube(2, body_lines=["0 0 0 0"] + ["0 0 0"] * 7),
        "domain_inverted.cube": cube(2, domain=((1, 1, 1), (0, 0, 0))),
        # found by fuzz_cube_lut: a finite domain beyond float's range was written back as 'inf'
        "domain_beyond_float.cube": cube(2, domain=((0, 0, 0), (255, 255, 2.5e110))),
        # found by fuzz_cube_lut (its lattice half): a domain of -FLT_MAX is written as
        # -3.4028235e+38, above FLT_MAX in magnitude, and must read back
        "lattice_float_max_domain.bin": bytes.fromhex("4c444f4d45494e5f28005558145fffffffff7ffffff553494c"),
        "size_twice.cube": b"LUT_3D_SIZE 2\nLUT_3D_SIZE 2\n" + b"0 0 0\n" * 8,
        "lut_1d.cube": b"LUT_1D_SIZE 2\n0 0 0\n1 1 1\n",
        "unknown_keyword.cube": b"LUT_3D_SIZE 2\nFOO 1\n" + b"0 0 0\n" * 8,
        "title_unterminated.cube": b'TITLE "abc\nLUT_3D_SIZE 2\n' + b"0 0 0\n" * 8,
        "nul_bytes.cube": b"LUT_3D_SIZE 2\n" + b"0 0\x000\n" * 8,
        "keyword_after_data.cube": b"LUT_3D_SIZE 2\n" + b"0 0 0\n" * 4 + b"TITLE \"x\"\n" + b"0 0 0\n" * 4,
    }


# --- studio settings text ---------------------------------------------------

def settings_text(values):
    return ("[parameters]\n" + "".join("%s=%s\n" % kv for kv in values)).encode()


def settings_seeds():
    defaults = [("acceleration", "auto"), ("autoRun", "false"), ("balanced", "true"), ("colorSpace", "lab"),
                ("device", "cpu"), ("eps", "0.003"), ("epsScalingFactor", "0.5"), ("epsScalingRatio", "0"),
                ("maxIterations", "5000"), ("paletteMatch", "1"), ("paletteSize", "512"), ("precision", "fp32"),
                ("preserveLuminance", "false"), ("referenceMeasure", "ones"), ("smoothingScale", "1"),
                ("solver", "auto"), ("strength", "1"), ("tau", "1"), ("threads", "0"), ("tolerance", "1e-05")]
    return {
        "defaults.ini": settings_text(defaults),
        "some.ini": settings_text([("eps", "0.01"), ("strength", "0.7"), ("colorSpace", "oklab")]),
        "other_group.ini": b"[general]\nfoo=1\n[parameters]\npaletteSize=1024\n",
        # hostile
        "nan_inf.ini": settings_text([("eps", "nan"), ("tau", "inf"), ("strength", "-inf"), ("smoothingScale", "NaN")]),
        "huge_numbers.ini": settings_text([("paletteSize", "99999999999999999999"), ("threads", "100000"),
                                           ("maxIterations", "-5"), ("eps", "1e308"), ("tolerance", "1e-320")]),
        "garbage_values.ini": settings_text([("eps", "abc"), ("paletteSize", "12x"), ("device", "gpu:99999999999"),
                                             ("colorSpace", "../../etc"), ("solver", "")]),
        "empty_group.ini": b"[parameters]\n",
        "no_group.ini": b"eps=0.01\n",
        "variant.ini": b"[parameters]\neps=@Variant(\\0\\0\\0\\x6\\0\\0\\0\\x2\\x41)\nstrength=@ByteArray(xyz)\n",
        "escapes.ini": b"[parameters]\ncolorSpace=\"lab\\x0\\n\"\ndevice=gpu:0\\\n1\n",
        "lists.ini": b"[parameters]\nsolver=a, b, c\nstrength=0.5, 0.6\n",
        "binary.ini": b"[parameters]\n\xff\xfe\x00eps=\x80\x81\n",
        "keys_twice.ini": b"[parameters]\neps=0.01\neps=0.02\n[parameters]\neps=0.03\n",
        # found by a 10-minute run (2026-11-26): a serialized list whose count makes QSettings
        # allocate 2.2 GB while it reads the value
        "variant_list_bomb.ini": b'[parameters]\ncolor-intans=@Variant(\\0\\0\\00\\t(\\0\\0\\0\\x\x01\x00\x00\x000\\0\\x2\\x41)\n2trength=@ByteArra\x16(xyz)\x0b',
        "escaped_at.ini": b"[parameters]\neps=\\x40Variant(\\0\\0\\0\\t\\x7f\\xff\\xff\\xff)\nstrength=\\\n@ByteArray(x)\n",
    }


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = sys.argv[1]
    for kind, seeds in (("npy", npy_seeds()), ("image", image_seeds()), ("cube", cube_seeds()),
                        ("settings", settings_seeds())):
        folder = os.path.join(root, kind)
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        for name, data in seeds.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
