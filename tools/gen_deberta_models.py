#!/usr/bin/env python3
"""Tiny random-weight DeBERTa-v2/v3 classifiers and HF transformers' goldens for them.

Builds three DebertaV2ForSequenceClassification models with transformers' random init (fixed torch
seed; initializer_range 0.2 so logits are O(1)), sets every bias and LayerNorm weight / bias and the
relative embeddings to random values (HF init leaves biases at 0 and norms at 1 / 0, where a wrong or
missing one would not show), and saves each with save_pretrained(safe_serialization=True) under
tests/data_files/golden/<name>/ (config.json, model.safetensors, and a Unigram tokenizer.json trained
here on made-up text with DebertaV2Tokenizer's pipeline, tokenizer_config.json naming that class):

  tiny-deberta             DeBERTa-v3's layout: relative_attention, pos_att_type "p2c|c2p",
                           share_att_key, norm_rel_ebd layer_norm, position_biased_input false, no token
                           types; position_buckets 16, max_relative_positions 64 (rows of up to 300 tokens
                           reach the log buckets and the clamp); 2 labels
  tiny-deberta-3           3 labels; pos_att_type as a list, separate pos_key_proj / pos_query_proj
                           (share_att_key false), no norm on the relative embeddings, an embedding_size
                           (16) other than the hidden size (32: embed_proj), absolute positions too
                           (position_biased_input), 2 token types, ReLU FFN, tanh pooler
  tiny-deberta-multilabel  5 labels, multi_label_classification; c2p only, no buckets
                           (position_buckets -1) and max_relative_positions 24, so long rows clamp

Goldens (the format of tools/gen_model_golden.py):

  tests/data_files/golden/<name>.json   HF fp32 logits (model.eval(), loaded back from the saved
                           directory) for 60 id rows of 2..300 tokens, each [CLS] ... [SEP] with ids 1
                           and 2, some with [PAD] (0) / [CLS] / [SEP] inside, run as one right-padded
                           batch with attention_mask. Every row is also run alone; the script fails if
                           the two differ by more than 1e-5, so padding cannot leak into a golden.
  tests/data_files/golden/deberta-texts.json
                           text in, scores out: for modernbert-texts.json's 20 texts, each directory's
                           pipeline("text-classification", model=dir, tokenizer=dir, top_k=None) with
                           truncation=True: the tokenizer's ids, the scores in label order, the function.
  tests/data_files/golden/deberta-relative-index.json
                           transformers' own relative positions (build_relative_position, then + span and
                           clamped as the c2p term gathers them) for every delta q - k within 511, for
                           each tiny model's settings and DeBERTa-v3-base's (256 buckets, 512 positions).

Deterministic (fixed seeds). Run with the tools venv (tools/requirements.txt), from anywhere:
  build/tools-venv/bin/python tools/gen_deberta_models.py
Python is for generating these files only; infercost never runs it.
"""
import json
import os
import sys

import numpy as np
import torch
import transformers
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, pipeline
from transformers.models.deberta_v2 import modeling_deberta_v2 as hf_deberta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_model_golden import GOLDEN, ROOT, hf_logits, perturb_biases_and_norms, write_golden  # noqa: E402
from gen_modernbert_models import TEXTS, tokenizer_texts  # noqa: E402

GENERATOR = "tools/gen_deberta_models.py"
PAD, CLS, SEP = 0, 1, 2
N_CASES = 60
BATCH_TOLERANCE = 1e-5
FIXED = [2, 3, 4, 5, 9, 10, 17, 18, 24, 25, 33, 64, 65, 66, 129, 200, 300]
MAX_DELTA = 511


def labels(*names):
    return {"id2label": {i: n for i, n in enumerate(names)}, "label2id": {n: i for i, n in enumerate(names)}}


COMMON = dict(vocab_size=300, hidden_size=32, intermediate_size=48, max_position_embeddings=512,
              layer_norm_eps=1e-7, pad_token_id=PAD, initializer_range=0.2, relative_attention=True)
