#!/bin/bash
# Waits (up to $1 seconds) until the machine's CPUs were >= 90% idle over 3 s; prints the idle share.
limit=${1:-300}; start=$(date +%s)
while true; do
  read -r _ a b c d e f g h _ < /proc/stat; t1=$((a+b+c+d+e+f+g+h)); i1=$((d+e))
  sleep 3
  read -r _ a b c d e f g h _ < /proc/stat; t2=$((a+b+c+d+e+f+g+h)); i2=$((d+e))
  idle=$(( 100 * (i2 - i1) / (t2 - t1) ))
  if [ $idle -ge 90 ] || [ $(( $(date +%s) - start )) -ge $limit ]; then echo "idle ${idle}%"; break; fi
done
