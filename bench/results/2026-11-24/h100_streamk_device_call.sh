#!/usr/bin/env bash
# Device call for the balanced (stream-K) gpu-mapreduce schedule (session 20, helper streamk).
# Runs the binaries built on the VM (dist/mr-bundle.tar.xz: gpu_bench, test_gpu_mapreduce and
# their libraries; scripts/bundle_closure.sh); builds gpu_bench on the device only if they do not load.
#   MODE=all: checks, Qt test, split vs balanced at 16384^2 .. 2^20, KeOps sizes, 10^6 solve.
#   MODE=repeat: the 65536^2 / 2^20 comparison again, orders alternated (noise).
set -u
MODE=${1:-all}
cd .carry/streamk
R=$OUT/r; mkdir -p "$R"
nvidia-smi > "$R/env.txt" 2>&1; date -u >> "$R/env.txt"
tar -xJf dist/mr-bundle.tar.xz -C /tmp && cat /tmp/mr/MANIFEST.txt
export LD_LIBRARY_PATH=/tmp/mr/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export QT_QPA_PLATFORM=offscreen
G=/tmp/mr/bin/gpu_bench
"$G" --no-such-option > /dev/null 2>&1
if [ $? -ne 2 ]; then
  echo "bundled gpu_bench does not run here: building it"
  B=build-device
  cmake -S . -B $B -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_WARNINGS_AS_ERRORS=ON \
    -DCMAKE_BUILD_TYPE=Release -DUOT_EIGEN_INCLUDE_DIR=$PWD/../eigen3 > "$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
  cmake --build $B -j 16 --target gpu_bench >> "$R/build.log" 2>&1 || { grep -E "error|FAILED" "$R/build.log" | head; exit 1; }
  G=$PWD/$B/tests/gpu/gpu_bench
fi
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > "$R/clocks.csv" 2>&1 &
SMI=$!
show() { python3 -c '
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if "ms_per_iter" in d: print(d["solver"], d["m"], d["n"], "ms/iter %.4f" % d["ms_per_iter"], "share %.4f" % d.get("share_of_probe", 0), "peak MB %.0f" % d.get("peak_device_mb", 0))
    elif "probe" in d: print("probe", d["exp2_per_second"])
' "$1"; }
if [ "$MODE" = all ]; then
  timeout 150 "$G" --check-mapreduce > "$R/check.jsonl" 2>&1; echo "check-mapreduce rc=$? $(tail -1 "$R/check.jsonl")"
  grep '"ok": false' "$R/check.jsonl" | head -5; grep '"schedule"' "$R/check.jsonl" | cut -c1-200
  timeout 130 "$G" --mapreduce 16384x16384,65536x65536,131072x131072,1048576x1048576 --mr-configs p0f1s0,p0f1s1 \
    --mr-no-fused > "$OUT/split_vs_balanced.jsonl" 2> "$R/bench.err"; echo "bench rc=$?"; show "$OUT/split_vs_balanced.jsonl"
  timeout 30 "$G" --mapreduce 10000x10000,100000x100000 --mr-configs p0f1s0,p0f1s1 --mr-no-fused > "$OUT/keops_sizes.jsonl" 2>> "$R/bench.err"
  show "$OUT/keops_sizes.jsonl"
  timeout 40 "$G" --mapreduce-large 1000000x1000000 --iterations 3 > "$OUT/large_1e6.jsonl" 2>> "$R/bench.err"; cut -c1-400 "$OUT/large_1e6.jsonl"
  (cd /tmp/mr/bin && timeout 120 ./test_gpu_mapreduce) > "$R/test_gpu_mapreduce.log" 2>&1; echo "test_gpu_mapreduce rc=$?"
  grep -E "^FAIL|^Totals" "$R/test_gpu_mapreduce.log"
else
  for rep in 1 2; do
    for c in p0f1s1,p0f1s0 p0f1s0,p0f1s1; do
      timeout 60 "$G" --mapreduce 65536x65536 --mr-configs $c --mr-no-fused >> "$OUT/repeat_65536.jsonl" 2>> "$R/bench.err"
    done
  done
  show "$OUT/repeat_65536.jsonl"
  timeout 100 "$G" --mapreduce 1048576x1048576 --mr-configs p0f1s1,p0f1s0 --mr-no-fused > "$OUT/repeat_2p20.jsonl" 2>> "$R/bench.err"
  show "$OUT/repeat_2p20.jsonl"
fi
kill $SMI
python3 - "$R/clocks.csv" <<'PY'
import sys
rows=[l.strip().split(', ') for l in open(sys.argv[1]) if l[0].isdigit()]
cl=[int(r[1].split()[0]) for r in rows if r[1].split()[0].isdigit()]
print("SM clock MHz: min %d max %d over %d samples" % (min(cl), max(cl), len(cl)) if cl else "no clock samples")
PY
tar -C "$R" -czf "$OUT/logs.tgz" .
