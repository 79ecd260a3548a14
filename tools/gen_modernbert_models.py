#!/usr/bin/env python3
"""Tiny random-weight ModernBERT classifiers and HF transformers' goldens for them.

Builds four ModernBertForSequenceClassification models with transformers' random init (fixed torch
seed; initializer_range 0.2 so logits are O(1)), sets every bias and LayerNorm weight / bias to
random values (HF init leaves them at 0 and 1, where a wrong or missing one would not show) and the
[PAD] embedding row too (nn.Embedding zeroes it), and saves each with
save_pretrained(safe_serialization=True) plus a byte-level BPE tokenizer trained here on made-up text
in ModernBERT's style (NFC, ByteLevel without prefix space, [UNK] [CLS] [SEP] [PAD] [MASK] with
[MASK] lstrip, `[CLS] $A [SEP]`), under tests/data_files/golden/<name>/:

  tiny-modernbert             2 labels, cls pooling, 4 layers (0 and 3 global), local_attention 16,
                              no biases, the default rope thetas (global 160000, local 10000);
                              special tokens at ids 0..4
  tiny-modernbert-mean        3 labels, mean pooling, 3 layers, 2 heads, local_attention 8,
                              attention / mlp / norm / classifier biases, rope thetas 50000 / 2000;
                              special tokens after the learned vocabulary, as ModernBERT-base has them
  tiny-modernbert-multilabel  5 labels, multi_label_classification, cls pooling, 2 layers,
                              local_attention 32; special tokens at ids 0..4
  tiny-modernbert-long        2 labels, mean pooling, 3 layers (0 global), local_attention 64,
                              max_position_embeddings 4096 (model_max_length 4096 in
                              tokenizer_config.json), no biases, rope thetas 160000 / 10000; for rows
                              far longer than the local window. Its config.json is rewritten in
                              transformers 4's keys, as answerdotai/ModernBERT-base publishes it:
                              global_attn_every_n_layers 3, global_rope_theta, local_rope_theta, and no
                              layer_types or rope_parameters (the script checks that transformers reads
                              it back as intended); special tokens at ids 0..4

Goldens (the format of tools/gen_model_golden.py):

  tests/data_files/golden/<name>.json     HF fp32 logits (attn_implementation="eager", model.eval(),
                              loaded back from the saved directory) for 60 id rows of 2..300 tokens
                              (tiny-modernbert-long: 16 rows of 2..2100 tokens), each [CLS] ... [SEP],
                              some with [PAD] / [CLS] / [SEP] ids inside, run as one right-padded batch
                              with attention_mask. Every row is also run alone
                              (batch of 1, no padding); the script fails if the two differ by more
                              than 1e-5, so padding cannot leak into a golden.
  tests/data_files/golden/modernbert-texts.json
                              text in, scores out: for 20 made-up texts, each directory's but
                              tiny-modernbert-long's
                              pipeline("text-classification", model=dir, tokenizer=dir, top_k=None)
                              with truncation=True: the tokenizer's ids and the scores in label order,
                              and the function (softmax, or sigmoid for multi-label).

Deterministic (fixed seeds). Run with the tools venv (tools/requirements.txt), from anywhere:
  build/tools-venv/bin/python tools/gen_modernbert_models.py [--only NAME ...]
(--only: rebuild just these models; modernbert-texts.json is always rewritten from the three
directories it covers.) Python is for generating these files only; infercost never runs it.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import transformers
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (ModernBertConfig, ModernBertForSequenceClassification, PreTrainedTokenizerFast,
                          pipeline)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_model_golden import (GOLDEN, ROOT, hf_logits, perturb_biases_and_norms, training_texts,  # noqa: E402
                              write_golden)
import gen_modernbert_golden  # noqa: E402  (ModernBERT-base's tokenizer_config.json)

GENERATOR = "tools/gen_modernbert_models.py"
MAX_LENGTH = 512  # the tokenizers' model_max_length and the models' max_position_embeddings
LONG_MAX_LENGTH = 4096  # the same for tiny-modernbert-long
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
N_CASES = 60
BATCH_TOLERANCE = 1e-5  # batched (padded) against alone, per logit
# Golden rows: fixed lengths, then random ones in [low, high] up to the count.
SHORT_ROWS = dict(fixed=[2, 3, 4, 5, 6, 9, 10, 17, 18, 33, 64, 65, 200, 300], count=N_CASES, low=2, high=300)
LONG_ROWS = dict(fixed=[2, 65, 66, 129, 130, 500, 1000, 1024, 1500, 2048, 2049, 2100], count=16, low=100,
                 high=2100)

# What answerdotai/ModernBERT-base's tokenizer_config.json says (gen_modernbert_golden.py), with
# this project's max length.
TOKENIZER_CONFIG = dict(gen_modernbert_golden.TOKENIZER_CONFIG, model_max_length=MAX_LENGTH)


def labels(*names):
    return {"id2label": {i: n for i, n in enumerate(names)}, "label2id": {n: i for i, n in enumerate(names)}}


# name -> (ModernBertConfig keywords, tokenizer layout, seed). The token ids (pad / cls / sep / bos / eos)
# are filled in from the tokenizer written for the directory. layer_types is left to transformers'
# default (full attention in layers 0, 3, ..., sliding in the others), which config.json spells out.
# transformers 5 saves the rope thetas as rope_parameters {"full_attention": {"rope_theta": ...},
# "sliding_attention": {...}}, whichever form they are given in (global_rope_theta / local_rope_theta
# for tiny-modernbert, as ModernBERT-base's config.json has them; rope_parameters for -mean).
# tiny-modernbert-long's config.json is then rewritten in those old keys (LEGACY_CONFIG).
MODELS = {
    "tiny-modernbert": (dict(
        vocab_size=420, hidden_size=32, num_hidden_layers=4, num_attention_heads=4, intermediate_size=48,
        max_position_embeddings=MAX_LENGTH, local_attention=16,
        classifier_pooling="cls", hidden_activation="gelu", classifier_activation="gelu",
        global_rope_theta=160000.0, local_rope_theta=10000.0,
        **labels("negative", "positive")), "low", 0),
    "tiny-modernbert-mean": (dict(
        vocab_size=420, hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=48,
        max_position_embeddings=MAX_LENGTH, local_attention=8,
        classifier_pooling="mean", hidden_activation="gelu", classifier_activation="gelu",
        attention_bias=True, mlp_bias=True, norm_bias=True, classifier_bias=True,
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 50000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 2000.0}},
        **labels("negative", "neutral", "positive")), "high", 1),
    "tiny-modernbert-multilabel": (dict(
        vocab_size=410, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
        max_position_embeddings=MAX_LENGTH, local_attention=32,
        classifier_pooling="cls", hidden_activation="gelu", classifier_activation="gelu",
        problem_type="multi_label_classification",
        **labels("anger", "joy", "fear", "sadness", "surprise")), "low", 2),
    # Rows far longer than the local window; its config.json gets transformers 4's keys (LEGACY_CONFIG).
    "tiny-modernbert-long": (dict(
        vocab_size=420, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48,
        max_position_embeddings=LONG_MAX_LENGTH, local_attention=64,
        classifier_pooling="mean", hidden_activation="gelu", classifier_activation="gelu",
        global_attn_every_n_layers=3, global_rope_theta=160000.0, local_rope_theta=10000.0,
        **labels("negative", "positive")), "low", 3),
}
# Written in transformers 4's config.json keys (write_legacy_config), with its goldens' rows.
LEGACY_CONFIG = {"tiny-modernbert-long"}
ROWS = {"tiny-modernbert-long": LONG_ROWS}
# The directories modernbert-texts.json covers.
TEXT_MODELS = ["tiny-modernbert", "tiny-modernbert-mean", "tiny-modernbert-multilabel"]

TEXTS = [
    "hello world",
    "I love this so much!!! 😍😍",
    "worst. day. ever. lost my bag #fail 👎",
    "Cafe\u0301 au lait, nai\u0308ve fac\u0327ade",  # decomposed accents: NFC composes them
    "Café au lait, naïve façade",  # the same text composed
    "A\u030angstro\u0308m and re\u0301sume\u0301 in Zu\u0308rich",
    "the movie was [MASK] good",
    "[MASK] at the start and  [MASK] after two spaces",
    "a [PAD] and a [CLS] written in the text [SEP]",
    "it's they're we've I'm you'll he'd",
    "numbers 1234567 and 3.14159",
    "👩🏽‍💻 👨‍👩‍👧‍👦 🇫🇷 ❤️",
    "tabs\tand\nnewlines and\u00a0nbsp",
    "  leading and trailing spaces  ",
    "ALL CAPS SHOUTING",
    "x",
    "",
    "Привет, как дела? 新年快乐",
    "kameltori zoberne paqui dri'selou",
    "so long " + " ".join("word%d %s" % (i, ["bad", "good", "ok", "meh", "great"][i % 5]) for i in range(72)),
]


def tokenizer_texts():
    """What the tiny tokenizers learn from: gen_model_golden's made-up words and a few lines like TEXTS."""
    extra = ["I love this movie so much", "the worst day ever", "Café au lait, naïve façade in Zürich",
             "good bad great okay meh", "😍 👍 🙂 ❤️", "it's they're we've"] * 5
    return training_texts() + extra


