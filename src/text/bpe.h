// Byte-level BPE (GPT-2, RoBERTa, ModernBERT), matching Hugging Face
// `tokenizers` id for id: added tokens cut out of the text first (the NFC
// normalizer, where there is one, between them), the ByteLevel pre-tokenizer
// (GPT-2's split pattern, each byte as one code point of GPT-2's alphabet),
// BPE merges applied lowest rank first (leftmost first among equal ranks),
// then the post-processor's special tokens (RobertaProcessing `<s> X </s>`,
// or a TemplateProcessing single-sequence template).
//
// Thread safety: a constructed BpeTokenizer is immutable; any number of
// threads may call encode_append() concurrently. Its word cache is filled at
// construction (the vocabulary's own words) and only read afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "infercost/status.h"
#include "text/tokenizer.h"

namespace infercost::text {

namespace detail {
struct BpeTables;
}

// One entry of tokenizer.json's "added_tokens": matched in the text before
// the model sees it and never split. normalized=false tokens are matched in
// the raw text, normalized=true ones in what the normalizer leaves (for BPE,
// NFC or nothing). lstrip / rstrip take the
// whitespace before / after the match with it; single_word matches only
// between non-word characters. Every tokenizer.json reader (BPE, Unigram)
// uses this one type.
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool single_word = false, lstrip = false, rstrip = false;
  bool normalized = true;
  bool special = false;
};

// Everything a BpeTokenizer reads, as tokenizer.json names it.
struct BpeConfig {
  // model.vocab: token (in GPT-2's byte alphabet) -> id. Ids need not be
  // dense; a token listed twice keeps its later id.
  std::vector<std::pair<std::string, int32_t>> vocab;
  // model.merges, in rank order (first = merged first).
  std::vector<std::pair<std::string, std::string>> merges;
  std::optional<std::string> unk_token;  // model.unk_token; unset: unknown symbols are dropped
  bool fuse_unk = false;
  std::string continuing_subword_prefix;  // model.*; empty: none
  std::string end_of_word_suffix;
  // normalizer NFC (ModernBERT): the text between the normalized=false added
  // tokens is composed before the rest; false: no normalizer.
  bool nfc = false;
  // pre_tokenizer ByteLevel. trim_offsets changes offsets only, which we do
  // not produce; kept so the config says what the file said.
  bool add_prefix_space = false;
  bool use_regex = true;
  bool trim_offsets = true;
  std::vector<AddedToken> added_tokens;
  // The post-processor's ids before and after the text of every row.
  std::vector<int32_t> prefix_ids, suffix_ids;
  int32_t pad_id = 1;
  // Total ids per row, special ones included (HF truncation=True: the first
  // max_length - prefix - suffix text ids are kept); <= 0: no limit.
  int max_length = 0;
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Errors: kCorruption naming the merge (by rank) whose parts or result are
  // not in the vocabulary, or the unk_token or an added token's id missing;
  // kInvalidArgument when max_length leaves no room for the special tokens.
  static Result<std::unique_ptr<BpeTokenizer>> create(BpeConfig config);

  // roberta-base's vocab.json and merges.txt, configured as transformers'
  // RobertaTokenizerFast builds it: ByteLevel without a prefix space,
  // RobertaProcessing `<s> ... </s>`, the special tokens `<s>` `<pad>`
  // `</s>` `<unk>` and `<mask>` (lstrip, as roberta-base's tokenizer.json has
  // it), no unk_token in the model. Errors name the file and the entry:
  // read_file's, kCorruption (vocab.json not an object of non-negative
  // integer ids; a merges.txt line that is not two tokens separated by one
  // space), kNotFound (a special token missing from vocab.json).
  static Result<std::unique_ptr<BpeTokenizer>> load_files(const std::string& vocab_json_path,
                                                          const std::string& merges_txt_path, int max_length);

  ~BpeTokenizer() override;

  TokenizerKind kind() const override { return TokenizerKind::kBpe; }
  // Ids of `text` (UTF-8): prefix_ids, the text's ids (truncated), suffix_ids.
  // Invalid UTF-8 is kCorruption naming the byte offset.
  Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const override;
  int special_tokens() const override;
  int32_t pad_id() const override { return config_.pad_id; }
  // One past the largest id of the vocabulary and the added tokens.
  size_t vocab_size() const override;
  // The token as vocab.json spells it (GPT-2's byte alphabet); "" for an id
  // no token has.
  const std::string& piece(int32_t id) const override;
  int max_length() const override { return config_.max_length; }

  const BpeConfig& config() const { return config_; }

 private:
  BpeTokenizer() = default;
  BpeConfig config_;
  std::unique_ptr<const detail::BpeTables> tables_;
};

}  // namespace infercost::text
