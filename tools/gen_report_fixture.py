#!/usr/bin/env python3
"""Writes the fixed benchmark records the `infercost report` tests read.

    python3 tools/gen_report_fixture.py > tests/data_files/report/records.jsonl

The records follow the schema of src/record/record.h
(infercost.bench/1, keys in the order record::to_json_line writes them). They
are made up but shaped like the 2021 study: three machines of the seed-2021
price list (p3.8xlarge, p3dn.24xlarge, c5.12xlarge) at the study's batch
sizes (40 and 70 rows per GPU, 100 per vCPU) and a few more, the precisions
the backends produce (fp32, bf16 and int8) and both batching policies, two
data sets (json-3 and parquet), GPU memory monitoring of the GPU points (33%
vs 17% at 40 rows per GPU, as the study saw; monitor.gpus only on cuda
points, as infercost bench writes it), one failed point (out of memory), one
point run with the synthetic model and an unpriced "laptop". Model loading is
stage "load", outside the wall time as in real records. Deterministic: no
clock, no randomness.
"""
import hashlib
import json
import sys

GIB = 1024**3

PRICES = {  # seed-2021, the study's published table
    "p3.8xlarge": dict(usd=1.66, gpus=4, gpu="V100", vcpus=32),
    "p3dn.24xlarge": dict(usd=4.233, gpus=8, gpu="V100", vcpus=96),
    "c5.12xlarge": dict(usd=0.728, gpus=0, gpu="", vcpus=48),
}

HARDWARE = {
    "p3.8xlarge": dict(cpu="Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz", cpus=32, isa="avx2", mem=244,
                       gpus=4, gpu_name="Tesla V100-SXM2-16GB", gpu_gib=16),
    "p3dn.24xlarge": dict(cpu="Intel(R) Xeon(R) Platinum 8175M CPU @ 2.50GHz", cpus=96, isa="avx512", mem=768,
                          gpus=8, gpu_name="Tesla V100-SXM2-32GB", gpu_gib=32),
    "c5.12xlarge": dict(cpu="Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz", cpus=48, isa="avx512_vnni",
                        mem=96, gpus=0),
    "laptop": dict(cpu="AMD Ryzen 7 PRO 5850U with Radeon Graphics", cpus=16, isa="avx2", mem=32, gpus=0),
}

DATA = {
    "json-3": dict(inputs=["tweets-1.json", "tweets-2.json", "tweets-3.json"], files=3, bytes=9_450_000,
                   rows=30_000, tokens=840_000, longest=128,
                   counts=[0, 2_400, 7_900, 12_300, 6_600, 800, 0, 0]),
    "parquet": dict(inputs=["tweets.parquet"], files=1, bytes=21_800_000, rows=120_000, tokens=3_360_000,
                    longest=128, counts=[0, 9_600, 31_600, 49_200, 26_400, 3_200, 0, 0]),
}
EDGES = [1, 9, 17, 33, 65, 129, 257, 513]

REAL_MODEL = dict(name="distilbert-base-uncased-finetuned-sst-2-english", synthetic=False)
SYNTHETIC_MODEL = dict(name="synthetic-distilbert-base", synthetic=True)

