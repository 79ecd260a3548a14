#include "model/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <unordered_set>

#include "checkpoint_names.h"
#include "core/file.h"
#include "corpus/tweets.h"
#include "family.h"
#include "model/reference_encoder.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "synth_parts.h"
#include "text/tokenizer.h"

namespace infercost::model {

void SynthTokenizer::add_config(const nlohmann::ordered_json& config) {
  files.emplace_back("tokenizer_config.json", config.dump(2) + "\n");
}

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

}  // namespace

std::vector<float> normal_tensor(uint64_t seed, const std::string& name, size_t n, double stddev) {
  Rng rng(seed, name);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(stddev * rng.normal());
  return v;
}

namespace {

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

}  // namespace

Result<SynthVocab> build_wordpiece_vocab(int vocab_size) {
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

namespace {

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

}  // namespace

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

void add_linear(std::vector<SynthTensor>& out, const std::string& name, const Linear& l) {
  out.push_back({name + ".weight", {l.out, l.in}, &l.weight});
  out.push_back({name + ".bias", {l.out}, &l.bias});
}

void add_ln(std::vector<SynthTensor>& out, const std::string& name, const LayerNormWeights& ln) {
  out.push_back({name + ".weight", {static_cast<int64_t>(ln.gamma.size())}, &ln.gamma});
  out.push_back({name + ".bias", {static_cast<int64_t>(ln.beta.size())}, &ln.beta});
}

namespace {

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

}  // namespace

void make_bert_layers(uint64_t seed, const ModelConfig& c, const CheckpointNames& n, EncoderWeights& w,
                      const std::function<void(EncoderLayerWeights& l)>& extra) {
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    make_bert_layer(seed, n, n.layer_prefix(i), c.hidden_size, c.intermediate_size, l);
    if (extra) extra(l);
  }
}

namespace {

// A layer's tensors under their HF names.
void add_bert_layer(std::vector<SynthTensor>& names, const CheckpointNames& n, const std::string& p,
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

}  // namespace

void add_bert_layers(std::vector<SynthTensor>& names, const CheckpointNames& n, const EncoderWeights& w) {
  for (size_t i = 0; i < w.layers.size(); ++i)
    add_bert_layer(names, n, n.layer_prefix(static_cast<int>(i)), w.layers[i]);
}

EncoderWeights make_bert_layout_weights(const ModelConfig& c, uint64_t seed, const CheckpointNames& n,
                                        std::vector<SynthTensor>& names) {
  const int h = c.hidden_size;
  const std::string emb = n.embeddings_prefix();
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
  if (c.type_vocab_size > 0) {
    w.token_type_embeddings = normal_tensor(seed, emb + "token_type_embeddings.weight",
                                            static_cast<size_t>(c.type_vocab_size) * h, kInitStd);
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  w.embeddings_ln = make_ln(h);
  make_bert_layers(seed, c, n, w);
  w.head.pre = make_linear(seed, n.head_pre, h, h);
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);

  names.push_back({emb + "word_embeddings.weight", {c.vocab_size, h}, &w.word_embeddings});
  names.push_back(
      {emb + "position_embeddings.weight", {c.max_position_embeddings, h}, &w.position_embeddings});
  if (c.type_vocab_size > 0) {
    names.push_back({emb + "token_type_embeddings.weight", {c.type_vocab_size, h}, &w.token_type_embeddings});
  }
  add_ln(names, emb + "LayerNorm", w.embeddings_ln);
  add_bert_layers(names, n, w);
  add_linear(names, n.head_pre, w.head.pre);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

namespace {

Status write_text(const std::string& path, const std::string& text) {
  INFERCOST_ASSIGN_OR_RETURN(auto f, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(f.write(text));
  return f.commit();
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
  // The files that may stand for a tokenizer.json (RoBERTa's vocab.json +
  // merges.txt, BERT's vocab.txt), as the family says of the model_type.
  std::span<const std::string_view> other;
  for (const FamilyModelType& t : family_of(c).model_types) {
    if (t.model_type == c.model_type) other = t.tokenizer_files;
  }
  bool other_present = !other.empty();
  std::string other_text;
  for (std::string_view name : other) {
    other_present = other_present && has(std::string(name).c_str());
    other_text += (other_text.empty() ? " or " : " + ") + std::string(name);
  }
  if (!has("tokenizer.json") && !other_present) {
    return not_found(path + ": no tokenizer here: expected tokenizer.json" + other_text);
  }
  return files;
}

}  // namespace

Result<SynthTokenizer> wordpiece_tokenizer(const ModelConfig& c, const char* tokenizer_class) {
  SynthTokenizer t;
  INFERCOST_ASSIGN_OR_RETURN(t.calibration, build_wordpiece_vocab(c.vocab_size));
  std::string vocab_text;
  for (const auto& token : t.calibration.tokens) vocab_text += token + "\n";
  t.files.emplace_back("vocab.txt", std::move(vocab_text));
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
      {"tokenizer_class", tokenizer_class},
  };
  t.add_config(tc);
  return t;
}

std::vector<std::string> synth_presets() {
  std::vector<std::string> full, small;
  for (const Family* f : families()) {
    for (const SynthPreset& p : f->synth.presets) (p.small ? small : full).emplace_back(p.name);
  }
  full.insert(full.end(), small.begin(), small.end());
  return full;
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
  for (const Family* f : families()) {
    for (const SynthPreset& p : f->synth.presets) {
      if (p.name != preset) continue;
      apply_family(*f, c);
      p.configure(c);
      c.name = "infercost-synthetic-" + preset;
      return c;
    }
  }
  std::string presets;
  for (const std::string& p : synth_presets()) presets += (presets.empty() ? "" : ", ") + p;
  return invalid_argument("unknown synthetic preset '" + preset + "' (" + presets + ")");
}

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
  const Family& family = family_of(c);
  INFERCOST_ASSIGN_OR_RETURN(SynthTokenizer t, family.synth.make_tokenizer(c));
  vocab = std::move(t.calibration);
  files = std::move(t.files);
  if (!given.empty()) {
    // The given files replace ours; a tokenizer_config.json of ours stays
    // where the folder has none.
    std::erase_if(files, [&](const auto& f) { return f.first != "tokenizer_config.json"; });
    for (auto& g : given) {
      std::erase_if(files, [&](const auto& f) { return f.first == g.first; });
      files.push_back(std::move(g));
    }
  }

  std::vector<SynthTensor> names;
  std::vector<std::vector<float>> keep;
  EncoderWeights w = family.synth.make_weights != nullptr
                         ? family.synth.make_weights(c, options.seed, names, keep)
                         : make_bert_layout_weights(c, options.seed, *family.weights.names, names);
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
