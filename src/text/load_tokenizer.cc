// load_tokenizer(): which files a path holds, and which tokenizer they make.
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/file.h"
#include "core/json_text.h"
#include "text/bpe.h"
#include "text/bpe_json.h"
#include "text/sentencepiece_model.h"
#include "text/tokenizer.h"
#include "text/tokenizer_json.h"
#include "text/unigram.h"
#include "text/unigram_json.h"

namespace infercost::text {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<LoadedTokenizer> wordpiece(Vocab vocab, TokenizerOptions options, const TokenizerSettings& settings,
                                  std::string source) {
  if (settings.lowercase) options.lowercase = *settings.lowercase;
  if (settings.strip_accents) options.strip_accents = *settings.strip_accents;
  INFERCOST_ASSIGN_OR_RETURN(WordPieceTokenizer tok, WordPieceTokenizer::create(std::move(vocab), options));
  return LoadedTokenizer{std::make_shared<const WordPieceTokenizer>(std::move(tok)), std::move(source)};
}

bool is_class(const TokenizerSettings& settings, std::string_view name) {
  return settings.transformers_class == name || settings.transformers_class == std::string(name) + "Fast";
}

// What transformers 5 builds for a SentencePiece class (see
// TokenizerSettings::transformers_class): the file's Precompiled normalizer
// alone, WhitespaceSplit, Metaspace.
void rebuild_as_transformers_unigram(nlohmann::json& root, const TokenizerSettings& settings) {
  nlohmann::json precompiled = nullptr;
  const nlohmann::json& normalizer = root.value("normalizer", nlohmann::json());
  if (normalizer.is_object() && normalizer.value("type", "") == "Precompiled") precompiled = normalizer;
  if (normalizer.is_object() && normalizer.value("type", "") == "Sequence") {
    for (const nlohmann::json& n : normalizer.value("normalizers", nlohmann::json::array())) {
      if (n.is_object() && n.value("type", "") == "Precompiled") precompiled = n;
    }
  }
  root["normalizer"] = precompiled;
  root["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "WhitespaceSplit"}},
        {{"type", "Metaspace"},
         {"replacement", "\u2581"},
         {"prepend_scheme", settings.add_prefix_space.value_or(true) ? "always" : "never"},
         {"split", true}}}}};
}

// The id of the token `content`: an added token's, else the Unigram model's
// vocabulary index; -1 when neither has it.
int64_t unigram_token_id(const nlohmann::json& root, const std::string& content) {
  for (const nlohmann::json& a : root.value("added_tokens", nlohmann::json::array())) {
    if (a.is_object() && a.value("content", "") == content && a.contains("id") && a["id"].is_number_integer())
      return a["id"].get<int64_t>();
  }
  const nlohmann::json& vocab = root["model"].value("vocab", nlohmann::json::array());
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (vocab[i].is_array() && !vocab[i].empty() && vocab[i][0] == content) return static_cast<int64_t>(i);
  }
  return -1;
}

