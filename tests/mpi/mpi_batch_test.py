#!/usr/bin/python3
"""`uot-mpi batch` on 1, 2 and 3 MPI ranks against `uot batch`, and several
references in `uot batch` against `uot recolor`.

Run by CTest with Debian's /usr/bin/python3 (python3-numpy):

    /usr/bin/python3 mpi_batch_test.py --uot path/to/uot --uot-mpi path/to/uot-mpi --mpirun mpirun \
        --samples resources/samples

The inputs are small BMP images written here (smooth colour fields from numpy) and
a truncated copy of a bundled JPEG. Checks:

* P = 1, 2, 3 (`mpirun --oversubscribe`, --threads 1 everywhere: a result depends
  on the thread count, for `uot batch` as well) write the same files, byte for
  byte, as `uot batch` with the same options, report the same items (input,
  output, status, message, in the same order) and counts in --json, and exit with
  the same code: 3, because the corrupt input fails while every other file is done;
* the ranks take the inputs one at a time from a shared counter: every input is
  done once, whichever rank takes it (the reports and files above);
* a rank that leaves mid-run (UOT_MPI_BATCH_TEST_EXIT=1:image makes rank 1 take an
  image as soon as the ranks start and exit, 1:clip the same with a clip; mpirun --mca
  orte_abort_on_non_zero_status 0 keeps the job alive): rank 0 reports, within
  --timeout, the file rank 1 took by name as failed (exit 3) and every other file
  is done by the other ranks; a rerun does exactly that file (done) and skips every
  other (complete outputs exist), and the files then equal those of `uot batch`;
* `uot batch REF1 INPUTS --reference REF2 --reference-weights 1,3` writes, for
  every input, the file `uot recolor INPUT REF1 REF2 --reference-weights 1,3`
  writes (byte for byte); `uot-mpi batch` with the same references on 2 ranks
  too; a weight count that does not match the references is a usage error (2).

With --uot-mpi none it exits 77 (CTest: skipped). Exit 0 when every check passes.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as error:
    print("FAIL: needs numpy for /usr/bin/python3 (apt-get install python3-numpy): %s" % error)
    sys.exit(1)

import mpi_test_runner  # noqa: E402 (next to this script)

TIMEOUT_S = 300


class Runner(mpi_test_runner.Runner):
    def __init__(self, args):
        super().__init__(args, TIMEOUT_S)

    def mpi(self, ranks, extra=()):
        return self.mpi_command("batch", ranks, extra)


def write_bmp(path, rgb):
    """A 24-bit BMP of an (h, w, 3) uint8 array."""
    h, w, _ = rgb.shape
    row = (w * 3 + 3) // 4 * 4
    pixels = bytearray()
    for y in range(h - 1, -1, -1):
        line = rgb[y, :, ::-1].tobytes()
        pixels += line + b"\0" * (row - len(line))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(header + info + pixels)


def smooth_image(seed, h, w):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w] / max(h, w)
    out = np.zeros((h, w, 3))
    for c in range(3):
        a, b, p = rng.random(3) * 6
        out[..., c] = 0.5 + 0.45 * np.sin(a * x + b * y + p) * rng.random()
    return (np.clip(out, 0, 1) * 255).astype(np.uint8)


def make_inputs(work, samples):
    inputs = os.path.join(work, "in")
    os.makedirs(inputs)
    sizes = [(40, 60), (64, 48), (30, 90), (72, 72), (50, 50), (36, 80), (60, 40)]
    for k, (h, w) in enumerate(sizes):
        write_bmp(os.path.join(inputs, "img%02d.bmp" % k), smooth_image(k + 1, h, w))
    with open(os.path.join(samples, "fruits.jpg"), "rb") as f:
        data = f.read()
    with open(os.path.join(inputs, "img03b_corrupt.jpg"), "wb") as f:
        f.write(data[:3000])
    refs = []
    for k in range(2):
        path = os.path.join(work, "ref%d.bmp" % k)
        write_bmp(path, smooth_image(100 + k, 48, 64))
        refs.append(path)
    return inputs, refs


COMMON = ["--threads", "1", "--device", "cpu", "--json", "--quiet"]


def report(done):
    try:
        return json.loads(done.stdout)
    except (ValueError, AttributeError):
        return None


def items_of(rep):
    return [(i["input"], os.path.basename(i["output"]), i["status"], i["message"]) for i in rep["items"]]


def same_files(r, a, b, what):
    names = sorted(os.listdir(a))
    r.check(names == sorted(os.listdir(b)), "%s: the output folders hold %s and %s" % (what, names, sorted(os.listdir(b))))
    for name in names:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            r.check(fa.read() == fb.read(), "%s: %s differs from uot batch's" % (what, name))


def same_report(r, local, distributed, what):
    for key in ("done", "skipped", "failed", "cancelled"):
        r.check(local[key] == distributed[key],
                "%s: %s = %s, uot batch: %s" % (what, key, distributed[key], local[key]))
    r.check(items_of(local) == items_of(distributed),
            "%s: items differ:\n  uot batch: %s\n  uot-mpi:   %s" % (what, items_of(local), items_of(distributed)))


def check_ranks_match_uot_batch(r, work, name, inputs, ref, done_count, failed_count):
    """`uot batch REF INPUTS...` into work/NAME_local, then `uot-mpi batch` on 1, 2 and 3 ranks into
    work/NAME_pP: the same exit code (3), report and files. Returns uot batch's output folder."""
    base = os.path.join(work, name + "_local")
    local = r.run([r.uot, "batch", ref] + inputs + ["--out-dir", base] + COMMON)
    if not r.check(local is not None and local.returncode == 3,
                   "%s: uot batch with corrupt inputs exits 3 (got %s: %s)" % (name, local and local.returncode,
                                                                              local and local.stderr[-500:])):
        return base
    expected = report(local)
    r.check(expected["failed"] == failed_count and expected["done"] == done_count,
            "%s: uot batch: %d done, %d failed: %s" % (name, done_count, failed_count, local.stderr))
    for ranks in (1, 2, 3):
        what = "%s, P=%d" % (name, ranks)
        out = os.path.join(work, "%s_p%d" % (name, ranks))
        done = r.run(r.mpi(ranks) + [ref] + inputs + ["--out-dir", out] + COMMON)
        if not r.check(done is not None and done.returncode == 3,
                       "%s: exit 3 as uot batch (got %s: %s)" % (what, done and done.returncode,
                                                                done and done.stderr[-800:])):
            continue
        got = report(done)
        if not r.check(got is not None, "%s: --json report: %s" % (what, done.stdout[:300])):
            continue
        # The outputs are named under different folders: compare names only (items_of).
        same_report(r, expected, got, what)
        same_files(r, base, out, what)
    return base