MODELS = {
    "tiny-deberta": (dict(COMMON, num_hidden_layers=2, num_attention_heads=4, hidden_act="gelu",
                          pooler_hidden_act="gelu", position_buckets=16, max_relative_positions=64,
                          pos_att_type="p2c|c2p", share_att_key=True, norm_rel_ebd="layer_norm",
                          position_biased_input=False, type_vocab_size=0,
                          **labels("negative", "positive")), 0),
    "tiny-deberta-3": (dict(COMMON, num_hidden_layers=3, num_attention_heads=2, hidden_act="relu",
                            pooler_hidden_act="tanh", position_buckets=32, max_relative_positions=128,
                            pos_att_type=["c2p", "p2c"], share_att_key=False, norm_rel_ebd="none",
                            embedding_size=16, position_biased_input=True, type_vocab_size=2,
                            **labels("negative", "neutral", "positive")), 1),
    "tiny-deberta-multilabel": (dict(COMMON, num_hidden_layers=2, num_attention_heads=4, hidden_act="gelu",
                                     pooler_hidden_act="gelu", position_buckets=-1, max_relative_positions=24,
                                     pos_att_type="c2p", share_att_key=True, norm_rel_ebd="none",
                                     position_biased_input=False, type_vocab_size=0,
                                     problem_type="multi_label_classification",
                                     **labels("anger", "joy", "fear", "sadness", "surprise")), 2),
}


def perturb(model, seed):
    """Random values in every bias (0.1 * randn), every LayerNorm weight (1 + 0.1 * randn) and bias, the
    relative embeddings (randn * 0.5) and the [PAD] row (which nn.Embedding(padding_idx) zeroes)."""
    g = torch.Generator().manual_seed(seed)
    done = perturb_biases_and_norms(model, g, also=[("rel_embeddings.weight", 0.5)])
    with torch.no_grad():
        table = model.deberta.embeddings.word_embeddings.weight
        table[PAD].copy_(torch.randn(table.shape[1], generator=g) * model.config.initializer_range)
    return done


