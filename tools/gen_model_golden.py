#!/usr/bin/env python3
"""Golden logits from HF transformers for the CPU encoder test.

(a) Builds tiny DistilBERT / BERT / RoBERTa / XLM-RoBERTa / CamemBERT classifiers with
    transformers' random init (fixed torch seed), saves them with
    save_pretrained(safe_serialization=True) under tests/data_files/golden/<name>/
    and records HF fp32 logits for 60 inputs of 1..128 tokens. The RoBERTa
    family's directories also get a small tokenizer that HF saves with them
    (byte-level BPE for RoBERTa, Unigram for XLM-R and CamemBERT, trained here on
    made-up words), so each is a complete HF model directory; their inputs hold the
    pad id and <s>/</s> inside the text too, where RoBERTa's position ids differ.
(b) For DistilBERT-base, BERT-base, RoBERTa-base, XLM-R-base, ModernBERT-base and DeBERTa-v3-base shapes, runs our synthesizer
    (`<synth-cmd> --preset P --seed 7 --out DIR`, e.g. `build/infercost model
    synth`) into a temporary directory and records HF logits for 56 inputs of
    1..300 tokens (ModernBERT-base also 700, 1,500 and 2,100, in batches of similar lengths). The weights are not committed: the C++ test regenerates the
    same directory with model::synthesize_model and checks a weight checksum.

Each golden JSON holds input_ids (real tokens only) and logits per input. HF
runs the inputs as one right-padded batch with attention_mask, model.eval().

usage: tools/gen_model_golden.py [--tiny] [--only NAME ...] [--synth-cmd "build/infercost model synth"]
(--only: regenerate just these tiny models / synth presets, e.g. --only tiny-roberta roberta-base;
 the goldens of the others stay as committed)
"""
import argparse
import json
import os
import shlex
import subprocess
import tempfile

import numpy as np
import safetensors.numpy
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (BertConfig, BertForSequenceClassification, BertTokenizer, CamembertConfig,
                          CamembertForSequenceClassification, CamembertTokenizerFast, DebertaV2ForSequenceClassification,
                          DistilBertConfig, DistilBertForSequenceClassification, ModernBertForSequenceClassification,
                          RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast, XLMRobertaConfig,
                          XLMRobertaForSequenceClassification, XLMRobertaTokenizerFast)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data_files", "golden")
SYNTH_SEED = 7


def hf_logits(model, seqs, pad=0):
    """fp32 logits for token-id lists, as one batch right-padded with `pad`."""
    model.eval()
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, :len(s)] = 1
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).logits.float().numpy()


def sequences(rng, vocab, lengths):
    return [[int(x) for x in rng.integers(0, vocab, size=n)] for n in lengths]


def write_golden(path, model_name, seqs, logits, extra=None):
    doc = {
        "model": model_name,
        "generator": "tools/gen_model_golden.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tolerance_abs": 1e-4,
    }
    doc.update(extra or {})
    doc["cases"] = [{"input_ids": s, "logits": [float(v) for v in l]} for s, l in zip(seqs, logits)]
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)}: {len(seqs)} cases, |logit| max {np.abs(logits).max():.3f}")


def perturb(model):
    # HF init leaves biases at 0 and LayerNorm at (1, 0); random values there
    # make the test sensitive to every bias and LayerNorm parameter.
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif "LayerNorm" in name or "layer_norm" in name:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)


def perturb_biases_and_norms(model, g, also=()):
    """With generator g, in named_parameters order: 0.1 * randn in every bias, 1 + 0.1 * randn in every
    nn.LayerNorm weight, and scale * randn in each parameter whose name ends with a suffix of `also`
    ((suffix, scale) pairs). Returns the names changed."""
    norm_weights = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, torch.nn.LayerNorm)}
    done = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            elif name in norm_weights:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)
            else:
                scale = next((sc for suffix, sc in also if name.endswith(suffix)), None)
                if scale is None:
                    continue
                p.copy_(torch.randn(p.shape, generator=g) * scale)
            done.append(name)
    return done


