#include "model/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <unordered_set>

#include "checkpoint_names.h"
#include "corpus/tweets.h"
#include "infercost/core/file.h"
#include "infercost/model/safetensors.h"
#include "infercost/model/weights.h"
#include "infercost/text/tokenizer.h"
#include "model/reference_encoder.h"
#include "model/relative_tables.h"
#include "synth_tokenizers.h"

namespace infercost::model {

namespace {

// ---- Deterministic randomness (no std:: distributions: their output differs
// between standard libraries).

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class Rng {
 public:
  Rng(uint64_t seed, std::string_view stream) : state_(seed ^ fnv1a64(stream)) { splitmix64(state_); }
  uint64_t next() { return splitmix64(state_); }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  uint64_t below(uint64_t n) { return next() % n; }
  // Box-Muller; both values of each pair are used.
  double normal() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    double u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    have_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
  bool have_spare_ = false;
  double spare_ = 0;
};

// Each tensor draws from its own stream (seed x name), so adding a tensor
// never changes the values of the others.
std::vector<float> normal_tensor(uint64_t seed, const std::string& name, size_t n, double stddev) {
  Rng rng(seed, name);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(stddev * rng.normal());
  return v;
}

constexpr double kInitStd = 0.02;  // HF initializer_range

// Standard deviation of the logit difference (positive - negative) over the
// calibration texts. Chosen with tools/check_synth_model.py so that, on
// synthetic tweets, most rows are confident and a few are near 50/50 (see
// docs/weights_format.md for the observed distribution).
constexpr double kTargetLogitStd = 6.0;
constexpr int kCalibrationTexts = 32;
// A 3-label head's middle (neutral) logit: it wins where the half logit
// difference is within +-0.75, about 20% of rows at kTargetLogitStd.
constexpr float kNeutralLogit = 0.75f;

// ---- Vocabulary.

// The characters of UTF-8 `word`, one string each.
std::vector<std::string> utf8_chars(const std::string& word) {
  std::vector<std::string> chars;
  for (size_t i = 0; i < word.size();) {
    size_t n = 1;
    while (i + n < word.size() && (static_cast<unsigned char>(word[i + n]) & 0xC0) == 0x80) ++n;
    chars.push_back(word.substr(i, n));
    i += n;
  }
  return chars;
}

// What the head's calibration draws its texts from: [first_word, end_word)
// between bos and eos. `tokens` is the BERT vocabulary (vocab.txt); the
// RoBERTa family's tokenizers are written from their own structures.
struct SynthVocab {
  std::vector<std::string> tokens;
  int32_t first_word = 0, end_word = 0;  // [first_word, end_word): lexicon words
  int32_t bos = 101, eos = 102;          // [CLS] and [SEP] in BERT's layout
  // Where set, the calibration draws these ids instead (the RoBERTa family's
  // whole-word tokens, which sit among the other pieces).
  std::vector<int32_t> word_ids;
};

Result<SynthVocab> build_vocab(int vocab_size) {
  SynthVocab v;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& t) {
    if (seen.insert(t).second) v.tokens.push_back(t);
  };
  // BERT's layout, so ids of special tokens match bert-base-uncased.
  add("[PAD]");
  for (int i = 0; i < 99; ++i) add(fmt::format("[unused{}]", i));
  add("[UNK]");
  add("[CLS]");
  add("[SEP]");
  add("[MASK]");

