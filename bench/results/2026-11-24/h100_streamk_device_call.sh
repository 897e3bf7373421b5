#!/usr/bin/env bash
# Device call for the balanced (stream-K) gpu-mapreduce schedule (session 20, helper streamk).
# Runs the binaries built on the VM (dist/mr-bundle.tar.xz: gpu_bench, test_gpu_mapreduce and
# their libraries; scripts/bundle_closure.sh); builds gpu_bench on the device only if they do not load.
#   MODE=all: checks, Qt test, the schedules (split, stream-K, balanced) at 10^4^2 .. 2^20, 10^6^2.
#   (Call 1, commit bc5e662, ran an earlier version: stream-K as "s1" only, and a 10^6 --mapreduce-large solve.)
#   MODE=repeat: the 65536^2 comparison again, four runs, orders alternated (noise).
#   MODE=final (call 3): the final code (balanced / split) checked and measured, with the binaries
#   of calls 1 and 2 (gpu_bench_bc5e662, gpu_bench_d35c03e in the bundle) in the same run as controls,
#   and the fast d = 3 kernel's registers and SASS mix of each binary.
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
if [ "$MODE" = final ]; then
  C1=/tmp/mr/bin/gpu_bench_bc5e662; C2=/tmp/mr/bin/gpu_bench_d35c03e
  CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  for b in "$G" $C1 $C2; do
    echo "== $(basename $b)"; "$CUOBJ" -sass "$b" > /tmp/sass_all.txt 2>&1
    python3 - /tmp/sass_all.txt "$R/sass_fast_d3_$(basename $b).txt" <<'PY'
import re,sys,collections
txt=open(sys.argv[1]).read()
keep=open(sys.argv[2],'w')
for p in re.split(r'\n\s*Function : ',txt)[1:]:
    name=p.split('\n',1)[0].strip()
    if not re.search(r'(fastPassKernelILi3ELi4ELi0ELb1E|exactPassKernelILi3ELi4ELb1E)',name): continue
    ops=re.findall(r'/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)',p)
    regs=sorted({int(x) for x in re.findall(r'\bR(\d+)\b',p)})
    cnt=collections.Counter(o[1].split('.')[0] for o in ops)
    print(('fast' if 'fast' in name else 'exact'), 'max R%d' % (regs[-1] if regs else -1), 'total', len(ops), ' '.join('%s:%d' % kv for kv in cnt.most_common(12)))
    if 'fast' in name: keep.write('Function : ' + p + '\n')
PY
  done
  timeout 150 "$G" --check-mapreduce > "$R/check.jsonl" 2>&1; echo "check-mapreduce rc=$? $(tail -1 "$R/check.jsonl")"
  grep '"ok": false' "$R/check.jsonl" | head -5
  (cd /tmp/mr/bin && timeout 120 ./test_gpu_mapreduce) > "$R/test_gpu_mapreduce.log" 2>&1; echo "test_gpu_mapreduce rc=$?"
  grep -E "^FAIL|^Totals" "$R/test_gpu_mapreduce.log"
  F=$OUT/final_65536.jsonl
  for round in 1 2; do
    for run in "$G p0f1s0,p0f1s2" "$C1 p0f1s0,p0f1s1" "$C2 p0f1s2,p0f1s0" "$G p0f1s2,p0f1s0" "$C1 p0f1s1,p0f1s0"; do
      set -- $run
      echo "{\"binary\": \"$(basename $1)\", \"round\": $round}" >> $F
      timeout 30 $1 --mapreduce 65536x65536 --mr-configs $2 --mr-no-fused >> $F 2>> "$R/bench.err"
    done
  done
  python3 - $F <<'PY'
import json,sys
b=None
for l in open(sys.argv[1]):
    d=json.loads(l)
    if 'binary' in d: b=d['binary']
    elif 'ms_per_iter' in d: print(b, d['solver'], 'ms/iter %.4f' % d['ms_per_iter'], 'share %.4f' % d['share_of_probe'])
