// DeBERTa-v2 and -v3 (model_type deberta-v2): BERT's layers with
// disentangled attention (relative_attention, c2p / p2c), the embedding
// projection and the relative embeddings folded into tables when the weights
// are read, and a ContextPooler head.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "corpus/tweets.h"
#include "model/checkpoint_names.h"
#include "model/config_keys.h"
#include "model/family.h"
#include "model/json_keys.h"
#include "model/relative_tables.h"
#include "model/synth_parts.h"
#include "model/synth_tokenizers.h"
#include "model/tensor_source.h"

namespace infercost::model {

namespace {

// DeBERTa-v2 and -v3 (transformers' DebertaV2Config and the keys its model
// reads from the config: position_buckets, norm_rel_ebd, share_att_key).
// What the encoder computes is described here; the weights reader folds the
// embedding projection and the relative embeddings' norm and projections
// into tables (deberta_read_weights), so the backends see only relative_attention,
// c2p / p2c and the span.
Status deberta_read_config(ConfigKeys& r, ModelConfig& c) {
  const nlohmann::json& doc = r.doc();
  const std::string& source = r.source();
  INFERCOST_RETURN_IF_ERROR(read_shape(r, kBertKeys, c));
  c.type_vocab_size = 0;
  INFERCOST_RETURN_IF_ERROR(r.int_key("type_vocab_size", false, 0, kMaxVocab, c.type_vocab_size));
  INFERCOST_ASSIGN_OR_RETURN(const double eps, positive_number(doc, "layer_norm_eps", 1e-7, source));
  if (eps > 1) return corruption(source + ": 'layer_norm_eps' must be in (0, 1]");
  c.layer_norm_eps = static_cast<float>(eps);
  for (const char* key : {"attention_head_size", "pooler_hidden_size", "embedding_size"}) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxDim) {
      return corruption(source + ": '" + key + "' must be a positive integer, got " + it->dump());
    }
    const int v = it->get<int>();
    if (std::string(key) == "embedding_size" && v != c.hidden_size) c.embedding_size = v;
    if (std::string(key) == "attention_head_size" && v != c.hidden_size / c.num_heads) {
      return unsupported(source + ": attention_head_size " + it->dump() +
                         " other than hidden_size / num_attention_heads");
    }
    if (std::string(key) == "pooler_hidden_size" && v != c.hidden_size) {
      return unsupported(source + ": pooler_hidden_size " + it->dump() + " other than hidden_size");
    }
  }
  if (auto it = doc.find("conv_kernel_size"); it != doc.end() && !it->is_null() && *it != 0) {
    return unsupported(source + ": conv_kernel_size " + it->dump() +
                       " (DeBERTa-v2's convolution after the first layer; DeBERTa-v3 has none)");
  }
  INFERCOST_ASSIGN_OR_RETURN(c.classifier_activation, activation_key(r, "pooler_hidden_act"));
  INFERCOST_ASSIGN_OR_RETURN(c.position_table, bool_key(doc, "position_biased_input", true, source));
  INFERCOST_ASSIGN_OR_RETURN(c.relative_attention, bool_key(doc, "relative_attention", false, source));
  if (c.relative_attention) {
    std::vector<std::string> terms;
    if (auto it = doc.find("pos_att_type"); it != doc.end() && !it->is_null()) {
      if (it->is_string()) {
        terms = bar_list(it->get<std::string>());
      } else if (it->is_array()) {
        for (const nlohmann::json& t : *it) {
          if (!t.is_string()) return corruption(source + ": 'pos_att_type' must list strings");
          terms.push_back(t.get<std::string>());
        }
      } else {
        return corruption(source + ": 'pos_att_type' must be a string or a list, got " + it->dump());
      }
    }
    for (const std::string& t : terms) {
      if (t == "c2p") {
        c.c2p = true;
      } else if (t == "p2c") {
        c.p2c = true;
      } else {
        return unsupported(source + ": pos_att_type '" + t + "' (c2p and p2c are supported)");
      }
    }
    c.max_relative_positions = -1;
    INFERCOST_RETURN_IF_ERROR(
        r.int_key("max_relative_positions", false, -(int64_t(1) << 30), kMaxDim, c.max_relative_positions));
    if (c.max_relative_positions < 1) c.max_relative_positions = c.max_position_embeddings;
    c.position_buckets = -1;
    INFERCOST_RETURN_IF_ERROR(
        r.int_key("position_buckets", false, -(int64_t(1) << 30), kMaxDim, c.position_buckets));
    if (c.position_buckets <= 0) c.position_buckets = 0;
    if (c.position_buckets == 1) {
      return unsupported(source + ": position_buckets 1 (log buckets need at least 2)");
    }
    INFERCOST_ASSIGN_OR_RETURN(c.share_att_key, bool_key(doc, "share_att_key", false, source));
    std::string norm = "none";
    INFERCOST_RETURN_IF_ERROR(r.string_key("norm_rel_ebd", norm));
    for (const std::string& t : bar_list(norm)) {
      if (t == "layer_norm") {
        c.norm_relative_embeddings = true;
      } else if (t != "none") {
        return unsupported(source + ": norm_rel_ebd '" + t + "' (layer_norm or none)");
      }
    }
  }
  return Status();
}

