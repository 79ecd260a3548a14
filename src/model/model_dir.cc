#include "model/model_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/file.h"
#include "core/json_text.h"
#include "model/checkpoint_names.h"
#include "model/describe.h"
#include "model/family.h"

namespace infercost::model {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Special tokens in tokenizer_config.json are strings or AddedToken objects
// ({"content": "[UNK]", ...}).
void read_special(const json& doc, const char* key, std::string& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return;
  if (it->is_string())
    out = it->get<std::string>();
  else if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    out = (*it)["content"].get<std::string>();
}

// tokenizer_config.json's model_max_length: 0 when absent or, as
// transformers writes for "no limit", larger than any int.
int model_max_length_of(const json& doc) {
  auto it = doc.find("model_max_length");
  if (it == doc.end() || !it->is_number()) return 0;
  const double limit = it->get<double>();
  return limit >= 1 && limit <= std::numeric_limits<int>::max() ? static_cast<int>(limit) : 0;
}

// tokenizer_config.json's flags into `opts` and `settings`, and its
// model_max_length into `model_max_length` (0 when absent or, as
// transformers writes for "no limit", larger than any int).
Status apply_tokenizer_config(const std::string& path, text::TokenizerOptions& opts,
                              text::TokenizerSettings& settings, int& model_max_length) {
  INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(path));
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(text, path));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return corruption(path + ": not a JSON object");
  auto flag = [&](const char* key, auto&& set) -> Status {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return Status();
    if (!it->is_boolean()) return corruption(path + ": '" + key + "' must be true, false or null");
    set(it->get<bool>());
    return Status();
  };
  INFERCOST_RETURN_IF_ERROR(flag("do_lower_case", [&](bool v) {
    opts.lowercase = v;
    settings.do_lower_case = v;
  }));
  INFERCOST_RETURN_IF_ERROR(flag("split_by_punct", [&](bool v) { settings.split_by_punct = v; }));
  INFERCOST_RETURN_IF_ERROR(flag("strip_accents", [&](bool v) { opts.strip_accents = v; }));
  INFERCOST_RETURN_IF_ERROR(flag("tokenize_chinese_chars", [&](bool v) { opts.tokenize_chinese_chars = v; }));
  INFERCOST_RETURN_IF_ERROR(flag("add_prefix_space", [&](bool v) { settings.add_prefix_space = v; }));
  if (auto it = doc.find("tokenizer_class"); it != doc.end() && it->is_string())
    settings.transformers_class = it->get<std::string>();
  read_special(doc, "unk_token", opts.unk_token);
  read_special(doc, "cls_token", opts.cls_token);
  read_special(doc, "sep_token", opts.sep_token);
  read_special(doc, "pad_token", opts.pad_token);
  model_max_length = model_max_length_of(doc);
  return Status();
}

std::string pickle_refusal(const std::string& dir, const std::string& pickle) {
  return dir + ": found " + pickle +
         " but no model.safetensors. infercost does not load PyTorch pickle checkpoints: unpickling can "
         "execute "
         "arbitrary code from the file. Convert it once with Python (transformers installed):\n"
         "  python -c \"from transformers import AutoModelForSequenceClassification as M; "
         "M.from_pretrained('" +
         dir + "').save_pretrained('" + dir + "', safe_serialization=True)\"";
}

Result<std::string> find_pickle(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    std::string ext = entry.path().extension().string();
    if (name == "pytorch_model.bin" || ext == ".pt" || ext == ".pth" || ext == ".ckpt" ||
        (name.rfind("pytorch_model-", 0) == 0 && ext == ".bin")) {
      found.push_back(name);
    }
  }
  if (ec) return io_error(dir + ": cannot list directory: " + ec.message());
  std::sort(found.begin(), found.end());
  return found.empty() ? std::string() : found.front();
}

