#!/usr/bin/env python3
"""The studio's clip export against `uot recolor CLIP` (docs/VIDEO.md, "In the
studio"): one 1080p testsrc2 clip, the same reference and default settings, the
frame pipeline's frames/s of each (decode, LUT map on the CPU, libx264 encode),
printed with their ratio from one run, and the outputs' frame counts. The studio
runs headless (xvfb-run) with --run --export-clip; its export goes through the
command line's applyClipLook, so the ratio should be about 1.

Usage: studio_clip_bench.py --uot build/app/cli/uot --studio build/app/studio/uot-studio
                            [--samples resources/samples] [--frames 150]
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clip_measures as cm  # noqa: E402


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot", required=True)
    parser.add_argument("--studio", required=True)
    parser.add_argument("--samples", default="resources/samples")
    parser.add_argument("--frames", type=int, default=150)
    args = parser.parse_args()
    ref = os.path.join(args.samples, "starry_night.jpg")
    with tempfile.TemporaryDirectory() as tmp:
        clip = f"{tmp}/testsrc_1080p.mp4"
        cm.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25", "-frames:v",
                str(args.frames), "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", clip])
        print(f"clip: {args.frames} frames of testsrc2 at 1920x1080; reference {os.path.basename(ref)}; default settings")
        print(f"load average before: {loadavg()}")
        report = json.loads(cm.run([args.uot, "recolor", clip, ref, "-o", f"{tmp}/cli.mp4", "--json", "--quiet"]).stdout)
        cli_fps, cli_frames = report["frames_per_second"], report["frames"]
        print(f"load average after uot recolor: {loadavg()}")
        env = dict(os.environ, XDG_CONFIG_HOME=f"{tmp}/config")
        out = cm.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", args.studio, "--source", clip, "--reference", ref,
                      "--run", "--export-clip", f"{tmp}/studio.mp4", "--quit"], env=env).stdout.decode()
        match = re.search(r"exported .*: (\d+) frames in ([0-9.]+) s \(([0-9.]+) frames/s\)", out)
        if not match:
            sys.exit(f"no export line in the studio's output:\n{out}")
        studio_frames, studio_fps = int(match.group(1)), float(match.group(3))
        print(f"load average after the studio: {loadavg()}")
        counts = []
        for name in ("cli", "studio"):
            video = cm.probe(f"{tmp}/{name}.mp4")["video"]
            counts.append(f"{video['width']}x{video['height']}, {video.get('nb_frames', '?')} frames")
        print("                         frames   frames/s (frame pipeline)")
        print(f"  uot recolor CLIP       {cli_frames:6d}   {cli_fps:8.1f}")
        print(f"  studio Export Clip     {studio_frames:6d}   {studio_fps:8.1f}")
        print(f"  studio / command line           {studio_fps / cli_fps:8.2f}x")
        print(f"  outputs (ffprobe): command line {counts[0]}, studio {counts[1]}")


if __name__ == "__main__":
    main()
