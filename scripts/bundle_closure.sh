# Sourced by scripts/qt_test_bundle.sh and scripts/studio_bundle.sh (not run on
# its own): copies the shared-library closure of some executables into a folder,
# so that they run on a machine that lacks those libraries (the GPU machine has
# no Qt and no OpenCV).
#
#   bundle_copy_closure DEST_LIB_DIR FILE...
#
# Left out: what every Linux has and must match its kernel and loader (glibc:
# libc, libm, libmvec, libdl, libpthread, librt, ld-linux), the CUDA driver
# (libcuda, libnvidia-*), and the vdso. libstdc++, libgcc_s and libgomp travel:
# they are small and a different compiler on the target could bring older ones.
# libcudart travels too; cuBLAS and CUPTI are loaded at run time from the
# target's CUDA toolkit (too large to carry: libcublasLt alone is ~500 MB), and
# NCCL (libnccl, ~200 MB) is the target's own: the GPU machines have it.

bundle_is_system_library() {
  case "$(basename "$1")" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libmvec.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|libresolv.so*) return 0 ;;
    libcuda.so*|libnvidia-*|libcublas*|libcupti*|libnccl.so*) return 0 ;;
  esac
  return 1
}

# Prints the resolved libraries FILE needs (absolute paths), one a line; fails
# when one is not found (a bundle missing a library would fail on the target).
bundle_needed_libraries() {
  local out
  out=$(ldd "$1") || { echo "ldd failed on $1" >&2; return 1; }
  if grep -q "not found" <<<"$out"; then
    echo "$1: unresolved libraries:" >&2
    grep "not found" <<<"$out" >&2
    return 1
  fi
  awk '/=> \// { print $3 }' <<<"$out"
}

bundle_copy_closure() {
  local dest=$1
  shift
  mkdir -p "$dest"
  local file lib
  declare -A seen=()
  for file in "$@"; do
    while read -r lib; do
      [ -n "$lib" ] || continue
      bundle_is_system_library "$lib" && continue
      [ -n "${seen[$lib]:-}" ] && continue
      seen[$lib]=1
      # Keep the soname the executables ask for; copy the file it points to.
      cp -L "$lib" "$dest/$(basename "$lib")"
    done < <(bundle_needed_libraries "$file")
  done
}