# machine, device, precision, batching, shape, batch size, rule, threads,
# wall seconds per repetition (None: failed), GPU memory peak / mean share,
# GPU utilization, host peak RSS GiB, model
POINTS = [
    ("p3.8xlarge", "cuda:all", "fp32", "seed", "json-3", 160, "40xgpus", 0, [41.8, 42.3, 43.1], 0.33, 0.25, 0.62, 5.1, REAL_MODEL),
    ("p3.8xlarge", "cuda:all", "fp32", "seed", "json-3", 280, "70xgpus", 0, [37.2, 37.9, 38.4], 0.57, 0.44, 0.81, 5.4, REAL_MODEL),
    ("p3.8xlarge", "cuda:all", "bf16", "tokens", "json-3", 160, "40xgpus", 0, [13.9, 14.2, 14.6], 0.14, 0.10, 0.55, 4.2, REAL_MODEL),
    ("p3.8xlarge", "cuda:all", "bf16", "tokens", "json-3", 280, "70xgpus", 0, [12.1, 12.4, 12.9], 0.22, 0.16, 0.68, 4.4, REAL_MODEL),
    ("p3.8xlarge", "cuda:all", "fp32", "seed", "parquet", 280, "70xgpus", 0, [148.0, 150.2, 151.9], 0.57, 0.45, 0.82, 9.8, REAL_MODEL),
    ("p3dn.24xlarge", "cuda:all", "fp32", "seed", "json-3", 320, "40xgpus", 0, [46.5, 47.2, 48.9], 0.17, 0.12, 0.34, 6.0, REAL_MODEL),
    ("p3dn.24xlarge", "cuda:all", "fp32", "seed", "json-3", 560, "70xgpus", 0, [29.4, 30.1, 30.8], 0.30, 0.23, 0.71, 6.3, REAL_MODEL),
    ("p3dn.24xlarge", "cuda:all", "bf16", "tokens", "json-3", 560, "70xgpus", 0, [7.9, 8.1, 8.4], 0.16, 0.11, 0.52, 5.0, REAL_MODEL),
    ("p3dn.24xlarge", "cuda:all", "fp32", "seed", "json-3", 2240, "", 0, None, 0, 0, 0, 0, REAL_MODEL),
    ("p3dn.24xlarge", "cuda:all", "fp32", "seed", "parquet", 560, "70xgpus", 0, [116.3, 118.0, 119.4], 0.30, 0.24, 0.73, 11.2, REAL_MODEL),
    ("c5.12xlarge", "cpu", "fp32", "seed", "json-3", 4800, "100xvcpus", 48, [252.0, 255.5, 261.0], 0, 0, 0, 14.2, REAL_MODEL),
    ("c5.12xlarge", "cpu", "fp32", "seed", "json-3", 480, "", 48, [231.0, 233.4, 236.8], 0, 0, 0, 3.1, REAL_MODEL),
    ("c5.12xlarge", "cpu", "int8", "tokens", "json-3", 480, "", 48, [19.6, 20.1, 20.7], 0, 0, 0, 1.9, SYNTHETIC_MODEL),
    ("laptop", "cpu", "fp32", "tokens", "json-3", 32, "", 8, [905.0, 912.0, 920.0], 0, 0, 0, 1.2, REAL_MODEL),
    ("laptop", "cpu", "fp32", "tokens", "json-3", 128, "", 8, [861.0, 866.5, 874.0], 0, 0, 0, 1.6, REAL_MODEL),
]

OOM = "CUDA out of memory: tried to allocate 18.4 GiB on cuda:3 (31.7 GiB total, 14.2 GiB free)"


def spread(values):
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"median": r(median), "min": r(v[0]), "max": r(v[-1])}


def r(x, digits=6):
    return float(f"{x:.{digits}g}")