def perturb_padding_rows(model):
    # nn.Embedding(padding_idx=pad) zeroes the pad rows of the word and
    # position tables; RoBERTa reads its position row for a pad id inside the
    # text, so random values there make a wrong position id show.
    g = torch.Generator().manual_seed(4321)
    pad = model.config.pad_token_id
    emb = model.roberta.embeddings
    with torch.no_grad():
        for table in (emb.word_embeddings.weight, emb.position_embeddings.weight):
            table[pad].copy_(torch.randn(table.shape[1], generator=g) * model.config.initializer_range)


def training_texts():
    """A few hundred made-up words in 300 short texts: what the tiny tokenizers learn from."""
    rng = np.random.default_rng(5)
    syllables = ["ka", "to", "ri", "mel", "an", "ber", "so", "lu", "te", "qui", "zo", "ne", "pa", "dri", "el",
                 "ou", "ing", "ed", "th", "str", "é", "ß", "!", "'s", "2"]
    words = sorted({"".join(rng.choice(syllables, size=int(rng.integers(1, 4)))) for _ in range(400)})
    return [" ".join(rng.choice(words, size=int(rng.integers(3, 12)))) for _ in range(300)]


def write_bpe_tokenizer(dir_):
    """Byte-level BPE as RoBERTa's: <s>=0 <pad>=1 </s>=2 <unk>=3 <mask>=4, the 256 byte symbols, merges."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(training_texts(), trainers.BpeTrainer(
        vocab_size=400, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    RobertaTokenizerFast(tokenizer_object=tok).save_pretrained(dir_)
    return tok.get_vocab_size()


def write_unigram_tokenizer(dir_):
    """Unigram as XLM-R's: <s>=0 <pad>=1 </s>=2 <unk>=3, Metaspace, <mask> last."""
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(training_texts(), trainers.UnigramTrainer(
        vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], unk_token="<unk>",
        show_progress=False))
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    XLMRobertaTokenizerFast(tokenizer_object=tok).save_pretrained(dir_)
    return tok.get_vocab_size()


def write_camembert_unigram_tokenizer(dir_):
    """Unigram laid out as camembert-base's: <s>NOTUSED=0 <pad>=1 </s>NOTUSED=2 <unk>=3 <unk>NOTUSED=4
    <s>=5 </s>=6 (bos/eos 5/6, not RoBERTa's 0/2), Metaspace, <mask> last; saved as CamembertTokenizer."""
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(training_texts(), trainers.UnigramTrainer(
        vocab_size=300, unk_token="<unk>", show_progress=False,
        special_tokens=["<s>NOTUSED", "<pad>", "</s>NOTUSED", "<unk>", "<unk>NOTUSED", "<s>", "</s>"]))
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 5), ("</s>", 6)])
    CamembertTokenizerFast(tokenizer_object=tok).save_pretrained(dir_)
    return tok.get_vocab_size()


def roberta_sequences(rng, vocab, lengths, bos=0, eos=2):
    """Random ids, most rows framed <s> ... </s> (ids bos, eos) as the tokenizer frames them; some hold the
    pad id (1), <s> and </s> inside, and a few are nothing but pad ids."""
    seqs = sequences(rng, vocab, lengths)
    for k, s in enumerate(seqs):
        if k % 3 != 2:
            s[0] = bos
            s[-1] = eos if len(s) > 1 else s[-1]
        if len(s) > 2 and k % 2 == 0:
            for _ in range(1 + len(s) // 16):
                s[int(rng.integers(1, len(s) - 1))] = int(rng.choice([1, 1, bos, eos]))
    for k in (5, 17):
        seqs[k] = [1] * len(seqs[k])
    seqs[9][0] = 1  # a pad id at the first position, whose state the head reads
    return seqs


def roberta_config(cls, **kw):
    # As real RoBERTa files say (HF's config class defaults are 2 and 1e-12).
    base = dict(type_vocab_size=1, layer_norm_eps=1e-5, hidden_act="gelu", initializer_range=0.2,
                pad_token_id=1, bos_token_id=0, eos_token_id=2)
    base.update(kw)
    return cls(**base)


def write_vocab(dir_, vocab):
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = special + [f"w{i}" for i in range(vocab - len(special))]
    path = os.path.join(dir_, "vocab.txt")
    with open(path, "w") as f:
        f.write("\n".join(words) + "\n")
    BertTokenizer(path, do_lower_case=True).save_pretrained(dir_)


TINY = {
    # initializer_range 0.2 (HF default 0.02) so attention is far from uniform
    # and logits are O(1): a 1e-4 tolerance then means something.
    "tiny-distilbert": lambda: DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=512, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=160,
        activation="gelu", num_labels=2, initializer_range=0.2)),
    "tiny-distilbert-relu": lambda: DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=300, dim=48, n_layers=3, n_heads=3, hidden_dim=96, max_position_embeddings=140,
        activation="relu", num_labels=2, initializer_range=0.2)),
    "tiny-bert": lambda: BertForSequenceClassification(BertConfig(
        vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        max_position_embeddings=160, type_vocab_size=2, hidden_act="gelu", num_labels=2,
        initializer_range=0.2)),
}

