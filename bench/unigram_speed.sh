#!/usr/bin/env bash
# Single-threaded XLM-R (SentencePiece Unigram) tokenization: ours vs HF
# tokenizers' Tokenizer.encode, same texts, same run.
#
#   bench/unigram_speed.sh [REPEAT]        (default 10)
#
# Texts: the 10,030 "default" texts of tests/data_files/tokenizer/
# unigram_golden.jsonl (tweet-like, many scripts, emoji, URLs; 30 past 512
# tokens), REPEAT times, written to $WORK. Each side loads the tokenizer.json
# (load time reported), warms up one pass, then times PASSES passes; the
# median pass gives tokens/s. The id checksums must agree.
#
# Environment: BUILD (default build; needs bench/unigram_speed_bench),
# PYTHON (with tokenizers; default /work/oracle/bin/python if present, else
# python3), TOKENIZER (default ../shared/data/xlm-roberta/tokenizer.json),
# PASSES (default 5), WORK (default /tmp/infercost-unigram-bench).
set -euo pipefail

REPEAT=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
if [[ -z ${PYTHON:-} ]]; then
  if [[ -x /work/oracle/bin/python ]]; then PYTHON=/work/oracle/bin/python; else PYTHON=python3; fi
fi
TOKENIZER=${TOKENIZER:-$ROOT/../shared/data/xlm-roberta/tokenizer.json}
PASSES=${PASSES:-5}
WORK=${WORK:-/tmp/infercost-unigram-bench}
BENCH=$BUILD/bench/unigram_speed_bench
if [[ ! -x $BENCH ]]; then
  echo "missing $BENCH: cmake --build $BUILD --target unigram_speed_bench" >&2
  exit 1
fi
mkdir -p "$WORK"
TEXTS=$WORK/texts_x$REPEAT.txt
"$PYTHON" - "$ROOT/tests/data_files/tokenizer/unigram_golden.jsonl" "$REPEAT" "$TEXTS" <<'PY'
import json, sys
src, repeat, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
texts = [r["t"] for r in map(json.loads, open(src, encoding="utf-8")) if r["v"] == "default"]
with open(out, "w", encoding="utf-8") as f:
    for _ in range(repeat):
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
PY
ours=$("$BENCH" --tokenizer "$TOKENIZER" --texts "$TEXTS" --passes "$PASSES")
hf=$(TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1 \
  "$PYTHON" "$ROOT/bench/peers/hf_unigram_speed.py" --tokenizer "$TOKENIZER" --texts "$TEXTS" --passes "$PASSES")
echo "$ours"
echo "$hf"
"$PYTHON" - "$ours" "$hf" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"| impl | load s | texts | tokens/pass | tokens/s | texts/s |")
print(f"|---|---|---|---|---|---|")
for r in (a, b):
    print(f"| {r['impl']} | {r['load_s']:.3f} | {r['texts']} | {r['tokens']} | {r['tokens_per_s']:,.0f} | {r['texts_per_s']:,.0f} |")
print(f"speed ratio ours/HF: {a['tokens_per_s'] / b['tokens_per_s']:.2f}x; "
      f"ids {'agree' if (a['tokens'], a['checksum']) == (b['tokens'], b['checksum']) else 'DIFFER'}")
if (a["tokens"], a["checksum"]) != (b["tokens"], b["checksum"]):
    sys.exit(1)
PY