// What transformers 5's DebertaV2Tokenizer builds around a Unigram
// vocabulary, whatever the file's own pipeline says: Lowercase where
// do_lower_case, Replace of `\s{2,}|[\n\r\t]` by a space, NFC, Strip on the
// right; Metaspace (prepend always, or first without add_prefix_space);
// `[CLS] $A [SEP]`; [PAD] [CLS] [SEP] [UNK] [MASK] as special added tokens
// (with their vocabulary ids, or after everything else where the vocabulary
// has none: DeBERTa-v3's [MASK] at 128,000).
Status rebuild_as_deberta(nlohmann::json& root, const TokenizerSettings& settings, const std::string& path) {
  if (settings.split_by_punct) {
    return unsupported(
        path + ": split_by_punct true (DebertaV2Tokenizer's Punctuation pre-tokenizer) is not supported");
  }
  nlohmann::json normalizers = nlohmann::json::array();
  if (settings.do_lower_case.value_or(false)) normalizers.push_back({{"type", "Lowercase"}});
  normalizers.push_back(
      {{"type", "Replace"}, {"pattern", {{"Regex", "\\s{2,}|[\\n\\r\\t]"}}}, {"content", " "}});
  normalizers.push_back({{"type", "NFC"}});
  normalizers.push_back({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}});
  root["normalizer"] = {{"type", "Sequence"}, {"normalizers", normalizers}};
  root["pre_tokenizer"] = {{"type", "Metaspace"},
                           {"replacement", "\u2581"},
                           {"prepend_scheme", settings.add_prefix_space.value_or(true) ? "always" : "first"},
                           {"split", true}};
  // The class's special tokens are added tokens, those missing from the
  // vocabulary appended after it and the file's added tokens ([MASK]).
  nlohmann::json& added = root["added_tokens"];
  if (!added.is_array()) added = nlohmann::json::array();
  int64_t next = static_cast<int64_t>(root["model"].value("vocab", nlohmann::json::array()).size());
  for (const nlohmann::json& a : added) {
    if (a.is_object() && a.contains("id") && a["id"].is_number_integer())
      next = std::max(next, a["id"].get<int64_t>() + 1);
  }
  for (const char* special : {"[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"}) {
    bool listed = false;
    for (const nlohmann::json& a : added)
      listed = listed || (a.is_object() && a.value("content", "") == special);
    if (listed) continue;
    int64_t id = unigram_token_id(root, special);
    if (id < 0) id = next++;
    added.push_back({{"id", id},
                     {"content", special},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  const int64_t cls = unigram_token_id(root, "[CLS]"), sep = unigram_token_id(root, "[SEP]");
  if (cls < 0 || sep < 0)
    return corruption(path + ": no [CLS] or [SEP] token for DebertaV2Tokenizer's template");
  root["post_processor"] = {{"type", "TemplateProcessing"},
                            {"single",
                             {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                              {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
                            {"special_tokens",
                             {{"[CLS]", {{"id", "[CLS]"}, {"ids", {cls}}, {"tokens", {"[CLS]"}}}},
                              {"[SEP]", {{"id", "[SEP]"}, {"ids", {sep}}, {"tokens", {"[SEP]"}}}}}}};
  return Status();
}

// DeBERTa-v3's spm.model as transformers 5 loads it: every piece with its
// score as the Unigram vocabulary (no byte fallback: characters outside it are
// [UNK]), the unknown token [UNK] where its score is 0 (else the model's
// unk_id), then rebuild_as_deberta's pipeline and special tokens.
Result<LoadedTokenizer> load_spm_file(const std::string& path, const TokenizerSettings& settings) {
  if (!settings.transformers_class.empty() && !is_class(settings, "DebertaV2Tokenizer")) {
    return unsupported(path + ": a SentencePiece model for tokenizer_class " + settings.transformers_class +
                       " (spm.model is read as DeBERTa-v3's, DebertaV2Tokenizer)");
  }
  INFERCOST_ASSIGN_OR_RETURN(std::string data, read_file(path));
  INFERCOST_ASSIGN_OR_RETURN(detail::SentencePieceModel spm, detail::parse_sentencepiece_model(data, path));
  if (spm.model_type != 1) {
    return unsupported(path + ": SentencePiece model_type " + std::to_string(spm.model_type) +
                       " (only Unigram, 1, is read)");
  }
  nlohmann::json vocab = nlohmann::json::array();
  int64_t unk = spm.unk_id;
  for (size_t i = 0; i < spm.pieces.size(); ++i) {
    const detail::SentencePieceModel::Piece& p = spm.pieces[i];
    vocab.push_back({p.piece, static_cast<double>(p.score)});
    if (p.piece == "[UNK]" && p.score == 0.0f) unk = static_cast<int64_t>(i);
  }
  nlohmann::json root;
  root["model"] = {
      {"type", "Unigram"}, {"unk_id", unk}, {"vocab", std::move(vocab)}, {"byte_fallback", false}};
  root["added_tokens"] = nlohmann::json::array();
  INFERCOST_RETURN_IF_ERROR(rebuild_as_deberta(root, settings, path));
  try {
    INFERCOST_ASSIGN_OR_RETURN(
        std::unique_ptr<UnigramTokenizer> unigram,
        unigram_from_tokenizer_json(root, path, settings.max_length, settings.add_special_tokens));
    return LoadedTokenizer{std::move(unigram), "spm.model"};
  } catch (const nlohmann::json::exception& e) {
    return corruption(path + ": " + e.what());
  }
}

// A BPE tokenizer as `settings` want it: without its special tokens when
// they are not to be added, with a model directory's add_prefix_space.
Result<LoadedTokenizer> bpe_with(std::unique_ptr<BpeTokenizer> bpe, const TokenizerSettings& settings,
                                 std::string source) {
  const bool prefix = is_class(settings, "RobertaTokenizer") &&
                      settings.add_prefix_space.value_or(false) != bpe->config().add_prefix_space;
  if (!settings.add_special_tokens || prefix) {
    BpeConfig config = bpe->config();
    if (!settings.add_special_tokens) {
      config.prefix_ids.clear();
      config.suffix_ids.clear();
    }
    if (prefix) config.add_prefix_space = settings.add_prefix_space.value_or(false);
    INFERCOST_ASSIGN_OR_RETURN(bpe, BpeTokenizer::create(std::move(config)));
  }
  return LoadedTokenizer{std::move(bpe), std::move(source)};
}

Result<LoadedTokenizer> from_json(nlohmann::json& root, const std::string& path,
                                  const TokenizerSettings& settings, TokenizerOptions options) {
  if (!root.contains("model") || !root.at("model").is_object())
    return corruption(path + ": no 'model' object (not a tokenizer.json?)");
  // transformers (PreTrainedTokenizerFast) sets the tokenizer's truncation
  // on every call from the call's own arguments, so a tokenizer.json's own
  // "truncation" never applies (all-MiniLM-L6-v2's says 128; its model takes
  // 512): only settings.max_length truncates. Its "padding" pads batches
  // only, never one text's ids; its pad token is kept.
  root.erase("truncation");
  const std::string type = root.at("model").value("type", "");
  if (type == "WordPiece") {
    options.max_length = settings.max_length;
    options.add_special_tokens = settings.add_special_tokens;
    Result<TokenizerJson> read = detail::wordpiece_from_tokenizer_json(root, options);
    if (!read.ok()) return read.status().with_context(path);
    TokenizerJson tj = std::move(read).value();
    if (!settings.add_special_tokens) tj.options.add_special_tokens = false;
    Result<LoadedTokenizer> made =
        wordpiece(std::move(tj.vocab), std::move(tj.options), settings, "tokenizer.json");
    if (!made.ok()) return made.status().with_context(path);
    return made;
  }
  if (type == "BPE") {
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> bpe,
                               bpe_from_tokenizer_json(root, path, settings.max_length));
    return bpe_with(std::move(bpe), settings, "tokenizer.json");
  }
  if (type == "Unigram") {
    if (is_class(settings, "XLMRobertaTokenizer") || is_class(settings, "CamembertTokenizer"))
      rebuild_as_transformers_unigram(root, settings);
    if (is_class(settings, "DebertaV2Tokenizer"))
      INFERCOST_RETURN_IF_ERROR(rebuild_as_deberta(root, settings, path));
    INFERCOST_ASSIGN_OR_RETURN(
        std::unique_ptr<UnigramTokenizer> unigram,
        unigram_from_tokenizer_json(root, path, settings.max_length, settings.add_special_tokens));
    return LoadedTokenizer{std::move(unigram), "tokenizer.json"};
  }
  return unsupported(path + ": model type '" + type + "' is not supported (WordPiece, BPE or Unigram)");
}

Result<LoadedTokenizer> load_json_file(const std::string& path, const TokenizerSettings& settings,
                                       TokenizerOptions options) {
  INFERCOST_ASSIGN_OR_RETURN(std::string data, read_file(path));
  return detail::load_tokenizer_json_text(data, path, settings, std::move(options));
}

Result<LoadedTokenizer> load_vocab_txt(const std::string& path, const TokenizerSettings& settings,
                                       TokenizerOptions options) {
  INFERCOST_ASSIGN_OR_RETURN(Vocab vocab, Vocab::load_txt(path));
  options.max_length = settings.max_length;
  options.add_special_tokens = settings.add_special_tokens;
  Result<LoadedTokenizer> loaded = wordpiece(std::move(vocab), std::move(options), settings, "vocab.txt");
  if (!loaded.ok()) return loaded.status().with_context(path);
  return loaded;
}

Result<LoadedTokenizer> load_any(const std::string& path, const TokenizerSettings& settings,
                                 TokenizerOptions wordpiece_options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return not_found(path + ": no such file or folder");
  if (S_ISDIR(st.st_mode)) {
    const std::string dir = ends_with(path, "/") ? path : path + "/";
    if (is_file(dir + "tokenizer.json"))
      return load_json_file(dir + "tokenizer.json", settings, wordpiece_options);
    if (is_file(dir + "vocab.json") && is_file(dir + "merges.txt")) {
      INFERCOST_ASSIGN_OR_RETURN(
          std::unique_ptr<BpeTokenizer> bpe,
          BpeTokenizer::load_files(dir + "vocab.json", dir + "merges.txt", settings.max_length));
      return bpe_with(std::move(bpe), settings, "vocab.json + merges.txt");
    }
    if (is_file(dir + "spm.model")) return load_spm_file(dir + "spm.model", settings);
    if (is_file(dir + "vocab.txt")) return load_vocab_txt(dir + "vocab.txt", settings, wordpiece_options);
    if (is_file(dir + "vocab.json"))
      return not_found(dir + ": vocab.json without merges.txt (a BPE tokenizer needs both)");
    return not_found(
        path + ": no tokenizer: expected tokenizer.json, vocab.json + merges.txt, spm.model or vocab.txt");
  }
  if (ends_with(path, "vocab.json")) {
    return invalid_argument(path +
                            ": a vocab.json needs its merges.txt: give the folder that holds both, or a "
                            "tokenizer.json");
  }
  if (ends_with(path, ".json")) return load_json_file(path, settings, std::move(wordpiece_options));
  if (ends_with(path, ".model")) return load_spm_file(path, settings);
  return load_vocab_txt(path, settings, std::move(wordpiece_options));
}

}  // namespace

Result<LoadedTokenizer> load_tokenizer(const std::string& path, const TokenizerSettings& settings,
                                       TokenizerOptions wordpiece_options) {
  INFERCOST_ASSIGN_OR_RETURN(LoadedTokenizer loaded, load_any(path, settings, std::move(wordpiece_options)));
  if ((settings.lowercase || settings.strip_accents) &&
      loaded.tokenizer->kind() != TokenizerKind::kWordPiece) {
    return invalid_argument(
        path + ": lowercasing and accent stripping are options of WordPiece tokenizers; this one is " +
        tokenizer_kind_name(loaded.tokenizer->kind()));
  }
  return loaded;
}

namespace detail {

Result<LoadedTokenizer> load_tokenizer_json_text(std::string_view data, const std::string& path,
                                                 const TokenizerSettings& settings,
                                                 TokenizerOptions options) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(data, path));
  nlohmann::json root = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return corruption(path + ": not a JSON object");
  try {
    return from_json(root, path, settings, std::move(options));
  } catch (const nlohmann::json::exception& e) {
    // Missing keys and wrong types surface as exceptions from at()/get().
    return corruption(path + ": " + e.what());
  }
}

}  // namespace detail

}  // namespace infercost::text
