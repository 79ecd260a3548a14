#!/usr/bin/env bash
# The same corpus and model through `infercost run`, the Python package and Spark local[N], and the
# study's method on Spark beside them: rows/s of each and the ratio to the CLI (issue 14's benchmark;
# not a test: record what it prints in bench/RESULTS.md).
#
#   bench/spark_compare.sh [--rows N] [--preset P] [--model DIR] [--cores N] [--study-rows N]
#                          [--max-length L] [--work DIR] [--no-study]
#
#   --rows N        synthetic tweets (`infercost datagen --rows N --shape parquet`, seed 1); default 20000
#   --preset P      `infercost model synth --preset P`; default distilbert-base
#   --model DIR     use this HF model directory instead of a synthetic one
#   --cores N       Spark local[N] and the CLI's / package's threads; default 2
#   --study-rows N  the study's method runs on the first N rows only (it is many times slower); default 2000
#   --max-length L  truncation for every run; default 512 (the study's)
#   --work DIR      corpus, model and outputs; default /tmp/infercost-spark-compare
#   --no-study      skip the study's method (it needs build/peers-venv: torch, transformers)
#
# Runs, one after another, fp32 everywhere (the study's precision):
#   cli        infercost run CORPUS --threads N --precision fp32 --metrics (rows/s over its wall time)
#   package    spark_compare.py package: infercost.Model(threads=N).classify(the column), one call
#   spark-c1   spark_compare.py spark: local[N], spark.task.cpus=1 (N tasks of 1 thread each)
#   spark-cN   spark_compare.py spark: local[N], spark.task.cpus=N (one task of N threads)
#   study-c1   spark_compare.py study: their PyTorch loop in a pandas UDF, local[N], spark.task.cpus=1
# Spark's times exclude the JVM start and a warm-up job that loads the model in each worker (both
# printed). Goal (issue 14): package within 3% of the CLI's rows/s, Spark within 10%.
#
# Environment: INFERCOST_BIN (default build/infercost), PYENV (default build/pyenv-spark: pyspark, pyarrow,
# with the package importable from build/python), PEERS_VENV (bench/peers/setup.sh's venv, into which
# this script adds pyspark and py4j at scripts/spark-requirements.txt's pins).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=20000
PRESET=distilbert-base
MODEL=""
CORES=2
STUDY_ROWS=2000
MAX_LENGTH=512
WORK=/tmp/infercost-spark-compare
STUDY=1
while (($#)); do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --cores) CORES=$2; shift 2 ;;
    --study-rows) STUDY_ROWS=$2; shift 2 ;;
    --max-length) MAX_LENGTH=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --no-study) STUDY=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "spark_compare: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

BIN=${INFERCOST_BIN:-$ROOT/build/infercost}
PYENV=${PYENV:-$ROOT/build/pyenv-spark}
PY=$PYENV/bin/python
if [[ ! -x $BIN ]]; then
  echo "spark_compare: no infercost binary at $BIN (make build, or set INFERCOST_BIN)" >&2
  exit 2
fi
if ! PYTHONPATH=$ROOT/build/python "$PY" -c 'import infercost, pyspark; infercost.Model' 2>/dev/null; then
  echo "spark_compare: $PY cannot import infercost (with Model) from build/python and pyspark" \
    "(make pyenv, make build)" >&2
  exit 2
fi
export PYTHONPATH=$ROOT/build/python${PYTHONPATH:+:$PYTHONPATH}
export SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=$PY PYSPARK_DRIVER_PYTHON=$PY TMPDIR=$WORK/tmp
# spark-submit's launcher JVM: no /tmp/hsperfdata_* either (the driver's options are in spark_compare.py).
export SPARK_LAUNCHER_OPTS=-XX:-UsePerfData
mkdir -p "$WORK/out" "$WORK/tmp"

