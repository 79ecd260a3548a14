#!/usr/bin/env bash
# Packs the build for scripts/gpu-check.sh on a GPU machine (DEVELOPERS.md, "Running the GPU
# check"): one archive, gpu-carry/infercost-gpu.tar.xz, that the device tool carries there.
#
#   scripts/gpu-pack.sh [--build DIR] [--out DIR] [--limit-mib N] [--xz-level N] [--no-verify]
#
# It holds, in the build folder's layout: infercost, libinfercost_cuda.so, the GPU test
# binaries (tests/backend/cuda_{kernels,backend}_tests) and benchmarks (bench/cuda_*) that
# exist, all stripped; python/infercost (the Python package: its native module, stripped, and its
# .py files; the CUDA module is the one at the top, found through INFERCOST_CUDA_MODULE) where
# the build made it; lib/ with the shared libraries they need from this machine (ldd), except glibc's
# and every CUDA/NVIDIA library (the GPU machine's driver and toolkit provide those);
# lib/compat/ with this machine's libstdc++ and libgcc_s, used there only when its own are
# too old; and MANIFEST with the source and build paths the binaries were compiled with.
# It fails when infercost is missing, a needed library is not found here, or the archive is
# over --limit-mib (48: the device tool carries 64 MiB, the tracked tree included). Then it
# unpacks the archive into a temporary folder and checks (unless --no-verify) that every
# library resolves inside lib/ or to the system or CUDA sets, and that the unpacked
# infercost runs (--version, devices). --xz-level (9, the smallest archive) trades size for
# time: the pack's own test uses 1.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
out=$repo/gpu-carry
limit_mib=48
verify=1
xz_level=9
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --limit-mib) limit_mib=$2; shift 2 ;;
    --xz-level) xz_level=$2; shift 2 ;;
    --no-verify) verify=0; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-pack: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "gpu-pack: $*" >&2; exit 1; }
for tool in ldd strip tar xz readelf; do
  command -v "$tool" >/dev/null || die "'$tool' is not installed"
done
[ -x "$build/infercost" ] || die "$build/infercost not found: build first (make build, or cmake --build build --target infercost infercost_cuda)"

# Glibc, the C++ runtime and everything CUDA/NVIDIA stay behind.
system_re='^(linux-vdso|linux-gate|ld-linux.*|libc|libm|libmvec|libdl|librt|libpthread|libresolv|libutil|libanl|libnsl)\.so'
compat_re='^(libstdc\+\+|libgcc_s)\.so'
cuda_re='^(libcuda|libcudart|libcublas|libcublasLt|libnvidia|libnvrtc|libnvJitLink|libcurand|libcufft|libcusparse|libcusolver|libcudnn|libnccl|libnvToolsExt)[.-]'

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu-pack.XXXXXX")
check_dir=""
cleanup() { rm -rf "$stage" ${check_dir:+"$check_dir"}; }
trap cleanup EXIT
mkdir -p "$stage/lib/compat"

binaries=(infercost)
[ -f "$build/libinfercost_cuda.so" ] && binaries+=(libinfercost_cuda.so) ||
  echo "gpu-pack: warning: $build/libinfercost_cuda.so not built: every GPU step of the check will fail" >&2
# The tests that need a GPU (the CPU-only CUDA suites run in CI) and the GPU benchmarks.
for f in tests/backend/cuda_kernels_tests tests/backend/cuda_backend_tests bench/cuda_gemm_peak \
         bench/cuda_encoder_bench; do
  if [ -x "$build/$f" ]; then
    binaries+=("$f")
  else
    echo "gpu-pack: note: $f not built: its step of the check will say so" >&2
  fi
done

native=$(find "$build/python/infercost" -maxdepth 1 -name '_native*.so' 2>/dev/null | head -1)
if [ -n "$native" ]; then
  binaries+=("python/infercost/${native##*/}")
else
  echo "gpu-pack: note: the Python module (python/infercost/_native*.so) not built: the package steps will say so" >&2
fi

