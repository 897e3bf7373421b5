#!/bin/bash
# Before (main's build, /tmp/logspeed_before) vs after (this branch's build), alternated,
# same command (each before/after pair starts once the CPUs were >= 90% idle over 3 s, or after 60 s): uot recolor home.jpg starry_night.jpg [ARGS] --json; prints solve and total per run.
# usage: run.sh N ARGS...
cd /work/wt/logspeed
N=$1; shift
echo "# uptime at start: $(uptime)"
echo "# command: uot recolor resources/samples/home.jpg resources/samples/starry_night.jpg $* --json -o /tmp/logspeed_bench/out.png --overwrite"
for i in $(seq 1 $N); do
  q=$(/tmp/logspeed_bench/quiet.sh 60); echo "# pair $i: $q"
  for which in before after; do
    if [ $which = before ]; then B=/tmp/logspeed_before/uot; else B=build/app/cli/uot; fi
    $B recolor resources/samples/home.jpg resources/samples/starry_night.jpg "$@" --json -o /tmp/logspeed_bench/out.png --overwrite 2>/dev/null \
      | python3 -c "
import sys,json
d=json.load(sys.stdin); t=d['timings']; s=d['solver']
print('$which', 'solve %.4f total %.4f' % (t['solve'], t['total']), 'status', s['status'], 'it', s['iterations'], 'mass %.9f' % s['mass'], 'marg_a %.2e' % s['marginal_error_a'])"
  done
done
echo "# uptime at end: $(uptime)"
