#include "infercost/model/synth.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <unordered_set>

#include "infercost/core/file.h"
#include "infercost/data/tweets.h"
#include "infercost/model/safetensors.h"
#include "infercost/model/weights.h"

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

// ---- Vocabulary.

bool is_cjk(utf8proc_int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_punct(utf8proc_int32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  auto cat = utf8proc_category(cp);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_space(utf8proc_int32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool is_control(utf8proc_int32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  auto cat = utf8proc_category(cp);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF;
}

std::string encode_cp(utf8proc_int32_t cp) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(cp, buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// The words BERT's uncased pre-tokenizer makes of `text` (clean, split CJK,
// strip accents, lowercase, split at whitespace and punctuation), as code
// point sequences.
std::vector<std::vector<utf8proc_int32_t>> bert_words(std::string_view text) {
  std::vector<std::vector<utf8proc_int32_t>> words(1);
  auto flush = [&] {
    if (!words.back().empty()) words.emplace_back();
  };
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) break;  // the lexicon is valid UTF-8; stop rather than guess
    p += n;
    left -= n;
    if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
    if (is_space(cp)) {
      flush();
      continue;
    }
    utf8proc_int32_t decomposed[8];
    int last = 0;
    utf8proc_ssize_t k = utf8proc_decompose_char(cp, decomposed, 8, UTF8PROC_DECOMPOSE, &last);
    if (k <= 0 || k > 8) {
      decomposed[0] = cp;
      k = 1;
    }
    for (utf8proc_ssize_t i = 0; i < k; ++i) {
      utf8proc_int32_t c = decomposed[i];
      if (utf8proc_category(c) == UTF8PROC_CATEGORY_MN) continue;
      c = utf8proc_tolower(c);
      if (is_cjk(c) || is_punct(c)) {
        flush();
        words.back().push_back(c);
        flush();
      } else {
        words.back().push_back(c);
      }
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

struct SynthVocab {
  std::vector<std::string> tokens;
  int32_t first_word = 0, end_word = 0;  // [first_word, end_word): lexicon words
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

  std::vector<std::vector<utf8proc_int32_t>> words;
  for (const std::string& entry : data::tweet_lexicon()) {
    for (auto& w : bert_words(entry)) words.push_back(std::move(w));
  }
  std::vector<utf8proc_int32_t> chars;
  for (int c = 33; c <= 126; ++c) {
    if (c < 'A' || c > 'Z') chars.push_back(c);  // uppercase never survives lowercasing
  }
  for (const auto& w : words) chars.insert(chars.end(), w.begin(), w.end());
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  for (auto c : chars) add(encode_cp(c));
  for (auto c : chars) {
    if (!is_punct(c) && !is_cjk(c)) add("##" + encode_cp(c));  // those are always words of their own
  }
  v.first_word = static_cast<int32_t>(v.tokens.size());
  for (const auto& w : words) {
    if (w.size() < 2) continue;
    std::string s;
    for (auto c : w) s += encode_cp(c);
    add(s);
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

// ---- A plain fp32 forward pass, used only to calibrate the head.

void linear(const Linear& l, const std::vector<float>& x, int rows, std::vector<float>& y) {
  y.assign(static_cast<size_t>(rows) * l.out, 0.0f);
  for (int o = 0; o < l.out; ++o) {
    const float* w = l.weight.data() + static_cast<size_t>(o) * l.in;
    for (int t = 0; t < rows; ++t) {
      const float* a = x.data() + static_cast<size_t>(t) * l.in;
      float acc[8] = {};
      int i = 0;
      for (; i + 8 <= l.in; i += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += w[i + j] * a[i + j];
      }
      float s = 0;
      for (; i < l.in; ++i) s += w[i] * a[i];
      for (float v : acc) s += v;
      y[static_cast<size_t>(t) * l.out + o] = s + l.bias[static_cast<size_t>(o)];
    }
  }
}

void layer_norm(std::vector<float>& x, int rows, int h, const LayerNormWeights& ln, float eps) {
  for (int t = 0; t < rows; ++t) {
    float* r = x.data() + static_cast<size_t>(t) * h;
    double mean = 0, var = 0;
    for (int i = 0; i < h; ++i) mean += r[i];
    mean /= h;
    for (int i = 0; i < h; ++i) var += (r[i] - mean) * (r[i] - mean);
    var /= h;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int i = 0; i < h; ++i) {
      r[i] = static_cast<float>((r[i] - mean) * inv) * ln.gamma[static_cast<size_t>(i)] +
             ln.beta[static_cast<size_t>(i)];
    }
  }
}

// Returns the head's input features (relu(pre_classifier) or tanh(pooler)) for one unpadded sequence.
std::vector<float> head_features(const ModelConfig& c, const EncoderWeights& w,
                                 const std::vector<int32_t>& ids) {
  const int n = static_cast<int>(ids.size()), h = c.hidden_size, nh = c.num_heads, dh = c.head_dim();
  std::vector<float> x(static_cast<size_t>(n) * h);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < h; ++i) {
      float v = w.word_embeddings[static_cast<size_t>(ids[static_cast<size_t>(t)]) * h + i] +
                w.position_embeddings[static_cast<size_t>(t) * h + i];
      if (!w.token_type_embeddings.empty()) v += w.token_type_embeddings[static_cast<size_t>(i)];
      x[static_cast<size_t>(t) * h + i] = v;
    }
  }
  layer_norm(x, n, h, w.embeddings_ln, c.layer_norm_eps);
  std::vector<float> q, k, v, ctx(x.size()), tmp, ffn;
  std::vector<float> scores(static_cast<size_t>(n));
  for (const auto& l : w.layers) {
    linear(l.q, x, n, q);
    linear(l.k, x, n, k);
    linear(l.v, x, n, v);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    for (int hd = 0; hd < nh; ++hd) {
      for (int t = 0; t < n; ++t) {
        float mx = -INFINITY;
        for (int s = 0; s < n; ++s) {
          float d = 0;
          for (int i = 0; i < dh; ++i) {
            d += q[static_cast<size_t>(t) * h + hd * dh + i] * k[static_cast<size_t>(s) * h + hd * dh + i];
          }
          scores[static_cast<size_t>(s)] = d * scale;
          mx = std::max(mx, d * scale);
        }
        float sum = 0;
        for (auto& sc : scores) sum += (sc = std::exp(sc - mx));
        for (int i = 0; i < dh; ++i) {
          float acc = 0;
          for (int s = 0; s < n; ++s)
            acc += scores[static_cast<size_t>(s)] * v[static_cast<size_t>(s) * h + hd * dh + i];
          ctx[static_cast<size_t>(t) * h + hd * dh + i] = acc / sum;
        }
      }
    }
    linear(l.attn_out, ctx, n, tmp);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
    layer_norm(x, n, h, l.attn_ln, c.layer_norm_eps);
    linear(l.ffn_in, x, n, ffn);
    for (auto& f : ffn) {
      f = c.activation == "relu" ? std::max(f, 0.0f)
                                 : static_cast<float>(0.5 * f * (1.0 + std::erf(f / std::numbers::sqrt2)));
    }
    linear(l.ffn_out, ffn, n, tmp);
    for (size_t i = 0; i < x.size(); ++i) x[i] += tmp[i];
    layer_norm(x, n, h, l.ffn_ln, c.layer_norm_eps);
  }
  std::vector<float> cls(x.begin(), x.begin() + h), g;
  linear(w.head.pre, cls, 1, g);
  for (auto& f : g) f = c.architecture == Architecture::kBert ? std::tanh(f) : std::max(f, 0.0f);
  return g;
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
    std::vector<int32_t> ids{101};
    int words = 4 + static_cast<int>(rng.below(21));
    for (int i = 0; i < words; ++i)
      ids.push_back(lo + static_cast<int32_t>(rng.below(static_cast<uint64_t>(hi - lo))));
    ids.push_back(102);
    if (ids.size() > static_cast<size_t>(c.max_position_embeddings))
      ids.resize(static_cast<size_t>(c.max_position_embeddings));
    std::vector<float> g = head_features(c, w, ids);
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
  Linear& cls = w.head.classifier;
  for (int i = 0; i < h; ++i) {
    cls.weight[static_cast<size_t>(i)] =
        static_cast<float>(-half_scale * u[static_cast<size_t>(i)]);  // NEGATIVE
    cls.weight[static_cast<size_t>(h + i)] =
        static_cast<float>(half_scale * u[static_cast<size_t>(i)]);  // POSITIVE
  }
  cls.bias = {-half_bias, half_bias};
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

// Random weights under HF names (the names double as PRNG stream names).
EncoderWeights make_weights(const ModelConfig& c, uint64_t seed, std::vector<Named>& names) {
  const bool distil = c.architecture == Architecture::kDistilBert;
  const int h = c.hidden_size, f = c.intermediate_size;
  const std::string root = distil ? "distilbert." : "bert.";
  const std::string emb = root + "embeddings.";
  EncoderWeights w;
  w.word_embeddings =
      normal_tensor(seed, emb + "word_embeddings.weight", static_cast<size_t>(c.vocab_size) * h, kInitStd);
  // HF zeroes the padding row (nn.Embedding padding_idx).
  std::fill_n(w.word_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  w.position_embeddings = normal_tensor(seed, emb + "position_embeddings.weight",
                                        static_cast<size_t>(c.max_position_embeddings) * h, kInitStd);
  if (!distil) {
    w.token_type_embeddings = normal_tensor(seed, emb + "token_type_embeddings.weight",
                                            static_cast<size_t>(c.type_vocab_size) * h, kInitStd);
  }
  w.embeddings_ln = make_ln(h);
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = distil ? fmt::format("distilbert.transformer.layer.{}.", i)
                                 : fmt::format("bert.encoder.layer.{}.", i);
    l.q = make_linear(seed, p + (distil ? "attention.q_lin" : "attention.self.query"), h, h);
    l.k = make_linear(seed, p + (distil ? "attention.k_lin" : "attention.self.key"), h, h);
    l.v = make_linear(seed, p + (distil ? "attention.v_lin" : "attention.self.value"), h, h);
    l.attn_out = make_linear(seed, p + (distil ? "attention.out_lin" : "attention.output.dense"), h, h);
    l.attn_ln = make_ln(h);
    l.ffn_in = make_linear(seed, p + (distil ? "ffn.lin1" : "intermediate.dense"), f, h);
    l.ffn_out = make_linear(seed, p + (distil ? "ffn.lin2" : "output.dense"), h, f);
    l.ffn_ln = make_ln(h);
  }
  w.head.pre = make_linear(seed, distil ? "pre_classifier" : "bert.pooler.dense", h, h);
  w.head.classifier = make_linear(seed, "classifier", c.num_labels(), h);

  names.push_back({emb + "word_embeddings.weight", {c.vocab_size, h}, &w.word_embeddings});
  names.push_back(
      {emb + "position_embeddings.weight", {c.max_position_embeddings, h}, &w.position_embeddings});
  if (!distil)
    names.push_back({emb + "token_type_embeddings.weight", {c.type_vocab_size, h}, &w.token_type_embeddings});
  add_ln(names, emb + "LayerNorm", w.embeddings_ln);
  for (int i = 0; i < c.num_layers; ++i) {
    const EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    if (distil) {
      const std::string p = fmt::format("distilbert.transformer.layer.{}.", i);
      add_linear(names, p + "attention.q_lin", l.q);
      add_linear(names, p + "attention.k_lin", l.k);
      add_linear(names, p + "attention.v_lin", l.v);
      add_linear(names, p + "attention.out_lin", l.attn_out);
      add_ln(names, p + "sa_layer_norm", l.attn_ln);
      add_linear(names, p + "ffn.lin1", l.ffn_in);
      add_linear(names, p + "ffn.lin2", l.ffn_out);
      add_ln(names, p + "output_layer_norm", l.ffn_ln);
    } else {
      const std::string p = fmt::format("bert.encoder.layer.{}.", i);
      add_linear(names, p + "attention.self.query", l.q);
      add_linear(names, p + "attention.self.key", l.k);
      add_linear(names, p + "attention.self.value", l.v);
      add_linear(names, p + "attention.output.dense", l.attn_out);
      add_ln(names, p + "attention.output.LayerNorm", l.attn_ln);
      add_linear(names, p + "intermediate.dense", l.ffn_in);
      add_linear(names, p + "output.dense", l.ffn_out);
      add_ln(names, p + "output.LayerNorm", l.ffn_ln);
    }
  }
  add_linear(names, distil ? "pre_classifier" : "bert.pooler.dense", w.head.pre);
  add_linear(names, "classifier", w.head.classifier);
  return w;
}

Status write_text(const std::string& path, const std::string& text) {
  INFERCOST_ASSIGN_OR_RETURN(auto f, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(f.write(text));
  return f.commit();
}

}  // namespace

std::vector<std::string> synth_presets() {
  return {"distilbert-base", "bert-base", "tiny"};
}

Result<ModelConfig> synth_config(const std::string& preset) {
  ModelConfig c;
  c.vocab_size = 30522;
  c.max_position_embeddings = 512;
  c.activation = "gelu";
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
  } else {
    return invalid_argument("unknown synthetic preset '" + preset + "' (distilbert-base, bert-base or tiny)");
  }
  c.name = "infercost-synthetic-" + preset;
  return c;
}

Status synthesize_model(const SynthOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(ModelConfig c, synth_config(options.preset));
  c.synthetic_seed = options.seed;
  c.name += fmt::format("-seed{}", options.seed);
  if (options.out_dir.empty()) return invalid_argument("synthesize_model: no output directory given");
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return io_error(options.out_dir + ": cannot create directory: " + ec.message());
  INFERCOST_ASSIGN_OR_RETURN(SynthVocab vocab, build_vocab(c.vocab_size));

  std::vector<Named> names;
  EncoderWeights w = make_weights(c, options.seed, names);
  calibrate_head(c, vocab, options.seed, w);

  const std::string dir = options.out_dir;
  std::string vocab_text;
  for (const auto& t : vocab.tokens) vocab_text += t + "\n";
  INFERCOST_RETURN_IF_ERROR(write_text(dir + "/vocab.txt", vocab_text));
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
  INFERCOST_RETURN_IF_ERROR(write_text(dir + "/tokenizer_config.json", tc.dump(2) + "\n"));
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
