#!/usr/bin/env bash
# The GPU check (issue 4), run ON a GPU machine from the repository root, with the archive
# that scripts/gpu-pack.sh made on the build machine in gpu-carry/ (DEVELOPERS.md, "Running
# the GPU check"):
#
#   bash scripts/gpu-check.sh [--rows N] [--quick] [--dry-run] [--study-rows N] [--seed-rows N]
#                             [--literal-rows N] [--parity-rows N] [--budget S] [--work DIR]
#                             [--archive FILE] [--python PY] [--families LIST]
#
# Steps, each under its own timeout; a failing step is recorded as FAIL and the next runs:
#   a. nvidia-smi; infercost --version and devices
#   b. the GPU test binaries (tests/backend/cuda_kernels_tests, cuda_backend_tests)
#   c. a synthetic DistilBERT-base model and a synthetic tweet corpus of --rows rows (Parquet)
#   d. parity on --parity-rows rows: infercost run on the CPU (fp32) and on CUDA (fp32, bf16,
#      fp16) against each other and against HF transformers on the GPU (tools/gpu/)
#   e. the bf16 cuBLASLt GEMM peak (bench/cuda_gemm_peak)
#   f. the model-only rate (bench/cuda_encoder_bench) against that peak
#   g. end to end: infercost run --device cuda on the corpus (bf16, auto batch sizes), and
#      the study's batching (--batching seed --batch-size 40) on --seed-rows rows
#   h. the study's method (tools/gpu/study_method.py: PyTorch eager fp32, DataParallel, batch
#      40 and 70 per GPU) on the first --study-rows rows, and literally (the whole input padded
#      to its longest row) on --literal-rows rows
#   i. the Python package (issue 14; the archive's python/ folder): infercost.Model on the CPU
#      (fp32) and on CUDA (fp32) on the parity rows, compared with `infercost run`'s files of
#      step d, then Model.classify in bf16 (auto batch sizes) on the seed rows beside
#      `infercost run` on the same file (tools/gpu/package_run.py; a Spark job is not run: pyspark
#      does not fit the carry)
#   j. the other families: synthetic roberta-base, xlm-roberta-base, modernbert-base and
#      deberta-v3-base models, parity on the parity rows (our CPU fp32, CUDA fp32 and bf16, HF
#      transformers fp32 on the GPU) and end to end in bf16 on the seed rows (--families: the
#      presets, comma-separated; default roberta-base,xlm-roberta-base,modernbert-base,
#      deberta-v3-base; "none" leaves the step out)
#   l. embeddings (issue 29): the synthetic DistilBERT's encoder, mean pooling, normalized, on the
#      parity rows: infercost embed on CUDA (fp32, bf16) against the CPU in fp32
#      (tools/gpu/compare_vectors.py: fp32 within 1e-4, bf16 cosine >= 0.99), then end to end in
#      bf16 on the seed rows
#   k. one table (tools/gpu/gpu_table.py), printed last and written to $OUT/gpu-check.md
# The steps share --budget seconds (default 420: with the machine's start, one device call of
# about 9 minutes, leaving time for a --quick rerun out of 15): a step's timeout is cut to what
# is left, and a step is skipped (SKIP) when too little is left; the table always runs. On an
# H200 it should take 4-6 minutes (estimated from the steps' sizes, not yet measured).
#
# Everything lands in --work (default /tmp/ic; the archive is unpacked in its bin/); $OUT
# (default /tmp/ic/out) gets gpu-check.log (all output), gpu-check.md (the table),
# results.jsonl (steps, parity) and details.tar.gz (logs, metrics). --dry-run prints the steps
# without running them (and runs the table on whatever --work holds). --quick: 200k rows, 20k
# study and seed rows, 2000 literal and parity rows, budget 240 s (unless --budget is given).
set -u