PY
  timeout 60 "$G" --mapreduce 16384x16384,131072x131072,10000x10000,100000x100000 --mr-configs p0f1s0,p0f1s2 --mr-no-fused \
    > "$OUT/final_sizes.jsonl" 2>> "$R/bench.err"; show "$OUT/final_sizes.jsonl"
  timeout 90 "$G" --mapreduce 1048576x1048576 --mr-configs p0f1s2,p0f1s0 --mr-no-fused > "$OUT/final_2p20.jsonl" 2>> "$R/bench.err"
  show "$OUT/final_2p20.jsonl"
  timeout 45 "$G" --mapreduce 1000000x1000000 --mr-configs p0f1s2 --mr-no-fused > "$OUT/final_1e6.jsonl" 2>> "$R/bench.err"
  show "$OUT/final_1e6.jsonl"
elif [ "$MODE" = all ]; then
  timeout 150 "$G" --check-mapreduce > "$R/check.jsonl" 2>&1; echo "check-mapreduce rc=$? $(tail -1 "$R/check.jsonl")"
  grep '"ok": false' "$R/check.jsonl" | head -5; grep '"schedule"' "$R/check.jsonl" | cut -c1-200
  (cd /tmp/mr/bin && timeout 120 ./test_gpu_mapreduce) > "$R/test_gpu_mapreduce.log" 2>&1; echo "test_gpu_mapreduce rc=$?"
  grep -E "^FAIL|^Totals" "$R/test_gpu_mapreduce.log"
  # s0 split (session 19), s1 stream-K, s2 balanced (default), s2b660: balanced over 660 slots (5 blocks an SM)
  timeout 60 "$G" --mapreduce 16384x16384,65536x65536,131072x131072,10000x10000,100000x100000 \
    --mr-configs p0f1s0,p0f1s1,p0f1s2,p0f1s2b660 --mr-no-fused > "$OUT/schedules.jsonl" 2> "$R/bench.err"
  echo "bench rc=$?"; show "$OUT/schedules.jsonl"
  timeout 20 "$G" --mapreduce 65536x65536 --mr-configs p0f1s2b660,p0f1s2,p0f1s1,p0f1s0 --mr-no-fused \
    > "$OUT/schedules_65536_reversed.jsonl" 2>> "$R/bench.err"; show "$OUT/schedules_65536_reversed.jsonl"
  timeout 120 "$G" --mapreduce 1048576x1048576 --mr-configs p0f1s0,p0f1s1,p0f1s2 --mr-no-fused \
    > "$OUT/schedules_2p20.jsonl" 2>> "$R/bench.err"; show "$OUT/schedules_2p20.jsonl"
  timeout 45 "$G" --mapreduce 1000000x1000000 --mr-configs p0f1s2 --mr-no-fused > "$OUT/keops_1e6.jsonl" 2>> "$R/bench.err"
  show "$OUT/keops_1e6.jsonl"
else
  for rep in 1 2; do
    for c in p0f1s2,p0f1s1,p0f1s0 p0f1s0,p0f1s1,p0f1s2; do
      timeout 60 "$G" --mapreduce 65536x65536 --mr-configs $c --mr-no-fused >> "$OUT/repeat_65536.jsonl" 2>> "$R/bench.err"
    done
  done
  show "$OUT/repeat_65536.jsonl"
fi
kill $SMI
python3 - "$R/clocks.csv" <<'PY'
import sys
rows=[l.strip().split(', ') for l in open(sys.argv[1]) if l[0].isdigit()]
cl=[int(r[1].split()[0]) for r in rows if r[1].split()[0].isdigit()]
print("SM clock MHz: min %d max %d over %d samples" % (min(cl), max(cl), len(cl)) if cl else "no clock samples")
PY
tar -C "$R" -czf "$OUT/logs.tgz" .
