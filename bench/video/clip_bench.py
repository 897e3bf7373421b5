#!/usr/bin/env python3
"""Clips in `uot recolor` (docs/VIDEO.md): figures from one run, printed as ratios.

  stability   the photo clip of clip_measures.py (a pan, a fade, a cut; 320x240):
              mean-Lab change per frame of the source, of uot's one look per clip,
              and of a per-frame transfer (`uot batch` over the frames); ratios to
              the source's (target for the one look: <= 1.05x)
  throughput  a 1080p testsrc2 clip through `uot recolor` (decode, LUT map on the
              CPU, libx264 encode; audio none): frames/s of the frame pipeline and
              of the whole run (look included), CPU ms per frame, the load average;
              and the same job by ffmpeg (decode, lut3d with the clip's exported
              LUT, the same libx264 preset and CRF) as the yardstick (target >= 30
              frames/s on the 2-core machine)

Usage: clip_bench.py --uot build/app/cli/uot [--samples resources/samples]
                     [--frames 150] [--preset veryfast] [--skip stability|throughput]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clip_measures as cm  # noqa: E402


def timed(args):
    """Runs args; returns (wall seconds, CPU seconds of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = cm.run(args)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def stability(uot, samples, ref, tmp):
    src = cm.make_photo_clip(samples, f"{tmp}/photos.mp4")
    cm.run([uot, "recolor", src, ref, "-o", f"{tmp}/one_look.mkv", "--crf", "10", "--quiet"])
    os.makedirs(f"{tmp}/frames")
    cm.run(["ffmpeg", "-v", "error", "-i", src, f"{tmp}/frames/f_%03d.png"])
    cm.run([uot, "batch", ref, f"{tmp}/frames", "--out-dir", f"{tmp}/each", "--pattern", "{name}.png", "--quiet"])
    source = cm.temporal_change(cm.read_frames(src))
    one = cm.temporal_change(cm.read_frames(f"{tmp}/one_look.mkv"))
    each = cm.temporal_change(cm.read_frames(f"{tmp}/each/f_%03d.png"))
    frames = len(cm.read_frames(src))
    print(f"stability: photo clip, {frames} frames 320x240 (pan, fade, cut), reference {os.path.basename(ref)}")
    print("  mean-Lab change per frame   Lab units   vs source")
    print(f"  source                      {source:9.3f}      1.000x")
    print(f"  uot, one look per clip      {one:9.3f}      {one / source:.3f}x   (target <= 1.05x)")
    print(f"  per-frame transfer          {each:9.3f}      {each / source:.3f}x")


def throughput(uot, ref, tmp, frames, preset):
    clip = f"{tmp}/hd.mp4"
    cm.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25", "-frames:v",
            str(frames), "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p",
            "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", clip])
    load_before = loadavg()
    wall, cpu, out = timed([uot, "recolor", clip, ref, "-o", f"{tmp}/uot.mp4", "--video-preset", preset, "--json",
                            "--export-lut", f"{tmp}/look.cube"])
    report = json.loads(out)
    ff_wall, ff_cpu, _ = timed(["ffmpeg", "-v", "error", "-y", "-i", clip, "-vf", f"lut3d=file={tmp}/look.cube",
                                "-c:v", "libx264", "-preset", preset, "-crf", "18", "-pix_fmt", "yuv420p",
                                f"{tmp}/ffmpeg.mp4"])
    load_after = loadavg()
    n = report["frames"]
    fps_frames = report["frames_per_second"]
    fps_all = n / wall
    print(f"throughput: 1920x1080, {n} frames, libx264 preset {preset} CRF 18, CPU LUT map, cores {os.cpu_count()}, "
          f"load average {' '.join(load_before)} -> {' '.join(load_after)}")
    print("  run                               frames/s   CPU ms/frame   vs target 30 frames/s")
    print(f"  uot frames (decode+map+encode)    {fps_frames:8.1f}   {'':>12}   {fps_frames / 30:.2f}x")
    print(f"  uot whole run (look included)     {fps_all:8.1f}   {1000 * cpu / n:12.1f}   {fps_all / 30:.2f}x")
    print(f"  ffmpeg lut3d + libx264            {n / ff_wall:8.1f}   {1000 * ff_cpu / n:12.1f}   {n / ff_wall / 30:.2f}x")
    print(f"  uot frames / ffmpeg               {fps_frames / (n / ff_wall):8.2f}x")
    print(f"  look: {report['seconds_look']:.2f} s (sampled frames {report['look']['shots'][0]['sampled_frames']})")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot", required=True)
    parser.add_argument("--samples", default=os.path.join(here, "..", "..", "resources", "samples"))
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--preset", default="veryfast")
    parser.add_argument("--skip", choices=["stability", "throughput"])
    a = parser.parse_args()
    ref = os.path.join(a.samples, "starry_night.jpg")
    with tempfile.TemporaryDirectory() as tmp:
        if a.skip != "stability":
            stability(a.uot, a.samples, ref, tmp)
        if a.skip != "throughput":
            throughput(a.uot, ref, tmp, a.frames, a.preset)


if __name__ == "__main__":
    main()
