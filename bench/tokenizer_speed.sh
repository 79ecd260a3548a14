#!/usr/bin/env bash
# Single-threaded byte-level BPE: our BpeTokenizer vs HF tokenizers
# (encode_batch with RAYON_NUM_THREADS=1), roberta-base's files, the same
# texts (the "default" texts of tests/data_files/tokenizer/bpe_golden.jsonl
# unless TEXTS is given), truncation 512, special tokens added. Prints the
# tokens/s of both and the ratio (ours / HF).
#
#   bench/tokenizer_speed.sh [REPS]      (default 5)
#
# Environment: BUILD (build folder with bench/tokenizer_speed_bench; default
# build), PYTHON (one with tokenizers and transformers; default python3),
# ROBERTA (folder with vocab.json and merges.txt; default ../shared/data/roberta),
# TEXTS (JSON lines with "t"). MODERNBERT=1: ModernBERT's tokenizer.json
# (../shared/data/modernbert) on tests/data_files/tokenizer/modernbert_golden.jsonl,
# truncation 8192, instead.
set -euo pipefail
REPS=${1:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-python3}
ROBERTA=${ROBERTA:-$ROOT/../shared/data/roberta}
TEXTS=${TEXTS:-$ROOT/tests/data_files/tokenizer/bpe_golden.jsonl}
if [ "${MODERNBERT:-0}" = 1 ]; then
  TEXTS=${TEXTS_MODERNBERT:-$ROOT/tests/data_files/tokenizer/modernbert_golden.jsonl}
  files=(--json "$ROOT/../shared/data/modernbert/tokenizer.json" 8192)
else
  files=("$ROBERTA/vocab.json" "$ROBERTA/merges.txt")
fi
ours=$("$BUILD/bench/tokenizer_speed_bench" "${files[@]}" "$TEXTS" "$REPS")
hf=$(RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false "$PYTHON" "$ROOT/bench/peers/hf_tokenizer_speed.py" \
  "${files[@]}" "$TEXTS" "$REPS")
echo "$ours"
echo "$hf"
rate() { sed -n 's/.*tokens_per_s=\([0-9]*\).*/\1/p' <<<"$1"; }
tok() { sed -n 's/.* tokens=\([0-9]*\).*/\1/p' <<<"$1"; }
if [ "$(tok "$ours")" != "$(tok "$hf")" ]; then echo "token counts differ: $(tok "$ours") vs $(tok "$hf")" >&2; exit 1; fi
awk -v a="$(rate "$ours")" -v b="$(rate "$hf")" 'BEGIN { printf "ratio ours/hf: %.2f\n", a / b }'
