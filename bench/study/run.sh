#!/usr/bin/env bash
# Reproduces the 2021 study's Tests 1-3 and its CPU test on this machine, scaled to run in minutes,
# with the synthetic DistilBERT-base model, then writes the report (bench/study/README.md shows it).
#
#   bench/study/run.sh [--rows N] [--threads T] [--warmup N] [--reps N] [--corpus-rows N]
#                      [--work DIR] [--out DIR]
#
#   --rows N         rows per data shape (synthetic tweets, seed 1); default 200. The study's method
#                    pads every row to its file's longest row, so it runs ~18x slower than ours: 200
#                    rows keep the whole script near 6 minutes on 2 vCPUs (AVX-512).
#   --threads T      inference threads; default: every CPU this process may use
#   --warmup N       untimed runs per point; default 0 (each run is its own process, and the data
#                    files are read once per point anyway; raise it on a noisy machine)
#   --reps N         timed repetitions per point; default 3
#   --corpus-rows N  the report projects time to this many rows; default 1000000
#   --work DIR       model and generated data; default /tmp/infercost-study
#   --out DIR        records (records.jsonl) and the report; default bench/study/results
#
# The study's tests ("Are GPUs Really Expensive? Benchmarking GPUs for Inference on Databricks
# Clusters", Databricks engineering blog, 2021-12-15), and what runs here:
#   Test 1   3 JSON files          batch 40 x GPUs    here: --shape json-3     --batch-size 40 (40xgpus on a GPU)
#   Test 2   one large Parquet     batch 40 x GPUs    here: --shape parquet    --batch-size 40 (40xgpus)
#   Test 3   10 Parquet files      batch 70 x GPUs    here: --shape parquet-10 --batch-size 70 (70xgpus)
#   CPU test 3 JSON files          batch 100 x vCPUs  here: --shape json-3     --batch-size 100xvcpus
# Each point runs twice: --batching seed (the study's method: fixed batches in input order, every row
# padded to its file's longest row, padding computed) and --batching tokens (ours: length-sorted
# batches, no compute on padding). Both run in infercost's engine, so the difference is the batching
# alone; bench/cpu_compare.sh measures the study's actual PyTorch code against ours. Precision is
# fp32, as in the study.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${INFERCOST_BIN:-$ROOT/build/infercost}
ROWS=200
THREADS=0
WARMUP=0
REPS=3
CORPUS=1000000
WORK=/tmp/infercost-study
OUT=$ROOT/bench/study/results
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) ROWS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --corpus-rows) CORPUS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$B" ] || { echo "run.sh: $B not found; run 'make build' first" >&2; exit 2; }
B=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")  # the report step runs from $OUT
mkdir -p "$WORK" "$OUT"
[ -f "$WORK/model/config.json" ] || "$B" model synth --out "$WORK/model" --preset distilbert-base

DEVICE=cpu
GPU_RULE=""
# Where `infercost devices` lists GPUs and this build's CUDA backend is available, Tests 1-3 run on
# all the GPUs.
DEVICES=$("$B" devices 2>/dev/null || true)
if grep -q '^gpu ' <<<"$DEVICES" && grep -q '^backends .*cuda: available' <<<"$DEVICES"; then
  DEVICE=cuda:all; GPU_RULE=xgpus
fi
batch() { if [ -n "$GPU_RULE" ]; then echo "$1$GPU_RULE"; else echo "$1"; fi; }

RECORDS=$OUT/records.jsonl
rm -f "$RECORDS"
common=(--model "$WORK/model" --out "$RECORDS" --append --rows "$ROWS" --data-dir "$WORK/data"
        --batching seed,tokens --precision fp32 --threads "$THREADS" --warmup "$WARMUP" --repetitions "$REPS"
        --label this-machine)
echo "== Test 1: 3 JSON files, batch 40 per device" >&2
"$B" bench "${common[@]}" --device "$DEVICE" --shape json-3 --batch-size "$(batch 40)"
echo "== Test 2: one Parquet file, batch 40 per device" >&2
"$B" bench "${common[@]}" --device "$DEVICE" --shape parquet --batch-size "$(batch 40)"
echo "== Test 3: 10 Parquet files, batch 70 per device" >&2
"$B" bench "${common[@]}" --device "$DEVICE" --shape parquet-10 --batch-size "$(batch 70)"
echo "== CPU test: 3 JSON files, batch 100 x vCPUs" >&2
"$B" bench "${common[@]}" --device cpu --shape json-3 --batch-size 100xvcpus
(cd "$OUT" && "$B" report records.jsonl --out report --corpus-rows "$CORPUS" --title "The study's tests on this machine (synthetic DistilBERT-base, $ROWS rows per shape)")
echo "records: $RECORDS; report: $OUT/report/report.html and report.md" >&2
