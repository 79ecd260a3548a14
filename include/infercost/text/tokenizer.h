// BERT WordPiece tokenization, matching Hugging Face `BertTokenizer` /
// `tokenizers` BertNormalizer + BertPreTokenizer + WordPiece exactly.
//
// Thread safety: a constructed Vocab and WordPieceTokenizer are immutable; any
// number of threads may call encode() concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "infercost/core/status.h"

namespace infercost::text {

// Token string <-> id. Ids are line numbers in vocab.txt (0-based), or the
// "vocab" map of a tokenizer.json WordPiece model.
class Vocab {
 public:
  // vocab.txt: one token per line, id = line number. Empty lines are tokens
  // too (HF keeps them). Trailing "\r" is stripped.
  static Result<Vocab> load_txt(const std::string& path);
  static Vocab from_tokens(std::vector<std::string> tokens);

  size_t size() const { return tokens_.size(); }
  // -1 when absent.
  int32_t find(std::string_view token) const;
  const std::string& token(int32_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

struct TokenizerOptions {
  bool lowercase = true;
  // Unset: strip accents exactly when lowercasing (HF's rule).
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  bool add_special_tokens = true;  // [CLS] ... [SEP]
  // Total length including special tokens; longer inputs are truncated
  // (HF truncation=True, longest_first on a single sequence).
  int max_length = 512;
  int max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string continuing_subword_prefix = "##";
};

class WordPieceTokenizer {
 public:
  // Fails if a special token is missing from the vocabulary.
  static Result<WordPieceTokenizer> create(Vocab vocab, TokenizerOptions options);

  // Ids of `text` (UTF-8). Invalid UTF-8 is an error (kCorruption naming the
  // byte offset). With add_special_tokens the result starts with [CLS] and
  // ends with [SEP] and has at most max_length ids.
  Result<std::vector<int32_t>> encode(std::string_view text) const;
  // Appends to `out` instead of returning a new vector (no allocation once
  // `out` has grown); returns the number of ids appended.
  Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const;

  const Vocab& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t unk_id() const { return unk_id_; }

 private:
  Vocab vocab_;
  TokenizerOptions options_;
  int32_t pad_id_ = 0, cls_id_ = 0, sep_id_ = 0, unk_id_ = 0;
};

// Reads tokenizer.json (HF `tokenizers` format): the WordPiece vocab, the
// BertNormalizer flags (lowercase, strip_accents, handle_chinese_chars,
// clean_text), special tokens, and truncation max_length if present into
// `options` (fields it does not mention are left as they are).
struct TokenizerJson {
  Vocab vocab;
  TokenizerOptions options;
};
Result<TokenizerJson> load_tokenizer_json(const std::string& path, TokenizerOptions defaults);

}  // namespace infercost::text
