#!/usr/bin/env bash
# Packs what the distributed-batch figures need on the headless GPU machine (no
# OpenCV there): uot-mpi from BUILD (built with OpenCV) and its shared-library
# closure, 20 photos of 1 MP (1152x864 crops of the bundled samples, ffmpeg), and
# DEST/run.sh, which runs the figures of issue 29 there; also the placement tools
# (BUILD's uot_cpu_topology_probe, bench/mpi_placement_probe.sh, bench/mpi_scaling.py,
# scripts/mpi_placement.py: docs/mpi.md, "Placement"), in the repository's layout.
# run.sh, each step with and without the placement on distinct physical cores (spread:
# by core and over the sockets/NUMA nodes instead):
#   probe      the vCPU pairs and the bandwidth (bench/mpi_placement_probe.sh);
#   scaling    uot-mpi solve at 16384^2 fp64, P = 1, 4, 8, and 8 with --balance
#              (SIZE, REPEATS);
#   batch-cpu  8 ranks against one (--threads 1 per rank), and 8 ranks of 2 threads
#              against one rank of 16, 40 photos;
#   batch-gpu  2 ranks on two GPUs against one rank, 100 photos (each of the 20 five
#              times), with the whole node and with 16 vCPUs a rank (placed, and by
#              --map-by slot:PE=16, which needs no probe);
#   host-cpu   the host CPU an image of the GPU path: one rank of one thread over the
#              40 photos, user + sys of the whole mpirun (start-up included);
#   batch-gpu-node (not by default) 2 ranks against one, 100 photos, the whole node
#              (--bind-to none, --threads 0), the first run of batch-gpu alone;
#   batch-cpu100 (not by default) 8 ranks against one, --threads 1 each, 100 photos,
#              --bind-to core --map-by core;
#   spread     (not by default) the read bandwidth and the 16384^2 scaling with the ranks
#              spread over the sockets/NUMA nodes, and --balance with rows moving.
#
#   bench/mpi_batch_bundle.sh BUILD DEST      # here (BUILD: uot-mpi and uot_cpu_topology_probe built)
#   OUT=/some/folder [STEPS="probe scaling"] DEST/run.sh   # there (python3 and Open MPI 4.1.x needed)
#
# CPUSET=0-31 runs the batch and host-cpu steps inside those vCPUs (taskset: mpirun and
# its ranks inherit them; e.g. two GPUs' share of a four-GPU host, with
# CUDA_VISIBLE_DEVICES=0,1); UOT_MPI=path runs another uot-mpi (e.g. a baseline) with
# DEST's libraries.
#
# The folder is about 110 MB (34 MB as tar.xz); FFmpeg's codec libraries are stand-ins.
#
# Left out of the closure: Open MPI (the target's own, same sonames: libmpi.so.40
# and the libraries under it) and, in DEST/lib-cxx instead of DEST/lib, the C++
# runtime (libstdc++, libgcc_s, libgomp): the target's Open MPI needs its own,
# newer libstdc++ (GLIBCXX_3.4.32 on the H100 machine, 2026-11-27), so run.sh
# uses the target's runtime and adds lib-cxx only when uot-mpi does not start
# without it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: bench/mpi_batch_bundle.sh BUILD DEST}
dest=${2:?usage: bench/mpi_batch_bundle.sh BUILD DEST}
source scripts/bundle_closure.sh
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib-cxx" "$dest/photos" "$dest/bench" "$dest/scripts"
cp "$build/app/mpi/uot-mpi" "$build/bench/topology/uot_cpu_topology_probe" "$dest/bin/"
strip "$dest/bin/uot-mpi" "$dest/bin/uot_cpu_topology_probe"
cp bench/mpi_batch_scaling.py bench/mpi_scaling.py bench/mpi_placement_probe.sh "$dest/bench/"
cp scripts/mpi_placement.py "$dest/scripts/"
cp resources/samples/starry_night.jpg "$dest/reference.jpg"
# Stand-ins also for the codec libraries under FFmpeg's (AV1, HEVC, VP8/9, JPEG XL, SVG,
# codec2, tracker music, streaming protocols): the figures here are photos, and the
# carried folder must stay small (clips on the GPU machine: bench/video/clip_gpu_bundle.sh).
codec_stubs="libcodec2.so libx265.so librsvg-2.so libSvtAv1Enc.so libaom.so libvpx.so librav1e.so"
codec_stubs+=" libopenmpt.so libdav1d.so libsrt-gnutls.so libzmq.so libgme.so libzvbi.so librist.so libssh.so"
BUNDLE_STUBS="libgdal.so libgdcmMSFF.so libgdcmDSED.so libopenjp2.so libicudata.so $codec_stubs" \
  bundle_copy_closure "$dest/lib" "$dest/bin/uot-mpi" "$dest/bin/uot_cpu_topology_probe"
