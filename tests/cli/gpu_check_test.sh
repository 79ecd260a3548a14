#!/usr/bin/env bash
# The GPU check's parts that run without a GPU (DEVELOPERS.md, "Running the GPU check"):
#   gpu_check_test.sh tools [PYTHON]  the tools/gpu self-tests (the table against its fixture)
#   gpu_check_test.sh tools-cpu [PYTHON [BUILD]]  hf_parity.py and study_method.py on the CPU on a
#                        model made by `infercost model synth`, against `infercost run`; skipped
#                        (exit 77, saying so) where PYTHON lacks torch or transformers
#   gpu_check_test.sh script [PYTHON]  scripts/gpu-check.sh: syntax, shellcheck, argument
#                        errors, and a dry run that lists every step and makes the table
#   gpu_check_test.sh pack BUILD [PYTHON]  scripts/gpu-pack.sh on BUILD into a temporary
#                        folder, with its own verification of the unpacked copy, then the
#                        check itself on that archive with small sizes: without a GPU its GPU
#                        steps fail (their tests skip) while the CPU steps and the table run (slow)
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
[ "${1:-}" = pack ] && py=${3:-}
[ -x "$py" ] || py=$(command -v python3 || true)

case ${1:-} in
  tools)
    [ -n "$py" ] || { echo "skip: no Python interpreter"; exit 77; }
    for t in compare_predictions compare_vectors hf_parity study_method gpu_table; do
      "$py" "tools/gpu/$t.py" --self-test || fail "tools/gpu/$t.py --self-test"
    done
    ;;
  tools-cpu)
    [ -n "$py" ] || { echo "skip: no Python interpreter"; exit 77; }
    build=${3:-build}
    if ! "$py" -c 'import torch, transformers' >/dev/null 2>&1; then
      echo "skip: torch or transformers not importable in $py: hf_parity.py and study_method.py not run"
      echo "(run: tests/cli/gpu_check_test.sh tools-cpu PYTHON $build, with a PYTHON that has them)"
      exit 77
    elif [ ! -x "$build/infercost" ]; then
      echo "skip: $build/infercost not built: hf_parity.py and study_method.py not run"
      exit 77
    else
      # The tools as the GPU check runs them, on the CPU: transformers loads what
      # `infercost model synth` writes and agrees with `infercost run` in fp32.
      ic=$build/infercost
      mkdir -p "$tmp/pred"
      "$ic" model synth --out "$tmp/m" --preset tiny --seed 2 >/dev/null 2>&1 || fail "model synth"
      "$ic" datagen --rows 300 --seed 3 --out "$tmp/in.jsonl" >/dev/null 2>&1 || fail "datagen jsonl"
      "$ic" datagen --rows 300 --seed 3 --out "$tmp/in.parquet" --shape parquet >/dev/null 2>&1 ||
        fail "datagen parquet"
      "$ic" run "$tmp/in.jsonl" --model "$tmp/m" --precision fp32 --no-text -o "$tmp/pred/cpu-fp32.jsonl" \
        --quiet 2>/dev/null || fail "infercost run"
      "$py" tools/gpu/hf_parity.py --model "$tmp/m" --input "$tmp/in.jsonl" --out-dir "$tmp/pred" \
        --precisions fp32 --device cpu >"$tmp/hf.log" 2>&1 || { cat "$tmp/hf.log"; fail "hf_parity.py --device cpu"; }
      "$py" tools/gpu/compare_predictions.py --results "$tmp/parity.jsonl" \
        --pair "hf-fp32 vs cpu-fp32=$tmp/pred/hf-fp32.jsonl,$tmp/pred/cpu-fp32.jsonl,fp32" ||
        fail "HF transformers and infercost run disagree in fp32 on the CPU"
      grep -q '"compared": 300' "$tmp/parity.jsonl" || fail "the parity pair did not compare 300 rows"
      for padding in batch file; do
        "$py" tools/gpu/study_method.py --model "$tmp/m" --input "$tmp/in.parquet" --rows 200 \
          --corpus-rows 300 --batch-size-per-gpu 40 --padding "$padding" --device cpu \
          --metrics "$tmp/study-$padding.json" >"$tmp/study.log" 2>&1 ||
          { cat "$tmp/study.log"; fail "study_method.py --padding $padding --device cpu"; }
        "$py" -c 'import json, sys
m = json.load(open(sys.argv[1]))
want = {"rows": 200, "subset": True, "padding": sys.argv[2], "batch_size": 40, "precision": "fp32"}
bad = {k: m.get(k) for k in want if m.get(k) != want[k]}
bad.update({k: m.get(k) for k in ("wall_seconds", "tokens", "computed_tokens", "model_flops")
            if not (m.get(k) or 0) > 0})
