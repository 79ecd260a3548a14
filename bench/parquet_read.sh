#!/usr/bin/env bash
# Single-threaded read of one text column: our ColumnReader vs pyarrow.
#
#   bench/parquet_read.sh [ROWS]          (default 2,000,000)
#
# 1. Makes a synthetic tweet file of ROWS rows (texts from `infercost datagen
#    --shape jsonl`, or a Python stand-in when no infercost binary is found),
#    written by pyarrow with snappy and otherwise default settings; cached in
#    $WORK (default /tmp/infercost-parquet-bench).
# 2. Times, best of 3, each in a fresh process that reports its peak RSS:
#    parquet_read_bench (ColumnReader, batches of 4096 rows), pyarrow
#    ParquetFile.read(columns=[...], use_threads=False) and pyarrow
#    iter_batches(batch_size=4096, use_threads=False) (bounded memory).
# 3. Prints one table, with our time over pyarrow's.
#
# Environment: BUILD (build folder with bench/parquet_read_bench and
# infercost; default build), INFERCOST_BIN, PYTHON (default python3),
# COLUMN (default full_text), WORK.
set -euo pipefail

ROWS=${1:-2000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-python3}
COLUMN=${COLUMN:-full_text}
WORK=${WORK:-/tmp/infercost-parquet-bench}
BENCH=$BUILD/bench/parquet_read_bench
INFERCOST_BIN=${INFERCOST_BIN:-$BUILD/infercost}
mkdir -p "$WORK"

if [[ ! -x $BENCH ]]; then
  echo "missing $BENCH: cmake --build $BUILD --target parquet_read_bench" >&2
  exit 1
fi

PARQUET=$WORK/tweets_${ROWS}.parquet
if [[ ! -s $PARQUET ]]; then
  JSONL=$WORK/tweets_${ROWS}.jsonl
  if [[ -x $INFERCOST_BIN ]] && "$INFERCOST_BIN" datagen --rows "$ROWS" --out "$JSONL" --shape jsonl; then
    SOURCE="infercost datagen"
  else
    echo "no working $INFERCOST_BIN: generating texts in Python instead" >&2
    SOURCE="python"
    JSONL=""
  fi
  "$PYTHON" - "$ROWS" "$PARQUET" "$JSONL" <<'EOF'
import json, random, sys
import pyarrow as pa, pyarrow.parquet as pq
rows, out, jsonl = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ids, texts = [], []
if jsonl:
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            ids.append(rec["id"])
            texts.append(rec["full_text"])
else:
    rng = random.Random(1)
    words = ["the", "a", "model", "inference", "batch", "#nlp", "@someone", "https://t.co/x1Y2z3", "café",
             "日本語", "😀", "great", "slow", "fast", "tokenizer", "parquet", "é", "really", "why", "ok"]
    for i in range(rows):
        ids.append(i)
        texts.append(" ".join(rng.choice(words) for _ in range(1 + int(rng.random() ** 2 * 60))))
table = pa.table({"id": pa.array(ids, pa.int64()), "full_text": pa.array(texts, pa.string())})
pq.write_table(table, out + ".tmp", compression="snappy")
import os; os.replace(out + ".tmp", out)
EOF
  [[ -n ${JSONL:-} ]] && rm -f "$JSONL"
  echo "wrote $PARQUET from $SOURCE texts" >&2
fi

PYBENCH=$WORK/pyarrow_read.py
cat >"$PYBENCH" <<'EOF'
import json, os, resource, struct, sys, time
import pyarrow as pa, pyarrow.parquet as pq
path, column, mode = sys.argv[1], sys.argv[2], sys.argv[3]
pa.set_cpu_count(1)
pa.set_io_thread_count(1)


def value_bytes(c):  # the string bytes an array's offsets span (8 per value otherwise)
    if c.type not in (pa.string(), pa.binary()):
        return 8 * len(c)
    offs = c.buffers()[1]
    return (struct.unpack_from("<i", offs, (c.offset + len(c)) * 4)[0] -
            struct.unpack_from("<i", offs, c.offset * 4)[0])


cpu_start = time.process_time()
start = time.perf_counter()
pf = pq.ParquetFile(path)
rows = text_bytes = 0
if mode == "read":
    col = pf.read(columns=[column], use_threads=False).column(0)
    rows = len(col)
    text_bytes = sum(value_bytes(c) for c in col.chunks)
else:
    for b in pf.iter_batches(batch_size=4096, columns=[column], use_threads=False):
        rows += b.num_rows
        text_bytes += value_bytes(b.column(0))
seconds = time.perf_counter() - start
cpu_seconds = time.process_time() - cpu_start
print(json.dumps({"reader": "pyarrow " + mode, "seconds": seconds, "cpu_seconds": cpu_seconds, "rows": rows,
                  "file_bytes": os.path.getsize(path), "text_bytes": text_bytes,
                  "mb_per_s": text_bytes / 1e6 / seconds, "rows_per_s": rows / seconds,
                  "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
EOF

best_of_3() {  # prints the JSON line with the smallest "seconds"
  local best="" line
  for _ in 1 2 3; do
    line=$("$@")
    best=$(printf '%s\n%s\n' "$best" "$line" | "$PYTHON" -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps(min(runs, key=lambda r: r["seconds"])))')
  done
  echo "$best"
}

OURS=$(best_of_3 "$BENCH" "$PARQUET" --column "$COLUMN" --batch 4096)
PA_READ=$(best_of_3 "$PYTHON" "$PYBENCH" "$PARQUET" "$COLUMN" read)
PA_ITER=$(best_of_3 "$PYTHON" "$PYBENCH" "$PARQUET" "$COLUMN" iter)

"$PYTHON" - "$PARQUET" "$OURS" "$PA_READ" "$PA_ITER" <<'EOF'
import json, os, sys
path = sys.argv[1]
ours, pa_read, pa_iter = (json.loads(a) for a in sys.argv[2:5])
print("file: %s (%.1f MB, %d rows, %.1f MB of text)" % (path, os.path.getsize(path) / 1e6, ours["rows"],
                                                         ours["text_bytes"] / 1e6))
for r in (pa_read, pa_iter):
    if r["rows"] != ours["rows"] or r["text_bytes"] != ours["text_bytes"]:
        print("WARNING: %s saw %d rows / %d bytes, ours %d / %d" % (r["reader"], r["rows"], r["text_bytes"],
                                                                   ours["rows"], ours["text_bytes"]))
print("| reader (single thread, best of 3) | seconds | CPU s | MB/s (text) | rows/s | peak RSS MB | ours / this |")
print("|---|---|---|---|---|---|---|")
for r in (ours, pa_read, pa_iter):
    print("| %s | %.3f | %.3f | %.0f | %.0f | %.0f | %s |" % (
        r["reader"] + (" ColumnReader" if r is ours else ""), r["seconds"], r["cpu_seconds"], r["mb_per_s"],
        r["rows_per_s"], r["peak_rss"] / 1e6, "-" if r is ours else "%.2fx" % (ours["seconds"] / r["seconds"])))
print("ours: peak_buffer_bytes %.1f MB" % (ours["peak_buffer_bytes"] / 1e6))
ratio = ours["seconds"] / min(pa_read["seconds"], pa_iter["seconds"])
print("goal (ours <= 1.5x pyarrow's faster mode): %s (%.2fx)" % ("met" if ratio <= 1.5 else "NOT met", ratio))
EOF