def write_tokenizer(dir_, layout, vocab_size, max_length=MAX_LENGTH):
    """Byte-level BPE in ModernBERT's style. layout "low": [UNK] [CLS] [SEP] [PAD] [MASK] are ids 0..4;
    "high": they follow the learned vocabulary, as in ModernBERT-base (50280..50284). max_length: the
    model_max_length. Returns (token count, {special: id})."""
    added = [AddedToken(t, lstrip=(t == "[MASK]"), normalized=False, special=True) for t in SPECIALS]
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    target = 400
    tok.train_from_iterator(tokenizer_texts(), trainers.BpeTrainer(
        vocab_size=target if layout == "low" else target - len(SPECIALS), min_frequency=1,
        special_tokens=added if layout == "low" else [],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    if layout == "high":
        tok.add_special_tokens(added)
    ids = {t: tok.token_to_id(t) for t in SPECIALS}
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    size = tok.get_vocab_size()
    assert size <= vocab_size, (dir_, size, vocab_size)
    PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_length,
                            **{k: v for k, v in TOKENIZER_CONFIG.items() if k.endswith("_token")}).save_pretrained(dir_)
    # transformers 5 names its own class (TokenizersBackend); write what ModernBERT-base publishes.
    with open(os.path.join(dir_, "tokenizer_config.json"), "w") as f:
        json.dump({**TOKENIZER_CONFIG, "model_max_length": max_length}, f, indent=2)
        f.write("\n")
    return size, ids


def perturb(model, seed):
    """Random values in every bias (0.1 * randn), every LayerNorm weight (1 + 0.1 * randn) and bias, and
    the [PAD] row of the token embeddings (which nn.Embedding(padding_idx) zeroes). Returns the names."""
    g = torch.Generator().manual_seed(seed)
    done = perturb_biases_and_norms(model, g)
    missed = [n for n, _ in model.named_parameters() if "norm" in n and n not in done]
    assert not missed, missed
    with torch.no_grad():
        table = model.model.embeddings.tok_embeddings.weight
        pad = model.config.pad_token_id
        table[pad].copy_(torch.randn(table.shape[1], generator=g) * model.config.initializer_range)
        done.append(f"model.embeddings.tok_embeddings.weight[{pad}]")
    return done


def golden_sequences(rng, vocab, ids, rows=SHORT_ROWS):
    """rows["count"] rows [CLS] ... [SEP] of random non-special ids: rows["fixed"] lengths, then random
    ones in rows["low"]..rows["high"] tokens (SHORT_ROWS: 60 rows of 2..300); some hold [PAD], [CLS],
    [SEP] inside."""
    special = set(ids.values())
    plain = np.array([i for i in range(vocab) if i not in special])
    cls, sep, pad = ids["[CLS]"], ids["[SEP]"], ids["[PAD]"]
    lengths = list(rows["fixed"])
    lengths += [int(x) for x in rng.integers(rows["low"], rows["high"] + 1, size=rows["count"] - len(lengths))]
    seqs = []
    for k, n in enumerate(lengths):
        s = [cls] + [int(x) for x in rng.choice(plain, size=n - 2)] + [sep]
        if n > 4 and k % 4 == 1:
            for _ in range(1 + n // 20):
                s[int(rng.integers(1, n - 1))] = pad
        if n > 4 and k % 4 == 3:
            for _ in range(1 + n // 40):
                s[int(rng.integers(1, n - 1))] = int(rng.choice([cls, cls, sep]))
        seqs.append(s)
    seqs[6][1] = pad  # [CLS] [PAD] ...: a pad id right next to the state cls pooling reads
    seqs[7][1:4] = [pad, pad, pad]
    return seqs


def check_alone(model, seqs, batched, pad):
    """Each row alone (no padding) must give the batched row's logits."""
    worst = 0.0
    for s, row in zip(seqs, batched):
        alone = hf_logits(model, [s], pad)[0]
        worst = max(worst, float(np.abs(alone - row).max()))
    if worst > BATCH_TOLERANCE:
        sys.exit(f"batched logits differ from rows run alone by {worst:.3g} (> {BATCH_TOLERANCE}): padding leaks")
    return worst


def write_legacy_config(dir_, every_n):
    """Rewrites dir_/config.json in transformers 4's keys, as answerdotai/ModernBERT-base publishes it:
    global_attn_every_n_layers, global_rope_theta and local_rope_theta in place of layer_types and
    rope_parameters (which transformers 5 writes). Returns (layer_types, {attention: rope_theta}) as
    saved, for the reloaded config to be checked against."""
    path = os.path.join(dir_, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    layer_types = cfg.pop("layer_types")
    rope = cfg.pop("rope_parameters")
    assert layer_types == ["sliding_attention" if i % every_n else "full_attention"
                           for i in range(cfg["num_hidden_layers"])], (dir_, layer_types)
    assert all(r == {"rope_type": "default", "rope_theta": r["rope_theta"]} for r in rope.values()), rope
    thetas = {k: r["rope_theta"] for k, r in rope.items()}
    cfg["global_attn_every_n_layers"] = every_n
    cfg["global_rope_theta"] = thetas["full_attention"]
    cfg["local_rope_theta"] = thetas["sliding_attention"]
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    return layer_types, thetas


def dir_size(dir_):
    return sum(os.path.getsize(os.path.join(dir_, f)) for f in os.listdir(dir_))


def gen_model(name, kw, layout, seed):
    out = os.path.join(GOLDEN, name)
    os.makedirs(out, exist_ok=True)
    tokens, ids = write_tokenizer(out, layout, kw["vocab_size"], kw["max_position_embeddings"])
    torch.manual_seed(500 + seed)
    config = ModernBertConfig(initializer_range=0.2, pad_token_id=ids["[PAD]"], cls_token_id=ids["[CLS]"],
                              sep_token_id=ids["[SEP]"], bos_token_id=ids["[CLS]"], eos_token_id=ids["[SEP]"], **kw)
    model = ModernBertForSequenceClassification(config)
    print(f"{name}: perturbed " + ", ".join(perturb(model, 1234 + seed)))
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    if name in LEGACY_CONFIG:
        intended = write_legacy_config(out, kw["global_attn_every_n_layers"])

    # The goldens come from the saved directory, as anyone would load it.
    model = ModernBertForSequenceClassification.from_pretrained(out, attn_implementation="eager",
                                                                dtype=torch.float32)
    model.eval()
    if name in LEGACY_CONFIG:
        # transformers reads the old keys back into what the model was built with.
        saved = json.load(open(os.path.join(out, "config.json")))
        assert "layer_types" not in saved and "rope_parameters" not in saved, sorted(saved)
        read = model.config
        assert read.layer_types == intended[0] == config.layer_types, (read.layer_types, intended)
        assert {k: r["rope_theta"] for k, r in read.rope_parameters.items()} == intended[1], read.rope_parameters
        assert intended[1] == {"full_attention": kw["global_rope_theta"],
                               "sliding_attention": kw["local_rope_theta"]}, intended
    rng = np.random.default_rng(700 + seed)
    seqs = golden_sequences(rng, config.vocab_size, ids, ROWS.get(name, SHORT_ROWS))
    assert max(len(s) for s in seqs) <= config.max_position_embeddings
    logits = hf_logits(model, seqs, config.pad_token_id)
    worst = check_alone(model, seqs, logits, config.pad_token_id)
    write_golden(os.path.join(GOLDEN, f"{name}.json"), name, seqs, logits,
                 {"generator": GENERATOR, "model_dir": name, "tokenizer_size": tokens})
    print(f"  {name}/: {dir_size(out) / 1e3:.0f} KB, tokenizer {tokens} tokens, specials {ids}, "
          f"layer_types {model.config.layer_types}, batched vs alone {worst:.2g}")


def gen_texts():
    doc = {
        "generator": GENERATOR,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "tolerance_abs": 1e-4,
        "texts": TEXTS,
        "models": {},
    }
    for name in TEXT_MODELS:
        d = os.path.join(GOLDEN, name)
        pipe = pipeline("text-classification", model=d, tokenizer=d, device="cpu")
        config = pipe.model.config
        names = [config.id2label[i] for i in range(config.num_labels)]
        out = pipe(TEXTS, top_k=None, truncation=True)
        scores = []
        for row in out:
            by_label = {s["label"]: s["score"] for s in row}
            scores.append([float(by_label[label]) for label in names])
        ids = [pipe.tokenizer(t, truncation=True)["input_ids"] for t in TEXTS]
        function = "sigmoid" if config.problem_type == "multi_label_classification" else "softmax"
        sums = np.array(scores).sum(axis=1)
        assert np.allclose(sums, 1.0, atol=1e-5) == (function == "softmax"), (name, sums)
        # The tokenizer.json alone (what infercost reads) gives the same ids as the pipeline's tokenizer.
        raw = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        raw.enable_truncation(pipe.tokenizer.model_max_length)
        assert [e.ids for e in raw.encode_batch(TEXTS)] == ids, name
        # And the eager model on those ids gives the pipeline's scores.
        eager = ModernBertForSequenceClassification.from_pretrained(d, attn_implementation="eager",
                                                                    dtype=torch.float32)
        logits = torch.tensor(hf_logits(eager, ids, config.pad_token_id))
        probs = torch.sigmoid(logits) if function == "sigmoid" else torch.softmax(logits, dim=-1)
        gap = float((probs - torch.tensor(scores)).abs().max())
        assert gap < 1e-5, (name, gap)
        doc["models"][name] = {"labels": names, "function": function, "ids": ids, "scores": scores}
        print(f"{name}: {len(TEXTS)} texts, {function}, longest {max(len(i) for i in ids)} ids, "
              f"pipeline vs eager {gap:.2g}")
    path = os.path.join(GOLDEN, "modernbert-texts.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", default=[], choices=list(MODELS), help="rebuild only these models")
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(GOLDEN, exist_ok=True)
    for name, (kw, layout, seed) in MODELS.items():
        if not args.only or name in args.only:
            gen_model(name, kw, layout, seed)
    gen_texts()


if __name__ == "__main__":
    main()