void deberta_write_config(const ModelConfig& c, const nlohmann::ordered_json& id2label,
                          const nlohmann::ordered_json& label2id, nlohmann::ordered_json& j) {
  // What model synth writes (share_att_key, norm_rel_ebd layer_norm, no
  // embedding projection), as microsoft/deberta-v3-base's config.json says it.
  j["architectures"] = {"DebertaV2ForSequenceClassification"};
  bert_shape_keys(c, id2label, label2id, j);
  j["max_relative_positions"] = c.max_relative_positions;
  j["model_type"] = "deberta-v2";
  j["norm_rel_ebd"] = c.norm_relative_embeddings ? "layer_norm" : "none";
  j["pooler_dropout"] = 0;
  j["pooler_hidden_act"] = activation_name(c.classifier_activation);
  j["pooler_hidden_size"] = c.hidden_size;
  std::string terms;
  if (c.p2c) terms = "p2c";
  if (c.c2p) terms += terms.empty() ? "c2p" : "|c2p";
  j["pos_att_type"] = terms;
  j["position_biased_input"] = c.position_table;
  j["position_buckets"] = c.position_buckets > 0 ? c.position_buckets : -1;
  j["relative_attention"] = c.relative_attention;
  j["share_att_key"] = c.share_att_key;
  j["type_vocab_size"] = c.type_vocab_size;
}

// DebertaV2ForSequenceClassification: BERT's layer names with query_proj /
// key_proj / value_proj, under "deberta."; a ContextPooler ("pooler.dense",
// no "deberta." prefix) before the classifier. The relative embeddings and
// the position projections are read by deberta_read_weights (DebertaNames).
constexpr CheckpointNames kDebertaNames = {
    .prefix = "deberta.",
    .q = "attention.self.query_proj",
    .k = "attention.self.key_proj",
    .v = "attention.self.value_proj",
    .head_pre = "pooler.dense",
};

struct DebertaNames {
  const char* embed_proj;      // under CheckpointNames::embeddings
  const char* rel_embeddings;  // under the prefix, + ".weight"
  const char* rel_norm;        // under the prefix: the relative embeddings' LayerNorm
  const char* pos_key_proj;    // per layer, where not share_att_key
  const char* pos_query_proj;
};
constexpr DebertaNames kDebertaExtraNames = {"embed_proj", "encoder.rel_embeddings", "encoder.LayerNorm",
                                             "attention.self.pos_key_proj", "attention.self.pos_query_proj"};