def record(index, point):
    (machine, device, precision, batching, shape, batch, rule, threads, walls, gpu_peak, gpu_mean, gpu_util,
     rss_gib, model) = point
    data = DATA[shape]
    hw = HARDWARE[machine]
    failed = walls is None
    priced = machine in PRICES
    sweep = "sweep-" + machine
    rows, tokens = data["rows"], data["tokens"]
    if batching == "seed":
        padded = rows * data["longest"]
    else:
        padded = int(tokens * 1.08)
    computed = padded
    argv_run = ["infercost", "run", *data["inputs"], "--model", "model", "--device", device, "--precision",
                precision, "--batching", batching, "--batch-size", str(batch)]
    j = {
        "schema": "infercost.bench/1",
        "sweep_id": sweep,
        "point": index,
        "points": len(POINTS),
        "started_at": f"2026-11-{20 + list(HARDWARE).index(machine):02d}T09:{index:02d}:00Z",
        "label": "laptop" if machine == "laptop" else "",
        "command": ["infercost", "bench", *data["inputs"], "--model", "model", "--out", "results.jsonl"],
        "run_command": argv_run,
        "status": "failed" if failed else "ok",
    }
    if failed:
        j["error"] = OOM
    j["config"] = {"device": device, "precision": precision, "batching": batching, "batch_size": batch,
                   "batch_size_rule": rule, "max_batch_tokens": 0 if batching == "seed" else 16384,
                   "threads": threads, "tokenizer_threads": 2, "max_length": 512}
    if priced:
        p = PRICES[machine]
        j["instance"] = {"name": machine, "price_list": "seed-2021",
                         "price_source": "the hourly prices published in \"Are GPUs Really Expensive? Benchmarking GPUs for Inference on Databricks Clusters\", Databricks engineering blog, 2021-12-15, https://www.databricks.com/blog/2021/12/15/are-gpus-really-expensive-benchmarking-gpus-for-inference-on-the-databricks-clusters.html",
                         "price_date": "2021", "on_demand_usd_per_hour": p["usd"], "spot_discount": 0.0,
                         "platform_usd_per_hour": 0.0, "machines": 1, "usd_per_hour": p["usd"],
                         "gpus": p["gpus"], "gpu": p["gpu"], "vcpus": p["vcpus"]}
    else:
        j["instance"] = None
    gpus = [{"index": g, "name": hw["gpu_name"], "memory_bytes": hw["gpu_gib"] * GIB, "compute_capability": "7.0",
             "driver": "535.183.01"} for g in range(hw["gpus"])]
    j["hardware"] = {"hostname": f"ip-10-0-0-{list(HARDWARE).index(machine) + 11}" if priced else "laptop",
                     "cpu_model": hw["cpu"], "logical_cpus": hw["cpus"], "isa": hw["isa"],
                     "memory_bytes": hw["mem"] * GIB, "gpus": gpus}
    j["software"] = {"infercost": "0.1.0", "git": "d14e2af", "compiler": "GCC 12.2.0", "onednn": "3.5.3",
                     "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-27-cloud-amd64"}
    j["model"] = {"name": model["name"], "architecture": "distilbert", "synthetic": model["synthetic"],
                  "parameters": 66955010, "layers": 6, "hidden": 768, "heads": 12, "intermediate": 3072,
                  "vocab": 30522}
    j["data"] = {"shape": shape, "inputs": data["inputs"], "files": data["files"], "bytes": data["bytes"],
                 "rows": rows, "tokens": tokens, "length_edges": EDGES, "length_counts": data["counts"],
                 "content_sha256": hashlib.sha256(f"infercost report fixture {shape}".encode()).hexdigest()}
    j["warmup"] = 1
    j["min_repetitions"] = 3
    j["min_seconds"] = 0.0
    reps = []
    if not failed:
        for k, w in enumerate(walls):
            reps.append({"wall_seconds": w, "rows_per_second": r(rows / w), "tokens_per_second": r(tokens / w),
                         "peak_rss_bytes": int((rss_gib - 0.05 * (2 - k)) * GIB),
                         "stages": {"infer": r(w * 0.93), "load": 0.8, "read": r(w * 0.01),
                                    "tokenize": r(w * 0.04), "write": r(w * 0.01)}})
    j["repetitions"] = reps
    walls = walls or [0.0]
    j["wall_seconds"] = spread(walls) if not failed else {"median": 0.0, "min": 0.0, "max": 0.0}
    j["rows_per_second"] = spread([rows / w for w in walls]) if not failed else {"median": 0.0, "min": 0.0, "max": 0.0}
    j["tokens_per_second"] = spread([tokens / w for w in walls]) if not failed else {"median": 0.0, "min": 0.0,
                                                                                      "max": 0.0}
    j["rows"] = 0 if failed else rows
    j["tokens"] = 0 if failed else tokens
    j["padded_tokens"] = 0 if failed else padded
    j["computed_tokens"] = 0 if failed else computed
    j["padding_efficiency"] = 0.0 if failed else r(tokens / computed)
    j["batch_fill"] = 0.0 if failed else r(tokens / padded)
    med = spread(walls)["median"]
    j["stages"] = {} if failed else {"infer": r(med * 0.93), "load": 0.8, "read": r(med * 0.01),
                                     "tokenize": r(med * 0.04), "write": r(med * 0.01)}
    j["peak_rss_bytes"] = int(rss_gib * GIB)
    gpu_usage = []
    if not failed:
        for g in range(hw["gpus"] if device.startswith("cuda") else 0):
            total = hw["gpu_gib"] * GIB
            wobble = (g % 3 - 1) * 0.01  # GPUs differ a little
            gpu_usage.append({"index": g, "memory_total_bytes": total,
                              "memory_used_peak_bytes": int(total * (gpu_peak + wobble)),
                              "memory_used_mean_bytes": float(int(total * (gpu_mean + wobble))),
                              "utilization_mean": r(gpu_util), "utilization_peak": r(min(1.0, gpu_util + 0.2))})
    j["monitor"] = {"interval_seconds": 0.5, "samples": 0 if failed else int(sum(walls) / 0.5),
                    "cpu_busy_mean": 0.0 if failed else (hw["cpus"] * 0.8 if device == "cpu" else 1.1),
                    "cpu_busy_peak": 0.0 if failed else (hw["cpus"] * 0.95 if device == "cpu" else 1.6),
                    "rss_mean_bytes": float(int(rss_gib * 0.8 * GIB)), "rss_peak_bytes": int(rss_gib * GIB),
                    "gpus": gpu_usage}
    if priced and not failed:
        usd = PRICES[machine]["usd"]
        j["cost"] = {"usd_per_hour": usd, "cost_to_solution_usd": r(med / 3600 * usd),
                     "usd_per_million_rows": r(1e6 / (rows / med) * usd / 3600),
                     "usd_per_million_tokens": r(1e6 / (tokens / med) * usd / 3600), "corpus_rows": rows,
                     "corpus_seconds": med, "corpus_usd": r(med / 3600 * usd)}
    else:
        j["cost"] = None
    return j


def main():
    out = sys.stdout
    for i, point in enumerate(POINTS, start=1):
        out.write(json.dumps(record(i, point), separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