if bad:
    sys.exit("unexpected metrics: %r" % bad)' "$tmp/study-$padding.json" "$padding" ||
          fail "study_method.py --padding $padding: metrics"
      done
    fi
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
             e2e_ours_bf16_study_rows e2e_study_b70 e2e_ours_seed_b40 e2e_study_b40_file e2e_ours_fp16 \
             package_cpu_fp32 package_cuda_fp32 package_compare e2e_ours_bf16_seed_jsonl e2e_package_bf16; do
      grep -q "^=== $s (timeout" "$tmp/dry.log" || fail "the dry run does not list step $s"
    done
    grep -q -- "--rows 5000 --out $tmp/work/data/corpus.parquet" "$tmp/dry.log" || fail "--rows does not reach datagen"
    grep -q "no archive ($tmp/absent.tar.xz not found)" "$tmp/dry.log" || fail "a missing archive is not reported"
    for f in gpu-check.md gpu-check.log results.jsonl details.tar.gz; do
      [ -s "$tmp/out/$f" ] || fail "the dry run left no $f in OUT"
    done
    grep -q "^Overall: FAIL (end-to-end ratio not measured" "$tmp/out/gpu-check.md" ||
      fail "the dry run's table does not say what was not measured"
    [ "$(grep -c '"status": "DRY"' "$tmp/out/results.jsonl")" = 59 ] || fail "results.jsonl lacks the 59 DRY steps"
    for fam in modernbert-base deberta-v3-base; do
      grep -q "^=== synth_$fam " "$tmp/dry.log" || fail "the default families leave out $fam"
    done
    # --families: one preset is 7 steps of the family step, none leaves it out.
    OUT=$tmp/out1 bash scripts/gpu-check.sh --dry-run --work "$tmp/work1" --python "$py" --families xlm-roberta-base \
      >"$tmp/dry1.log" 2>&1
    [ "$(grep -c '"status": "DRY"' "$tmp/out1/results.jsonl")" = 38 ] || fail "--families xlm-roberta-base is not 38 steps"
    grep -q "^=== synth_xlm-roberta-base " "$tmp/dry1.log" || fail "--families does not name the preset's steps"
    grep -q "^=== synth_roberta-base " "$tmp/dry1.log" && fail "--families xlm-roberta-base still runs roberta-base"
    OUT=$tmp/out0 bash scripts/gpu-check.sh --dry-run --work "$tmp/work0" --python "$py" --families none \
      >/dev/null 2>&1
    [ "$(grep -c '"status": "DRY"' "$tmp/out0/results.jsonl")" = 31 ] || fail "--families none is not 31 steps"
    [ "$failed" = 0 ] || { echo "--- dry run output:"; cat "$tmp/dry.log"; }
    ;;
  pack)
    build=${2:-build}
    [ -x "$build/infercost" ] || { echo "skip: $build/infercost not built"; exit 77; }
    # A build configured without the CUDA toolkit has no module to pack (CI's has one).
    [ -e "$build/libinfercost_cuda.so" ] ||
      { echo "skip: $build has no CUDA module (configured without the CUDA toolkit): nothing to pack for a GPU"; exit 77; }
    scripts/gpu-pack.sh --build "$build" --out "$tmp/carry" --xz-level 1 || fail "scripts/gpu-pack.sh"
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
    # The check on that archive, as the GPU machine runs it, with small sizes; without the
    # RoBERTa family step (two base-size models synthesized for GPU steps that cannot run
    # here; the dry run above checks its steps).
    OUT=$tmp/out bash scripts/gpu-check.sh --rows 2000 --study-rows 200 --seed-rows 200 --literal-rows 100 \
      --parity-rows 100 --work "$tmp/check" --archive "$tmp/carry/infercost-gpu.tar.xz" --python "$py" \
      --families none \
      >"$tmp/check.log" 2>&1
    rc=$?
    [ "$rc" = 1 ] || fail "the check exits $rc, not 1 (no GPU here, or a step cannot run)"
    results=$tmp/out/results.jsonl
    for s in devices synth_model datagen parity_cpu_fp32; do
      grep -q "\"name\": \"$s\", \"status\": \"OK\"" "$results" || fail "step $s is not OK"
    done
    [ -s "$tmp/check/pred/cpu-fp32.jsonl" ] || fail "no CPU predictions"
    # The packed Python package runs (this machine's Python is the module's) and gives the CLI's outputs.
    if [ -f "$tmp/x/python/infercost/__init__.py" ]; then
      grep -q '"name": "package_cpu_fp32", "status": "OK"' "$results" || fail "step package_cpu_fp32 is not OK"
      grep -q '"name": "package-cpu-fp32 vs cpu-fp32".*"verdict": "PASS"' "$results" ||
        fail "the package's CPU predictions are not the CLI's"
    fi
    grep -q "unpacked $tmp/carry/infercost-gpu.tar.xz" "$tmp/check.log" || fail "the archive was not unpacked"
    grep -q '^Overall: FAIL' "$tmp/out/gpu-check.md" || fail "the table does not say FAIL"
    if ! nvidia-smi -L >/dev/null 2>&1; then
      for s in cuda_kernels_tests cuda_backend_tests; do
        grep -q "\"name\": \"$s\", \"status\": \"SKIPPED\"" "$results" ||
          fail "step $s is not SKIPPED without a GPU"
      done
      grep -q "CUDA cannot run here" "$tmp/check/logs/e2e_ours_bf16.log" ||
        fail "the end-to-end run does not say why CUDA cannot run"
    fi
    [ "$failed" = 0 ] || { echo "--- check output:"; cat "$tmp/check.log"; }
    ;;
  *)
    echo "usage: gpu_check_test.sh tools [PYTHON] | tools-cpu [PYTHON [BUILD]] | script [PYTHON] | pack BUILD [PYTHON]" >&2
    exit 2
    ;;
esac
if [ "$failed" = 0 ]; then
  echo "gpu_check_test ${1}: ok"
  exit 0
fi
exit 1
