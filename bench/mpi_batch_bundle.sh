#!/usr/bin/env bash
# Packs what the distributed-batch figures need on the headless GPU machine (no
# OpenCV there): uot-mpi from BUILD (built with OpenCV) and its shared-library
# closure, 20 photos of 1 MP (1152x864 crops of the bundled samples, ffmpeg), and
# DEST/run.sh, which runs the figures of issue 29 there:
#   2 ranks on two GPUs against one rank, 100 photos (each of the 20 five times);
#   8 ranks against one on the CPU (--threads 1 per rank), 40 photos.
#
#   bench/mpi_batch_bundle.sh BUILD DEST      # here
#   OUT=/some/folder DEST/run.sh              # there (python3 and Open MPI 4.1.x needed)
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
mkdir -p "$dest/bin" "$dest/lib-cxx" "$dest/photos" "$dest/bench"
cp "$build/app/mpi/uot-mpi" "$dest/bin/"
strip "$dest/bin/uot-mpi"
cp bench/mpi_batch_scaling.py "$dest/bench/"
cp resources/samples/starry_night.jpg "$dest/reference.jpg"
BUNDLE_STUBS="libgdal.so libgdcmMSFF.so libgdcmDSED.so libopenjp2.so libicudata.so" \
  bundle_copy_closure "$dest/lib" "$dest/bin/uot-mpi"
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
# The distributed-batch figures (bench/mpi_batch_bundle.sh made this folder); logs under $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
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
um=$here/bin/uot-mpi
if ! mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH "$um" batch --help > /dev/null 2> "$out/startup.txt"; then
  export LD_LIBRARY_PATH=$here/lib:$here/lib-cxx
  mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH "$um" batch --help > /dev/null 2>> "$out/startup.txt" \
    || { echo "uot-mpi does not start:"; cat "$out/startup.txt"; exit 1; }
  echo "started with the carried C++ runtime" >> "$out/startup.txt"
fi
python3 "$here/bench/mpi_batch_scaling.py" --uot-mpi "$um" --reference "$here/reference.jpg" --inputs "$work/gpu" \
  --ranks 1,2 --mpirun-args "-x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE --bind-to none" \
  --batch-args "--device gpu --gpu-batch 16" --json-out "$out/batch_gpu.json" 2>&1 | tee "$out/batch_gpu.txt"
python3 "$here/bench/mpi_batch_scaling.py" --uot-mpi "$um" --reference "$here/reference.jpg" --inputs "$work/cpu" \
  --ranks 1,8 --mpirun-args "-x LD_LIBRARY_PATH --bind-to core --map-by core" \
  --batch-args "--device cpu --threads 1" --json-out "$out/batch_cpu.json" 2>&1 | tee "$out/batch_cpu.txt"
rm -rf "$work"
RUN
chmod +x "$dest/run.sh"
du -sh "$dest"
