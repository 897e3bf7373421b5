#!/usr/bin/env bash
# device call 1: build gpu_bench, SASS of the d=3 fast kernels, config sweep, checks, ncu.
set -u
cd .carry/mapreduce
B=build-device
( nvidia-smi; which cuobjdump ncu nvdisasm ) > $OUT/env.txt 2>&1
cmake -S . -B $B -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_BUILD_TYPE=Release > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cmake --build $B -j 16 --target gpu_bench >> $OUT/build.log 2>&1 || { grep -E "error|FAILED" $OUT/build.log | head -30; exit 1; }
echo build ok
OBJ=$(find $B -name 'mapreduce_kernels.cu.o' | head -1)
cuobjdump -sass "$OBJ" > $OUT/sass_all.txt 2>&1
python3 - "$OUT" <<'PY'
import re,sys,collections
out=sys.argv[1]; txt=open(out+'/sass_all.txt').read()
parts=re.split(r'\n\s*Function : ',txt)
keep=open(out+'/sass_d3.txt','w'); summ=open(out+'/sass_summary.txt','w')
for p in parts[1:]:
    name=p.split('\n',1)[0].strip()
    if 'ILi3E' not in name or 'PassKernel' not in name: continue
    m=re.search(r'(fastPassKernel|exactPassKernel)ILi3ELi(\d)E(?:Li(\d+)E)?Lb(\d)E',name)
    tag=m.group(0) if m else name
    ops=re.findall(r'/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)',p)
    cnt=collections.Counter(o[1].split('.')[0] for o in ops)
    summ.write(f"{tag}: total {len(ops)} " + ' '.join(f"{k}:{v}" for k,v in cnt.most_common(16))+'\n')
    if 'fastPass' in name and (m and m.group(4)=='1' and m.group(3) in ('0','10','12') and m.group(2)=='4'):
        keep.write('Function : '+p+'\n')
PY
cat $OUT/sass_summary.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/clocks.csv 2>&1 &
SMI=$!
G=$B/tests/gpu/gpu_bench
CFGS=p0r4f0,p0r4f1,p6r4f1,p8r4f1,p10r4f1,p12r4f1,p16r4f1,p32r4f1,p0r8f1,p8r8f1,p12r8f1,p16r8f1
echo "== sweep 65536 $(date +%T)" >> $OUT/clocks_marks.txt
timeout 150 $G --mapreduce 65536x65536,16384x16384,8192x8192,4096x4096 --mr-configs $CFGS > $OUT/sweep.jsonl 2> $OUT/sweep.err
echo "== end sweep $(date +%T)" >> $OUT/clocks_marks.txt
grep -v '"gpu-fused"' $OUT/sweep.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
  d=json.loads(l)
  if 'ms_per_iter' in d: print(d['solver'],d['m'],round(d['ms_per_iter'],4),round(d['share_of_probe'],3))
  else: print(d)"
grep '"gpu-fused"' $OUT/sweep.jsonl | cut -c1-160
kill $SMI
for c in p0r4f1 p10r4f1 p8r4f1 p12r8f1; do
  timeout 60 $G --check-mapreduce --mr-config $c > $OUT/check_$c.jsonl 2>&1; echo "check $c rc=$? $(tail -1 $OUT/check_$c.jsonl)"
done
if command -v ncu >/dev/null; then
  for c in p0r4f1 p10r4f1; do
    timeout 60 ncu --kernel-name regex:fastPassKernel --launch-skip 20 --launch-count 1 --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats \
      --section Occupancy $G --mapreduce 16384x16384 --mr-configs $c > $OUT/ncu_$c.txt 2>&1
    echo "ncu $c rc=$?"
  done
fi
date
