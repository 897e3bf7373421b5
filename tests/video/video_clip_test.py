#!/usr/bin/env python3
"""End-to-end checks of clips in `uot recolor` / `uot lut` (docs/VIDEO.md), one
case per CTest test (the first argument names it). Every clip is made here with
ffmpeg from the bundled photos or testsrc2 (320x240, a few dozen frames); frames
are read back through ffmpeg, not through the program.

  keeps      frame count, frame rate, size, audio (stream copy, same packets), the
             BT.709 description; mp4, mkv, webm and image sequences; notes for what
             cannot be kept (HDR, audio a container refuses); uot batch over a folder
             of a clip and a photo; the source is never replaced
  fidelity   the clip as uot maps it vs the same clip through `ffmpeg -vf lut3d=`
             with the LUT of `uot lut CLIP`: >= 40 dB PSNR per frame; that LUT is
             the one `uot recolor --export-lut` writes
  stability  the frame-to-frame change of the mean Lab colour of uot's output
             <= 1.05x the source's; a per-frame transfer (`uot batch` over the
             frames) measured too (see docs/VIDEO.md for what it shows);
             --per-shot finds the clip's two cuts and no cut in its fade
  cancel     SIGINT / SIGTERM during the frames: exit 130 / 143, no output, no
             temporary file; SIGKILL: no output under its name
  corrupt    a damaged frame in a video and a truncated frame in a sequence stop
             the work with a message naming the frame; nothing is written; a
             Matroska file cut short is read to its end with a note saying so
  device     --device for clips: cpu maps on the CPU; gpu maps on the GPU where one
             is usable, else exits 4 before anything is written (as for photos);
             auto says where the look was solved and the frames mapped, and why
             the CPU when it is; uot batch over a clip the same
Usage: video_clip_test.py CASE UOT SAMPLES_DIR BENCH_VIDEO_DIR
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

case, uot, samples, bench = sys.argv[1:5]
sys.path.insert(0, bench)
import clip_measures as cm  # noqa: E402

failures = 0
QUICK = ["--palette-size", "256", "--quiet"]
REF = f"{samples}/starry_night.jpg"


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures += 1


def uot_run(*args, **kw):
    return subprocess.run([uot, *args], capture_output=True, text=True, **kw)


def testsrc_clip(path, seconds=2, audio=True, size="320x240"):
    args = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=25"]
    if audio:
        args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]
    args += ["-t", str(seconds), "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
             "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]
    if audio:
        args += ["-c:a", "aac" if path.endswith((".mp4", ".mov")) else "libopus" if path.endswith(".webm") else "aac",
                 "-shortest"]
    cm.run(args + [path])
    return path


def packets(path, kind):
    out = cm.run(["ffprobe", "-v", "error", "-select_streams", kind, "-show_entries", "packet=size", "-of", "csv=p=0",
                  path]).stdout.split()
    return [int(x.split(b",")[0]) for x in out]


def case_keeps(tmp):
    src = testsrc_clip(f"{tmp}/src.mp4")
    before = open(src, "rb").read()
    for ext in ("mp4", "mkv"):
        out = f"{tmp}/out.{ext}"
        r = uot_run("recolor", src, REF, "-o", out, "--json", *QUICK)
        check(r.returncode == 0, f"recolor a .mp4 into .{ext} (exit {r.returncode}: {r.stderr.strip()[-300:]})")
        if r.returncode != 0:
            continue
        report = json.loads(r.stdout)
        a, b = cm.probe(src), cm.probe(out)
        check(len(cm.read_frames(out)) == len(cm.read_frames(src)) == 50 and report["frames"] == 50,
              f".{ext}: every frame is kept (50)")
        check(b["video"]["r_frame_rate"] == a["video"]["r_frame_rate"] == "25/1", f".{ext}: the frame rate is kept")
        check((b["width"], b["height"]) == (320, 240), f".{ext}: the size is kept")
        for key in ("color_space", "color_primaries", "color_transfer", "color_range"):
            check(b["video"].get(key) == a["video"].get(key), f".{ext}: {key} kept ({b['video'].get(key)})")
        audio_in, audio_out = packets(src, "a"), packets(out, "a")
        check(len(audio_in) > 0 and audio_in == audio_out, f".{ext}: the audio stream is copied packet for packet")
        check(report["look"]["shots"][0]["sampled_frames"] == [3, 9, 15, 21, 28, 34, 40, 46],
              ".{ext}: the look pools 8 frames spread over the clip".format(ext=ext))
    check(open(src, "rb").read() == before, "the source is unchanged")
    r = uot_run("recolor", src, REF, "-o", src, "--overwrite", *QUICK)
    check(r.returncode != 0 and open(src, "rb").read() == before, "-o CLIP itself is refused, the source kept")
    # An image sequence in and out: the same number of frames, the first number kept.
    os.makedirs(f"{tmp}/in")
    cm.run(["ffmpeg", "-v", "error", "-i", src, "-frames:v", "12", "-start_number", "1", f"{tmp}/in/f_%03d.png"])
    os.makedirs(f"{tmp}/seq")
    r = uot_run("recolor", f"{tmp}/in/f_%03d.png", REF, "-o", f"{tmp}/seq/g_%05d.png", *QUICK)
    check(r.returncode == 0 and sorted(os.listdir(f"{tmp}/seq")) == [f"g_{i:05d}.png" for i in range(1, 13)],
          f"a sequence recolored into a sequence: 12 frames, numbered from 1 ({r.stderr.strip()[-200:]})")
    r = uot_run("recolor", f"{tmp}/in/f_%03d.png", REF, "-o", f"{tmp}/from_seq.mkv", *QUICK)
    check(r.returncode == 0 and len(cm.read_frames(f"{tmp}/from_seq.mkv")) == 12, "a sequence recolored into a video")
    # What cannot be kept is said: HDR input (PQ, 10-bit), AAC audio into .webm.
    cm.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "6",
            "-c:v", "ffv1", "-pix_fmt", "yuv420p10le", "-color_trc", "smpte2084", "-color_primaries", "bt2020",
            "-colorspace", "bt2020nc", f"{tmp}/hdr.mkv"])
    r = uot_run("recolor", f"{tmp}/hdr.mkv", REF, "-o", f"{tmp}/hdr_out.mp4", "--json", *QUICK)
    notes = json.loads(r.stdout)["notes"] if r.returncode == 0 else []
    check(any("HDR" in n for n in notes) and cm.probe(f"{tmp}/hdr_out.mp4")["video"].get("color_transfer") == "bt709",
          f"HDR input: a note says its description is not kept, the output is tagged BT.709 ({notes})")
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/out.webm", "--json", *QUICK)
    notes = json.loads(r.stdout)["notes"] if r.returncode == 0 else []
    check(any("audio stream" in n and "left out" in n for n in notes) and len(cm.read_frames(f"{tmp}/out.webm")) == 50,
          f".webm: 50 frames, and a note that the AAC audio cannot go into it ({notes})")
    # uot batch: a folder holding a clip and a photo; the clip goes through the clip path.
    os.makedirs(f"{tmp}/batch")
    os.link(src, f"{tmp}/batch/clip.mp4")
    os.link(f"{tmp}/in/f_001.png", f"{tmp}/batch/still.png")
    r = uot_run("batch", REF, f"{tmp}/batch", "--out-dir", f"{tmp}/batch_out", "--json", *QUICK)
    items = {os.path.basename(i["input"]): i for i in json.loads(r.stdout)["items"]} if r.returncode == 0 else {}
    check(r.returncode == 0 and items.get("clip.mp4", {}).get("status") == "done"
          and items.get("still.png", {}).get("status") == "done"
          and len(cm.read_frames(f"{tmp}/batch_out/clip_recolored.mp4")) == 50,
          f"uot batch over a folder recolors its clip (50 frames) and its photo ({r.stderr.strip()[-200:]})")


def case_fidelity(tmp):
    src = cm.make_photo_clip(samples, f"{tmp}/photos.mp4", seconds_each=(0.4, 0.4, 0.4))
    os.makedirs(f"{tmp}/seq")
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/seq/f_%04d.png", "--export-lut", f"{tmp}/export.cube", *QUICK)
    check(r.returncode == 0, f"recolor the clip into a PNG sequence ({r.stderr.strip()[-300:]})")
    r = uot_run("lut", src, REF, "-o", f"{tmp}/look.cube", *QUICK)
    check(r.returncode == 0, f"uot lut CLIP REF ({r.stderr.strip()[-300:]})")
    check(open(f"{tmp}/look.cube").read() == open(f"{tmp}/export.cube").read(),
          "uot lut CLIP gives the look recolor applied (--export-lut), byte for byte")
    ours = cm.read_frames(f"{tmp}/seq/f_%04d.png")
    theirs = cm.read_frames(src, vf=f"lut3d=file={tmp}/look.cube")
    check(len(ours) == len(theirs) == 30, f"30 frames each ({len(ours)}, {len(theirs)})")
    values = [cm.psnr(a, b) for a, b in zip(ours, theirs)]
    print(f"PSNR per frame vs ffmpeg lut3d: min {min(values):.2f} dB, max {max(values):.2f} dB")
    check(min(values) >= 40, "every frame within 40 dB of ffmpeg's lut3d with the exported LUT")


def case_stability(tmp):
    src = cm.make_photo_clip(samples, f"{tmp}/photos.mp4", seconds_each=(0.4, 0.4, 0.4))
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/out.mkv", "--crf", "10", *QUICK)
    check(r.returncode == 0, f"recolor the photo clip ({r.stderr.strip()[-300:]})")
    os.makedirs(f"{tmp}/frames")
    cm.run(["ffmpeg", "-v", "error", "-i", src, f"{tmp}/frames/f_%03d.png"])
    r = uot_run("batch", REF, f"{tmp}/frames", "--out-dir", f"{tmp}/each", "--pattern", "{name}.png", *QUICK)
    check(r.returncode == 0, f"per-frame transfer with uot batch ({r.stderr.strip()[-300:]})")
    source = cm.temporal_change(cm.read_frames(src))
    clip = cm.temporal_change(cm.read_frames(f"{tmp}/out.mkv"))
    each = cm.temporal_change(cm.read_frames(f"{tmp}/each/f_%03d.png"))
    print(f"mean-Lab change per frame: source {source:.3f}, one look {clip:.3f} ({clip / source:.3f}x), "
          f"per frame {each:.3f} ({each / source:.3f}x)")
    check(clip <= 1.05 * source, "one look per clip: change <= 1.05x the source's")
    # A per-frame transfer moves every frame onto the reference's colours: it does not follow the
    # source's changes (the fade and the cut flatten), so the measure sets it far from the one look.
    check(abs(each / source - clip / source) > 0.3,
          "the measure tells a per-frame transfer from the one look (ratios apart by more than 0.3)")
    # --per-shot: the clip's cuts (pan -> black at frame 10, fruits -> butterfly at 20; the fade is no cut).
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/shots.mkv", "--per-shot", "--json", *QUICK)
    shots = [s["first_frame"] for s in json.loads(r.stdout)["look"]["shots"]] if r.returncode == 0 else []
    check(shots == [0, 10, 20], f"--per-shot finds the cuts at frames 10 and 20 and none in the fade ({shots})")
    check(r.returncode == 0 and len(cm.read_frames(f"{tmp}/shots.mkv")) == 30, "--per-shot keeps every frame")


def wait_for(proc, text, timeout=120):
    seen = b""
    end = time.time() + timeout
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    while time.time() < end and proc.poll() is None:
        try:
            seen += os.read(fd, 65536)
        except BlockingIOError:
            pass
        if text.encode() in seen:
            return True
        time.sleep(0.05)
    return False


def leftovers(folder):
    return [n for n in os.listdir(folder) if n.startswith(".uot-tmp-")]


def case_cancel(tmp):
    src = testsrc_clip(f"{tmp}/long.mp4", seconds=30, audio=False)
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        out = f"{tmp}/out_{int(sig)}.mp4"
        proc = subprocess.Popen([uot, "recolor", src, REF, "-o", out, "--palette-size", "256"],
                                stderr=subprocess.PIPE)
        started = wait_for(proc, "frame ")
        check(started, f"{sig.name}: the frames are being mapped")
        proc.send_signal(sig)
        rc = proc.wait(60)
        check(rc == code or rc == -sig, f"{sig.name}: exit {code} (got {rc})")
        check(not os.path.exists(out), f"{sig.name}: no output")
        check(leftovers(tmp) == [], f"{sig.name}: no temporary file left ({leftovers(tmp)})")
    out = f"{tmp}/killed.mp4"
    proc = subprocess.Popen([uot, "recolor", src, REF, "-o", out, "--palette-size", "256"], stderr=subprocess.PIPE,
                            )
    check(wait_for(proc, "frame "), "SIGKILL: the frames are being mapped")
    proc.kill()
    proc.wait(60)
    check(not os.path.exists(out), "SIGKILL: no output under its name (only a hidden .uot-tmp- file)")
    # A sequence output interrupted: no frame under its name.
    os.makedirs(f"{tmp}/seq")
    proc = subprocess.Popen([uot, "recolor", src, REF, "-o", f"{tmp}/seq/f_%05d.png", "--palette-size", "256"],
                            stderr=subprocess.PIPE)
    check(wait_for(proc, "frame "), "sequence: the frames are being mapped")
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    check([n for n in os.listdir(f"{tmp}/seq") if not n.startswith(".uot-tmp-")] == [],
          "sequence, SIGINT: no frame under the output's names")
    check(leftovers(f"{tmp}/seq") == [], f"sequence, SIGINT: no temporary folder of frames left ({leftovers(f'{tmp}/seq')})")


def corrupt_packet(src, dst, frame):
    """Scrambles the bytes of the video packet of display frame `frame` (past its first 8 bytes)."""
    out = json.loads(cm.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                             "packet=pos,size,pts", "-of", "json", src]).stdout)
    packet = sorted(out["packets"], key=lambda p: int(p["pts"]))[frame]
    pos, size = int(packet["pos"]), int(packet["size"])
    data = bytearray(open(src, "rb").read())
    for i in range(pos + 8, pos + size):
        data[i] = (data[i] * 7 + 91) & 0xFF
    open(dst, "wb").write(bytes(data))


def case_corrupt(tmp):
    src = testsrc_clip(f"{tmp}/src.mp4", seconds=1, audio=False)
    for frame in (3, 17):
        bad = f"{tmp}/bad{frame}.mp4"
        corrupt_packet(src, bad, frame)
        out = f"{tmp}/out{frame}.mp4"
        r = uot_run("recolor", bad, REF, "-o", out, *QUICK)
        check(r.returncode == 1 and f"frame {frame}:" in r.stderr,
              f"a damaged frame {frame} stops the work naming it (exit {r.returncode}: {r.stderr.strip()[-200:]})")
        check(not os.path.exists(out) and leftovers(tmp) == [], f"damaged frame {frame}: nothing written")
    os.makedirs(f"{tmp}/in")
    cm.run(["ffmpeg", "-v", "error", "-i", src, "-frames:v", "8", "-start_number", "0", f"{tmp}/in/f_%02d.png"])
    data = open(f"{tmp}/in/f_05.png", "rb").read()
    open(f"{tmp}/in/f_05.png", "wb").write(data[: len(data) // 2])
    r = uot_run("recolor", f"{tmp}/in/f_%02d.png", REF, "-o", f"{tmp}/seq.mp4", *QUICK)
    check(r.returncode == 1 and "frame 5:" in r.stderr and not os.path.exists(f"{tmp}/seq.mp4"),
          f"a truncated frame 5 of a sequence is named, nothing written ({r.stderr.strip()[-200:]})")
    # A Matroska file cut in half reads to its end without an error (no frame count in the
    # container): the declared duration against the last packet's end tells; the whole file does not.
    whole = testsrc_clip(f"{tmp}/whole.mkv", seconds=4, audio=False)
    data = open(whole, "rb").read()
    open(f"{tmp}/half.mkv", "wb").write(data[: len(data) // 2])
    for name, truncated in (("half", True), ("whole", False)):
        r = uot_run("recolor", f"{tmp}/{name}.mkv", REF, "-o", f"{tmp}/{name}_out.mkv", "--json", *QUICK)
        notes = json.loads(r.stdout).get("notes", []) if r.returncode == 0 else []
        says = any("may be truncated" in n for n in notes)
        check(r.returncode == 0 and says == truncated,
              f"{name}.mkv: {'a' if truncated else 'no'} note that the file may be truncated ({notes}; {r.stderr.strip()[-200:]})")
        # The clip's look as a LUT says it too.
        r = uot_run("lut", f"{tmp}/{name}.mkv", REF, "-o", f"{tmp}/{name}.cube", "--json", *QUICK)
        notes = json.loads(r.stdout).get("notes", []) if r.returncode == 0 else []
        says = any("may be truncated" in n for n in notes)
        check(r.returncode == 0 and says == truncated,
              f"uot lut {name}.mkv: {'a' if truncated else 'no'} note that the file may be truncated ({notes}; "
              f"{r.stderr.strip()[-200:]})")


def case_device(tmp):
    src = testsrc_clip(f"{tmp}/src.mp4", seconds=1, audio=False)
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/cpu.mp4", "--device", "cpu", "--json", *QUICK)
    report = json.loads(r.stdout) if r.returncode == 0 else {}
    check(report.get("device") == "cpu" and report.get("map_device", "").startswith("CPU")
          and report.get("map_note") == "" and report.get("seconds_mapping", 0) > 0,
          f"--device cpu: solved and mapped on the CPU ({r.stderr.strip()[-200:]}; {report.get('map_device')})")
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/auto.mp4", "--device", "auto", "--json", *QUICK)
    report = json.loads(r.stdout) if r.returncode == 0 else {}
    gpu = report.get("device") == "gpu"
    if gpu:
        check(report.get("map_device", "").startswith("GPU 0") and report.get("map_note") == "",
              f"--device auto with a GPU: frames mapped on it ({report.get('map_device')}; {report.get('map_note')})")
    else:
        check(r.returncode == 0 and report.get("map_device", "").startswith("CPU") and report.get("device_note"),
              f"--device auto without a GPU: the CPU, and why ({r.stderr.strip()[-200:]}; {report.get('device_note')})")
    out = f"{tmp}/gpu.mp4"
    r = uot_run("recolor", src, REF, "-o", out, "--device", "gpu", "--json", *QUICK)
    if gpu:
        report = json.loads(r.stdout) if r.returncode == 0 else {}
        check(report.get("device") == "gpu" and report.get("map_device", "").startswith("GPU 0"),
              f"--device gpu: solved and mapped on the GPU ({report.get('map_device')}; {report.get('map_note')})")
    else:
        check(r.returncode == 4 and "GPU" in r.stderr and not os.path.exists(out) and leftovers(tmp) == [],
              f"--device gpu without a GPU: exit 4 before any work ({r.returncode}: {r.stderr.strip()[-200:]})")
    r = uot_run("recolor", src, REF, "-o", f"{tmp}/bad.mp4", "--device", "gpu:x", *QUICK)
    check(r.returncode == 2 and "--device" in r.stderr, f"--device gpu:x is a usage error ({r.stderr.strip()[-200:]})")
    r = uot_run("batch", REF, src, "--out-dir", f"{tmp}/batch", "--device", "auto", "--json", *QUICK)
    items = json.loads(r.stdout)["items"] if r.returncode == 0 else []
    check(len(items) == 1 and items[0]["status"] == "done" and os.path.exists(f"{tmp}/batch/src_recolored.mp4"),
          f"uot batch over a clip with --device auto ({r.stderr.strip()[-200:]})")


CASES = {"keeps": case_keeps, "fidelity": case_fidelity, "stability": case_stability, "cancel": case_cancel,
         "corrupt": case_corrupt, "device": case_device}

with tempfile.TemporaryDirectory() as tmp:
    CASES[case](tmp)
print(f"{case}: {'all passed' if failures == 0 else f'{failures} failed'}")
sys.exit(1 if failures else 0)