def golden_sequences(rng, vocab):
    plain = np.arange(3, vocab)
    lengths = FIXED + [int(x) for x in rng.integers(2, 301, size=N_CASES - len(FIXED))]
    seqs = []
    for k, n in enumerate(lengths):
        s = [CLS] + [int(x) for x in rng.choice(plain, size=n - 2)] + [SEP]
        if n > 4 and k % 4 == 1:
            for _ in range(1 + n // 20):
                s[int(rng.integers(1, n - 1))] = PAD
        if n > 4 and k % 4 == 3:
            for _ in range(1 + n // 40):
                s[int(rng.integers(1, n - 1))] = int(rng.choice([CLS, SEP]))
        seqs.append(s)
    return seqs


def relative_index(buckets, max_relative):
    """transformers' relative positions for q - k in -MAX_DELTA..MAX_DELTA, as the c2p term indexes the
    relative embeddings: + span, clamped to [0, 2 span)."""
    q = torch.zeros(1, 2 * MAX_DELTA + 1, 1)
    rel = hf_deberta.build_relative_position(q, q, bucket_size=buckets, max_position=max_relative)[0]
    deltas = rel[:, MAX_DELTA]  # row q, key MAX_DELTA: delta q - MAX_DELTA
    span = buckets if buckets > 0 else max_relative
    return [int(v) for v in torch.clamp(deltas + span, 0, 2 * span - 1)]


def write_tokenizer(dir_, vocab_size):
    """A Unigram tokenizer.json trained on made-up text, in DebertaV2Tokenizer's pipeline ([PAD] [CLS]
    [SEP] [UNK] at 0..3; transformers adds [MASK] after the pieces), and a tokenizer_config.json naming
    the class, as a fine-tuned DeBERTa-v3 directory saved by transformers 5 has them."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(r"\s{2,}|[\n\r\t]"), " "), normalizers.NFC(),
                                           normalizers.Strip(left=False, right=True)])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size - 4, special_tokens=["[PAD]", "[CLS]", "[SEP]", "[UNK]"],
                                      unk_token="[UNK]", shrinking_factor=0.75)
    tok.train_from_iterator(tokenizer_texts(), trainer)
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    tok.save(os.path.join(dir_, "tokenizer.json"))
    with open(os.path.join(dir_, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "DebertaV2Tokenizer", "do_lower_case": False, "model_max_length": 512,
                   "unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]",
                   "mask_token": "[MASK]"}, f, indent=2)
        f.write("\n")
    assert tok.get_vocab_size() < vocab_size, tok.get_vocab_size()
    return tok.get_vocab_size()


def gen_texts():
    """deberta-texts.json: each directory through HF's text-classification pipeline."""
    doc = {"generator": GENERATOR, "torch": torch.__version__, "transformers": transformers.__version__,
           "tolerance_abs": 1e-4, "texts": TEXTS, "models": {}}
    for name in MODELS:
        d = os.path.join(GOLDEN, name)
        pipe = pipeline("text-classification", model=d, tokenizer=d, device="cpu")
        assert type(pipe.tokenizer).__name__ == "DebertaV2Tokenizer", type(pipe.tokenizer)
        config = pipe.model.config
        names = [config.id2label[i] for i in range(config.num_labels)]
        scores = []
        for row in pipe(TEXTS, top_k=None, truncation=True):
            by_label = {s["label"]: s["score"] for s in row}
            scores.append([float(by_label[label]) for label in names])
        ids = [pipe.tokenizer(t, truncation=True)["input_ids"] for t in TEXTS]
        function = "sigmoid" if config.problem_type == "multi_label_classification" else "softmax"
        logits = torch.tensor(hf_logits(pipe.model, ids, PAD))
        probs = torch.sigmoid(logits) if function == "sigmoid" else torch.softmax(logits, dim=-1)
        gap = float((probs - torch.tensor(scores)).abs().max())
        assert gap < 1e-5, (name, gap)
        doc["models"][name] = {"labels": names, "function": function, "ids": ids, "scores": scores}
        print(f"{name}: {len(TEXTS)} texts, {function}, longest {max(len(i) for i in ids)} ids, "
              f"pipeline vs batched {gap:.2g}")
    path = os.path.join(GOLDEN, "deberta-texts.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")


def gen_model(name, kw, seed):
    out = os.path.join(GOLDEN, name)
    os.makedirs(out, exist_ok=True)
    print(f"{name}: tokenizer of {write_tokenizer(out, kw['vocab_size'])} pieces")
    torch.manual_seed(900 + seed)
    model = DebertaV2ForSequenceClassification(DebertaV2Config(**kw))
    print(f"{name}: perturbed {len(perturb(model, 4321 + seed))} tensors")
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    model = DebertaV2ForSequenceClassification.from_pretrained(out, dtype=torch.float32)
    model.eval()
    seqs = golden_sequences(np.random.default_rng(800 + seed), kw["vocab_size"])
    logits = hf_logits(model, seqs, PAD)
    worst = 0.0
    for s, row in zip(seqs, logits):
        worst = max(worst, float(np.abs(hf_logits(model, [s], PAD)[0] - row).max()))
    if worst > BATCH_TOLERANCE:
        sys.exit(f"{name}: batched logits differ from rows run alone by {worst:.3g}: padding leaks")
    write_golden(os.path.join(GOLDEN, f"{name}.json"), name, seqs, logits,
                 {"generator": GENERATOR, "model_dir": name})
    print(f"  {name}/: batched vs alone {worst:.2g}")


def main():
    settings = {name: (kw["position_buckets"], kw["max_relative_positions"]) for name, (kw, _) in MODELS.items()}
    settings["deberta-v3-base"] = (256, 512)
    doc = {"generator": GENERATOR, "transformers": transformers.__version__, "max_delta": MAX_DELTA,
           "settings": [{"name": n, "position_buckets": b, "max_relative_positions": m,
                         "index": relative_index(b, m)} for n, (b, m) in settings.items()]}
    path = os.path.join(GOLDEN, "deberta-relative-index.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")
    for name, (kw, seed) in MODELS.items():
        gen_model(name, kw, seed)
    gen_texts()


if __name__ == "__main__":
    main()