// DeBERTa-v2/v3's encoder and ContextPooler head (kDebertaNames), with
// what the checkpoint stores in other forms folded into the tables the
// backends read: the word (and position, token type) embeddings through
// embed_proj where embedding_size differs from the hidden size (a linear map
// without bias, so projecting each table is projecting their sum), and per
// layer the relative embeddings (LayerNorm'd where norm_rel_ebd says) through
// the position key and query projections (the layer's own key_proj /
// query_proj with share_att_key, else pos_key_proj / pos_query_proj).
Result<EncoderWeights> deberta_read_weights(TensorSource& src, const ModelConfig& c, bool classifier) {
  const CheckpointNames& n = kDebertaNames;
  const int h = c.hidden_size;
  const int width = c.embedding_size > 0 ? c.embedding_size : h;
  const DebertaNames& x = kDebertaExtraNames;
  EncoderWeights w;
  int64_t checkpoint = 0, tables = 0;  // the elements folded, and the tables' that stand for them
  const std::string e = n.embeddings_prefix();
  INFERCOST_ASSIGN_OR_RETURN(w.word_embeddings,
                             src.read(e + "word_embeddings.weight", {c.vocab_size, width}));
  if (c.position_table) {
    INFERCOST_ASSIGN_OR_RETURN(w.position_embeddings, src.read(e + "position_embeddings.weight",
                                                               {c.max_position_embeddings, width}));
  }
  if (c.type_vocab_size > 0) {
    INFERCOST_ASSIGN_OR_RETURN(w.token_type_embeddings,
                               src.read(e + "token_type_embeddings.weight", {c.type_vocab_size, width}));
  }
  if (width != h) {
    INFERCOST_ASSIGN_OR_RETURN(std::vector<float> proj, src.read(e + x.embed_proj + ".weight", {h, width}));
    if (!proj.empty()) {
      for (std::vector<float>* table :
           {&w.word_embeddings, &w.position_embeddings, &w.token_type_embeddings}) {
        if (table->empty()) continue;
        const int rows = static_cast<int>(table->size() / static_cast<size_t>(width));
        checkpoint += static_cast<int64_t>(table->size());
        *table = project_rows(*table, rows, width, proj, h);
        tables += static_cast<int64_t>(table->size());
      }
      checkpoint += static_cast<int64_t>(proj.size());
    }
  }
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  INFERCOST_RETURN_IF_ERROR(src.layer_norm(e + "LayerNorm", h, w.embeddings_ln));
  std::vector<float> rel;  // [2 span, hidden], normed
  const int rel_rows = 2 * c.relative_span();
  if (c.relative_attention) {
    INFERCOST_ASSIGN_OR_RETURN(rel, src.read(n.under_prefix(x.rel_embeddings) + ".weight", {rel_rows, h}));
    checkpoint += static_cast<int64_t>(rel.size());
    if (c.norm_relative_embeddings) {
      LayerNormWeights ln;
      INFERCOST_RETURN_IF_ERROR(src.layer_norm(n.under_prefix(x.rel_norm), h, ln));
      checkpoint += static_cast<int64_t>(ln.gamma.size() + ln.beta.size());
      if (!rel.empty()) normalize_relative_embeddings(c, ln, rel);
    }
  }
  // Per layer, after BERT's tensors: the position key / query tables.
  const auto positions = [&](const std::string& p, EncoderLayerWeights& l) -> Status {
    if (!c.relative_attention) return Status();
    const auto table = [&](bool wanted, const Linear& shared, const char* own,
                           std::vector<float>& out) -> Status {
      if (!wanted) return Status();
      Linear separate;
      const Linear* proj = &shared;
      if (!c.share_att_key) {
        INFERCOST_RETURN_IF_ERROR(src.linear(p + own, h, h, separate));
        checkpoint += static_cast<int64_t>(separate.weight.size() + separate.bias.size());
        proj = &separate;
      }
      if (!rel.empty() && !proj->weight.empty()) {
        out = project_rows(rel, rel_rows, h, proj->weight, h, &proj->bias);
        tables += static_cast<int64_t>(out.size());
      }
      return Status();
    };
    INFERCOST_RETURN_IF_ERROR(table(c.c2p, l.k, x.pos_key_proj, l.pos_key));
    return table(c.p2c, l.q, x.pos_query_proj, l.pos_query);
  };
  INFERCOST_RETURN_IF_ERROR(read_bert_layers(src, c, n, w, positions));
  w.derived_delta = checkpoint - tables;
  INFERCOST_RETURN_IF_ERROR(read_head(src, c, n, classifier, w.head));
  return w;
}

