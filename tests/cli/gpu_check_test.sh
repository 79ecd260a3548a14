#!/usr/bin/env bash
# The GPU check's parts that run without a GPU (DEVELOPERS.md, "Running the GPU check"):
#   gpu_check_test.sh tools [PYTHON] the tools/gpu self-tests (the table against its fixture)
#   gpu_check_test.sh script [PYTHON] scripts/gpu-check.sh: syntax, shellcheck, argument errors,
#                                    and a dry run that lists every step and makes the table
#   gpu_check_test.sh pack BUILD     scripts/gpu-pack.sh on BUILD into a temporary folder,
#                                    with its own verification of the unpacked copy (slow)
# Exit 77 (skipped) when what a part needs is absent.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# PYTHON (the build's pyenv) when it exists, else python3 (the tools need only the standard
# library; numpy, pyarrow and transformers widen what their self-tests cover).
py=${2:-}
[ -x "$py" ] || py=$(command -v python3 || true)

case ${1:-} in
  tools)
    [ -n "$py" ] || { echo "skip: no Python interpreter"; exit 77; }
    for t in compare_predictions hf_parity study_method gpu_table; do
      "$py" "tools/gpu/$t.py" --self-test || fail "tools/gpu/$t.py --self-test"
    done
    ;;
  script)
    [ -n "$py" ] || { echo "skip: no Python interpreter (the table needs one)"; exit 77; }
    bash -n scripts/gpu-check.sh || fail "bash -n scripts/gpu-check.sh"
    bash -n scripts/gpu-pack.sh || fail "bash -n scripts/gpu-pack.sh"
    if command -v shellcheck >/dev/null; then
      shellcheck scripts/gpu-check.sh scripts/gpu-pack.sh || fail "shellcheck"
    else
      echo "note: shellcheck not installed, not run"
    fi
    bash scripts/gpu-check.sh --rows 0 >/dev/null 2>&1
    [ $? = 2 ] || fail "--rows 0 is not refused with exit 2"
    bash scripts/gpu-check.sh --frobnicate >/dev/null 2>&1
    [ $? = 2 ] || fail "an unknown argument is not refused with exit 2"
    (cd "$tmp" && bash "$repo/scripts/gpu-check.sh" --dry-run >/dev/null 2>&1)
    [ $? = 2 ] || fail "running outside the repository root is not refused with exit 2"
    OUT=$tmp/out bash scripts/gpu-check.sh --dry-run --work "$tmp/work" --rows 5000 --python "$py" \
      --archive "$tmp/absent.tar.xz" \
      >"$tmp/dry.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || fail "a dry run exits $rc, not 1 (nothing measured)"
    for s in nvidia_smi devices cuda_kernels_tests cuda_backend_tests synth_model datagen parity_cpu_fp32 \
             parity_cuda_fp32 parity_cuda_bf16 parity_cuda_fp16 parity_hf parity_compare gemm_peak encoder_bench e2e_ours_bf16 e2e_study_b40 \
             e2e_ours_bf16_study_rows e2e_study_b70 e2e_ours_seed_b40 e2e_study_b40_file e2e_ours_fp16; do
      grep -q "^=== $s (timeout" "$tmp/dry.log" || fail "the dry run does not list step $s"
    done
    grep -q -- "--rows 5000 --out $tmp/work/data/corpus.parquet" "$tmp/dry.log" || fail "--rows does not reach datagen"
    grep -q "no archive ($tmp/absent.tar.xz not found)" "$tmp/dry.log" || fail "a missing archive is not reported"
    for f in gpu-check.md gpu-check.log results.jsonl details.tar.gz; do
      [ -s "$tmp/out/$f" ] || fail "the dry run left no $f in OUT"
    done
    grep -q "^Overall: FAIL (end-to-end ratio not measured" "$tmp/out/gpu-check.md" ||
      fail "the dry run's table does not say what was not measured"
    [ "$(grep -c '"status": "DRY"' "$tmp/out/results.jsonl")" = 21 ] || fail "results.jsonl lacks the 21 DRY steps"
    [ "$failed" = 0 ] || { echo "--- dry run output:"; cat "$tmp/dry.log"; }
    ;;
  pack)
    build=${2:-build}
    [ -x "$build/infercost" ] || { echo "skip: $build/infercost not built"; exit 77; }
    scripts/gpu-pack.sh --build "$build" --out "$tmp/carry" || fail "scripts/gpu-pack.sh"
    [ -f "$tmp/carry/infercost-gpu.tar.xz" ] || fail "no archive"
    mkdir -p "$tmp/x"
    tar -C "$tmp/x" -xJf "$tmp/carry/infercost-gpu.tar.xz" || fail "the archive does not unpack"
    for f in infercost MANIFEST lib/libdnnl.so.2; do
      [ -e "$tmp/x/$f" ] || fail "the archive lacks $f"
    done
    for f in "$tmp"/x/lib/*; do
      case ${f##*/} in
        libc.* | libm.* | libcuda[.-]* | libcudart* | libcublas* | libnvidia*)
          fail "the archive carries a glibc or CUDA library: ${f##*/}" ;;
      esac
    done
    mkdir -p "$tmp/empty"
    scripts/gpu-pack.sh --build "$tmp/empty" --out "$tmp/carry2" >/dev/null 2>&1
    [ $? = 1 ] || fail "packing a build without infercost does not fail"
    ;;
  *)
    echo "usage: gpu_check_test.sh tools [PYTHON] | script [PYTHON] | pack BUILD" >&2
    exit 2
    ;;
esac
if [ "$failed" = 0 ]; then
  echo "gpu_check_test ${1}: ok"
  exit 0
fi
exit 1
