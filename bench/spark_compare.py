#!/usr/bin/env python3
"""One point of bench/spark_compare.sh: classify a Parquet corpus one way, print a JSON line.

  spark_compare.py package CORPUS --model DIR --threads T
  spark_compare.py spark   CORPUS --model DIR --task-cpus C [--cores N] [--work DIR]
  spark_compare.py study   CORPUS --model DIR --task-cpus C [--cores N] [--work DIR] [--batch-size B]

  package  infercost.Model(DIR, threads=T).classify over the corpus's full_text column, read with
           pyarrow (one call: the engine batches the whole column).
  spark    Spark local[N] (default 2), spark.task.cpus=C: infercost.spark.classify, written as Parquet.
  study    the same session, the study's method as a pandas iterator UDF: transformers'
           AutoModelForSequenceClassification and AutoTokenizer in PyTorch eager fp32, each Arrow batch
           padded to its longest row, fixed batches of B rows (default 100 x C, the study's 100 x
           vCPUs), torch.set_num_threads(C); written as Parquet.

Timing: `seconds` is the classification alone: for `package` the classify call (the model loaded
before), for `spark` and `study` the job after a warm-up job that loaded the model in the workers
(the JVM start and the warm-up are reported apart, as start_seconds and warmup_seconds). Precision
fp32 for every point, as in the study. Not a test: a benchmark, run by bench/spark_compare.sh.
"""

import argparse
import json
import os
import shutil
import sys
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["package", "spark", "study"])
    ap.add_argument("corpus")
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--task-cpus", type=int, default=1)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=0)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp"))
    return ap.parse_args()


def package(args):
    import pyarrow.parquet as pq

    import infercost

    texts = pq.read_table(args.corpus, columns=["full_text"]).column("full_text")
    model = infercost.Model(args.model, threads=args.threads, precision="fp32", max_length=args.max_length)
    start = time.perf_counter()
    result = model.classify(texts)
    seconds = time.perf_counter() - start
    return {"rows": len(texts), "seconds": seconds, "threads": args.threads, "result_type": type(result).__name__}


def session(args):
    from pyspark.sql import SparkSession

    local = os.path.join(args.work, "spark-local")
    os.makedirs(local, exist_ok=True)
    start = time.perf_counter()
    spark = (
        SparkSession.builder.master(f"local[{args.cores}]")
        .config("spark.task.cpus", str(args.task_cpus))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", local)
        .config("spark.driver.memory", "2g")
        # No /tmp/hsperfdata_* and the JVM's temporary files under --work.
        .config("spark.driver.extraJavaOptions", f"-XX:-UsePerfData -Djava.io.tmpdir={local}")
        .getOrCreate()
    )
    return spark, time.perf_counter() - start


def study_udf(model_dir, batch_size, threads, max_length):
    from pyspark.sql.functions import pandas_udf

    def sentiment(batches):
        import numpy as np
        import pandas as pd
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch.set_num_threads(threads)
        tok = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
        labels = [model.config.id2label[i].lower() for i in range(model.config.num_labels)]
        for texts in batches:
            filled = texts.fillna("").tolist()
            enc = tok(filled, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            parts = []
            with torch.no_grad():
                for i in range(0, len(filled), batch_size):
                    logits = model(input_ids=enc["input_ids"][i:i + batch_size],
                                   attention_mask=enc["attention_mask"][i:i + batch_size]).logits
                    parts.append(torch.softmax(logits, dim=-1).numpy())
            p = np.concatenate(parts) if parts else np.zeros((0, len(labels)), np.float32)
            out = {name: p[:, j].astype("float32") for j, name in enumerate(labels)}
            out["label"] = [model.config.id2label[int(k)] for k in p.argmax(axis=1)]
            yield pd.DataFrame(out)

    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    id2label = config.get("id2label") or {"0": "LABEL_0", "1": "LABEL_1"}
    names = [id2label[str(i)].lower() for i in range(len(id2label))]
    schema = ", ".join(f"{n} float" for n in names) + ", label string"
    return pandas_udf(_typed(sentiment), schema)


def _typed(f):
    # pandas_udf picks the iterator form from the type hints.
    from typing import Iterator

    import pandas as pd

    f.__annotations__ = {"batches": Iterator[pd.Series], "return": Iterator[pd.DataFrame]}
    return f


def spark_job(args):
    spark, start_seconds = session(args)
    try:
        df = spark.read.parquet(args.corpus)
        out_dir = os.path.join(args.work, f"spark-out-{args.mode}-{args.task_cpus}")
        if args.mode == "spark":
            import infercost.spark

            def job(frame):
                return infercost.spark.classify(frame, "full_text", model=args.model, precision="fp32",
                                                max_length=args.max_length, keep=["id"])
        else:
            udf = study_udf(args.model, args.batch_size or 100 * args.task_cpus, args.task_cpus, args.max_length)

            def job(frame):
                return frame.withColumn("pred", udf("full_text")).select("id", "pred.*")

        # Warm-up: a small job with one partition per concurrent task loads the model in each worker.
        concurrent = max(1, args.cores // args.task_cpus)
        start = time.perf_counter()
        job(df.limit(64 * concurrent).repartition(concurrent)).write.mode("overwrite").parquet(out_dir)
        warmup = time.perf_counter() - start
        # The timed job: the corpus in one partition per concurrent task, so every task slot works
        # (a small file is read as one partition, which would leave task.cpus=1 runs on one core).
        start = time.perf_counter()
        job(df.repartition(concurrent)).write.mode("overwrite").parquet(out_dir)
        seconds = time.perf_counter() - start
        rows = spark.read.parquet(out_dir).count()
        shutil.rmtree(out_dir, ignore_errors=True)
        return {"rows": rows, "seconds": seconds, "start_seconds": start_seconds, "warmup_seconds": warmup,
                "task_cpus": args.task_cpus, "cores": args.cores}
    finally:
        spark.stop()


def main():
    args = parse()
    record = package(args) if args.mode == "package" else spark_job(args)
    record["mode"] = args.mode
    record["rows_per_second"] = record["rows"] / record["seconds"] if record["seconds"] > 0 else None
    print(json.dumps(record))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