  // The words BERT's uncased tokenizer makes of the lexicon.
  const text::TokenizerOptions uncased;
  std::vector<std::string> words;
  for (const std::string& entry : corpus::tweet_lexicon()) {
    INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> w, text::basic_tokenize(entry, uncased));
    words.insert(words.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
  }
  std::vector<std::string> chars;
  for (char c = 33; c <= 126; ++c) {
    if (c < 'A' || c > 'Z') chars.emplace_back(1, c);  // uppercase never survives lowercasing
  }
  for (const auto& w : words) {
    for (auto& c : utf8_chars(w)) chars.push_back(std::move(c));
  }
  // Byte order of UTF-8 is code point order.
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  for (const auto& c : chars) add(c);
  for (const auto& c : chars) {
    // Punctuation and CJK characters are always words of their own, never continuations.
    INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> split, text::basic_tokenize("a" + c, uncased));
    if (split.size() == 1) add("##" + c);
  }
  v.first_word = static_cast<int32_t>(v.tokens.size());
  for (const auto& w : words) {
    if (utf8_chars(w).size() >= 2) add(w);
  }
  v.end_word = static_cast<int32_t>(v.tokens.size());
  if (v.tokens.size() > static_cast<size_t>(vocab_size)) {
    return internal_error(fmt::format("the synthetic vocabulary needs {} tokens but the preset has {}",
                                      v.tokens.size(), vocab_size));
  }
  // Filler: letter pairs and triples, plain and continuation, so unknown words
  // split into short pieces rather than [UNK], as in a real WordPiece vocab.
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  for (int len = 2; v.tokens.size() < static_cast<size_t>(vocab_size); ++len) {
    size_t combos = 1;
    for (int i = 0; i < len; ++i) combos *= letters.size();
    for (const char* prefix : {"", "##"}) {
      for (size_t k = 0; k < combos && v.tokens.size() < static_cast<size_t>(vocab_size); ++k) {
        std::string s;
        for (size_t r = k, i = 0; i < static_cast<size_t>(len); ++i, r /= letters.size()) {
          s.insert(s.begin(), letters[r % letters.size()]);
        }
        add(prefix + s);
      }
    }
  }
  return v;
}

// Rounds to 4 significant digits, so that a last-bit difference in the
// calibration arithmetic on another platform does not change the file.
float round4(double v) {
  return std::stof(fmt::format("{:.4g}", v));
}

// Makes the classifier a trained-looking head: logit difference = s * (u . g) + b
// with s and b set so the difference has mean 0 and std kTargetLogitStd over
// calibration texts drawn from the lexicon. Without it, the constant part of
// the [CLS] vector in random weights puts nearly every row in one class.
void calibrate_head(const ModelConfig& c, const SynthVocab& vocab, uint64_t seed, EncoderWeights& w) {
  const int h = c.hidden_size;
  Rng rng(seed, "calibration");
  std::vector<double> u(static_cast<size_t>(h));
  double norm = 0;
  for (auto& x : u) {
    x = rng.normal();
    norm += x * x;
  }
  for (auto& x : u) x /= std::sqrt(norm);
  std::vector<double> z;
  const int32_t lo = vocab.end_word > vocab.first_word ? vocab.first_word : 104;
  const int32_t hi =
      vocab.end_word > vocab.first_word ? vocab.end_word : static_cast<int32_t>(vocab.tokens.size());
  for (int k = 0; k < kCalibrationTexts; ++k) {
    std::vector<int32_t> ids{vocab.bos};
    int words = 4 + static_cast<int>(rng.below(21));
    for (int i = 0; i < words; ++i) {
      if (vocab.word_ids.empty()) {
        ids.push_back(lo + static_cast<int32_t>(rng.below(static_cast<uint64_t>(hi - lo))));
      } else {
        ids.push_back(vocab.word_ids[rng.below(vocab.word_ids.size())]);
      }
    }
    ids.push_back(vocab.eos);
    if (ids.size() > static_cast<size_t>(c.max_positions()))
      ids.resize(static_cast<size_t>(c.max_positions()));
    std::vector<float> g = reference_head_features(c, w, ids);
    double dot = 0;
    for (int i = 0; i < h; ++i) dot += u[static_cast<size_t>(i)] * g[static_cast<size_t>(i)];
    z.push_back(dot);
  }
  double mean = 0, var = 0;
  for (double d : z) mean += d;
  mean /= static_cast<double>(z.size());
  for (double d : z) var += (d - mean) * (d - mean);
  var /= static_cast<double>(z.size() - 1);
  const double sd = std::max(std::sqrt(var), 1e-6);
  const float half_scale = round4(kTargetLogitStd / sd / 2.0);
  const float half_bias = round4(-mean * half_scale);
  // NEGATIVE first, POSITIVE last; a middle (neutral) label, where there is
  // one, has no weights and a constant logit.
  Linear& cls = w.head.classifier;
  const size_t last = static_cast<size_t>(cls.out - 1);
  std::fill(cls.weight.begin(), cls.weight.end(), 0.0f);
  for (int i = 0; i < h; ++i) {
    cls.weight[static_cast<size_t>(i)] = static_cast<float>(-half_scale * u[static_cast<size_t>(i)]);
    cls.weight[last * h + static_cast<size_t>(i)] =
        static_cast<float>(half_scale * u[static_cast<size_t>(i)]);
  }
  cls.bias.assign(static_cast<size_t>(cls.out), kNeutralLogit);
  cls.bias.front() = -half_bias;
  cls.bias.back() = half_bias;
}

