#!/usr/bin/env python3
"""ONNX Runtime on the same model: the modern-usage peer `infercost run` is measured against.

  ort_method.py INPUT --model DIR --output FILE [--precision fp32|int8] [--threads N]
                [--batch-size N] [--batching sorted|input|file] [--cache DIR] [--metrics FILE]
  ort_method.py INPUT --model DIR --output FILE.npy --embed cls|mean|max [--normalize] ...

--embed POOLING is the embedding peer (bench/embed_compare.py runs it): the encoder alone is exported
(AutoModel, its last hidden state), the rows are pooled over their real tokens in numpy (the first
token, the mean or the maximum) and L2-normalized with --normalize; the vectors, float32 in input
order (a null text gives a row of NaN), are saved to FILE.npy. Everything else is as for a classifier.

The model directory is loaded with HF transformers (eager attention) and exported with the
TorchScript exporter, torch.onnx.export(..., dynamo=False) (dynamic batch and sequence axes, opset
14), then optimized with onnxruntime.transformers.optimizer (model_type 'bert', num_heads and hidden
size from config.json: 12 and 768 for DistilBERT-base), which fuses attention, LayerNorm, GELU and
the embeddings. Which export fuses depends on the versions: with the pinned ones
(bench/peers/requirements.txt: torch 2.15, transformers 5.24, onnxruntime 1.32) only this one
fuses attention; torch 2.15's default dynamo exporter (which needs onnxscript), and SDPA attention
with either exporter, leave attention unfused (bench/RESULTS.md has the cost). The optimizer's
fused-operator counts are logged, with a warning when attention was not fused. int8 is
onnxruntime.quantization.quantize_dynamic of the optimized fp32 graph (weights QInt8 by default, --weight-type quint8 for U8U8; activations quantized at run time). The exports are cached under --cache (default
build/peers-cache), keyed by the model directory's weights, and their cost is not in the timing.

Inference: an InferenceSession with intra_op_num_threads = --threads (inter-op 1, sequential,
all graph optimizations). Tokenizing is the same HF tokenizer, truncation at 512, no padding; then:
  --batching sorted (default): rows sorted by token length, batches of --batch-size rows padded to the
      batch's longest row, predictions put back in input order. This is the fair modern way to run ORT
      on a file, not the study's method; it is what we compare our engine with.
  --batching input: batches in input order, each padded to its own longest row.
  --batching file: every row padded to the file's longest row (the study's padding).
Prints one JSON line of metrics, like study_method.py; wall_seconds excludes model load and export.
"""

import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_common as pc  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# Bumped when the export changes, so a cached export of another method is not reused.
EXPORT_METHOD = "torchscript-eager-opset14"


def weights_key(model_dir, task):
    h = hashlib.sha256()
    h.update(EXPORT_METHOD.encode())
    h.update(task.encode())
    for name in ("config.json", "model.safetensors"):
        path = os.path.join(model_dir, name)
        st = os.stat(path)
        h.update(("%s:%d:%d;" % (name, st.st_size, st.st_mtime_ns)).encode())
        with open(path, "rb") as f:
            h.update(f.read(1 << 20))
    return h.hexdigest()[:16]


