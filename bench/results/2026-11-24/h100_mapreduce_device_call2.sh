#!/usr/bin/env bash
# device call 2: build, SASS, sweep + tables, checks per candidate, large sizes, ncu. <= 8 files in $OUT.
set -u
cd .carry/mapreduce
B=build-device; R=$OUT/r; mkdir -p $R
( nvidia-smi; which cuobjdump ncu ) > $R/env.txt 2>&1
cmake -S . -B $B -G Ninja -DUOT_BUILD_GUI=OFF -DUOT_WITH_OPENCV=OFF -DUOT_CUDA=ON -DUOT_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_BUILD_TYPE=Release > $R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
cmake --build $B -j 16 --target gpu_bench >> $R/build.log 2>&1 || { grep -E "error|FAILED" $R/build.log | head -30; exit 1; }
echo build ok
OBJ=$(find $B -name 'mapreduce_kernels.cu.o' | head -1)
cuobjdump -sass "$OBJ" > $R/sass_all.txt 2>&1
python3 - "$R" <<'PY'
import re,sys,collections
out=sys.argv[1]; txt=open(out+'/sass_all.txt').read()
parts=re.split(r'\n\s*Function : ',txt)
keep=open(out+'/sass_d3.txt','w'); summ=open(out+'/sass_summary.txt','w')
for p in parts[1:]:
    name=p.split('\n',1)[0].strip()
    if 'ILi3E' not in name or 'fastPassKernel' not in name: continue
    m=re.search(r'fastPassKernelILi3ELi4ELi(\d+)ELb(\d)ELb(\d)E',name)
    tag='p%sf%sw%s'%m.groups() if m else name
    ops=re.findall(r'/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)',p)
    cnt=collections.Counter(o[1].split('.')[0] for o in ops)
    summ.write(f"{tag}: total {len(ops)} " + ' '.join(f"{k}:{v}" for k,v in cnt.most_common(14))+'\n')
    if tag in ('p0f1w1','p0f1w0','p12f1w1'): keep.write('Function : '+p+'\n')
PY
cat $R/sass_summary.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > $R/clocks.csv 2>&1 &
SMI=$!
G=$B/tests/gpu/gpu_bench
CFGS=p0f0w0,p0f1w0,p0f1w1,p6f1w1,p8f1w1,p10f1w1,p12f1w1,p16f1w1,p32f1w1
timeout 130 $G --mapreduce 65536x65536,16384x16384,8192x8192,4096x4096 --mr-configs $CFGS > $OUT/sweep.jsonl 2> $R/sweep.err
python3 - $OUT/sweep.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
  d=json.loads(l)
  print(d['solver'],d.get('m'),round(d['ms_per_iter'],4),round(d['share_of_probe'],3)) if 'ms_per_iter' in d else print(d)
PY
BEST=$(python3 - $OUT/sweep.jsonl <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
r=[d for d in rows if d.get('m')==65536 and 'mapreduce[' in d.get('solver','')]
b=min(r,key=lambda d:d['ms_per_iter']); print(b['solver'].split('[')[1].rstrip(']'))
PY
)
echo "best at 65536: $BEST"
for c in p0f1w1 p12f1w1 p10f1w1 p16f1w1 p8f1w1 $BEST; do
  timeout 40 $G --check-mapreduce --mr-config $c > $R/check_$c.jsonl 2>&1; echo "check $c rc=$? $(tail -1 $R/check_$c.jsonl)"
done
kill $SMI
# the default configuration (compiled in) and the best one: 65536 again, 2^17, 2^20
timeout 60 $G --mapreduce 65536x65536,131072x131072 --mr-configs $BEST > $OUT/default_large.jsonl 2> $R/default_large.err; tail -4 $OUT/default_large.jsonl | cut -c1-220
timeout 70 $G --mapreduce-large 1048576x1048576 --iterations 3 --mr-config $BEST >> $OUT/default_large.jsonl 2>> $R/default_large.err; tail -1 $OUT/default_large.jsonl
if command -v ncu >/dev/null; then
  for c in p0f1w0 $BEST; do
    timeout 45 ncu --kernel-name regex:fastPassKernel --launch-skip 20 --launch-count 1 --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section InstructionStats \
      $G --mapreduce 16384x16384 --mr-configs $c > $R/ncu_$c.txt 2>&1
    echo "ncu $c rc=$?"; grep -E "Issue Slots Busy|Executed Ipc A|SM Busy|Compute \(SM\) Throughput|No Eligible|Active Warps Per" $R/ncu_$c.txt | head -8
  done
fi
tar -C $OUT -czf $OUT/r.tgz r && rm -rf $R
date
