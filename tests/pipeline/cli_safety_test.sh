#!/usr/bin/env bash
# Hostile-input checks of the `uot` command line (solve, recolor, batch, lut, bench):
# every refusal comes with the documented exit code and message, before any work,
# and no file that must be kept is lost. Fixtures are made here (numpy for .npy
# files, copies of the bundled samples, symbolic links, odd file names).
#   cli_safety_test.sh UOT SAMPLES
set -u
uot=$1
samples=$2
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fail=1; else echo "ok: $2"; fi; }
sum() { sha256sum "$1" | cut -d' ' -f1; }
small="--palette-size 64 --max-iter 40 --quiet"
ref=$samples/starry_night.jpg
cd "$tmp" || exit 1

"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(1)
np.save("C.npy", rng.random((16, 12)))
np.save("a.npy", np.full(16, 1 / 16))
np.save("b.npy", np.full(12, 1 / 12))
a = np.full(16, 1 / 16); a[0] = 1e-320; np.save("a_subnormal.npy", a)
a = np.full(16, 1 / 16); a[3] = np.nan; np.save("a_nan.npy", a)
c = rng.random((16, 12)); c[0, 0] = 1.7e308; np.save("C_huge.npy", c)
data = open("a.npy", "rb").read(); open("a_trunc.npy", "wb").write(data[:-40])
PY
solve="--cost C.npy --a a.npy --b b.npy"

# --threads: at most 1024 everywhere, refused before any OpenMP region (a crash before).
for cmd in "solve $solve --out-dir o_t" "recolor $samples/home.jpg $ref -o t.png $small" \
           "batch $ref $samples/home.jpg --out-dir o_tb $small" "lut $samples/home.jpg $ref -o t.cube --quiet"; do
  "$uot" $cmd --threads 100000 2>err.txt; rc=$?
  check "[ $rc -eq 2 ] && grep -q 'threads takes a whole number from 0 to 1024' err.txt" "--threads 100000 is a usage error: uot ${cmd%% *}"
done
"$uot" solve $solve --out-dir o_t --threads 1025 2>/dev/null; rc=$?
check "[ $rc -eq 2 ]" "--threads 1025 (one above the maximum) is refused"
"$uot" bench --threads 1,5000 --size 8x8 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'to 1024' err.txt" "bench --threads list above the maximum is refused"
check "\"$uot\" solve --help | grep -q 'whole number from 0 to 1024'" "--help states the --threads maximum"
# --threads within the range that a process limit refuses (8 MiB stacks in 2 GB of address
# space: a few hundred threads): exit 1 before any work, saying what to pass instead
# (--threads 0, one a core), which runs under the same limit.
(ulimit -s 8192; ulimit -v 2000000; "$uot" recolor "$samples/home.jpg" "$ref" -o lim.png $small --threads 1024) 2>err.txt
rc=$?
check "[ $rc -eq 1 ] && grep -q 'cannot run 1024 threads here: the system refused to start more than [0-9]' err.txt && grep -q 'pass --threads 0' err.txt && [ ! -e lim.png ]" \
  "--threads 1024 under ulimit -v: exit 1, what to pass instead, nothing written"
(ulimit -s 8192; ulimit -v 2000000; "$uot" recolor "$samples/home.jpg" "$ref" -o lim.png $small --threads 0) 2>/dev/null
rc=$?
check "[ $rc -eq 0 ] && [ -s lim.png ]" "the advised --threads 0 runs under the same limit"

# Batch: two inputs with one output name are refused before any work; {dir} tells them apart.
mkdir d1 d2
cp "$samples/home.jpg" d1/photo.jpg; cp "$samples/fruits.jpg" d2/photo.jpg
"$uot" batch "$ref" d1/photo.jpg d2/photo.jpg --out-dir o_dup $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'd1/photo.jpg' err.txt && grep -q 'd2/photo.jpg' err.txt" \
  "duplicate output names: exit 2, both inputs named"
