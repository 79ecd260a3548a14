#include "engine/model_info.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "engine/head.h"
#include "io/prediction_writer.h"

namespace infercost::engine {

namespace {

// What a run computes in without --precision (backend::resolve_precision's
// "auto"): on this machine's CPU, and on GPUs.
struct DefaultPrecision {
  std::string cpu;   // "bf16" where the CPU has native bf16, else "fp32"
  std::string cuda;  // "bf16 (fp16 before compute capability 8.0)"
};

DefaultPrecision default_precision() {
  DefaultPrecision d;
  Result<backend::Precision> cpu = backend::resolve_precision("cpu", "auto");
  d.cpu = cpu.ok() ? backend::precision_name(*cpu) : "fp32";
  Result<backend::Precision> gpu = backend::resolve_precision("cuda", "auto");
  d.cuda = std::string(gpu.ok() ? backend::precision_name(*gpu) : "bf16") +
           " (fp16 before compute capability 8.0)";
  return d;
}

}  // namespace

std::string default_precision_text() {
  const DefaultPrecision d = default_precision();
  return fmt::format(
      "without --precision, {} on this CPU ({}) and {} on a GPU; --precision fp32 computes in fp32 as the "
      "weights are loaded",
      d.cpu, d.cpu == "bf16" ? "it has native bf16" : "no native bf16", d.cuda);
}

std::string model_info_json(const model::ModelDescription& m) {
  const model::ModelConfig& c = m.config;
  nlohmann::ordered_json j;
  j["dir"] = m.dir;
  j["name"] = c.name;
  j["architecture"] = model::architecture_name(c);
  j["model_type"] = c.model_type;
  j["layers"] = c.num_layers;
  j["hidden_size"] = c.hidden_size;
  j["num_heads"] = c.num_heads;
  j["intermediate_size"] = c.intermediate_size;
  j["ffn_activation"] = model::activation_name(c.ffn_activation);
  j["vocab_size"] = c.vocab_size;
  j["max_positions"] = c.max_positions();
  j["type_vocab_size"] = c.type_vocab_size;
  j["layer_norm_eps"] = static_cast<double>(c.layer_norm_eps);
  j["parameters"] = m.parameters;
  j["weights_dtype"] = m.weights_dtype;
  const DefaultPrecision precision = default_precision();
  j["default_precision"] = {{"cpu", precision.cpu}, {"cuda", precision.cuda}};
  j["classification_head"] = m.classification_head;
  j["no_head"] = m.classification_head ? nlohmann::ordered_json() : nlohmann::ordered_json(m.no_head);
  if (m.classification_head) {
    j["labels"] = c.labels;
    j["problem_type"] = c.problem_type;
    const HeadChoice head = default_head_function(c);
    j["head_function"] = head_function_name(head.function);
    j["head_function_reason"] = head.reason;
    const bool label_set = writes_label_set(head.function, c.num_labels());
    j["labels_column"] = label_set;
    j["output_columns"] = io::prediction_column_names(c.labels, label_set);
  } else {
    j["labels"] = nlohmann::ordered_json::array();
    j["problem_type"] = c.problem_type;
    j["head_function"] = nullptr;
    j["head_function_reason"] = nullptr;
    j["labels_column"] = false;
    j["output_columns"] = nlohmann::ordered_json::array();
  }
  const model::TokenizerDescription& t = m.tokenizer;
  nlohmann::ordered_json tok = {{"kind", text::tokenizer_kind_name(t.kind)},
                                {"source", t.source},
                                {"vocab_size", t.vocab_size},
                                {"max_length", t.max_length}};
  if (t.normalizer) {
    tok["normalizer"] = {{"lowercase", t.normalizer->lowercase},
                         {"strip_accents", t.normalizer->strip_accents},
                         {"split_cjk", t.normalizer->split_cjk}};
  }
  j["tokenizer"] = std::move(tok);
  if (m.embedding) {
    const model::EmbeddingConfig& e = *m.embedding;
    j["embedding"] = {
        {"source", "sentence-transformers"},
        {"pooling", model::pooling_name(e.pooling)},
        {"normalize", e.normalize},
        {"dimensions", e.dimensions},
        {"max_seq_length", e.max_seq_length > 0 ? nlohmann::ordered_json(e.max_seq_length) : nullptr},
        {"max_length",
         e.max_seq_length > 0 ? model::sentence_transformers_max_length(e, c.max_positions()) : t.max_length},
        {"prompts", e.prompts},
        {"default_prompt_name", e.default_prompt_name.empty()
                                    ? nlohmann::ordered_json()
                                    : nlohmann::ordered_json(e.default_prompt_name)},
        {"include_prompt", e.include_prompt}};
  } else {
    j["embedding"] = nullptr;
  }
  j["embedding_refused"] =
      m.embedding_refused.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(m.embedding_refused);
  j["synthetic"] = c.synthetic;
  j["synthetic_preset"] = c.synthetic ? nlohmann::ordered_json(c.synthetic_preset) : nlohmann::ordered_json();
  j["synthetic_seed"] = c.synthetic ? nlohmann::ordered_json(c.synthetic_seed) : nlohmann::ordered_json();
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace infercost::engine