rows=1000000
study_rows=50000
seed_rows=50000
literal_rows=10000
parity_rows=4000
budget=420
quick=0
dry=0
budget_given=0
work=/tmp/ic
archive=""
python=python3
families=roberta-base,xlm-roberta-base,modernbert-base,deberta-v3-base

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
need_value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then
    echo "gpu-check: $1 needs a value" >&2
    exit 2
  fi
}
while [ $# -gt 0 ]; do
  case $1 in
    --rows) need_value "$@"; rows=$2; shift 2 ;;
    --study-rows) need_value "$@"; study_rows=$2; shift 2 ;;
    --seed-rows) need_value "$@"; seed_rows=$2; shift 2 ;;
    --literal-rows) need_value "$@"; literal_rows=$2; shift 2 ;;
    --parity-rows) need_value "$@"; parity_rows=$2; shift 2 ;;
    --budget) need_value "$@"; budget=$2; budget_given=1; shift 2 ;;
    --work) need_value "$@"; work=$2; shift 2 ;;
    --archive) need_value "$@"; archive=$2; shift 2 ;;
    --python) need_value "$@"; python=$2; shift 2 ;;
    --families) need_value "$@"; families=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$quick" = 1 ]; then
  rows=200000 study_rows=20000 seed_rows=20000 literal_rows=2000 parity_rows=2000
  [ "$budget_given" = 1 ] || budget=240
fi
for v in rows study_rows seed_rows literal_rows parity_rows budget; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "gpu-check: --${v//_/-} must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
if [ ! -f scripts/gpu-check.sh ] || [ ! -d tools/gpu ]; then
  echo "gpu-check: run it from the repository root (scripts/gpu-check.sh and tools/gpu/ not found in $(pwd))" >&2
  exit 2