declare -A libs=()
for b in "${binaries[@]}"; do
  mkdir -p "$stage/$(dirname "$b")"
  cp "$build/$b" "$stage/$b"
  strip --strip-unneeded "$stage/$b"
  # "name => path (addr)" lines; "statically linked" and the vdso have no path.
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [[ $name =~ $system_re || $name =~ $cuda_re ]]; then continue; fi
    [ "$path" != "not" ] || die "$b needs $name, which is not found on this machine"
    libs[$name]=$path
  done < <(ldd "$build/$b" 2>/dev/null || true)
done
if [ -n "$native" ]; then
  for f in "$build"/python/infercost/*.py "$build"/python/infercost/*.pyi "$build"/python/infercost/py.typed; do
    [ -f "$f" ] && cp "$f" "$stage/python/infercost/"
  done
fi
for name in "${!libs[@]}"; do
  dest=$stage/lib
  [[ $name =~ $compat_re ]] && dest=$stage/lib/compat
  cp -L "${libs[$name]}" "$dest/$name"
  chmod u+w "$dest/$name"
  strip --strip-unneeded "$dest/$name" 2>/dev/null || true
done

{
  echo "packed_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "source_dir=$(cd "$build/.." && pwd)"
  echo "binary_dir=$build"
  echo "git=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD 2>/dev/null || echo -dirty)"
  echo "host=$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"'), glibc $(ldd --version | head -1 | awk '{print $NF}')"
  echo "cuda_architectures=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)"
  for b in "${binaries[@]}"; do echo "binary=$b"; done
} > "$stage/MANIFEST"

mkdir -p "$out"
rm -f "$out"/*.tar.xz
archive=$out/infercost-gpu.tar.xz
[[ $xz_level =~ ^[0-9]$ ]] || die "--xz-level must be 0 to 9, not '$xz_level'"
tar -C "$stage" -cf - . | xz "-$xz_level" -T0 -c > "$archive.tmp"
mv "$archive.tmp" "$archive"
bytes=$(stat -c %s "$archive")
unpacked=$(du -sb "$stage" | cut -f1)
echo "gpu-pack: $archive: $(awk -v b="$bytes" 'BEGIN{printf "%.1f", b/1048576}') MiB" \
     "($(awk -v b="$unpacked" 'BEGIN{printf "%.1f", b/1048576}') MiB unpacked), limit ${limit_mib} MiB"
echo "gpu-pack: binaries: ${binaries[*]}"
echo "gpu-pack: libraries: $(cd "$stage/lib" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
if [ "$bytes" -gt $((limit_mib * 1048576)) ]; then
  rm -f "$archive"
  die "the archive is over ${limit_mib} MiB and was removed (the device tool carries 64 MiB in all)"
fi
[ "$verify" = 1 ] || exit 0

# The unpacked copy resolves everything inside lib/ (or to the system/CUDA sets left out).
check_dir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-pack-check.XXXXXX")
tar -C "$check_dir" -xJf "$archive"
bad=0
for b in "${binaries[@]}"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [[ $name =~ $system_re || $name =~ $cuda_re ]]; then continue; fi
    case $path in
      "$check_dir"/lib/*) ;;
      *) echo "gpu-pack: verify: $b: $name resolves to $path, not to the packed lib/" >&2; bad=1 ;;
    esac
  done < <(LD_LIBRARY_PATH="$check_dir/lib:$check_dir/lib/compat" ldd "$check_dir/$b" 2>/dev/null || true)
done
[ "$bad" = 0 ] || die "verify failed: the archive lacks libraries (above)"
LD_LIBRARY_PATH="$check_dir/lib" "$check_dir/infercost" --version >/dev/null ||
  die "verify failed: the unpacked infercost --version did not run"
LD_LIBRARY_PATH="$check_dir/lib" "$check_dir/infercost" devices >/dev/null ||
  die "verify failed: the unpacked infercost devices did not run"
echo "gpu-pack: verified: every library resolves to the packed lib/ or to the system/CUDA sets; the unpacked infercost runs"
