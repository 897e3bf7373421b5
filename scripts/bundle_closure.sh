# Sourced by the bundle scripts (scripts/*_bundle.sh, bench/**/*_bundle.sh; not run on
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

# BUNDLE_STUBS (optional): names of libraries (a prefix of the file name, e.g.
# "libgdal.so libicudata.so") linked but never used by the bundle; each is
# replaced by a stand-in from scripts/make_stub_library.py, and what only it
# needed drops out of the closure.
bundle_copy_closure() {
  local dest=$1
  shift
  mkdir -p "$dest"
  local file lib stubs="" prefix
  if [ -n "${BUNDLE_STUBS:-}" ]; then
    stubs=$(mktemp -d)
    local -a full=()
    mapfile -t full < <(for file in "$@"; do bundle_needed_libraries "$file"; done | sort -u)
    local -a stubbed=()
    for lib in "${full[@]}"; do
      for prefix in $BUNDLE_STUBS; do
        case "$(basename "$lib")" in "$prefix"*) stubbed+=("$lib") ;; esac
      done
    done
    if [ "${#stubbed[@]}" -gt 0 ]; then
      python3 "$(dirname "${BASH_SOURCE[0]}")/make_stub_library.py" "$stubs" "${stubbed[@]}" -- "${full[@]}" "$@" > /dev/null
    fi
  fi
  declare -A seen=()
  for file in "$@"; do
    while read -r lib; do
      [ -n "$lib" ] || continue
      bundle_is_system_library "$lib" && continue
      [ -n "${seen[$lib]:-}" ] && continue
      seen[$lib]=1
      # Keep the soname the executables ask for; copy the file it points to.
      cp -L "$lib" "$dest/$(basename "$lib")"
    done < <(if [ -n "$stubs" ]; then LD_LIBRARY_PATH="$stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" bundle_needed_libraries "$file"
             else bundle_needed_libraries "$file"; fi)
  done
  [ -z "$stubs" ] || rm -rf "$stubs"
}

# Starts FILE, the run.sh a bundle runs on the target machine: a shebang, the
# DESCRIPTION as its comment, `set -u`, `here` (the bundle's folder), `out`
# ($OUT, else here/out, created) and the bundle's libraries on LD_LIBRARY_PATH.
# The caller appends the commands (cat >> FILE).
#
#   bundle_start_run_script FILE DESCRIPTION
bundle_start_run_script() {
  cat > "$1" <<EOF
#!/usr/bin/env bash
# $2
set -u
here=\$(cd "\$(dirname "\$0")" && pwd)
out=\${OUT:-\$here/out}
mkdir -p "\$out"
export LD_LIBRARY_PATH=\$here/lib
EOF
  chmod +x "$1"
}