check "[ -z \"\$(ls o_dup 2>/dev/null)\" ]" "duplicate output names: nothing written"
"$uot" batch "$ref" d1/photo.jpg d2/photo.jpg --out-dir o_dup --overwrite $small 2>/dev/null; rc=$?
check "[ $rc -eq 2 ]" "duplicate output names: refused under --overwrite too"
"$uot" batch "$ref" d1/photo.jpg d2/photo.jpg --out-dir o_dup --pattern '{dir}_{name}.png' $small 2>/dev/null; rc=$?
check "[ $rc -eq 0 ] && [ -s o_dup/d1_photo.png ] && [ -s o_dup/d2_photo.png ]" "{dir} in the pattern tells them apart"
cp "$samples/butterfly.jpg" d1/same.jpg; cp "$samples/squirrel_cls.jpg" d1/same.png
"$uot" batch "$ref" d1 --out-dir o_dup2 --pattern '{name}.png' --overwrite $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'same.jpg' err.txt && grep -q 'same.png' err.txt" "same stem, two extensions, one output: exit 2"

# Batch: the reference is never replaced, --overwrite or not.
mkdir r; cp "$ref" r/ref.jpg; cp "$samples/home.jpg" r/ref.png
before=$(sum r/ref.jpg)
"$uot" batch r/ref.jpg r/ref.png --out-dir r --pattern '{name}.jpg' --overwrite $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'reference' err.txt && [ \"\$(sum r/ref.jpg)\" = '$before' ]" \
  "batch --overwrite never replaces the reference (exit 2, bytes unchanged)"
# ... nor another input of the batch.
mkdir io; cp "$samples/home.jpg" io/a.png; cp "$samples/fruits.jpg" io/a.jpg
before=$(sum io/a.jpg)
"$uot" batch "$ref" io/a.png io/a.jpg --out-dir io --pattern '{name}.jpg' --overwrite --overwrite-source $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && [ \"\$(sum io/a.jpg)\" = '$before' ]" "batch never replaces another input of the batch"

# Batch into its own input folder: a second run does not recolor the first run's outputs.
mkdir same; cp "$samples/home.jpg" "$samples/fruits.jpg" same/
"$uot" batch "$ref" same --out-dir same $small 2>/dev/null
"$uot" batch "$ref" same --out-dir same --json $small > same.json 2>/dev/null; rc=$?
check "[ $rc -eq 0 ] && [ -z \"\$(ls same | grep _recolored_recolored)\" ]" "out-dir = input folder: no *_recolored_recolored"
check "grep -q 'earlier run' same.json" "out-dir = input folder: the report says why the outputs were skipped"
# A missing input named on the command line (with or without a trailing slash, so with
# no extension to plan an output name from) is reported as missing, before any work.
for missing in /nonexistent/ /nonexistent; do
  "$uot" batch "$ref" "$missing" --out-dir o_missing $small 2>err.txt; rc=$?
  check "[ $rc -eq 1 ] && grep -q 'nonexistent' err.txt && grep -qi 'no such file\|does not exist' err.txt" \
    "batch: a missing input '$missing' is reported as missing"
done

# Symbolic link loops, dangling links and folders named like images.
ln -s loop_b.jpg loop_a.jpg; ln -s loop_a.jpg loop_b.jpg
"$uot" recolor loop_a.jpg "$ref" -o l.png $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q 'too many levels of symbolic links' err.txt" "a symbolic link loop is reported as such"
mkdir scan; cp "$samples/home.jpg" scan/; ln -s l2.jpg scan/l1.jpg; ln -s l1.jpg scan/l2.jpg
ln -s gone.jpg scan/dangling.jpg; mkdir scan/folder.png
"$uot" batch "$ref" scan --out-dir o_scan --json $small > scan.json 2>/dev/null; rc=$?
check "[ $rc -eq 0 ] && \"$py\" - <<'PY'
import json
items = {i['input'].split('/')[-1]: i for i in json.load(open('scan.json'))['items']}
assert 'symbolic link loop' in items['l1.jpg']['message'], items
assert 'dangling' in items['dangling.jpg']['message'], items
assert 'folder' in items['folder.png']['message'], items
assert items['home.jpg']['status'] == 'done', items
PY" "a folder scan lists loops, dangling links and folders in its report"
"$uot" batch "$ref" scan --out-dir o_scan2 $small 2>scan.txt
check "grep -q 'skipped: scan/l1.jpg: .*symbolic link loop' scan.txt && grep -q 'skipped: scan/folder.png' scan.txt" \
  "the batch summary lists the folder entries that are not image files (also with --quiet)"

# --json is valid UTF-8 JSON for any file name (invalid bytes become U+FFFD).
mkdir nu; cp "$samples/home.jpg" "nu/$(printf 'caf\xe9\x01"\\.jpg')"
"$uot" batch "$ref" nu --out-dir o_nu --json $small > nu.json 2>/dev/null; rc=$?
check "[ $rc -eq 0 ] && \"$py\" -c \"import json; d = json.loads(open('nu.json', 'rb').read().decode('utf-8')); assert '\\ufffd' in d['items'][0]['input'], d\"" \
  "batch --json is UTF-8 JSON for a Latin-1 file name"
"$uot" recolor "$samples/home.jpg" "$ref" -o "$(printf 'out\xff.png')" --json $small > rc.json 2>/dev/null; rc=$?
check "[ $rc -eq 0 ] && \"$py\" -c \"import json; json.loads(open('rc.json', 'rb').read().decode('utf-8'))\"" \
  "recolor --json is UTF-8 JSON for a non-UTF-8 output name"

# Output destinations are checked before any work: with a source that does not
# exist, the complaint is about the output.
"$uot" recolor missing.jpg "$ref" -o x.gif $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'x.gif' err.txt" "recolor: an unwritable extension is refused before reading"
"$uot" recolor missing.jpg "$ref" -o nodir/x.png $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q \"folder 'nodir' does not exist\" err.txt" "recolor: a missing output folder is refused before reading"
long=$(printf 'L%.0s' $(seq 252))
"$uot" recolor missing.jpg "$ref" -o "$long.png" $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q '256 bytes long, above the 255' err.txt" \
  "recolor: an output name above the file system's limit is refused before reading"
mkdir longin; cp "$samples/home.jpg" "longin/$(printf 'L%.0s' $(seq 246)).jpg"
"$uot" batch "$ref" longin --out-dir o_long $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q '_recolored.jpg: the file name is 260 bytes long' err.txt && ! grep -q 'into place' err.txt" \
  "batch: an output name above the file system's limit fails its item before any work"
mkdir isdir.png
"$uot" recolor missing.jpg "$ref" -o isdir.png --overwrite $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q 'is a folder' err.txt" "recolor: an output that is a folder is refused before reading"
cp "$ref" myref.jpg; before=$(sum myref.jpg)
"$uot" recolor "$samples/home.jpg" myref.jpg -o myref.jpg --overwrite --overwrite-source $small 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q 'the reference image' err.txt && [ \"\$(sum myref.jpg)\" = '$before' ]" \
  "recolor -o REFERENCE says 'the reference image' and keeps it (even with --overwrite-source)"
"$uot" batch missing_ref.jpg d1/photo.jpg --out-dir o_gif --pattern '{name}.gif' $small 2>err.txt; rc=$?
check "[ $rc -eq 2 ] && grep -q 'photo.gif' err.txt" "batch: an unwritable pattern extension is refused before reading"

# --device gpu without a GPU: exit 4 everywhere; --device auto falls back and says so.
"$uot" devices >/dev/null 2>&1; devices_rc=$?
if [ $devices_rc -eq 4 ]; then
  for cmd in "recolor $samples/home.jpg $ref -o g.png --quiet" "batch $ref $samples/home.jpg --out-dir o_g --quiet" \
             "lut $samples/home.jpg $ref -o g.cube --quiet" "solve $solve --out-dir o_gs"; do
    "$uot" $cmd --device gpu 2>err.txt; rc=$?
    check "[ $rc -eq 4 ] && grep -q 'GPU' err.txt" "--device gpu without a GPU exits 4: uot ${cmd%% *}"
  done
  check "[ ! -e g.png ] && [ ! -e g.cube ] && [ -z \"\$(ls o_g 2>/dev/null)\" ]" "--device gpu without a GPU writes nothing"
  "$uot" recolor "$samples/home.jpg" "$ref" -o auto.png --device auto --json $small > auto.json 2>/dev/null; rc=$?
  check "[ $rc -eq 0 ] && \"$py\" -c \"import json; d = json.load(open('auto.json')); assert d['device'] == 'cpu' and d['device_note'], d\"" \
    "--device auto without a GPU runs on the CPU and the JSON says why"
else
  echo "skip: a GPU is usable here (uot devices exit $devices_rc): the no-GPU checks need a machine without one"
fi

# uot solve: Ctrl-C exits 130 with status "cancelled"; subnormal and bad weights exit 1 with one message.
"$uot" solve $solve --out-dir o_sig --fixed-iterations --max-iter 2000000000 --json > sig.json 2>/dev/null &
pid=$!; sleep 1.5; kill -INT $pid; wait $pid; rc=$?
check "[ $rc -eq 130 ] && \"$py\" -c \"import json; d = json.load(open('sig.json')); assert d['status'] == 'cancelled' and d['cancelled'], d\"" \
  "solve: SIGINT exits 130, JSON status 'cancelled'"
# recolor and batch: SIGINT ends them with 130, SIGTERM with 143; an existing output is kept, no
# temporary file is left (job control on, so that the background commands take signals).
set -m
cp "$samples/fruits.jpg" keep.jpg; before=$(sum keep.jpg)
forever="--fixed-iterations --max-iter 1000000000 --quiet"
"$uot" recolor "$samples/home.jpg" "$ref" -o keep.jpg --overwrite $forever & pid=$!
sleep 1; kill -INT $pid; wait $pid; rc=$?
check "[ $rc -eq 130 ] && [ \"\$(sum keep.jpg)\" = '$before' ] && [ -z \"\$(ls -a | grep '\.tmp')\" ]" \
  "recolor: SIGINT exits 130, the existing output kept, no temporary file"
"$uot" batch "$ref" d1/photo.jpg --out-dir o_term $forever & pid=$!
sleep 1; kill -TERM $pid; wait $pid; rc=$?
check "[ $rc -eq 143 ] && [ -z \"\$(ls -a o_term 2>/dev/null | grep -v '^\.\.\?\$')\" ]" "batch: SIGTERM exits 143, nothing left in --out-dir"
# bench: a case's child process ends with the bench, also when only the parent is signalled
# (kill PID, not the process group): it must not solve on, unseen.
"$uot" bench --solver fused --size 2048x2048 --iterations 1000000 --warmup 1 --threads 1 >/dev/null 2>&1 & pid=$!
for _ in $(seq 50); do child=$(pgrep -P $pid | head -1); [ -n "$child" ] && break; sleep 0.1; done
kill -INT $pid; wait $pid; rc=$?
for _ in $(seq 50); do state=$(ps -o stat= -p "$child" 2>/dev/null | tr -d ' '); case "$state" in ""|Z*) break;; esac; sleep 0.1; done
check "[ -n \"$child\" ] && [ $rc -eq 130 ] && case \"$state\" in ''|Z*) true;; *) false;; esac" \
  "bench: SIGINT to the parent alone exits 130 and ends its case's child (state '$state')"
[ -n "$child" ] && kill -9 "$child" 2>/dev/null
set +m

"$uot" solve --cost C.npy --a a_subnormal.npy --b b.npy --out-dir o_sub 2>err.txt; rc=$?
check "[ $rc -eq 1 ] && grep -q 'subnormal' err.txt && ! grep -q 'must be finite and > 0' err.txt" "solve: a subnormal weight, one message"
"$uot" solve --cost C.npy --a a_nan.npy --b b.npy --out-dir o_nan 2>/dev/null; rc_nan=$?
"$uot" solve --cost C.npy --a a_trunc.npy --b b.npy --out-dir o_trunc 2>/dev/null; rc_trunc=$?
"$uot" solve $solve --out-dir o_warm --warm-u b.npy --warm-v a.npy 2>/dev/null; rc_warm=$?
check "[ $rc_nan -eq 1 ] && [ $rc_trunc -eq 1 ] && [ $rc_warm -eq 1 ]" \
  "solve: a NaN weight, a truncated .npy and a warm start of the wrong size all exit 1 (got $rc_nan, $rc_trunc, $rc_warm)"

"$uot" solve --cost C_huge.npy --a a.npy --b b.npy --out-dir o_huge --solver log --eps 1e-3 >/dev/null 2>err.txt; rc=$?
check "[ $rc -eq 5 ] && grep -q 'already in use' err.txt && ! grep -q 'Use the log-domain solver' err.txt" \
  "solve: a numerical stop of the log-domain solver does not advise the log-domain solver"

# --solver auto's automatic eps schedule is left out where halves would need more stages than
# a schedule may have: eps far below the costs, or one huge cost, is solved (exit 6: not
# converged at eps 1e-300), not refused with a message about a schedule nobody asked for.
"$uot" solve $solve --out-dir o_tiny --eps 1e-300 >/dev/null 2>err.txt; rc=$?
check "[ $rc -eq 6 ] && ! grep -q 'eps schedule' err.txt" "solve --eps 1e-300: not converged (exit 6), no eps-schedule refusal (exit $rc)"
"$uot" solve --cost C_huge.npy --a a.npy --b b.npy --out-dir o_huge_auto >/dev/null 2>err.txt; rc=$?
check "[ $rc -eq 0 ] && ! grep -q 'eps schedule' err.txt" "solve: one cost of 1.7e308 with --solver auto is solved, not refused for its schedule (exit $rc)"

# Palette size: one maximum, the same in --help and in every check.
"$uot" recolor "$samples/home.jpg" "$ref" -o p.png --palette-size 65537 2>err1.txt; rc1=$?
"$uot" recolor "$samples/home.jpg" "$ref" -o p.png --palette-size 0 2>err0.txt; rc0=$?
check "[ $rc1 -eq 2 ] && [ $rc0 -eq 2 ] && grep -q 'palette size takes a whole number from 1 to 65536' err1.txt && grep -q 'palette size takes a whole number from 1 to 65536' err0.txt" \
  "palette size: 0 and 65537 give the same range"
check "\"$uot\" recolor --help | grep -q 'from 1 to 65536'" "--help states the palette maximum that is checked"

# A failed batch item names its path once.
head -c 3000 "$samples/leuvenA.jpg" > bad.jpg
"$uot" batch "$ref" bad.jpg --out-dir o_bad $small 2>err.txt
check "grep -q 'failed: bad.jpg: ' err.txt && ! grep -q 'bad.jpg: bad.jpg' err.txt" "a failed batch item names its path once"
check "\"$uot\" batch --help | grep -q 'outside DIR'" "batch --help says a pattern may write outside --out-dir"

# Without /proc, uot never runs a uot-image from the current folder.
mkdir evil
printf '#!/bin/sh\ntouch "%s/evil/RAN"\n' "$tmp" > evil/uot-image; chmod +x evil/uot-image
uot_dir=$(cd "$(dirname "$uot")" && pwd)
mkdir mount_probe
if unshare -m sh -c "mount -t tmpfs none '$tmp/mount_probe'" 2>/dev/null; then
  unshare -m sh -c "mount -t tmpfs none /proc && cd '$tmp/evil' && PATH='$uot_dir:/usr/bin:/bin' uot recolor a.jpg b.jpg -o c.png" \
    >/dev/null 2>&1
  check "[ ! -e evil/RAN ]" "without /proc, the uot-image of the current folder is not run"
  # A read-only folder (a read-only mount: root ignores permission bits) is refused
  # before any work: the solve would run for ever, the source does not exist.
  mkdir ro
  unshare -m sh -c "mount -t tmpfs -o ro none ro && cd '$tmp' &&
    { timeout 60 '$uot' solve $solve --out-dir ro --fixed-iterations --max-iter 2000000000 2>solve_ro.txt; echo \$? > solve_ro.rc; } &&
    { '$uot' recolor missing.jpg '$ref' -o ro/x.png $small 2>recolor_ro.txt; echo \$? > recolor_ro.rc; } &&
    { '$uot' batch missing_ref.jpg d1/photo.jpg --out-dir ro $small 2>batch_ro.txt; echo \$? > batch_ro.rc; }"
  check "[ \"\$(cat solve_ro.rc)\" = 1 ] && grep -q 'no permission to write' solve_ro.txt" "solve: a read-only --out-dir is refused before solving"
  check "[ \"\$(cat recolor_ro.rc)\" = 1 ] && grep -q 'no permission to write' recolor_ro.txt" "recolor: a read-only output folder is refused before reading"
  check "[ \"\$(cat batch_ro.rc)\" = 1 ] && grep -q 'no permission to write' batch_ro.txt" "batch: a read-only out-dir is refused before any work"
else
  echo "skip: unshare -m with a tmpfs mount is not permitted here (needs root): the no-/proc and read-only checks"
fi
exit $fail