SENTIMENT3 = {"id2label": {0: "negative", 1: "neutral", 2: "positive"},
              "label2id": {"negative": 0, "neutral": 1, "positive": 2}}

# The RoBERTa family: (model builder, tokenizer writer). max_position_embeddings
# 130 = pad_token_id + 1 + 128 usable positions, the longest input.
ROBERTA_TINY = {
    "tiny-roberta": (lambda: RobertaForSequenceClassification(roberta_config(
        RobertaConfig, vocab_size=420, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=130, **SENTIMENT3)), write_bpe_tokenizer),
    "tiny-roberta-multilabel": (lambda: RobertaForSequenceClassification(roberta_config(
        RobertaConfig, vocab_size=410, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=132, num_labels=5,
        problem_type="multi_label_classification")), write_bpe_tokenizer),
    "tiny-xlm-roberta": (lambda: XLMRobertaForSequenceClassification(roberta_config(
        XLMRobertaConfig, vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=130, **SENTIMENT3)), write_unigram_tokenizer),
    # Binary, and bos/eos 5/6 as camembert-base's config and tokenizer say.
    "tiny-camembert": (lambda: CamembertForSequenceClassification(roberta_config(
        CamembertConfig, vocab_size=180, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=130, bos_token_id=5, eos_token_id=6,
        id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})),
        write_camembert_unigram_tokenizer),
}


def gen_tiny(only):
    for i, (name, build) in enumerate(TINY.items()):
        if only and name not in only:
            continue
        torch.manual_seed(42 + i)
        model = build()
        perturb(model)
        model.eval()
        out = os.path.join(GOLDEN, name)
        os.makedirs(out, exist_ok=True)
        model.save_pretrained(out, safe_serialization=True)
        write_vocab(out, model.config.vocab_size)
        rng = np.random.default_rng(100 + i)
        lengths = [1, 2, 3, 4, 127, 128, 64, 65] + [int(x) for x in rng.integers(1, 129, size=52)]
        seqs = sequences(rng, model.config.vocab_size, lengths)
        write_golden(os.path.join(GOLDEN, f"{name}.json"), name, seqs, hf_logits(model, seqs),
                     {"model_dir": name})
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        print(f"  {name}/: {size / 1e6:.2f} MB")
    for i, (name, (build, write_tokenizer)) in enumerate(ROBERTA_TINY.items()):
        if only and name not in only:
            continue
        torch.manual_seed(142 + i)
        model = build()
        perturb(model)
        perturb_padding_rows(model)
        model.eval()
        out = os.path.join(GOLDEN, name)
        os.makedirs(out, exist_ok=True)
        model.save_pretrained(out, safe_serialization=True)
        tokens = write_tokenizer(out)
        assert tokens <= model.config.vocab_size, (name, tokens)
        rng = np.random.default_rng(300 + i)
        lengths = [1, 2, 3, 4, 127, 128, 64, 65] + [int(x) for x in rng.integers(1, 129, size=52)]
        seqs = roberta_sequences(rng, model.config.vocab_size, lengths, model.config.bos_token_id,
                                 model.config.eos_token_id)
        write_golden(os.path.join(GOLDEN, f"{name}.json"), name, seqs,
                     hf_logits(model, seqs, model.config.pad_token_id),
                     {"model_dir": name, "tokenizer_size": tokens})
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        print(f"  {name}/: {size / 1e3:.0f} KB, tokenizer {tokens} tokens")