for lib in "$dest"/lib/*; do
  case "$(basename "$lib")" in
    libmpi*|libopen-rte*|libopen-pal*|libpmix*|libevent*|libhwloc*|libnccl*) rm -f "$lib" ;;
    libstdc++*|libgcc_s*|libgomp*) mv "$lib" "$dest/lib-cxx/" ;;
  esac
done
k=0
for f in butterfly fruits home leuvenA squirrel_cls; do
  for crop in "iw:ih:0:0" "iw*0.8:ih*0.8:0:0" "iw*0.8:ih*0.8:iw*0.2:ih*0.2" "iw*0.7:ih*0.7:iw*0.15:ih*0.1"; do
    ffmpeg -v error -y -i "resources/samples/$f.jpg" -vf "crop=$crop,scale=1152:864" -q:v 3 \
      "$dest/photos/p$(printf %02d $k).jpg"
    k=$((k + 1))
  done
done
cat > "$dest/run.sh" <<'RUN'
#!/usr/bin/env bash
# Issues 24 and 29 on this host, with and without placement on distinct physical cores
# (bench/mpi_batch_bundle.sh made this folder; docs/mpi.md, "Placement"); logs under $OUT.
# STEPS picks the parts (default: probe scaling batch-cpu batch-gpu host-cpu); the placed runs
# need the probe's pairs ($OUT/probe/pairs.json).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
steps=" ${STEPS:-probe scaling batch-cpu batch-gpu host-cpu} "
mkdir -p "$out"
work=$(mktemp -d)
mkdir -p "$work/gpu" "$work/cpu"
for f in "$here"/photos/*.jpg; do
  b=$(basename "$f" .jpg)
  for i in 0 1 2 3 4; do cp "$f" "$work/gpu/${b}_$i.jpg"; done
  for i in 0 1; do cp "$f" "$work/cpu/${b}_$i.jpg"; done
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export LD_LIBRARY_PATH=$here/lib
um=${UOT_MPI:-$here/bin/uot-mpi}
within=()
[ -n "${CPUSET:-}" ] && within=(taskset -c "$CPUSET")
if ! mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH "$um" batch --help > /dev/null 2> "$out/startup.txt"; then
  export LD_LIBRARY_PATH=$here/lib:$here/lib-cxx
  mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH "$um" batch --help > /dev/null 2>> "$out/startup.txt" \
    || { echo "uot-mpi does not start:"; cat "$out/startup.txt"; exit 1; }
  echo "started with the carried C++ runtime" >> "$out/startup.txt"
fi
pairs=$out/probe/pairs.json
x="-x LD_LIBRARY_PATH"
log() { tee -a "$out/$1.txt"; }
if [[ $steps == *" probe "* ]]; then
  timeout 90 bash "$here/bench/mpi_placement_probe.sh" "$here/bin/uot_cpu_topology_probe" "$out/probe" 30 2>&1 | log probe
  python3 "$here/scripts/mpi_placement.py" --probe "$pairs" --ranks 8 --rankfile "$out/probe/rankfile.8" | log probe
  mpirun --allow-run-as-root -np 8 --rankfile "$out/probe/rankfile.8" --mca rmaps_rank_file_physical 1 \
    --report-bindings true 2>&1 | log probe
fi
scale() { timeout 100 python3 "$here/bench/mpi_scaling.py" --uot-mpi "$um" --size "${SIZE:-16384x16384}" --precision fp64 \
  --solver auto --mode auto --iterations 30 --repeats "${REPEATS:-2}" --skip-weak --json-out "$out/scaling.jsonl" "$@" 2>&1 \
  | log scaling; }
if [[ $steps == *" scaling "* ]]; then
  scale --ranks 1,4,8 --placement "$pairs" --mpirun-args "$x"
  scale --ranks 8 --mpirun-args "$x --bind-to core --map-by core"
  scale --ranks 8 --placement "$pairs" --mpirun-args "$x" --solve-args=--balance
fi
# spread: for hosts of several sockets or NUMA nodes (issue 24 on a 64-vCPU host): one vCPU
# per core, taken from the sockets/NUMA nodes in turn (lscpu -p); the read bandwidth of the
# first 1, 2, 4, 8 and 16 of them, then 16384^2 fp64 on 1 and 8 ranks by core, 8 ranks on
# the first 8 spread vCPUs (a rankfile), and --balance both ways (rows moving during the
# solve: --rebalance auto) and spread without the moves (--rebalance off).
if [[ $steps == *" spread "* ]]; then
  lscpu > "$out/lscpu.txt"
  spread=$(lscpu -p=CPU,CORE,SOCKET,NODE | python3 -c '
import sys
groups, seen = {}, set()
for line in sys.stdin:
    if line.startswith("#"): continue
    cpu, core, socket, node = (f or "0" for f in line.strip().split(","))
    if (socket, core) in seen: continue
    seen.add((socket, core))
    groups.setdefault((socket, node), []).append(cpu)
lists = [groups[k] for k in sorted(groups)]
print(",".join(c for i in range(max(map(len, lists))) for l in lists if i < len(l) for c in [l[i]]))')
  echo "spread vCPUs (one a core, sockets/NUMA nodes in turn): $spread" | log spread
  for k in 1 2 4 8 16; do
    timeout 30 "$here/bin/uot_cpu_topology_probe" --bandwidth --cpus "$(echo "$spread" | cut -d, -f1-$k)" 2>&1 | log spread
  done
  rf=$out/rankfile.spread
  echo "$spread" | tr , '\n' | head -8 | awk '{print "rank " NR - 1 "=localhost slot=" $1}' > "$rf"
  placed="$x --rankfile $rf --mca rmaps_rank_file_physical 1"
  mpirun --allow-run-as-root -np 8 $placed --report-bindings true 2>&1 | log spread
  scale --ranks 1,8 --mpirun-args "$x --bind-to core --map-by core"
  scale --ranks 8 --mpirun-args "$placed"
  scale --ranks 8 --mpirun-args "$placed" --solve-args=--balance
  scale --ranks 8 --mpirun-args "$x --bind-to core --map-by core" --solve-args=--balance
  scale --ranks 8 --mpirun-args "$placed" --solve-args="--balance --rebalance off"
fi
batch() { timeout 200 "${within[@]}" python3 "$here/bench/mpi_batch_scaling.py" --uot-mpi "$um" \
  --reference "$here/reference.jpg" "$@" 2>&1 | log "$step"; }
if [[ $steps == *" batch-cpu "* ]]; then
  step=batch_cpu
  batch --inputs "$work/cpu" --ranks 1,8 --placement "$pairs" --placement-layout 8 --mpirun-args "$x" \
    --batch-args "--device cpu --threads 1"
  batch --inputs "$work/cpu" --ranks 8 --mpirun-args "$x --bind-to core --map-by core" --batch-args "--device cpu --threads 1"
  batch --inputs "$work/cpu" --ranks 1 --placement "$pairs" --placement-per-rank 16 --mpirun-args "$x" \
    --batch-args "--device cpu --threads 16"
  batch --inputs "$work/cpu" --ranks 8 --placement "$pairs" --placement-per-rank 2 --mpirun-args "$x" \
    --batch-args "--device cpu --threads 2"
fi
if [[ $steps == *" batch-cpu100 "* ]]; then
  step=batch_cpu100
  batch --inputs "$work/gpu" --ranks 1,8 --mpirun-args "$x --bind-to core --map-by core" --batch-args "--device cpu --threads 1"
fi
gpu_node() { batch --inputs "$work/gpu" --ranks 1,2 --mpirun-args "$x -x NCCL_NVLS_ENABLE --bind-to none" \
  --batch-args "--device gpu --gpu-batch 16"; }
if [[ $steps == *" batch-gpu-node "* ]]; then
  step=batch_gpu_node
  gpu_node
fi
if [[ $steps == *" batch-gpu "* ]]; then
  step=batch_gpu
  gpu_node
  batch --inputs "$work/gpu" --ranks 1,2 --placement "$pairs" --placement-per-rank 16 --placement-layout 2 \
    --mpirun-args "$x -x NCCL_NVLS_ENABLE" --batch-args "--device gpu --gpu-batch 16 --threads 16"
  batch --inputs "$work/gpu" --ranks 1,2 --mpirun-args "$x -x NCCL_NVLS_ENABLE --map-by slot:PE=16 --bind-to core" \
    --batch-args "--device gpu --gpu-batch 16 --threads 16"
fi
if [[ $steps == *" host-cpu "* ]]; then
  TIMEFORMAT="host CPU of the GPU path, one rank, --threads 1, 40 photos: wall %R s, user %U s, sys %S s"
  { time timeout 100 "${within[@]}" mpirun --allow-run-as-root -np 1 $x -x NCCL_NVLS_ENABLE --bind-to none "$um" batch \
      "$here/reference.jpg" "$work/cpu" --out-dir "$work/host_cpu" --device gpu --gpu-batch 16 --threads 1 \
      > /dev/null 2> "$out/host_cpu.err"; } 2>&1 | tee -a "$out/host_cpu.txt"
fi
rm -rf "$work"
RUN
chmod +x "$dest/run.sh"
du -sh "$dest"