CORPUS=$WORK/tweets_${ROWS}.parquet
[[ -s $CORPUS ]] || "$BIN" datagen --rows "$ROWS" --shape parquet --out "$CORPUS" --seed 1 --quiet
if [[ -z $MODEL ]]; then
  MODEL=$WORK/model-$PRESET
  [[ -s $MODEL/model.safetensors ]] || "$BIN" model synth --preset "$PRESET" --out "$MODEL" >&2
fi

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc --all) vCPUs), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "== corpus $CORPUS ($ROWS rows), model $MODEL, $CORES cores, max length $MAX_LENGTH" >&2

RESULTS=$WORK/out/results.jsonl
: >"$RESULTS"
record() { # NAME JSON: one line of results.jsonl
  printf '{"name": "%s", "point": %s}\n' "$1" "$2" >>"$RESULTS"
}

echo "== cli: infercost run --threads $CORES --precision fp32" >&2
"$BIN" run "$CORPUS" --model "$MODEL" --output "$WORK/out/cli.parquet" --metrics "$WORK/out/cli.json" \
  --threads "$CORES" --precision fp32 --max-length "$MAX_LENGTH" --quiet --force
record cli "$(tr -d '\n' <"$WORK/out/cli.json")"  # one line: results.jsonl is JSON lines

echo "== package: Model(threads=$CORES).classify" >&2
record package "$("$PY" "$ROOT/bench/spark_compare.py" package "$CORPUS" --model "$MODEL" --threads "$CORES" \
  --max-length "$MAX_LENGTH")"

for cpus in 1 "$CORES"; do
  echo "== spark-c$cpus: local[$CORES], spark.task.cpus=$cpus" >&2
  record "spark-c$cpus" "$("$PY" "$ROOT/bench/spark_compare.py" spark "$CORPUS" --model "$MODEL" \
    --task-cpus "$cpus" --cores "$CORES" --max-length "$MAX_LENGTH" --work "$WORK/tmp")"
  [[ $cpus == "$CORES" ]] && break
done

if ((STUDY)); then
  PEERS_PY=$("$ROOT/bench/peers/setup.sh")
  "$PEERS_PY" -m pip install -q --disable-pip-version-check \
    "$(grep '^pyspark==' "$ROOT/scripts/spark-requirements.txt")" "$(grep '^py4j==' "$ROOT/scripts/spark-requirements.txt")"
  STUDY_CORPUS=$WORK/tweets_${ROWS}_first${STUDY_ROWS}.parquet
  [[ -s $STUDY_CORPUS ]] || "$BIN" datagen --rows "$STUDY_ROWS" --shape parquet --out "$STUDY_CORPUS" --seed 1 --quiet
  echo "== study-c1: the study's PyTorch loop in a pandas UDF, local[$CORES], first $STUDY_ROWS rows" >&2
  record study-c1 "$(PYSPARK_PYTHON=$PEERS_PY PYSPARK_DRIVER_PYTHON=$PEERS_PY "$PEERS_PY" \
    "$ROOT/bench/spark_compare.py" study "$STUDY_CORPUS" --model "$MODEL" --task-cpus 1 --cores "$CORES" \
    --max-length "$MAX_LENGTH" --work "$WORK/tmp")"
fi

# The table: rows/s and the ratio to the CLI's.
"$PY" - "$RESULTS" <<'PYEOF'
import json, sys

points = [json.loads(line) for line in open(sys.argv[1])]
def rate(p):
    q = p["point"]
    return q.get("rows_per_second") or q["rows"] / q["wall_seconds"]
cli = rate(points[0])
print("| run | rows | rows/s | / CLI | notes |")
print("|---|---:|---:|---:|---|")
for p in points:
    q = p["point"]
    notes = []
    if "start_seconds" in q:
        notes.append(f"JVM start {q['start_seconds']:.1f} s, warm-up {q['warmup_seconds']:.1f} s (excluded)")
    print(f"| {p['name']} | {q['rows']} | {rate(p):.1f} | {rate(p) / cli:.3f} | {'; '.join(notes)} |")
PYEOF
