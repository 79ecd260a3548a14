// Added tokens: the strings a tokenizer.json lists in "added_tokens" (the
// special tokens, and any a user added) and the splitter that cuts them out of
// a text before the model sees it, as Hugging Face `tokenizers`'
// AddedVocabulary does: leftmost-longest matches, `single_word` matches only
// between non-word characters, `lstrip` / `rstrip` take the whitespace beside
// the match with it. Private to infercost_text.
//
// HF matches the tokens with normalized=false on the raw text, then
// normalizes each stretch between them and matches the normalized=true tokens
// (their content normalized the same way) on it: a tokenizer with both kinds
// holds two splitters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"
#include "text/bpe.h"

namespace infercost::text::detail {

using text::AddedToken;  // src/text/bpe.h

// tokenizer.json's "added_tokens" array: objects with id and content, and the
// five flags (absent ones take AddedToken's defaults). kCorruption naming the
// entry for a bad one (missing or empty content, id not a non-negative integer,
// a flag that is not a boolean).
Result<std::vector<AddedToken>> read_added_tokens(const nlohmann::json& added_tokens);

class AddedTokenSplitter {
 public:
  AddedTokenSplitter() = default;
  // Tokens matched on their `content` exactly as given (bytes); empty
  // contents are dropped. Of two tokens with the same content the first wins.
  explicit AddedTokenSplitter(std::vector<AddedToken> tokens);

  bool empty() const { return tokens_.empty(); }

  struct Match {
    size_t start = 0, end = 0;  // the matched bytes, before any strip
    const AddedToken* token = nullptr;
  };
  // The leftmost match at or after `from`, the longest there; token null when
  // there is none. Content only: single_word and the strips are split()'s.
  Match find(std::string_view text, size_t from) const;

  // Cuts `text` at the added tokens: on_text(piece, offset) for each non-empty
  // stretch between matches (once, with "" and 0, for an empty text), and
  // on_token(const AddedToken&) for each match, in order. The whitespace an
  // lstrip / rstrip token takes is in neither (a stretch it empties is not
  // reported).
  template <class OnText, class OnToken>
  void split(std::string_view text, OnText&& on_text, OnToken&& on_token) const;

 private:
  // Whether the match [start, end) may be taken as `token`: a single_word
  // token needs no word character on either side.
  bool fits(std::string_view text, size_t start, size_t end, const AddedToken& token) const;
  // Where the whitespace run ending at `end` starts / the one starting at
  // `start` ends.
  static size_t space_run_before(std::string_view text, size_t end);
  static size_t space_run_after(std::string_view text, size_t start);

  std::vector<AddedToken> tokens_;  // longest content first
  bool first_byte_[256] = {};
  int single_first_byte_ = -1;  // the first byte of every token, when they share it
};

template <class OnText, class OnToken>
void AddedTokenSplitter::split(std::string_view text, OnText&& on_text, OnToken&& on_token) const {
  if (text.empty() || tokens_.empty()) {
    on_text(text, size_t{0});
    return;
  }
  size_t taken = 0;  // text before this is reported
  size_t from = 0;   // where the next search starts: after the last match, strips aside (as HF)
  for (;;) {
    const Match m = find(text, from);
    if (m.token == nullptr) break;
    from = m.end;
    if (!fits(text, m.start, m.end, *m.token)) continue;
    size_t start = m.start, end = m.end;
    if (m.token->lstrip) start = std::max(space_run_before(text, start), taken);
    if (m.token->rstrip) end = space_run_after(text, end);
    if (taken < start) on_text(text.substr(taken, start - taken), taken);
    on_token(*m.token);
    taken = end;
  }
  if (taken < text.size()) on_text(text.substr(taken), taken);
}

}  // namespace infercost::text::detail
