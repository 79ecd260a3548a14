#!/usr/bin/env python3
"""Writes tests/data_files/model/python_written.safetensors with the Python
`safetensors` library, so our reader is tested on files we did not write.

Values follow formulas that tests/model/safetensors_test.cc recomputes:
  f32   [2, 3]  i * 0.5 - 1
  f16   [4]     [1.0, -2.5, 65504.0, 6.103515625e-05]   (incl. the f16 max and min normal)
  bf16  [2, 2]  [1.0, -0.15625, 3.0e38 rounded to bf16, 1e-3 rounded to bf16]
  i64   [3]     [1, 2, 3]   (a dtype we parse but do not convert)
  empty [0, 4]  F32, no data
"""
import pathlib

import torch
from safetensors.torch import save_file

out = pathlib.Path(__file__).resolve().parent.parent / "tests/data_files/model/python_written.safetensors"
out.parent.mkdir(parents=True, exist_ok=True)
tensors = {
    "f32": (torch.arange(6, dtype=torch.float32) * 0.5 - 1).reshape(2, 3),
    "f16": torch.tensor([1.0, -2.5, 65504.0, 6.103515625e-05], dtype=torch.float16),
    "bf16": torch.tensor([1.0, -0.15625, 3.0e38, 1e-3], dtype=torch.float32).to(torch.bfloat16).reshape(2, 2),
    "i64": torch.tensor([1, 2, 3], dtype=torch.int64),
    "empty": torch.zeros((0, 4), dtype=torch.float32),
}
save_file(tensors, str(out), metadata={"format": "pt", "writer": "python-safetensors"})
for name, t in tensors.items():
    print(name, t.dtype, list(t.shape), t.float().flatten().tolist())
print("wrote", out, out.stat().st_size, "bytes")

# Tiny HF-written classifiers, to check our name mapping against HF's own
# (vocab 64, hidden 8, 2 layers). checks.json records what the tests compare.
import json

from transformers import BertConfig, BertForSequenceClassification, DistilBertConfig, DistilBertForSequenceClassification

torch.manual_seed(0)
root = out.parent
checks = {}
models = {
    "hf_tiny_distilbert": DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=64, dim=8, n_layers=2, n_heads=2, hidden_dim=16, max_position_embeddings=32,
        id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1})),
    "hf_tiny_bert": BertForSequenceClassification(BertConfig(
        vocab_size=64, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=32, type_vocab_size=2, num_labels=3)),
}
for name, model in models.items():
    d = root / name
    model.save_pretrained(d, safe_serialization=True)
    sd = model.state_dict()
    pick = {
        "hf_tiny_distilbert": ["distilbert.transformer.layer.1.ffn.lin2.weight", "pre_classifier.weight",
                               "distilbert.embeddings.position_embeddings.weight"],
        "hf_tiny_bert": ["bert.encoder.layer.1.output.dense.weight", "bert.pooler.dense.weight",
                         "bert.embeddings.token_type_embeddings.weight"],
    }[name]
    checks[name] = {
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "first_values": {k: sd[k].flatten()[:4].tolist() for k in pick},
    }
(root / "checks.json").write_text(json.dumps(checks, indent=1) + "\n")
print(json.dumps(checks, indent=1))

# Tokenizer files: the BERT directory gets HF's own tokenizer.json (written by
# BertTokenizerFast), the DistilBERT one only vocab.txt and a cased
# tokenizer_config.json, so both tokenizer sources are exercised.
from transformers import BertTokenizerFast

vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("abcdefghijklmnopqrstuvwxyz.,!?") + \
    ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"] + ["the", "good", "bad"]
assert len(vocab) <= 64
for name in models:
    (root / name / "vocab.txt").write_text("\n".join(vocab) + "\n")
BertTokenizerFast(vocab_file=str(root / "hf_tiny_bert" / "vocab.txt"), do_lower_case=True).save_pretrained(
    root / "hf_tiny_bert")
(root / "hf_tiny_distilbert" / "tokenizer_config.json").write_text(
    json.dumps({"do_lower_case": False, "strip_accents": None, "tokenize_chinese_chars": True,
                "unk_token": "[UNK]"}, indent=1) + "\n")