std::string dtypes_of(const std::map<std::string, TensorInfo>& tensors) {
  std::set<std::string> names;
  for (const auto& [name, info] : tensors) {
    if (info.dtype == DType::kF32 || info.dtype == DType::kF16 || info.dtype == DType::kBF16) {
      names.insert(std::string(dtype_name(info.dtype)));
    }
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

// A model directory up to its weights: config and tokenizer made, and the
// weights file found.
struct OpenedModelDir {
  LoadedModel model;
  std::string weights_path;  // "" when there is none and none is required
};

// What load_model_dir() and describe_model_dir() both do before the weights:
// the directory, config.json and the tokenizer, checked alike for both.
Result<OpenedModelDir> open_model_dir(const std::string& dir, const LoadOptions& options,
                                      bool weights_required) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return not_found(dir + ": model directory does not exist (looked for " + dir + "/config.json)");
  }
  if (!S_ISDIR(st.st_mode))
    return invalid_argument(dir + ": is not a directory (expected an HF model directory)");
  LoadedModel m;
  m.dir = dir;
  const std::string config_path = dir + "/config.json";
  if (!is_regular_file(config_path))
    return not_found(dir + ": no config.json (not a Hugging Face model directory?)");
  INFERCOST_ASSIGN_OR_RETURN(m.config, load_config(config_path));
  if (m.config.name.empty()) m.config.name = fs::path(dir).lexically_normal().filename().string();
  if (m.config.name.empty())
    m.config.name = fs::path(dir).lexically_normal().parent_path().filename().string();

  // Tokenizer: tokenizer_config.json's flags first (for a WordPiece vocab.txt),
  // then the files (a tokenizer.json carries its own), then the caller's.
  if (options.max_length != 0)
    INFERCOST_RETURN_IF_ERROR(text::check_max_length(options.max_length, "max_length"));
  text::TokenizerOptions topts;
  text::TokenizerSettings settings;
  int model_max_length = 0;
  const std::string tok_config = dir + "/tokenizer_config.json";
  if (is_regular_file(tok_config))
    INFERCOST_RETURN_IF_ERROR(apply_tokenizer_config(tok_config, topts, settings, model_max_length));
  settings.max_length = options.max_length == 0 ? model_length_limit(m.config, model_max_length)
                                                : std::min(options.max_length, m.config.max_positions());
  settings.add_special_tokens = options.add_special_tokens;
  settings.lowercase = options.lowercase;
  settings.strip_accents = options.strip_accents;
  INFERCOST_ASSIGN_OR_RETURN(text::LoadedTokenizer loaded, text::load_tokenizer(dir, settings, topts));
  m.tokenizer = std::move(loaded.tokenizer);
  m.tokenizer_source = std::move(loaded.source);
  // Every id the tokenizer emits indexes the embedding table.
  if (m.tokenizer->vocab_size() > static_cast<size_t>(m.config.vocab_size)) {
    return corruption(dir + ": the tokenizer has " + std::to_string(m.tokenizer->vocab_size()) +
                      " tokens but config.json vocab_size is " + std::to_string(m.config.vocab_size));
  }

  const std::string st_path = dir + "/model.safetensors";
  if (!is_regular_file(st_path)) {
    if (is_regular_file(dir + "/model.safetensors.index.json")) {
      return unsupported(
          dir +
          ": sharded safetensors checkpoints (model.safetensors.index.json) are not supported; "
          "save the model with max_shard_size larger than the model");
    }
    INFERCOST_ASSIGN_OR_RETURN(std::string pickle, find_pickle(dir));
    if (!pickle.empty()) return unsupported(pickle_refusal(dir, pickle));
    if (!weights_required) return OpenedModelDir{std::move(m), ""};
    return not_found(dir + ": no model.safetensors");
  }
  return OpenedModelDir{std::move(m), st_path};
}

}  // namespace

Status check_classification_head(const std::string& dir, const ModelConfig& config,
                                 const std::map<std::string, TensorInfo>& tensors) {
  // A head of another task is named as such, whatever tensors it shares
  // names with a sequence classifier's (a token classifier's `classifier`).
  std::string other_head;
  for (const std::string& a : config.architectures) {
    if (is_classifier_class(a)) return Status();  // a missing tensor: loading names it
    if (other_head.empty() && a.find("For") != std::string::npos) other_head = a;
  }
  if (!other_head.empty()) {
    const std::string task = other_head.substr(other_head.find("For") + 3);
    const std::string what = task == "TokenClassification" ? "a token classifier (a label per token)"
                             : task == "MaskedLM"          ? "a masked language model"
                             : task == "QuestionAnswering" ? "an extractive question answerer"
                             : task == "MultipleChoice"    ? "a multiple-choice scorer"
                                                           : "a model for " + task;
    return unsupported(fmt::format(
        "{}: config.json's architecture is {}, {}: infercost runs sequence classifiers "
        "(*ForSequenceClassification: a label per text), not that head. To turn texts into vectors with its "
        "encoder, use `infercost embed` with --pooling.",
        dir, other_head, what));
  }
  if (has_classification_head(tensors, config)) return Status();
  std::string declared;
  for (const std::string& a : config.architectures) declared += (declared.empty() ? "" : ", ") + a;
  std::string what =
      declared.empty() ? "config.json declares no architecture" : "config.json's architecture is " + declared;
  if (is_regular_file(dir + "/modules.json")) what += " (a sentence-transformers encoder: modules.json)";
  return unsupported(fmt::format(
      "{}: no classification head: {}, and model.safetensors has no '{}.weight'. infercost runs sequence "
      "classifiers: it needs a {} directory (a *ForSequenceClassification model, an encoder fine-tuned with "
      "a classifier for its labels). To turn texts into vectors with it, use `infercost embed`.",
      dir, what, family_of(config).weights.names->classifier, hf_classifier_class(config)));
}

