#!/usr/bin/env bash
# Runs a fuzzer for SECONDS with its dictionary (fuzz/NAME.dict: the format's
# tokens and its nesting): the Parquet reader's seeded with every .parquet of
# parquet-testing (when ../shared/data is present) and of tests/data_files,
# the SentencePiece reader's (a BINARY named sentencepiece_*) with DeBERTa-v3's
# spm.model (when present) and nothing else, the JSON documents' (json_*) with
# the committed tiny models' config.json and tokenizer.json files.
# Exits non-zero when libFuzzer finds a crash, leak, timeout or OOM.
# Usage: fuzz/run.sh BINARY SECONDS
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BINARY SECONDS" >&2
  exit 2
fi
binary=$(realpath "$1")
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
shopt -s nullglob globstar
n=0
seeds=("$root"/../shared/data/parquet-testing/data/*.parquet "$root"/../shared/data/parquet-testing/bad_data/*.parquet
       "$root"/tests/data_files/parquet/**/*.parquet)
dict=$root/fuzz/parquet.dict
if [[ $(basename "$binary") == sentencepiece_* ]]; then
  seeds=("$root"/../shared/data/deberta-v3/*.model)
  dict=$root/fuzz/sentencepiece.dict
elif [[ $(basename "$binary") == json_* ]]; then
  seeds=("$root"/tests/data_files/golden/*/config.json "$root"/tests/data_files/tokenizer/*.json
         "$root"/tests/data_files/golden/*/tokenizer.json)
  dict=$root/fuzz/json.dict
fi
for f in "${seeds[@]}"; do
  # -max_len below keeps only the first 64 KiB of bigger seeds.
  cp "$f" "$work/corpus/seed$((n++))-$(basename "$f")"
done
name=$(basename "$binary")
echo "fuzz: $name: $n seed files, ${seconds}s"
status=0
# libFuzzer prints a line per new input; keep its log and show the end.
"$binary" "$work/corpus" -dict="$dict" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=25 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/log" 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  tail -n 120 "$work/log" >&2
  crashes="$(dirname "$binary")/crashes"
  mkdir -p "$crashes"
  cp "$work"/artifacts/* "$crashes/" 2>/dev/null || true
  echo "fuzz: $name: FAILED (exit $status); reproducers in $crashes/" >&2
  exit "$status"
fi
grep -E "^(stat::|Done)" "$work/log" | sed "s/^/fuzz: $name: /"
echo "fuzz: $name: no crash in ${seconds}s"
