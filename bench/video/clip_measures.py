"""Shared by the video bench and tests (bench/video, tests/video): a test clip
made from the bundled photos with ffmpeg (a pan, a fade and a cut), frames read
back through ffmpeg, and the measures of docs/VIDEO.md:

- temporal change: the mean over consecutive frames of the distance between the
  frames' mean CIELAB colours (sRGB D65 -> Lab written out here from the CIE
  formulas, independent of the program's own conversion);
- PSNR between two frames (8-bit RGB).

Only ffmpeg/ffprobe (the programs) and numpy are used.
"""
import json
import subprocess

import numpy as np


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, **kw)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({result.returncode}): {result.stderr.decode()[-2000:]}")
    return result


def make_photo_clip(samples, path, width=320, height=240, rate=25, seconds_each=(0.8, 0.8, 0.8), audio=False,
                    extra=()):
    """A clip of three shots from the bundled photos: a pan over home.jpg, fruits.jpg
    fading in from black, then a cut to a pan over butterfly.jpg (BT.709 tags)."""
    a, b, c = seconds_each
    w2, h2 = width * 2, height * 2
    graph = (
        f"[0:v]scale={w2}:{h2},crop={width}:{height}:'n*{width / (a * rate):.3f}':'n*{height / (2 * a * rate):.3f}',"
        f"trim=duration={a},setpts=PTS-STARTPTS,setsar=1,format=yuv420p[a];"
        f"[1:v]scale={width}:{height},trim=duration={b},setpts=PTS-STARTPTS,fade=t=in:st=0:d={b * 0.75:.3f},setsar=1,format=yuv420p[b];"
        f"[2:v]scale={w2}:{h2},crop={width}:{height}:'{width}-n*{width / (c * rate):.3f}':'{height / 2}',"
        f"trim=duration={c},setpts=PTS-STARTPTS,setsar=1,format=yuv420p[c];"
        "[a][b][c]concat=n=3:v=1:a=0[v]")
    args = ["ffmpeg", "-v", "error", "-y"]
    for name in ("home.jpg", "fruits.jpg", "butterfly.jpg"):
        args += ["-loop", "1", "-framerate", str(rate), "-i", f"{samples}/{name}"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={a + b + c}"]
    args += ["-filter_complex", graph, "-map", "[v]"]
    if audio:
        args += ["-map", "3:a", "-c:a", "aac"]
    args += ["-c:v", "libx264", "-crf", "12", "-preset", "veryfast", "-pix_fmt", "yuv420p",
             "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
             "-r", str(rate), *extra, path]
    run(args)
    return path


def read_frames(path, vf=None, width=None, height=None):
    """Every frame of a clip (or an image sequence pattern) as uint8 RGB arrays,
    decoded by ffmpeg (optionally through the filter vf)."""
    if width is None:
        info = probe(path)
        width, height = info["width"], info["height"]
    args = ["ffmpeg", "-v", "error", "-i", path, "-fps_mode", "passthrough"]
    if vf:
        args += ["-vf", vf]
    args += ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = run(args).stdout
    frames = np.frombuffer(raw, dtype=np.uint8)
    return frames.reshape(-1, height, width, 3)


def probe(path):
    out = run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path]).stdout
    data = json.loads(out)
    video = [s for s in data["streams"] if s["codec_type"] == "video"][0]
    return {"width": video["width"], "height": video["height"], "streams": data["streams"], "video": video}


def srgb_to_lab(rgb):
    """CIELAB (D65) of 8-bit sRGB values, from the CIE formulas."""
    c = rgb.astype(np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def mean_labs(frames):
    return np.array([srgb_to_lab(f.reshape(-1, 3)).mean(axis=0) for f in frames])


def temporal_change(frames):
    """Mean over consecutive frames of |mean Lab(t+1) - mean Lab(t)| (Lab units)."""
    means = mean_labs(frames)
    return float(np.linalg.norm(np.diff(means, axis=0), axis=1).mean())


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else float(10 * np.log10(255.0 ** 2 / mse))