// ---- Weights.

Linear make_linear(uint64_t seed, const std::string& name, int out, int in) {
  Linear l;
  l.out = out;
  l.in = in;
  l.weight = normal_tensor(seed, name + ".weight", static_cast<size_t>(out) * in, kInitStd);
  l.bias.assign(static_cast<size_t>(out), 0.0f);
  return l;
}

LayerNormWeights make_ln(int h) {
  LayerNormWeights ln;
  ln.gamma.assign(static_cast<size_t>(h), 1.0f);
  ln.beta.assign(static_cast<size_t>(h), 0.0f);
  return ln;
}

struct Named {
  std::string name;
  std::vector<int64_t> shape;
  const std::vector<float>* data;
};

void add_linear(std::vector<Named>& out, const std::string& name, const Linear& l) {
  out.push_back({name + ".weight", {l.out, l.in}, &l.weight});
  out.push_back({name + ".bias", {l.out}, &l.bias});
}

void add_ln(std::vector<Named>& out, const std::string& name, const LayerNormWeights& ln) {
  out.push_back({name + ".weight", {static_cast<int64_t>(ln.gamma.size())}, &ln.gamma});
  out.push_back({name + ".bias", {static_cast<int64_t>(ln.beta.size())}, &ln.beta});
}

// A post-norm layer in BERT's layout at prefix `p`: random linears (streams
// named by their tensors), LayerNorms 1 / 0.
void make_bert_layer(uint64_t seed, const CheckpointNames& n, const std::string& p, int h, int f,
                     EncoderLayerWeights& l) {
  l.q = make_linear(seed, p + n.q, h, h);
  l.k = make_linear(seed, p + n.k, h, h);
  l.v = make_linear(seed, p + n.v, h, h);
  l.attn_out = make_linear(seed, p + n.attn_out, h, h);
  l.attn_ln = make_ln(h);
  l.ffn_in = make_linear(seed, p + n.ffn_in, f, h);
  l.ffn_out = make_linear(seed, p + n.ffn_out, h, f);
  l.ffn_ln = make_ln(h);
}

// Its tensors under their HF names.
void add_bert_layer(std::vector<Named>& names, const CheckpointNames& n, const std::string& p,
                    const EncoderLayerWeights& l) {
  add_linear(names, p + n.q, l.q);
  add_linear(names, p + n.k, l.k);
  add_linear(names, p + n.v, l.v);
  add_linear(names, p + n.attn_out, l.attn_out);
  add_ln(names, p + n.attn_ln, l.attn_ln);
  add_linear(names, p + n.ffn_in, l.ffn_in);
  add_linear(names, p + n.ffn_out, l.ffn_out);
  add_ln(names, p + n.ffn_ln, l.ffn_ln);
}

// Every layer of w under BERT's names (layer.N.).
void add_bert_layers(std::vector<Named>& names, const CheckpointNames& n, const EncoderWeights& w) {
  for (size_t i = 0; i < w.layers.size(); ++i)
    add_bert_layer(names, n, n.layer + std::to_string(i) + ".", w.layers[i]);
}