fi
repo=$(pwd)
case $work in /*) ;; *) work=$repo/$work ;; esac
OUT=${OUT:-$work/out}
mkdir -p "$OUT" "$work/logs" "$work/metrics" "$work/pred" "$work/data" || exit 1
bin=$work/bin  # the unpacked archive
results=$work/results.jsonl
configs=$work/configs.jsonl
: > "$results"
: > "$configs"
start_s=$(date +%s)
reserve_s=25  # kept back for the table and the bundle

# step NAME TIMEOUT_S CMD...: runs CMD under timeout, teeing its output to logs/NAME.log;
# records OK, FAIL, TIMEOUT, SKIPPED (gtest skipped tests) or SKIP (no budget left) in
# results.jsonl. Returns CMD's status (1 when skipped for the budget).
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - ($(date +%s) - start_s) - reserve_s))
  if [ "$dry" = 0 ] && [ "$left" -lt 15 ]; then
    echo "=== $name: SKIP (budget: ${left}s of ${budget}s left)"
    record_step "$name" SKIP 0 0
    return 1
  fi
  [ "$limit" -gt "$left" ] && [ "$dry" = 0 ] && limit=$left
  echo "=== $name (timeout ${limit}s, $(($(date +%s) - start_s))s elapsed): $*"
  if [ "$dry" = 1 ]; then
    record_step "$name" DRY 0 0
    return 0
  fi
  local t0 t1 rc status
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" 2>&1 | tee "$work/logs/$name.log"
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  status=OK
  [ "$rc" != 0 ] && status=FAIL
  { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && status=TIMEOUT
  # A GPU test binary whose tests skipped (they saw no GPU) checked nothing.
  [ "$status" = OK ] && grep -qE '^\[  SKIPPED \] [0-9]+ test' "$work/logs/$name.log" && status=SKIPPED
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  echo "--- $name: $status (exit $rc, ${secs}s)"
  record_step "$name" "$status" "$rc" "$secs"
  return "$rc"
}
record_step() {
  printf '{"kind": "step", "name": "%s", "status": "%s", "rc": %s, "seconds": %s}\n' "$1" "$2" "$3" "$4" >>"$results"
}
# missing NAME WHY: a step that cannot run, recorded as FAIL with the reason.
missing() {
  echo "=== $1: FAIL: $2"
  record_step "$1" FAIL 127 0
}
# config NAME METHOD LABEL METRICS_FILE [NOTE]: a row of the final table.
config() {
  printf '{"kind": "config", "name": "%s", "method": "%s", "label": "%s", "metrics": "%s", "note": "%s"}\n' \
    "$1" "$2" "$3" "$4" "${5:-}" >>"$configs"
}

main() {
  echo "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $repo; work $work; OUT $OUT; budget ${budget}s"
  echo "gpu-check: rows $rows, study rows $study_rows, seed rows $seed_rows, literal rows $literal_rows," \
       "parity rows $parity_rows$([ "$dry" = 1 ] && echo ' (dry run: nothing is executed)')"

  # --- the archive
  if [ -z "$archive" ]; then
    for f in "$repo"/gpu-carry/*.tar.xz; do
      [ -f "$f" ] && { archive=$f; break; }
    done
  fi
  if [ -z "$archive" ] || [ ! -f "$archive" ]; then
    echo "gpu-check: no archive (${archive:-gpu-carry/*.tar.xz} not found): run scripts/gpu-pack.sh on the build machine and carry" \
         "gpu-carry with the run (DEVELOPERS.md, 'Running the GPU check')"
    [ "$dry" = 1 ] || return 1
  elif [ "$dry" = 0 ]; then
    rm -rf "${bin:?}"
    mkdir -p "$bin"
    if ! tar -C "$bin" -xJf "$archive" 2>/dev/null; then
      "$python" -c 'import sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], **({"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}))' \
        "$archive" "$bin" || { echo "gpu-check: could not unpack $archive"; return 1; }
    fi
    echo "gpu-check: unpacked $archive ($(stat -c %s "$archive") bytes):"
    sed 's/^/  /' "$bin/MANIFEST"
  fi

  # --- libraries: ours first, then cuBLASLt (toolkit or the nvidia wheels), then the driver's
  local cublas_dir="" d f
  for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} /usr/local/cuda/lib64 /usr/local/cuda/lib \
           /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/targets/x86_64-linux/lib; do
    [ -e "$d/libcublasLt.so.13" ] && { cublas_dir=$d; break; }
  done
  if [ -z "$cublas_dir" ]; then
    cublas_dir=$("$python" - 2>/dev/null <<'EOF'
import glob, os, site
roots = []
try:
    import nvidia
    roots += list(nvidia.__path__)
except Exception:
    pass
roots += [os.path.join(p, "nvidia") for p in site.getsitepackages()]
for r in roots:
    for f in sorted(glob.glob(os.path.join(r, "**", "libcublasLt.so.13*"), recursive=True)):
        print(os.path.dirname(f))
        raise SystemExit
EOF
)
  fi
  if [ -z "$cublas_dir" ]; then
    d=$(ldconfig -p 2>/dev/null | awk '/libcublasLt\.so\.13 /{print $NF; exit}')
    [ -n "$d" ] && cublas_dir=$(dirname "$d")
  fi
  if [ -z "$cublas_dir" ]; then
    d=$(find /usr /opt -name 'libcublasLt.so.13' -print -quit 2>/dev/null)
    [ -n "$d" ] && cublas_dir=$(dirname "$d")
  fi
  echo "gpu-check: libcublasLt.so.13: ${cublas_dir:-NOT FOUND (the CUDA steps will fail)}"
  local ld="$bin/lib${cublas_dir:+:$cublas_dir}"
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64; do
      [ -e "$d/libcuda.so.1" ] && { ld="$ld:$d"; echo "gpu-check: driver library path $d"; break; }
    done
  fi
  ld="$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ "$dry" = 0 ] && [ -x "$bin/infercost" ] &&
     ! LD_LIBRARY_PATH=$ld "$bin/infercost" --version >/dev/null 2>&1 &&
     LD_LIBRARY_PATH="$bin/lib/compat:$ld" "$bin/infercost" --version >/dev/null 2>&1; then
    echo "gpu-check: this machine's libstdc++ is older than the build machine's: using the packed lib/compat"
    ld="$bin/lib/compat:$ld"
  fi
  # Our binaries get this environment; Python (torch) keeps the machine's own.
  local ic=(env "LD_LIBRARY_PATH=$ld" "INFERCOST_CUDA_MODULE=$bin/libinfercost_cuda.so")
  local py=(env PYTHONUNBUFFERED=1 "$python")

  # Tests compiled with this build's source paths (INFERCOST_TEST_DATA_DIR...) find them
  # through links when this checkout sits elsewhere.
  local src_dir
  src_dir=$(sed -n 's/^source_dir=//p' "$bin/MANIFEST" 2>/dev/null)
  if [ "$dry" = 0 ] && [ -n "$src_dir" ] && [ "$src_dir" != "$repo" ]; then
    if [ ! -e "$src_dir" ] && mkdir -p "$(dirname "$src_dir")" 2>/dev/null && ln -s "$repo" "$src_dir" 2>/dev/null; then
      echo "gpu-check: linked $src_dir -> $repo (the tests' compiled-in source path)"
    fi
  fi
  if [ "$dry" = 0 ] && [ -n "$src_dir" ] && [ -d "$src_dir" ] && [ ! -e "$src_dir/build" ]; then
    ln -s "$bin" "$src_dir/build" 2>/dev/null && echo "gpu-check: linked $src_dir/build -> $bin"
  fi

  # --- a. the machine
  step nvidia_smi 30 bash -c 'nvidia-smi -L && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv'
  if [ -x "$bin/infercost" ] || [ "$dry" = 1 ]; then
    step devices 60 "${ic[@]}" "$bin/infercost" devices --json "$work/devices.json"
    [ "$dry" = 1 ] || "${ic[@]}" "$bin/infercost" --version
  else
    missing devices "$bin/infercost not found: the archive was not unpacked (gpu-pack.sh not run?)"
  fi

  # --- b. CUDA tests
  local t
  for t in cuda_kernels_tests cuda_backend_tests; do
    if [ -x "$bin/tests/backend/$t" ] || [ "$dry" = 1 ]; then
      step "$t" 120 "${ic[@]}" "$bin/tests/backend/$t" --gtest_brief=1
    else
      missing "$t" "not in the archive (not built when gpu-pack.sh ran)"
    fi
  done

  # --- c. model and data
  local model=$work/model data=$work/data
  step synth_model 120 "${ic[@]}" "$bin/infercost" model synth --out "$model" --preset distilbert-base --seed 1
  step datagen 180 bash -c "set -e
    run() { $(printf '%q ' "${ic[@]}" "$bin/infercost") datagen --seed 1 \"\$@\"; }
    run --rows $rows --out $data/corpus.parquet --shape parquet
    run --rows $study_rows --out $data/study.parquet --shape parquet
    run --rows $seed_rows --out $data/seed.parquet --shape parquet
    run --rows $seed_rows --out $data/seed.jsonl --shape jsonl
    run --rows $literal_rows --out $data/literal.parquet --shape parquet
    run --rows $parity_rows --out $data/parity.jsonl --shape jsonl"

  # --- d. parity
  local pred=$work/pred p
  step parity_cpu_fp32 150 "${ic[@]}" "$bin/infercost" run "$data/parity.jsonl" --model "$model" --device cpu \
    --precision fp32 --no-text -o "$pred/cpu-fp32.jsonl" --metrics "$work/metrics/parity_cpu_fp32.json"
  for p in fp32 bf16 fp16; do
    step "parity_cuda_$p" 90 "${ic[@]}" "$bin/infercost" run "$data/parity.jsonl" --model "$model" --device cuda \
      --precision "$p" --no-text -o "$pred/cuda-$p.jsonl" --metrics "$work/metrics/parity_cuda_$p.json"
  done
  step parity_hf 180 "${py[@]}" tools/gpu/hf_parity.py --model "$model" --input "$data/parity.jsonl" \
    --out-dir "$pred" --precisions fp32,bf16,fp16 --device cuda
  step parity_compare 60 "${py[@]}" tools/gpu/compare_predictions.py --results "$results" \
    --pair "cuda-fp32 vs cpu-fp32=$pred/cuda-fp32.jsonl,$pred/cpu-fp32.jsonl,fp32" \
    --pair "cuda-fp32 vs hf-fp32=$pred/cuda-fp32.jsonl,$pred/hf-fp32.jsonl,fp32" \
    --pair "hf-fp32 vs cpu-fp32=$pred/hf-fp32.jsonl,$pred/cpu-fp32.jsonl,fp32" \
    --pair "cuda-bf16 vs cpu-fp32=$pred/cuda-bf16.jsonl,$pred/cpu-fp32.jsonl,low" \
    --pair "cuda-bf16 vs hf-fp32=$pred/cuda-bf16.jsonl,$pred/hf-fp32.jsonl,low" \
    --pair "cuda-fp16 vs cpu-fp32=$pred/cuda-fp16.jsonl,$pred/cpu-fp32.jsonl,low" \
    --pair "cuda-fp16 vs hf-fp32=$pred/cuda-fp16.jsonl,$pred/hf-fp32.jsonl,low" \
    --pair "cuda-bf16 vs hf-bf16=$pred/cuda-bf16.jsonl,$pred/hf-bf16.jsonl,info" \
    --pair "cuda-fp16 vs hf-fp16=$pred/cuda-fp16.jsonl,$pred/hf-fp16.jsonl,info"

  # --- e. GEMM peak
  local peak=""
  if [ -x "$bin/bench/cuda_gemm_peak" ] || [ "$dry" = 1 ]; then
    step gemm_peak 120 "${ic[@]}" "$bin/bench/cuda_gemm_peak" --dtype bf16 --out both --tokens 32768 --reps 20
    peak=$("$python" -c 'import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        if r.get("shape") == "square" and r.get("out") == "bf16":
            print(r["tflops"]); break' "$work/logs/gemm_peak.log" 2>/dev/null)
    echo "gpu-check: bf16 GEMM peak: ${peak:-not measured} TFLOP/s"
  else
    missing gemm_peak "$bin/bench/cuda_gemm_peak not in the archive (not built when gpu-pack.sh ran)"
  fi

  # --- f. model-only rate
  if [ -x "$bin/bench/cuda_encoder_bench" ] || [ "$dry" = 1 ]; then
    step encoder_bench 150 "${ic[@]}" "$bin/bench/cuda_encoder_bench" --model "$model" --device cuda:0 \
      --precisions bf16,fp16,fp32 --shapes 256x128,64x64 --reps "$([ "$quick" = 1 ] && echo 10 || echo 20)" \
      ${peak:+--peak-tflops "$peak"}
  else
    missing encoder_bench "$bin/bench/cuda_encoder_bench not in the archive (not built when gpu-pack.sh ran)"
  fi

  # --- g/h. end to end, ours and the study's, most important first (the budget may run out)
  local auto=(--batch-size auto --max-batch-tokens auto) auto_note="auto batch"
  if [ "$dry" = 0 ] && ! "${ic[@]}" "$bin/infercost" run --help 2>/dev/null | grep -A3 -e '--batch-size' | grep -q auto; then
    auto=(--batch-size 1024 --max-batch-tokens 65536)
    auto_note="batch 1024 rows / 65536 tokens (this build has no 'auto')"
    echo "gpu-check: infercost run has no --batch-size auto: using ${auto[*]}"
  fi
  ours() {  # ours NAME TIMEOUT INPUT PRECISION LABEL NOTE RUN_ARGS...
    local name=$1 limit=$2 input=$3 precision=$4 label=$5 note=$6
    shift 6
    config "$name" ours "$label" "metrics/$name.json" "$note"
    step "$name" "$limit" "${ic[@]}" "$bin/infercost" run "$input" --model "$model" --device cuda \
      --precision "$precision" --no-text -o "$pred/$name.parquet" --metrics "$work/metrics/$name.json" "$@"
  }
  study() {  # study NAME TIMEOUT INPUT ROWS BATCH_PER_GPU PADDING LABEL
    config "$1" study "$7" "metrics/$1.json" "$([ "$4" -lt "$rows" ] && echo "first $4 of $rows rows")"
    step "$1" "$2" "${py[@]}" tools/gpu/study_method.py --model "$model" --input "$3" --rows "$4" \
      --corpus-rows "$rows" --batch-size-per-gpu "$5" --padding "$6" --metrics "$work/metrics/$1.json" --name "$7"
  }
  ours e2e_ours_bf16 150 "$data/corpus.parquet" bf16 "infercost bf16, tokens batching, $auto_note" "" \
    "${auto[@]}"
  study e2e_study_b40 180 "$data/study.parquet" "$study_rows" 40 batch "study b40/GPU (fp32 eager, DataParallel)"
  ours e2e_ours_bf16_study_rows 90 "$data/study.parquet" bf16 "infercost bf16 on the study's rows" \
    "$study_rows rows" "${auto[@]}"
  study e2e_study_b70 180 "$data/study.parquet" "$study_rows" 70 batch "study b70/GPU (fp32 eager, DataParallel)"
  ours e2e_ours_seed_b40 150 "$data/seed.parquet" bf16 "infercost bf16, --batching seed, batch 40" \
    "$seed_rows rows, padded to the file's longest row" --batching seed --batch-size 40
  study e2e_study_b40_file 150 "$data/literal.parquet" "$literal_rows" 40 file \
    "study b40/GPU, whole file padded (the 2021 method)"
  ours e2e_ours_fp16 150 "$data/corpus.parquet" fp16 "infercost fp16, tokens batching, $auto_note" "" "${auto[@]}"

  # --- i. the Python package (issue 14): the archive's python/infercost (its native module
  # built with the build machine's Python: another minor version cannot import it, which the
  # CPU step says first)
  local pkg=("${ic[@]}" "PYTHONPATH=$bin/python" PYTHONUNBUFFERED=1 "$python" tools/gpu/package_run.py
             --model "$model")
  if [ -f "$bin/python/infercost/__init__.py" ] || [ "$dry" = 1 ]; then
    step package_cpu_fp32 150 "${pkg[@]}" --input "$data/parity.jsonl" --device cpu --precision fp32 \
      --out "$pred/package-cpu-fp32.jsonl" --metrics "$work/metrics/package_cpu_fp32.json"
    step package_cuda_fp32 90 "${pkg[@]}" --input "$data/parity.jsonl" --device cuda --precision fp32 \
      --out "$pred/package-cuda-fp32.jsonl" --metrics "$work/metrics/package_cuda_fp32.json"
    step package_compare 60 "${py[@]}" tools/gpu/compare_predictions.py --results "$results" \
      --pair "package-cpu-fp32 vs cpu-fp32=$pred/package-cpu-fp32.jsonl,$pred/cpu-fp32.jsonl,fp32" \
      --pair "package-cuda-fp32 vs cuda-fp32=$pred/package-cuda-fp32.jsonl,$pred/cuda-fp32.jsonl,fp32"
    ours e2e_ours_bf16_seed_jsonl 90 "$data/seed.jsonl" bf16 "infercost run bf16 on the package's rows" \
      "$seed_rows rows" "${auto[@]}"
    config e2e_package_bf16 ours "infercost.Model.classify (Python) bf16, $auto_note" \
      metrics/e2e_package_bf16.json "$seed_rows rows, one call, the load excluded"
    step e2e_package_bf16 120 "${pkg[@]}" --input "$data/seed.jsonl" --device cuda --precision bf16 --auto-batch \
      --out "$pred/e2e_package_bf16.jsonl" --metrics "$work/metrics/e2e_package_bf16.json"
  else
    missing package_cpu_fp32 "$bin/python/infercost not in the archive (the Python module was not built when gpu-pack.sh ran)"
  fi

  # --- j. the other families (issues 16, 27 and 28): synthetic roberta-base, xlm-roberta-base,
  # modernbert-base and deberta-v3-base (byte-level BPE and Unigram tokenizers the synthesizer
  # builds), parity on the parity rows against our CPU fp32 and HF transformers on the GPU, then
  # end to end in bf16 on the seed rows
  local fam base_model=$model
  local family_list=()
  [ "$families" = none ] || IFS=, read -r -a family_list <<<"$families"
  for fam in "${family_list[@]}"; do
    model=$work/model-$fam
    [ "$dry" = 1 ] || mkdir -p "$pred/$fam"
    step "synth_$fam" 240 "${ic[@]}" "$bin/infercost" model synth --out "$model" --preset "$fam" --seed 1
    step "parity_${fam}_cpu_fp32" 240 "${ic[@]}" "$bin/infercost" run "$data/parity.jsonl" --model "$model" \
      --device cpu --precision fp32 --no-text -o "$pred/$fam/cpu-fp32.jsonl" \
      --metrics "$work/metrics/parity_${fam}_cpu_fp32.json"
    for p in fp32 bf16; do
      step "parity_${fam}_cuda_$p" 90 "${ic[@]}" "$bin/infercost" run "$data/parity.jsonl" --model "$model" \
        --device cuda --precision "$p" --no-text -o "$pred/$fam/cuda-$p.jsonl" \
        --metrics "$work/metrics/parity_${fam}_cuda_$p.json"
    done
    step "parity_${fam}_hf" 240 "${py[@]}" tools/gpu/hf_parity.py --model "$model" --input "$data/parity.jsonl" \
      --out-dir "$pred/$fam" --precisions fp32 --device cuda
    step "parity_${fam}_compare" 60 "${py[@]}" tools/gpu/compare_predictions.py --results "$results" \
      --pair "$fam cuda-fp32 vs cpu-fp32=$pred/$fam/cuda-fp32.jsonl,$pred/$fam/cpu-fp32.jsonl,fp32" \
      --pair "$fam cuda-fp32 vs hf-fp32=$pred/$fam/cuda-fp32.jsonl,$pred/$fam/hf-fp32.jsonl,fp32" \
      --pair "$fam hf-fp32 vs cpu-fp32=$pred/$fam/hf-fp32.jsonl,$pred/$fam/cpu-fp32.jsonl,fp32" \
      --pair "$fam cuda-bf16 vs hf-fp32=$pred/$fam/cuda-bf16.jsonl,$pred/$fam/hf-fp32.jsonl,low"
    ours "e2e_${fam}_bf16" 150 "$data/seed.parquet" bf16 "infercost bf16 $fam, tokens batching, $auto_note" \
      "$seed_rows rows" "${auto[@]}"
  done
  model=$base_model

  # --- l. embeddings: the same engine pooling the encoder's token vectors (no head)
  local e
  step embed_cpu_fp32 150 "${ic[@]}" "$bin/infercost" embed "$data/parity.jsonl" --model "$model" \
    --pooling mean --normalize --device cpu --precision fp32 --no-text -o "$pred/embed-cpu-fp32.jsonl" \
    --metrics "$work/metrics/embed_cpu_fp32.json"
  for e in fp32 bf16; do
    step "embed_cuda_$e" 90 "${ic[@]}" "$bin/infercost" embed "$data/parity.jsonl" --model "$model" \
      --pooling mean --normalize --device cuda --precision "$e" --no-text -o "$pred/embed-cuda-$e.jsonl" \
      --metrics "$work/metrics/embed_cuda_$e.json"
  done
  step embed_compare 60 "${py[@]}" tools/gpu/compare_vectors.py --results "$results" \
    --pair "embed cuda-fp32 vs cpu-fp32=$pred/embed-cuda-fp32.jsonl,$pred/embed-cpu-fp32.jsonl,fp32" \
    --pair "embed cuda-bf16 vs cpu-fp32=$pred/embed-cuda-bf16.jsonl,$pred/embed-cpu-fp32.jsonl,low"
  config e2e_embed_bf16 ours "infercost embed bf16 (mean pooling), $auto_note" "metrics/e2e_embed_bf16.json" \
    "$seed_rows rows"
  step e2e_embed_bf16 150 "${ic[@]}" "$bin/infercost" embed "$data/seed.parquet" --model "$model" \
    --pooling mean --normalize --device cuda --precision bf16 --no-text -o "$pred/e2e_embed_bf16.parquet" \
    --metrics "$work/metrics/e2e_embed_bf16.json" "${auto[@]}"

  # --- k. the table, last
  echo "=== table"
  local table_rc=0
  "$python" tools/gpu/gpu_table.py --work "$work" --out-md "$OUT/gpu-check.md" || table_rc=$?
  [ "$table_rc" -le 1 ] || echo "gpu-check: the table could not be made (tools/gpu/gpu_table.py exit $table_rc)"
  cp "$results" "$OUT/results.jsonl" 2>/dev/null
  local details=(logs metrics results.jsonl configs.jsonl)
  for f in devices.json bin/MANIFEST; do [ -f "$work/$f" ] && details+=("$f"); done
  tar -C "$work" -czf "$OUT/details.tar.gz" "${details[@]}" 2>/dev/null
  echo "gpu-check: done in $(($(date +%s) - start_s))s; results in $OUT (gpu-check.md, gpu-check.log, results.jsonl, details.tar.gz)"
  return "$table_rc"
}

main 2>&1 | tee "$OUT/gpu-check.log"
exit "${PIPESTATUS[0]}"