// DeBERTa-v3's tensors under HF's names (kDebertaNames): BERT's layers
// (query_proj, key_proj, value_proj), no position or token type table, the
// relative embeddings [2 x 256, hidden] and their LayerNorm, the pooler; the
// position key / query tables derived as the reader derives them (the
// layers' own key_proj / query_proj: share_att_key). `rel` keeps the tensors
// `names` points at.
EncoderWeights deberta_make_weights(const ModelConfig& c, uint64_t seed, std::vector<SynthTensor>& names,
                                    std::vector<std::vector<float>>& rel) {
  const CheckpointNames& n = kDebertaNames;
  const DebertaNames& x = kDebertaExtraNames;
  const int h = c.hidden_size, rows = 2 * c.relative_span();
  const std::string emb = n.embeddings_prefix();
  EncoderWeights w;
  w.word_embeddings =
      normal_tensor(seed, emb + "word_embeddings.weight", static_cast<size_t>(c.vocab_size) * h, kInitStd);
  std::fill_n(w.word_embeddings.begin() + static_cast<ptrdiff_t>(c.pad_token_id) * h, h, 0.0f);
  w.embedding_bias = embedding_bias_of(c, w.token_type_embeddings);
  w.embeddings_ln = make_ln(h);
  rel.resize(2);
  rel[0] = normal_tensor(seed, n.under_prefix(x.rel_embeddings) + ".weight", static_cast<size_t>(rows) * h,
                         kInitStd);
  const LayerNormWeights rel_ln = make_ln(h);
  rel[1] = rel_ln.gamma;
  rel.push_back(rel_ln.beta);
  std::vector<float> normed = rel[0];
  normalize_relative_embeddings(c, rel_ln, normed);
  make_bert_layers(seed, c, n, w, [&](EncoderLayerWeights& l) {
    l.pos_key = project_rows(normed, rows, h, l.k.weight, h, &l.k.bias);
    l.pos_query = project_rows(normed, rows, h, l.q.weight, h, &l.q.bias);
  });
  w.head.pre = make_linear(seed, n.head_pre, h, h);
  w.head.classifier = make_linear(seed, n.classifier, c.num_labels(), h);

  names.push_back({emb + "word_embeddings.weight", {c.vocab_size, h}, &w.word_embeddings});
  add_ln(names, emb + "LayerNorm", w.embeddings_ln);
  add_bert_layers(names, n, w);
  names.push_back({n.under_prefix(x.rel_embeddings) + ".weight", {rows, h}, &rel[0]});
  names.push_back({n.under_prefix(x.rel_norm) + ".weight", {h}, &rel[1]});
  names.push_back({n.under_prefix(x.rel_norm) + ".bias", {h}, &rel[2]});
  add_linear(names, n.head_pre, w.head.pre);
  add_linear(names, n.classifier, w.head.classifier);
  return w;
}

// DeBERTa-v3's: a Unigram in a tokenizer.json with [PAD] [CLS] [SEP] [UNK]
// first, in DebertaV2Tokenizer's pipeline (which transformers 5 and the
// engine rebuild from tokenizer_config.json's class anyway).
Result<SynthTokenizer> deberta_tokenizer(const ModelConfig& c) {
  SynthTokenizer t = SynthTokenizer::framed(kDebertaClsId, kDebertaSepId);
  INFERCOST_ASSIGN_OR_RETURN(UnigramVocab unigram,
                             build_unigram_vocab(corpus::tweet_lexicon(), c.vocab_size));
  t.files.emplace_back("tokenizer.json", deberta_tokenizer_json(unigram));
  t.calibration.set_words(unigram.first_word, unigram.end_word, unigram.word_ids);
  nlohmann::ordered_json tc = {{"tokenizer_class", "DebertaV2Tokenizer"},
                               {"model_max_length", c.max_positions()},
                               {"do_lower_case", false},
                               {"split_by_punct", false},
                               {"bos_token", "[CLS]"},
                               {"eos_token", "[SEP]"}};
  tc.update(bracket_special_tokens());
  t.add_config(tc);
  return t;
}

void deberta_v3_base(ModelConfig& c) {
  // As microsoft/deberta-v3-base's config.json says, with a 2-label head.
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
}

constexpr FamilyModelType kDebertaTypes[] = {{"deberta-v2", "DebertaV2ForSequenceClassification"}};
constexpr RefusedModelType kDebertaRefused[] = {
    {"deberta",
     "model_type 'deberta' (DeBERTa v1) is not supported; DeBERTa-v2 and -v3 (model_type "
     "deberta-v2) are"}};
constexpr SynthPreset kDebertaPresets[] = {{"deberta-v3-base", deberta_v3_base}};

}  // namespace

extern const Family kDebertaFamily = {
    .architecture = Architecture::kDebertaV2,
    .model_types = kDebertaTypes,
    .refused_model_types = kDebertaRefused,
    .config = {deberta_read_config, deberta_write_config},
    .weights = {&kDebertaNames, deberta_read_weights},
    .synth = {kDebertaPresets, deberta_tokenizer, deberta_make_weights},
};

}  // namespace infercost::model