// Random weights under HF names (the names double as PRNG stream names).
EncoderWeights make_weights(const ModelConfig& c, uint64_t seed, std::vector<Named>& names) {
  const CheckpointNames& n = checkpoint_names(c.architecture);
  const int h = c.hidden_size, f = c.intermediate_size;
  const std::string emb = n.embeddings;
  EncoderWeights w;
  w.word_embeddings =
      normal_tensor(seed, emb + "word_embeddings.weight", static_cast<size_t>(c.vocab_size) * h, kInitStd);
  // HF zeroes the padding row (nn.Embedding padding_idx).
  std::fill_n(w.word_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  w.position_embeddings = normal_tensor(seed, emb + "position_embeddings.weight",
                                        static_cast<size_t>(c.max_position_embeddings) * h, kInitStd);
  // RoBERTa's position table has the same padding row (pad ids' position).
  if (c.position_offset() > 0) {
    std::fill_n(w.position_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  }
  if (n.token_types) {
    w.token_type_embeddings = normal_tensor(seed, emb + "token_type_embeddings.weight",
                                            static_cast<size_t>(c.type_vocab_size) * h, kInitStd);
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  w.embeddings_ln = make_ln(h);
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = n.layer + std::to_string(i) + ".";
    make_bert_layer(seed, n, p, h, f, l);
  }
  w.head.pre = make_linear(seed, n.head_pre, h, h);
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);

  names.push_back({emb + "word_embeddings.weight", {c.vocab_size, h}, &w.word_embeddings});
  names.push_back(
      {emb + "position_embeddings.weight", {c.max_position_embeddings, h}, &w.position_embeddings});
  if (n.token_types) {
    names.push_back({emb + "token_type_embeddings.weight", {c.type_vocab_size, h}, &w.token_type_embeddings});
  }
  add_ln(names, emb + "LayerNorm", w.embeddings_ln);
  add_bert_layers(names, n, w);
  add_linear(names, n.head_pre, w.head.pre);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

// DeBERTa-v3's tensors under HF's names (checkpoint_names.h): BERT's layers
// (query_proj, key_proj, value_proj), no position or token type table, the
// relative embeddings [2 x 256, hidden] and their LayerNorm, the pooler; the
// position key / query tables derived as the reader derives them (the
// layers' own key_proj / query_proj: share_att_key). `rel` keeps the tensors
// `names` points at.
EncoderWeights make_deberta_weights(const ModelConfig& c, uint64_t seed, std::vector<Named>& names,
                                    std::vector<std::vector<float>>& rel) {
  const CheckpointNames& n = checkpoint_names(c.architecture);
  const DebertaNames& x = kDebertaExtraNames;
  const int h = c.hidden_size, f = c.intermediate_size, rows = 2 * c.relative_span();
  const std::string emb = n.embeddings;
  EncoderWeights w;
  w.word_embeddings =
      normal_tensor(seed, emb + "word_embeddings.weight", static_cast<size_t>(c.vocab_size) * h, kInitStd);
  std::fill_n(w.word_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  w.embeddings_ln = make_ln(h);
  rel.resize(2);
  rel[0] =
      normal_tensor(seed, std::string(x.rel_embeddings) + ".weight", static_cast<size_t>(rows) * h, kInitStd);
  const LayerNormWeights rel_ln = make_ln(h);
  rel[1] = rel_ln.gamma;
  rel.push_back(rel_ln.beta);
  std::vector<float> normed = rel[0];
  normalize_relative_embeddings(c, rel_ln, normed);
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = n.layer + std::to_string(i) + ".";
    make_bert_layer(seed, n, p, h, f, l);
    l.pos_key = project_rows(normed, rows, h, l.k.weight, h, &l.k.bias);
    l.pos_query = project_rows(normed, rows, h, l.q.weight, h, &l.q.bias);
  }
  w.head.pre = make_linear(seed, n.head_pre, h, h);
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);

  names.push_back({emb + "word_embeddings.weight", {c.vocab_size, h}, &w.word_embeddings});
  add_ln(names, emb + "LayerNorm", w.embeddings_ln);
  add_bert_layers(names, n, w);
  names.push_back({std::string(x.rel_embeddings) + ".weight", {rows, h}, &rel[0]});
  names.push_back({std::string(x.rel_norm) + ".weight", {h}, &rel[1]});
  names.push_back({std::string(x.rel_norm) + ".bias", {h}, &rel[2]});
  add_linear(names, n.head_pre, w.head.pre);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

// ModernBERT's tensors under HF's names (checkpoint_names.h): no biases and
// no norm biases (the preset has none; the weights read them as zeros), a
// fused Wqkv split into q, k and v, a GLU's Wi of 2 f rows. `fused` keeps the
// Wqkv tensors `names` points at.
EncoderWeights make_modernbert_weights(const ModelConfig& c, uint64_t seed, std::vector<Named>& names,
                                       std::vector<std::vector<float>>& fused) {
  const CheckpointNames& n = checkpoint_names(c.architecture);
  const ModernBertNames& x = kModernBertExtraNames;
  const int h = c.hidden_size, f = c.intermediate_size;
  const std::string emb = n.embeddings;
  auto unbiased = [&](const std::string& name, int out, int in) {
    Linear l = make_linear(seed, name, out, in);
    names.push_back({name + ".weight", {out, in}, nullptr});
    return l;
  };
  EncoderWeights w;
  const std::string tok = emb + x.tok_embeddings + ".weight";
  w.word_embeddings = normal_tensor(seed, tok, static_cast<size_t>(c.vocab_size) * h, kInitStd);
  std::fill_n(w.word_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  w.embeddings_ln = make_ln(h);
  w.layers.resize(static_cast<size_t>(c.num_layers));
  fused.resize(static_cast<size_t>(c.num_layers));
  names.push_back({tok, {c.vocab_size, h}, &w.word_embeddings});
  names.push_back({emb + x.embeddings_norm + ".weight", {h}, &w.embeddings_ln.gamma});
  for (int i = 0; i < c.num_layers; ++i) {
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = n.layer + std::to_string(i) + ".";
    if (i > 0) {
      l.attn_ln = make_ln(h);
      names.push_back({p + n.attn_ln + ".weight", {h}, &l.attn_ln.gamma});
    }
    const Linear qkv = make_linear(seed, p + n.q, 3 * h, h);
    fused[static_cast<size_t>(i)] = qkv.weight;
    names.push_back({p + n.q + ".weight", {3 * h, h}, &fused[static_cast<size_t>(i)]});
    Linear* parts[] = {&l.q, &l.k, &l.v};
    for (int part = 0; part < 3; ++part) {
      Linear& out = *parts[part];
      out.out = h;
      out.in = h;
      const auto row0 = static_cast<std::ptrdiff_t>(part) * h;
      out.weight.assign(qkv.weight.begin() + row0 * h, qkv.weight.begin() + (row0 + h) * h);
      out.bias.assign(static_cast<size_t>(h), 0.0f);
    }
    l.attn_out = unbiased(p + n.attn_out, h, h);
    names.back().data = &l.attn_out.weight;
    l.ffn_ln = make_ln(h);
    names.push_back({p + n.ffn_ln + ".weight", {h}, &l.ffn_ln.gamma});
    l.ffn_in = unbiased(p + n.ffn_in, 2 * f, h);
    names.back().data = &l.ffn_in.weight;
    l.ffn_out = unbiased(p + n.ffn_out, h, f);
    names.back().data = &l.ffn_out.weight;
  }
  w.final_ln = make_ln(h);
  names.push_back({std::string(x.final_norm) + ".weight", {h}, &w.final_ln.gamma});
  w.head.pre = unbiased(n.head_pre, h, h);
  names.back().data = &w.head.pre.weight;
  w.head.norm = make_ln(h);
  names.push_back({std::string(x.head_norm) + ".weight", {h}, &w.head.norm.gamma});
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

Status write_text(const std::string& path, const std::string& text) {
  INFERCOST_ASSIGN_OR_RETURN(auto f, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(f.write(text));
  return f.commit();
}

}  // namespace

std::vector<std::string> synth_presets() {
  return {"distilbert-base", "bert-base",       "roberta-base", "xlm-roberta-base",
          "modernbert-base", "deberta-v3-base", "tiny"};
}

Result<ModelConfig> synth_config(const std::string& preset) {
  ModelConfig c;
  c.vocab_size = 30522;
  c.max_position_embeddings = 512;
  c.ffn_activation = Activation::kGelu;
  c.layer_norm_eps = 1e-12f;
  c.pad_token_id = 0;
  c.labels = {"NEGATIVE", "POSITIVE"};
  c.synthetic = true;
  c.synthetic_preset = preset;
  if (preset == "distilbert-base" || preset == "tiny") {
    c.architecture = Architecture::kDistilBert;
    c.model_type = "distilbert";
    c.type_vocab_size = 0;
    if (preset == "tiny") {
      c.hidden_size = 32;
      c.num_layers = 2;
      c.num_heads = 2;
      c.intermediate_size = 64;
    }
  } else if (preset == "bert-base") {
    c.architecture = Architecture::kBert;
    c.model_type = "bert";
    c.num_layers = 12;
    c.type_vocab_size = 2;
  } else if (preset == "roberta-base" || preset == "xlm-roberta-base") {
    // As roberta-base's and xlm-roberta-base's config.json say.
    c.architecture = Architecture::kRoberta;
    c.model_type = preset == "roberta-base" ? "roberta" : "xlm-roberta";
    c.vocab_size = preset == "roberta-base" ? 50265 : 250002;
    c.num_layers = 12;
    c.max_position_embeddings = 514;
    c.pad_token_id = kRobertaPadId;
    c.layer_norm_eps = 1e-5f;
    c.type_vocab_size = 1;
    c.labels = {"negative", "neutral", "positive"};
  } else if (preset == "modernbert-base") {
    // As answerdotai/ModernBERT-base's config.json says, with a 2-label mean-pooling head.
    c.architecture = Architecture::kModernBert;
    c.model_type = "modernbert";
    c.vocab_size = 50368;
    c.num_layers = 22;
    c.intermediate_size = 1152;
    c.max_position_embeddings = 8192;
    c.pad_token_id = kModernBertPadId;
    c.layer_norm_eps = 1e-5f;
    c.type_vocab_size = 0;
    c.norm_placement = NormPlacement::kPre;
    c.position_table = false;
    c.glu = true;
    c.attention_bias = c.mlp_bias = c.norm_bias = c.head_bias = false;
    c.head_mean_pooling = true;
    c.head_norm = true;
    c.classifier_activation = Activation::kGelu;
    for (int i = 0; i < c.num_layers; ++i) {  // every third layer global, the others see 64 tokens each side
      c.attention_window.push_back(i % 3 == 0 ? 0 : 64);
      c.rope_theta.push_back(i % 3 == 0 ? 160000.0 : 10000.0);
    }
  } else if (preset == "deberta-v3-base") {
    // As microsoft/deberta-v3-base's config.json says, with a 2-label head.
    c.architecture = Architecture::kDebertaV2;
    c.model_type = "deberta-v2";
    c.vocab_size = 128100;
    c.num_layers = 12;
    c.layer_norm_eps = 1e-7f;
    c.type_vocab_size = 0;
    c.position_table = false;
    c.relative_attention = true;
    c.c2p = c.p2c = true;
    c.position_buckets = 256;
    c.max_relative_positions = 512;
    c.share_att_key = true;
    c.norm_relative_embeddings = true;
    c.classifier_activation = Activation::kGelu;
  } else {
    std::string presets;
    for (const std::string& p : synth_presets()) presets += (presets.empty() ? "" : ", ") + p;
    return invalid_argument("unknown synthetic preset '" + preset + "' (" + presets + ")");
  }
  c.name = "infercost-synthetic-" + preset;
  return c;
}

namespace {

// The RoBERTa family's tokenizer files, built from the tweet lexicon, and the
// calibration's view of them.
struct FamilyTokenizer {
  std::vector<std::pair<std::string, std::string>> files;  // name, contents
  SynthVocab calibration;
};

// ModernBERT's: a byte-level BPE in a tokenizer.json of ModernBERT's layout.
Result<FamilyTokenizer> build_modernbert_tokenizer(const ModelConfig& c) {
  FamilyTokenizer t;
  t.calibration.bos = kModernBertClsId;
  t.calibration.eos = kModernBertSepId;
  INFERCOST_ASSIGN_OR_RETURN(
      ByteLevelBpe bpe, learn_byte_level_bpe(bpe_training_words(corpus::tweet_lexicon()), kModernBertUnkId));
  t.files.emplace_back("tokenizer.json", modernbert_tokenizer_json(bpe));
  const nlohmann::ordered_json tc = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                                     {"model_max_length", c.max_positions()},
                                     {"clean_up_tokenization_spaces", true},
                                     {"cls_token", "[CLS]"},
                                     {"sep_token", "[SEP]"},
                                     {"pad_token", "[PAD]"},
                                     {"unk_token", "[UNK]"},
                                     {"mask_token", "[MASK]"},
                                     {"model_input_names", {"input_ids", "attention_mask"}}};
  t.files.emplace_back("tokenizer_config.json", tc.dump(2) + "\n");
  t.calibration.first_word = bpe.first_merged;
  t.calibration.end_word = bpe.end_merged;
  t.calibration.word_ids = bpe.word_ids;
  return t;
}

// DeBERTa-v3's: a Unigram in a tokenizer.json with [PAD] [CLS] [SEP] [UNK]
// first, in DebertaV2Tokenizer's pipeline (which transformers 5 and the
// engine rebuild from tokenizer_config.json's class anyway).
Result<FamilyTokenizer> build_deberta_tokenizer(const ModelConfig& c) {
  FamilyTokenizer t;
  t.calibration.bos = kDebertaClsId;
  t.calibration.eos = kDebertaSepId;
  INFERCOST_ASSIGN_OR_RETURN(UnigramVocab unigram,
                             build_unigram_vocab(corpus::tweet_lexicon(), c.vocab_size));
  t.files.emplace_back("tokenizer.json", deberta_tokenizer_json(unigram));
  const nlohmann::ordered_json tc = {{"tokenizer_class", "DebertaV2Tokenizer"},
                                     {"model_max_length", c.max_positions()},
                                     {"do_lower_case", false},
                                     {"split_by_punct", false},
                                     {"bos_token", "[CLS]"},
                                     {"eos_token", "[SEP]"},
                                     {"cls_token", "[CLS]"},
                                     {"sep_token", "[SEP]"},
                                     {"pad_token", "[PAD]"},
                                     {"unk_token", "[UNK]"},
                                     {"mask_token", "[MASK]"}};
  t.files.emplace_back("tokenizer_config.json", tc.dump(2) + "\n");
  t.calibration.first_word = unigram.first_word;
  t.calibration.end_word = unigram.end_word;
  t.calibration.word_ids = unigram.word_ids;
  return t;
}

Result<FamilyTokenizer> build_roberta_tokenizer(const ModelConfig& c) {
  FamilyTokenizer t;
  t.calibration.bos = kRobertaBosId;
  t.calibration.eos = kRobertaEosId;
  nlohmann::ordered_json tc = {
      {"tokenizer_class", c.model_type == "roberta" ? "RobertaTokenizer" : "XLMRobertaTokenizer"},
      {"model_max_length", c.max_positions()},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"},
      {"sep_token", "</s>"},
      {"cls_token", "<s>"},
      {"unk_token", "<unk>"},
      {"pad_token", "<pad>"},
      {"mask_token", "<mask>"}};
  if (c.model_type == "roberta") {
    INFERCOST_ASSIGN_OR_RETURN(
        ByteLevelBpe bpe, learn_byte_level_bpe(bpe_training_words(corpus::tweet_lexicon()), c.vocab_size));
    t.files.emplace_back("vocab.json", bpe_vocab_json(bpe));
    t.files.emplace_back("merges.txt", bpe_merges_txt(bpe));
    tc["add_prefix_space"] = false;
    tc["errors"] = "replace";
    tc["trim_offsets"] = true;
    t.calibration.first_word = bpe.first_merged;
    t.calibration.end_word = bpe.end_merged;
    t.calibration.word_ids = bpe.word_ids;
  } else {
    INFERCOST_ASSIGN_OR_RETURN(UnigramVocab unigram,
                               build_unigram_vocab(corpus::tweet_lexicon(), c.vocab_size));
    t.files.emplace_back("tokenizer.json", unigram_tokenizer_json(unigram));
    tc["add_prefix_space"] = true;
    t.calibration.first_word = unigram.first_word;
    t.calibration.end_word = unigram.end_word;
    t.calibration.word_ids = unigram.word_ids;
  }
  t.files.emplace_back("tokenizer_config.json", tc.dump(2) + "\n");
  return t;
}

// The tokenizer files of --tokenizer PATH: a tokenizer.json, or a folder with
// one (or, for RoBERTa, vocab.json + merges.txt), copied as they are, with
// the folder's tokenizer_config.json and special_tokens_map.json if any.
Result<std::vector<std::pair<std::string, std::string>>> given_tokenizer(const std::string& path,
                                                                         const ModelConfig& c) {
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
    files.emplace_back("tokenizer.json", std::move(text));
    return files;
  }
  const std::vector<std::string> wanted = {
      "tokenizer.json",         "vocab.json", "merges.txt", "vocab.txt", "tokenizer_config.json",
      "special_tokens_map.json"};
  for (const std::string& name : wanted) {
    const std::string p = path + "/" + name;
    if (!std::filesystem::exists(p, ec)) continue;
    INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(p));
    files.emplace_back(name, std::move(text));
  }
  auto has = [&](const char* name) {
    return std::any_of(files.begin(), files.end(), [&](const auto& f) { return f.first == name; });
  };
  const bool bpe_files = c.model_type == "roberta" && has("vocab.json") && has("merges.txt");
  const bool wordpiece = c.architecture == Architecture::kBert || c.architecture == Architecture::kDistilBert;
  if (!has("tokenizer.json") && !bpe_files && !(wordpiece && has("vocab.txt"))) {
    return not_found(path + ": no tokenizer here: expected tokenizer.json" +
                     std::string(c.model_type == "roberta" ? " or vocab.json + merges.txt"
                                 : wordpiece               ? " or vocab.txt"
                                                           : ""));
  }
  return files;
}

}  // namespace

Status synthesize_model(const SynthOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(ModelConfig c, synth_config(options.preset));
  c.synthetic_seed = options.seed;
  c.name += fmt::format("-seed{}", options.seed);
  if (options.out_dir.empty()) return invalid_argument("synthesize_model: no output directory given");
  std::vector<std::pair<std::string, std::string>> given;
  if (!options.tokenizer.empty()) {
    Result<std::vector<std::pair<std::string, std::string>>> read = given_tokenizer(options.tokenizer, c);
    if (!read.ok()) return read.status().with_context("--tokenizer");
    given = std::move(read).value();
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return io_error(options.out_dir + ": cannot create directory: " + ec.message());

  // The project's tokenizer is built even where --tokenizer replaces its
  // files: the head's calibration draws from it, so the weights depend on the
  // preset and seed only.
  SynthVocab vocab;
  std::vector<std::pair<std::string, std::string>> files;
  if (c.architecture == Architecture::kRoberta || c.architecture == Architecture::kModernBert ||
      c.architecture == Architecture::kDebertaV2) {
    INFERCOST_ASSIGN_OR_RETURN(FamilyTokenizer t,
                               c.architecture == Architecture::kRoberta     ? build_roberta_tokenizer(c)
                               : c.architecture == Architecture::kDebertaV2 ? build_deberta_tokenizer(c)
                                                                            : build_modernbert_tokenizer(c));
    vocab = std::move(t.calibration);
    files = std::move(t.files);
  } else {
    INFERCOST_ASSIGN_OR_RETURN(vocab, build_vocab(c.vocab_size));
    std::string vocab_text;
    for (const auto& t : vocab.tokens) vocab_text += t + "\n";
    files.emplace_back("vocab.txt", std::move(vocab_text));
    nlohmann::ordered_json tc = {
        {"do_lower_case", true},
        {"strip_accents", nullptr},
        {"tokenize_chinese_chars", true},
        {"clean_up_tokenization_spaces", true},
        {"model_max_length", c.max_position_embeddings},
        {"unk_token", "[UNK]"},
        {"sep_token", "[SEP]"},
        {"pad_token", "[PAD]"},
        {"cls_token", "[CLS]"},
        {"mask_token", "[MASK]"},
        {"tokenizer_class", c.architecture == Architecture::kBert ? "BertTokenizer" : "DistilBertTokenizer"},
    };
    files.emplace_back("tokenizer_config.json", tc.dump(2) + "\n");
  }
  if (!given.empty()) {
    // The given files replace ours; a tokenizer_config.json of ours stays
    // where the folder has none.
    std::erase_if(files, [&](const auto& f) { return f.first != "tokenizer_config.json"; });
    for (auto& g : given) {
      std::erase_if(files, [&](const auto& f) { return f.first == g.first; });
      files.push_back(std::move(g));
    }
  }

  std::vector<Named> names;
  std::vector<std::vector<float>> fused;
  EncoderWeights w =
      c.architecture == Architecture::kModernBert  ? make_modernbert_weights(c, options.seed, names, fused)
      : c.architecture == Architecture::kDebertaV2 ? make_deberta_weights(c, options.seed, names, fused)
                                                   : make_weights(c, options.seed, names);
  calibrate_head(c, vocab, options.seed, w);

  const std::string dir = options.out_dir;
  for (const auto& [name, text] : files) INFERCOST_RETURN_IF_ERROR(write_text(dir + "/" + name, text));
  std::vector<TensorToWrite> tensors;
  for (const auto& n : names) tensors.push_back({n.name, n.shape, n.data});
  INFERCOST_RETURN_IF_ERROR(write_safetensors(
      dir + "/model.safetensors", tensors,
      {{"format", "pt"}, {"infercost_synthetic", fmt::format("{}:{}", options.preset, options.seed)}},
      DType::kF32));
  // config.json last: a directory with it is complete.
  return write_text(dir + "/config.json", config_to_json(c));
}

}  // namespace infercost::model