int model_length_limit(const ModelConfig& config, int model_max_length) {
  const int positions = config.max_positions();
  return model_max_length >= text::kSpecialTokensPerRow ? std::min(positions, model_max_length) : positions;
}

Result<int> read_model_length_limit(const std::string& dir) {
  INFERCOST_ASSIGN_OR_RETURN(ModelConfig config, load_config(dir + "/config.json"));
  int model_max_length = 0;
  const std::string tok_config = dir + "/tokenizer_config.json";
  if (is_regular_file(tok_config)) {
    INFERCOST_ASSIGN_OR_RETURN(std::string text, read_file(tok_config));
    INFERCOST_RETURN_IF_ERROR(check_json_nesting(text, tok_config));
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return corruption(tok_config + ": not a JSON object");
    model_max_length = model_max_length_of(doc);
  }
  return model_length_limit(config, model_max_length);
}

Result<LoadedModel> load_model_dir(const std::string& dir, const LoadOptions& options) {
  INFERCOST_ASSIGN_OR_RETURN(OpenedModelDir opened, open_model_dir(dir, options, options.load_weights));
  LoadedModel& m = opened.model;
  if (opened.weights_path.empty()) return std::move(m);
  if (!options.load_weights) {
    INFERCOST_ASSIGN_OR_RETURN(SafeTensorsHeader header, read_safetensors_header(opened.weights_path));
    m.weights_dtype = dtypes_of(header.tensors);
    return std::move(m);
  }
  INFERCOST_ASSIGN_OR_RETURN(SafeTensorsFile file, SafeTensorsFile::open(opened.weights_path));
  if (options.classification_head) {
    INFERCOST_RETURN_IF_ERROR(check_classification_head(dir, m.config, file.tensors()));
  }
  m.weights_dtype = dtypes_of(file.tensors());
  INFERCOST_ASSIGN_OR_RETURN(m.weights, read_encoder_weights(file, m.config, options.classification_head));
  return std::move(m);
}

Result<ModelDescription> describe_model_dir(const std::string& dir) {
  INFERCOST_ASSIGN_OR_RETURN(OpenedModelDir opened, open_model_dir(dir, {}, /*weights_required=*/true));
  const LoadedModel& m = opened.model;
  INFERCOST_ASSIGN_OR_RETURN(SafeTensorsHeader header, read_safetensors_header(opened.weights_path));
  ModelDescription d;
  d.dir = m.dir;
  d.config = m.config;
  const Status head = check_classification_head(dir, m.config, header.tensors);
  d.classification_head = head.ok();
  d.no_head = head.message();
  INFERCOST_ASSIGN_OR_RETURN(
      d.parameters, count_encoder_parameters(header, opened.weights_path, m.config, d.classification_head));
  d.weights_dtype = dtypes_of(header.tensors);
  d.tokenizer.kind = m.tokenizer->kind();
  d.tokenizer.source = m.tokenizer_source;
  d.tokenizer.vocab_size = m.tokenizer->vocab_size();
  d.tokenizer.max_length = m.tokenizer->max_length();
  if (const text::WordPieceTokenizer* wordpiece = m.wordpiece()) {
    const text::TokenizerOptions& t = wordpiece->options();
    d.tokenizer.normalizer =
        NormalizerDescription{t.lowercase, t.strip_accents.value_or(t.lowercase), t.tokenize_chinese_chars};
  }
  Result<std::optional<EmbeddingConfig>> embedding = read_sentence_transformers(m.dir, m.config.hidden_size);
  if (embedding.ok()) {
    d.embedding = std::move(*embedding);
  } else {
    d.embedding_refused = embedding.status().message();
  }
  return d;
}

}  // namespace infercost::model