def exported_module(model_dir, task):
    """(module, output name): the classifier, or for task 'embed' the encoder's last hidden state."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification

    if task == "classify":
        return AutoModelForSequenceClassification.from_pretrained(model_dir, attn_implementation="eager"), "logits"

    class LastHiddenState(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return LastHiddenState(AutoModel.from_pretrained(model_dir, attn_implementation="eager")), "last_hidden_state"


def export_models(model_dir, cache_dir, config, log, weight_type="qint8", task="classify"):
    """Returns {'fp32': path, 'int8': path}, exporting / optimizing / quantizing only what is missing."""
    key = weights_key(model_dir, task)
    out = os.path.join(cache_dir, key)
    os.makedirs(out, exist_ok=True)
    raw, fp32, int8 = (os.path.join(out, n) for n in ("model.onnx", "model.opt.onnx",
                                                      "model.opt.int8-%s.onnx" % weight_type))
    if not os.path.exists(raw):
        import torch

        log("exporting %s to ONNX (%s, %s)" % (model_dir, EXPORT_METHOD, task))
        model, output = exported_module(model_dir, task)
        model.eval()
        ids = torch.ones((2, 16), dtype=torch.int64)
        mask = torch.ones((2, 16), dtype=torch.int64)
        tmp = raw + ".tmp"
        with torch.no_grad():
            torch.onnx.export(model, (ids, mask), tmp, input_names=["input_ids", "attention_mask"],
                              output_names=[output], opset_version=14, do_constant_folding=True,
                              dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                            "attention_mask": {0: "batch", 1: "sequence"},
                                            output: {0: "batch", 1: "sequence"} if task == "embed"
                                            else {0: "batch"}},
                              dynamo=False)
        os.replace(tmp, raw)
    if not os.path.exists(fp32):
        from onnxruntime.transformers import optimizer

        heads = config.get("n_heads", config.get("num_attention_heads"))
        hidden = config.get("dim", config.get("hidden_size"))
        log("optimizing (model_type bert, num_heads %d, hidden %d)" % (heads, hidden))
        opt = optimizer.optimize_model(raw, model_type="bert", num_heads=heads, hidden_size=hidden,
                                       use_gpu=False)
        stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
        log("fused operators: %s" % stats)
        if not stats.get("Attention"):
            log("WARNING: attention was not fused; ONNX Runtime will run the unfused graph")
        opt.save_model_to_file(fp32 + ".tmp")
        os.replace(fp32 + ".tmp", fp32)
    if not os.path.exists(int8):
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        log("quantizing (dynamic, weights %s)" % weight_type)
        # The fused contrib ops defeat ONNX shape inference; their outputs are float.
        quantize_dynamic(fp32, int8 + ".tmp.onnx", weight_type=QuantType.QInt8 if weight_type == "qint8" else QuantType.QUInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        os.replace(int8 + ".tmp.onnx", int8)
    return {"fp32": fp32, "int8": int8}


def pool(hidden, mask, mode, normalize):
    """hidden [rows, width, dims] and mask [rows, width] -> [rows, dims] over each row's real tokens."""
    import numpy as np

    if mode == "cls":
        vectors = hidden[:, 0, :]
    elif mode == "mean":
        m = mask[:, :, None].astype(np.float32)
        vectors = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
    else:
        vectors = np.where(mask[:, :, None] > 0, hidden, -np.inf).max(axis=1)
    if normalize:
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pc.add_common_args(ap)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "int8"])
    ap.add_argument("--weight-type", default="qint8", choices=["qint8", "quint8"],
                    help="int8 weights: qint8 (U8S8 kernels, the usual choice) or quint8 (U8U8, which ORT "
                         "suggests where U8S8 saturates: AVX2 / AVX-512 without VNNI)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batching", default="sorted", choices=["sorted", "input", "file"])
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "peers-cache"))
    ap.add_argument("--metrics", help="also write the JSON line here")
    ap.add_argument("--embed", metavar="POOLING", choices=["cls", "mean", "max"],
                    help="embed instead of classify: pool the encoder's last hidden state; --output FILE.npy")
    ap.add_argument("--normalize", action="store_true", help="with --embed: L2-normalize the vectors")
    args = ap.parse_args()
    task = "embed" if args.embed else "classify"
    if args.embed and not args.output.endswith(".npy"):
        ap.error("--embed writes the vectors as numpy: --output must end in .npy")
    if args.normalize and not args.embed:
        ap.error("--normalize needs --embed")

    def log(msg):
        print("ort_method: " + msg, file=sys.stderr, flush=True)

    import numpy as np
    import onnxruntime as ort
    import pandas  # noqa: F401  (imported before the clock starts)
    from transformers import AutoTokenizer

    config = pc.read_config(args.model)
    labels = pc.labels_of(config) if task == "classify" else None
    paths = export_models(args.model, args.cache, config, log, args.weight_type, task)

    stages = pc.Stages()
    with stages.time("load"):
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(paths[args.precision], so, providers=["CPUExecutionProvider"])

    with stages.time("read"):
        df = pc.read_input(args.input, args.column)
        texts, nulls = pc.texts_of(df, args.column)

    with stages.time("tokenize"):
        ids = tokenizer(texts, padding=False, truncation=True, max_length=args.max_length)["input_ids"]
        lengths = np.array([len(x) for x in ids], dtype=np.int64)
        if args.batching == "sorted":
            order = np.argsort(lengths, kind="stable")
        else:
            order = np.arange(len(ids))
        file_longest = int(lengths.max()) if len(ids) else 0

    rows = len(ids)
    width_out = len(labels) if task == "classify" else config["hidden_size"]
    results = np.zeros((rows, width_out), dtype=np.float32)
    output = "logits" if task == "classify" else "last_hidden_state"
    computed = 0
    with stages.time("infer"):
        for start in range(0, rows, args.batch_size):
            sel = order[start:start + args.batch_size]
            width = file_longest if args.batching == "file" else int(lengths[sel].max())
            input_ids = np.zeros((len(sel), width), dtype=np.int64)
            mask = np.zeros((len(sel), width), dtype=np.int64)
            for r, i in enumerate(sel):
                input_ids[r, :lengths[i]] = ids[i]
                mask[r, :lengths[i]] = 1
            computed += input_ids.size
            out = session.run([output], {"input_ids": input_ids, "attention_mask": mask})[0]
            if task == "embed":
                results[sel] = pool(out, mask, args.embed, args.normalize)
            else:
                e = np.exp(out - out.max(axis=1, keepdims=True))
                results[sel] = e / e.sum(axis=1, keepdims=True)

    with stages.time("write"):
        if task == "embed":
            results[nulls] = np.nan
            np.save(args.output, results)
        else:
            pc.write_output(df, args.column, results, labels, nulls, args.output)

    precision = args.precision + ("" if args.precision == "fp32" else " " + args.weight_type)
    what = "" if task == "classify" else ", embed %s%s" % (args.embed, " normalized" if args.normalize else "")
    pc.emit_metrics("onnxruntime %s (%s batches%s)" % (precision, args.batching, what), rows, int(lengths.sum()),
                    computed, stages, args.threads, args.batch_size, path=args.metrics,
                    extra={"onnxruntime": ort.__version__, "onnx_model": paths[args.precision],
                           "load_seconds": stages.seconds["load"]})


if __name__ == "__main__":
    main()