def write_sequence(folder, seed, frames, h, w):
    """An image sequence folder/f_000.bmp ... of smooth colour fields drifting frame by frame; its pattern."""
    os.makedirs(folder)
    for k in range(frames):
        write_bmp(os.path.join(folder, "f_%03d.bmp" % k), smooth_image(seed + k, h, w))
    return os.path.join(folder, "f_%03d.bmp")


def make_clips(work):
    """Two small clips (ffmpeg's testsrc2 as MP4 in a folder of their own, found there as `uot batch` finds
    them; without ffmpeg, two image sequences) and a corrupt one: an image sequence whose third frame is cut
    short. MP4, not MKV: ffmpeg's Matroska muxer writes a random segment ID, so two runs never match."""
    clips = []
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg:
        folder = os.path.join(work, "clips")
        os.makedirs(folder)
        for k, (size, frames) in enumerate((("64x48", 12), ("48x32", 8))):
            subprocess.run([ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=%s:rate=10" % size,
                            "-frames:v", str(frames), "-pix_fmt", "yuv420p", os.path.join(folder, "clip%d.mp4" % k)],
                           check=True)
        clips.append(folder)
    else:
        clips += [write_sequence(os.path.join(work, "seq%d" % k), 200 + 10 * k, 6 - k, 48 - 16 * k, 64 - 16 * k)
                  for k in range(2)]
    corrupt = write_sequence(os.path.join(work, "seq_corrupt"), 300, 5, 40, 40)
    third = corrupt % 2
    with open(third, "rb") as f:
        data = f.read()
    with open(third, "wb") as f:
        f.write(data[:len(data) // 3])
    return clips + [corrupt]


def check_clips(r, work, inputs, ref):
    """Clips among the inputs: uot-mpi batch on 1, 2 and 3 ranks against uot batch (a clip is done whole on one
    rank through the same clip path); in a build without FFmpeg, the same refusal (exit 4) as uot batch."""
    clips = make_clips(work)
    probe = r.run([r.uot, "batch", ref] + clips + ["--out-dir", os.path.join(work, "probe")] + COMMON)
    if probe is not None and probe.returncode == 4:  # no FFmpeg in this build: uot-mpi refuses clips alike
        done = r.run(r.mpi(2) + [ref] + clips + ["--out-dir", os.path.join(work, "probe_mpi")] + COMMON)
        said = [line for line in probe.stderr.splitlines() if "not built in" in line]
        r.check(done is not None and done.returncode == 4 and said and said[0] in done.stderr,
                "clips without FFmpeg: uot-mpi batch exits 4 as uot batch with %s (got %s: %s)" %
                (said, done and done.returncode, done and done.stderr[-500:]))
        return
    base = check_ranks_match_uot_batch(r, work, "clips", [inputs] + clips, ref, 7 + 2, 2)
    check_lost_rank(r, work, "clips", [inputs] + clips, ref, base, 7 + 2, 2, "1:clip",
                    lambda path: not path.startswith(inputs + os.sep))


def check_lost_rank(r, work, name, inputs, ref, base, done_count, failed_count, hook, lost_kind=None):
    """Rank 1 of 3 leaves as the test hook `hook` says: the file it took (one `lost_kind(path)` holds, when
    given) is reported and named, every other is done; a rerun does only that one and the folder then equals
    base's."""
    what = "%s, a lost rank" % name
    out = os.path.join(work, name + "_lost")
    env = dict(os.environ, UOT_MPI_BATCH_TEST_EXIT=hook)
    args = [ref] + inputs + ["--out-dir", out, "--timeout", "3"] + COMMON
    done = r.run(r.mpi(3, ["--mca", "orte_abort_on_non_zero_status", "0"]) + args, env=env)
    if not r.check(done is not None and done.returncode == 3,
                   "%s: exit 3 (got %s: %s)" % (what, done and done.returncode, done and done.stderr[-800:])):
        return
    rep = report(done)
    if not r.check(rep is not None, "%s: --json report: %s" % (what, done.stdout[:300])):
        return
    lost = [i["input"] for i in rep["items"] if i["status"] == "failed" and "rank 1 stopped answering" in i["message"]]
    r.check(len(lost) == 1, "%s: the file it took is reported: %s" % (what, rep["items"]))
    if lost_kind:
        r.check(any(lost_kind(path) for path in lost), "%s: the lost files hold a clip: %s" % (what, lost))
    good = [path for path in lost if "corrupt" not in path]  # the corrupt inputs fail again in the rerun
    r.check(rep["done"] == done_count - len(good) and rep["failed"] == failed_count + len(good),
            "%s: every other file done (%s)" % (what, rep))
    for path in lost:
        r.check(("rank 1: " + path) in done.stderr, "%s: stderr names %s: %s" % (what, path, done.stderr[-800:]))
    again = r.run(r.mpi(3) + args)
    if not r.check(again is not None and again.returncode == 3,
                   "%s: the rerun exits 3 (the corrupt inputs) (got %s: %s)" % (what, again and again.returncode,
                                                                               again and again.stderr[-800:])):
        return
    rep2 = report(again)
    redone = sorted(i["input"] for i in rep2["items"] if i["status"] == "done")
    r.check(redone == sorted(good), "%s: the rerun does only the lost files: %s, lost %s" % (what, redone, good))
    r.check(rep2["skipped"] == done_count - len(good), "%s: the rerun skips the finished files: %s" % (what, rep2))
    same_files(r, base, out, what + ", after the rerun")


def check_several_references(r, work, inputs, refs):
    weights = ["--reference-weights", "1,3"]
    out = os.path.join(work, "multi")
    done = r.run([r.uot, "batch", refs[0], inputs, "--reference", refs[1], "--out-dir", out] + weights + COMMON)
    if not r.check(done is not None and done.returncode == 3,
                   "uot batch with two references exits 3 (got %s: %s)" % (done and done.returncode,
                                                                          done and done.stderr[-500:])):
        return
    for name in sorted(os.listdir(inputs)):
        if "corrupt" in name:
            continue
        single = os.path.join(work, "recolor_" + os.path.splitext(name)[0] + "_recolored.bmp")
        one = r.run([r.uot, "recolor", os.path.join(inputs, name), refs[0], refs[1], "-o", single] + weights +
                    ["--threads", "1", "--device", "cpu", "--quiet"])
        if not r.check(one is not None and one.returncode == 0, "uot recolor %s: %s" % (name, one and one.stderr)):
            continue
        with open(single, "rb") as fa, open(os.path.join(out, os.path.splitext(name)[0] + "_recolored.bmp"), "rb") as fb:
            r.check(fa.read() == fb.read(), "two references: %s differs from uot recolor's" % name)
    mpi_out = os.path.join(work, "multi_mpi")
    done = r.run(r.mpi(2) + [refs[0], inputs, "--reference", refs[1], "--out-dir", mpi_out] + weights + COMMON)
    if r.check(done is not None and done.returncode == 3,
               "uot-mpi batch with two references exits 3 (got %s: %s)" % (done and done.returncode,
                                                                          done and done.stderr[-500:])):
        same_files(r, out, mpi_out, "uot-mpi batch, two references")
    bad = r.run([r.uot, "batch", refs[0], inputs, "--reference", refs[1], "--out-dir", out,
                 "--reference-weights", "1,2,3"] + COMMON)
    r.check(bad is not None and bad.returncode == 2, "three weights for two references: exit 2 (got %s)" %
            (bad and bad.returncode))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot", required=True)
    parser.add_argument("--uot-mpi", required=True, help="path of uot-mpi, or 'none' when it is not built")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--samples", required=True, help="resources/samples")
    args = parser.parse_args()
    if args.uot_mpi == "none":
        print("SKIP: uot-mpi is not built (UOT_MPI=OFF, no MPI, or no OpenCV for its batch command)")
        return 77
    work = tempfile.mkdtemp(prefix="uot-mpi-batch-test-")
    r = Runner(args)
    try:
        inputs, refs = make_inputs(work, args.samples)
        base = check_ranks_match_uot_batch(r, work, "images", [inputs], refs[0], 7, 1)
        check_clips(r, work, inputs, refs[0])
        check_lost_rank(r, work, "images", [inputs], refs[0], base, 7, 1, "1:image")
        check_several_references(r, work, inputs, refs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d checks, %d failed" % (r.checks, r.failures))
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
