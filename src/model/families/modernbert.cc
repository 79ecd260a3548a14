// ModernBERT (model_type modernbert): pre-norm layers, rotary positions with
// a base per kind of layer, local attention on most layers, a GELU GLU,
// optional biases, and its own head (pooling, dense, activation, norm).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "corpus/tweets.h"
#include "model/checkpoint_names.h"
#include "model/config_keys.h"
#include "model/family.h"
#include "model/json_keys.h"
#include "model/synth_parts.h"
#include "model/synth_tokenizers.h"
#include "model/tensor_source.h"

namespace infercost::model {

namespace {

// ModernBERT's rotary base for one kind of layer: rope_parameters[kind]
// (transformers 5), else the older `legacy_key`, else HF's default. Only the
// plain ("default") rotary embedding is computed; a scaled one is refused.
Result<double> rope_theta_of(const nlohmann::json& doc, const char* kind, const char* legacy_key,
                             double fallback, const std::string& source) {
  if (auto scaling = doc.find("rope_scaling"); scaling != doc.end() && !scaling->is_null()) {
    return unsupported(source + ": rope_scaling " + scaling->dump() + " (only the plain rotary embedding)");
  }
  auto params = doc.find("rope_parameters");
  if (params != doc.end() && !params->is_null()) {
    if (!params->is_object()) return corruption(source + ": 'rope_parameters' must be an object");
    auto p = params->find(kind);
    if (p != params->end() && !p->is_null()) {
      if (!p->is_object()) return corruption(source + ": rope_parameters." + kind + " must be an object");
      for (const auto& [key, value] : p->items()) {
        if (key == "rope_theta") continue;
        if (key == "rope_type" && value == "default") continue;
        return unsupported(source + ": rope_parameters." + kind + "." + key + " " + value.dump() +
                           " (only the plain rotary embedding: rope_type default)");
      }
      if (p->contains("rope_theta")) {
        const std::string where = std::string("rope_parameters.") + kind;
        const nlohmann::json& theta = p->at("rope_theta");
        if (!theta.is_number() || !(theta.get<double>() > 0))
          return corruption(source + ": " + where + ".rope_theta must be a positive number");
        return theta.get<double>();
      }
    }
  }
  return positive_number(doc, legacy_key, fallback, source);
}

// ModernBERT (transformers' ModernBertConfig, the keys of transformers 4 and
// 5 alike): pre-norm layers, rotary positions with a base per kind of layer,
// local attention on most layers, a GELU GLU, optional biases, and its own
// head (pooling, dense, activation, norm).
Status modernbert_read_config(ConfigKeys& r, ModelConfig& c) {
  const nlohmann::json& doc = r.doc();
  const std::string& source = r.source();
  c.max_position_embeddings = 8192;
  c.pad_token_id = 50283;
  INFERCOST_RETURN_IF_ERROR(
      r.int_key("max_position_embeddings", false, 1, kMaxDim, c.max_position_embeddings));
  INFERCOST_RETURN_IF_ERROR(r.int_key("pad_token_id", false, 0, kMaxVocab, c.pad_token_id));
  INFERCOST_RETURN_IF_ERROR(r.int_key("hidden_size", true, 1, kMaxDim, c.hidden_size));
  INFERCOST_RETURN_IF_ERROR(r.int_key("num_hidden_layers", true, 1, kMaxLayers, c.num_layers));
  INFERCOST_RETURN_IF_ERROR(r.int_key("num_attention_heads", true, 1, kMaxDim, c.num_heads));
  INFERCOST_RETURN_IF_ERROR(r.int_key("intermediate_size", true, 1, kMaxDim * 8, c.intermediate_size));
  if (auto hd = doc.find("head_dim");
      hd != doc.end() && !hd->is_null() && c.num_heads > 0 && *hd != c.hidden_size / c.num_heads) {
    return unsupported(source + ": head_dim " + hd->dump() + " other than hidden_size / num_attention_heads");
  }
  std::string act = "gelu";
  INFERCOST_RETURN_IF_ERROR(r.string_key("hidden_activation", act));
  if (act != "gelu") {
    return unsupported(source + ": 'hidden_activation' is '" + act + "'; supported: gelu (exact erf)");
  }
  c.ffn_activation = Activation::kGelu;
  INFERCOST_ASSIGN_OR_RETURN(c.classifier_activation, activation_key(r, "classifier_activation"));
  INFERCOST_ASSIGN_OR_RETURN(const double eps, positive_number(doc, "norm_eps", 1e-5, source));
  if (eps > 1) return corruption(source + ": 'norm_eps' must be in (0, 1]");
  c.layer_norm_eps = static_cast<float>(eps);
  INFERCOST_ASSIGN_OR_RETURN(c.norm_bias, bool_key(doc, "norm_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.attention_bias, bool_key(doc, "attention_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.mlp_bias, bool_key(doc, "mlp_bias", false, source));
  INFERCOST_ASSIGN_OR_RETURN(c.head_bias, bool_key(doc, "classifier_bias", false, source));
  std::string pooling = "cls";
  INFERCOST_RETURN_IF_ERROR(r.string_key("classifier_pooling", pooling));
  if (pooling != "cls" && pooling != "mean") {
    return unsupported(source + ": classifier_pooling '" + pooling + "' (cls or mean)");
  }
  c.head_mean_pooling = pooling == "mean";
  c.type_vocab_size = 0;
  c.norm_placement = NormPlacement::kPre;
  c.position_table = false;
  c.glu = true;
  c.head_norm = true;

  int local_attention = 128;
  INFERCOST_RETURN_IF_ERROR(r.int_key("local_attention", false, 2, kMaxDim, local_attention));
  std::vector<bool> global(static_cast<size_t>(c.num_layers));
  if (auto types = doc.find("layer_types"); types != doc.end() && !types->is_null()) {
    if (!types->is_array() || types->size() != global.size()) {
      return corruption(
          fmt::format("{}: 'layer_types' must list one type per layer ({})", source, c.num_layers));
    }
    for (size_t i = 0; i < global.size(); ++i) {
      const nlohmann::json& t = (*types)[i];
      if (t != "full_attention" && t != "sliding_attention") {
        return unsupported(fmt::format("{}: layer_types[{}] is {} (full_attention or sliding_attention)",
                                       source, i, t.dump()));
      }
      global[i] = t == "full_attention";
    }
  } else {
    int every = 3;
    INFERCOST_RETURN_IF_ERROR(r.int_key("global_attn_every_n_layers", false, 1, kMaxLayers, every));
    for (size_t i = 0; i < global.size(); ++i) global[i] = i % static_cast<size_t>(every) == 0;
  }
  INFERCOST_ASSIGN_OR_RETURN(const double global_theta,
                             rope_theta_of(doc, "full_attention", "global_rope_theta", 160000.0, source));
  INFERCOST_ASSIGN_OR_RETURN(const double local_theta,
                             rope_theta_of(doc, "sliding_attention", "local_rope_theta", 10000.0, source));
  for (bool g : global) {
    c.attention_window.push_back(g ? 0 : local_attention / 2);
    c.rope_theta.push_back(g ? global_theta : local_theta);
  }
  return Status();
}

void modernbert_write_config(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                             const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j) {
  j["architectures"] = {"ModernBertForSequenceClassification"};
  j["attention_bias"] = c.attention_bias;
  j["classifier_activation"] = activation_name(c.classifier_activation);
  j["classifier_bias"] = c.head_bias;
  j["classifier_pooling"] = c.head_mean_pooling ? "mean" : "cls";
  j["hidden_activation"] = activation_name(c.ffn_activation);
  j["hidden_size"] = c.hidden_size;
  j["id2label"] = id2label;
  j["intermediate_size"] = c.intermediate_size;
  j["label2id"] = label2id;
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  int local_attention = 128;
  double global_theta = 160000.0, local_theta = 10000.0;
  for (int i = 0; i < c.num_layers; ++i) {
    const bool global = c.global_layer(i);
    types.push_back(global ? "full_attention" : "sliding_attention");
    if (!global) local_attention = 2 * c.attention_window[static_cast<size_t>(i)];
    if (!c.rope_theta.empty()) (global ? global_theta : local_theta) = c.rope_theta[static_cast<size_t>(i)];
  }
  j["layer_types"] = types;
  j["local_attention"] = local_attention;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["mlp_bias"] = c.mlp_bias;
  j["model_type"] = "modernbert";
  j["norm_bias"] = c.norm_bias;
  j["norm_eps"] = float_for_json(c.layer_norm_eps);
  j["num_attention_heads"] = c.num_heads;
  j["num_hidden_layers"] = c.num_layers;
  j["pad_token_id"] = c.pad_token_id;
  j["rope_parameters"] = {{"full_attention", {{"rope_theta", global_theta}, {"rope_type", "default"}}},
                          {"sliding_attention", {{"rope_theta", local_theta}, {"rope_type", "default"}}}};
}

// ModernBertForSequenceClassification: the encoder under "model." with its
// own module names (a fused Wqkv, an MLP of Wi and Wo, attn_norm and
// mlp_norm before them, final_norm) and a head of head.dense and head.norm.
// modernbert_read_weights reads its layers by these names (q is the fused
// Wqkv; k and v are not read) in a layout of its own.
constexpr CheckpointNames kModernBertNames = {.prefix = "model.",
                                              .layer = "layers.",
                                              .q = "attn.Wqkv",
                                              .attn_out = "attn.Wo",
                                              .attn_ln = "attn_norm",
                                              .ffn_in = "mlp.Wi",
                                              .ffn_out = "mlp.Wo",
                                              .ffn_ln = "mlp_norm",
                                              .head_pre = "head.dense",
                                              .classifier = "classifier"};

// ModernBERT's names that BERT's layout has no place for.
struct ModernBertNames {
  const char* tok_embeddings;   // + ".weight", under CheckpointNames::embeddings
  const char* embeddings_norm;  // under CheckpointNames::embeddings
  const char* final_norm;       // under the prefix
  const char* head_norm;
};
constexpr ModernBertNames kModernBertExtraNames = {"tok_embeddings", "norm", "final_norm", "head.norm"};

// ModernBERT's encoder and head (kModernBertNames): Wqkv split into q, k
// and v; the biases and norm biases the config says are absent as zeros.
Result<EncoderWeights> modernbert_read_weights(TensorSource& src, const ModelConfig& c, bool classifier) {
  const CheckpointNames& n = kModernBertNames;
  const int h = c.hidden_size, f = c.intermediate_size;
  EncoderWeights w;
  size_t& zeros = w.zero_filled;
  auto norm = [&](const std::string& name, LayerNormWeights& ln) -> Status {
    INFERCOST_ASSIGN_OR_RETURN(ln.gamma, src.read(name + ".weight", {h}));
    INFERCOST_ASSIGN_OR_RETURN(ln.beta, src.bias(name + ".bias", c.norm_bias, h, zeros));
    return Status();
  };
  auto linear = [&](const std::string& name, int out, int in, bool bias, Linear& l) -> Status {
    l.out = out;
    l.in = in;
    INFERCOST_ASSIGN_OR_RETURN(l.weight, src.read(name + ".weight", {out, in}));
    INFERCOST_ASSIGN_OR_RETURN(l.bias, src.bias(name + ".bias", bias, out, zeros));
    return Status();
  };
  const std::string e = n.embeddings_prefix();
  const ModernBertNames& x = kModernBertExtraNames;
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings,
                             src.read(e + x.tok_embeddings + ".weight", {c.vocab_size, h}));
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(norm(e + x.embeddings_norm, w.embeddings_ln));
  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = n.layer_prefix(i);
    EncoderLayerWeights& l = w.layers[static_cast<size_t>(i)];
    if (i > 0) INFERCOST_RETURN_IF_ERROR(norm(p + n.attn_ln, l.attn_ln));
    Linear qkv;
    INFERCOST_RETURN_IF_ERROR(linear(p + n.q, 3 * h, h, c.attention_bias, qkv));
    Linear* parts[] = {&l.q, &l.k, &l.v};
    for (int part = 0; part < 3; ++part) {  // rows [q | k | v], as HF views Wqkv's output
      Linear& out = *parts[part];
      out.out = h;
      out.in = h;
      if (qkv.weight.empty()) continue;  // counting only
      const auto row0 = static_cast<std::ptrdiff_t>(part) * h;
      out.weight.assign(qkv.weight.begin() + row0 * h, qkv.weight.begin() + (row0 + h) * h);
      out.bias.assign(qkv.bias.begin() + row0, qkv.bias.begin() + row0 + h);
    }
    INFERCOST_RETURN_IF_ERROR(linear(p + n.attn_out, h, h, c.attention_bias, l.attn_out));
    INFERCOST_RETURN_IF_ERROR(norm(p + n.ffn_ln, l.ffn_ln));
    INFERCOST_RETURN_IF_ERROR(linear(p + n.ffn_in, 2 * f, h, c.mlp_bias, l.ffn_in));
    INFERCOST_RETURN_IF_ERROR(linear(p + n.ffn_out, h, f, c.mlp_bias, l.ffn_out));
  }
  INFERCOST_RETURN_IF_ERROR(norm(n.under_prefix(x.final_norm), w.final_ln));
  if (!classifier) {
    if (src.has(std::string(n.head_pre) + ".weight")) {
      INFERCOST_RETURN_IF_ERROR(linear(n.head_pre, h, h, c.head_bias, w.head.pre));
      INFERCOST_RETURN_IF_ERROR(norm(x.head_norm, w.head.norm));
    }
    return w;
  }
  INFERCOST_RETURN_IF_ERROR(linear(n.head_pre, h, h, c.head_bias, w.head.pre));
  INFERCOST_RETURN_IF_ERROR(norm(x.head_norm, w.head.norm));
  INFERCOST_RETURN_IF_ERROR(src.linear(n.classifier, c.num_labels(), h, w.head.classifier));
  return w;
}

// ModernBERT's tensors under HF's names (kModernBertNames): no biases and
// no norm biases (the preset has none; the weights read them as zeros), a
// fused Wqkv split into q, k and v, a GLU's Wi of 2 f rows. `fused` keeps the
// Wqkv tensors `names` points at.
EncoderWeights modernbert_make_weights(const ModelConfig& c, uint64_t seed, std::vector<SynthTensor>& names,
                                       std::vector<std::vector<float>>& fused) {
  const CheckpointNames& n = kModernBertNames;
  const ModernBertNames& x = kModernBertExtraNames;
  const int h = c.hidden_size, f = c.intermediate_size;
  const std::string emb = n.embeddings_prefix();
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
    const std::string p = n.layer_prefix(i);
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
  names.push_back({n.under_prefix(x.final_norm) + ".weight", {h}, &w.final_ln.gamma});
  w.head.pre = unbiased(n.head_pre, h, h);
  names.back().data = &w.head.pre.weight;
  w.head.norm = make_ln(h);
  names.push_back({std::string(x.head_norm) + ".weight", {h}, &w.head.norm.gamma});
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

// ModernBERT's: a byte-level BPE in a tokenizer.json of ModernBERT's layout.
Result<SynthTokenizer> modernbert_tokenizer(const ModelConfig& c) {
  SynthTokenizer t = SynthTokenizer::framed(kModernBertClsId, kModernBertSepId);
  INFERCOST_ASSIGN_OR_RETURN(
      ByteLevelBpe bpe, learn_byte_level_bpe(bpe_training_words(corpus::tweet_lexicon()), kModernBertUnkId));
  t.files.emplace_back("tokenizer.json", modernbert_tokenizer_json(bpe));
  t.calibration.set_words(bpe.first_merged, bpe.end_merged, bpe.word_ids);
  nlohmann::ordered_json tc = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                               {"model_max_length", c.max_positions()},
                               {"clean_up_tokenization_spaces", true}};
  tc.update(bracket_special_tokens());
  tc["model_input_names"] = nlohmann::ordered_json::array({"input_ids", "attention_mask"});
  t.add_config(tc);
  return t;
}

void modernbert_base(ModelConfig& c) {
  // As answerdotai/ModernBERT-base's config.json says, with a 2-label mean-pooling head.
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
}

constexpr FamilyModelType kModernBertTypes[] = {{"modernbert", "ModernBertForSequenceClassification"}};
constexpr SynthPreset kModernBertPresets[] = {{"modernbert-base", modernbert_base}};

}  // namespace

extern const Family kModernBertFamily = {
    .architecture = Architecture::kModernBert,
    .model_types = kModernBertTypes,
    .token_head_pre = true,
    .config = {modernbert_read_config, modernbert_write_config},
    .weights = {&kModernBertNames, modernbert_read_weights},
    .synth = {kModernBertPresets, modernbert_tokenizer, modernbert_make_weights},
};

}  // namespace infercost::model