def checksums(dir_):
    # Sum of squares over every float tensor: any change in synth's output
    # shows up here, so the C++ test can tell "synth changed" from "backend wrong".
    t = safetensors.numpy.load_file(os.path.join(dir_, "model.safetensors"))
    total = sum(float(np.square(v.astype(np.float64)).sum()) for v in t.values() if v.dtype.kind == "f")
    return {"weights_sum_of_squares": total}


def hf_logits_by_length(model, seqs, pad, chunk=8):
    """hf_logits in batches of `chunk` rows of similar length (long rows padded together would not fit)."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = np.zeros((len(seqs), model.config.num_labels), dtype=np.float32)
    for start in range(0, len(order), chunk):
        sel = order[start:start + chunk]
        out[sel] = hf_logits(model, [seqs[i] for i in sel], pad)
    return out


def gen_synth(synth_cmd, only):
    presets = [("distilbert-base", DistilBertForSequenceClassification),
               ("bert-base", BertForSequenceClassification),
               ("roberta-base", RobertaForSequenceClassification),
               ("xlm-roberta-base", XLMRobertaForSequenceClassification),
               ("modernbert-base", ModernBertForSequenceClassification),
               ("deberta-v3-base", DebertaV2ForSequenceClassification)]
    for i, (preset, cls) in enumerate(presets):
        if only and preset not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(shlex.split(synth_cmd) + ["--preset", preset, "--seed", str(SYNTH_SEED), "--out", tmp],
                           check=True)
            model = cls.from_pretrained(tmp, torch_dtype=torch.float32)
            rng = np.random.default_rng(200 + i)
            # Mostly short inputs, as tweets are, plus a tail up to 300.
            lengths = [1, 2, 300, 299, 128, 129, 256, 33] + [int(x) for x in rng.integers(1, 64, size=32)] + \
                      [int(x) for x in rng.integers(64, 301, size=16)]
            modernbert = cls is ModernBertForSequenceClassification
            deberta = cls is DebertaV2ForSequenceClassification
            if modernbert:  # past its 64-token local windows, to 2,100 tokens
                lengths += [700, 1500, 2100]
            if deberta:  # past the 128 exact relative positions, into the log buckets, to 512
                lengths += [400, 511, 512]
            roberta = cls in (RobertaForSequenceClassification, XLMRobertaForSequenceClassification)
            seqs = (roberta_sequences if roberta else sequences)(rng, model.config.vocab_size, lengths)
            extra = {"synth_preset": preset, "synth_seed": SYNTH_SEED}
            extra.update(checksums(tmp))
            if modernbert or deberta:
                extra["hf_parameters"] = sum(p.numel() for p in model.parameters())
            pad = model.config.pad_token_id if (roberta or modernbert) else 0
            logits = hf_logits_by_length(model, seqs, pad) if modernbert else hf_logits(model, seqs, pad)
            write_golden(os.path.join(GOLDEN, f"synth-{preset}.json"), f"synth {preset} seed {SYNTH_SEED}", seqs,
                         logits, extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="only the tiny models (a)")
    ap.add_argument("--only", nargs="+", default=[], help="only these tiny models / synth presets")
    ap.add_argument("--synth-cmd", default=os.path.join(ROOT, "build", "infercost") + " model synth",
                    help="command that synthesizes a model; gets --preset --seed --out appended")
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(GOLDEN, exist_ok=True)
    gen_tiny(set(args.only))
    if not args.tiny:
        gen_synth(args.synth_cmd, set(args.only))


if __name__ == "__main__":
    main()
