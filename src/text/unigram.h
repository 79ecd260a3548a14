// SentencePiece Unigram tokenizers (XLM-RoBERTa and its kin) from a
// tokenizer.json, matching Hugging Face `tokenizers` (Tokenizer.encode, the
// ids XLMRobertaTokenizerFast gives) id for id: added tokens cut out of the
// raw text, then the normalizer (Precompiled charsmap, Replace, NFKC/NFC/
// NFKD/NFD, Lowercase, Strip, Prepend, Sequence), the pre-tokenizer
// (Metaspace, WhitespaceSplit, Sequence), the Unigram model's Viterbi, and
// the post-processor's template (`<s> $A </s>`), truncated as HF's
// truncation=True.
//
// Made by the tokenizer factory from a parsed tokenizer.json
// (src/text/unigram_json.h). Immutable: any number of threads may call
// encode() on one tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace infercost::text {

namespace detail {
struct UnigramTables;
}

class UnigramTokenizer final : public Tokenizer {
 public:
  explicit UnigramTokenizer(std::shared_ptr<const detail::UnigramTables> tables);

  TokenizerKind kind() const override { return TokenizerKind::kUnigram; }
  // The ids of `text` (UTF-8): the template's ids around the text's, at most
  // max_length() in all (the text's first ones kept). Invalid UTF-8 is
  // kCorruption naming the byte offset; `out` is then as it was.
  Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const override;
  int special_tokens() const override;
  int32_t pad_id() const override;
  size_t vocab_size() const override;
  // The model's piece, or an added token's content; "" for an id neither has.
  const std::string& piece(int32_t id) const override;
  int max_length() const override;

  // The model's unknown piece.
  int32_t unk_id() const;

 private:
  std::shared_ptr<const detail::UnigramTables> tables_;
};

}  // namespace infercost::text
