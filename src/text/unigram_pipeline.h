// The pieces of a Unigram tokenizer.json pipeline besides the model: the
// normalizers, the pre-tokenizers, the added tokens and the template, each as
// Hugging Face `tokenizers` applies it, and UnigramTables, all of them
// together (what a UnigramTokenizer holds). Private to infercost_text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/added_tokens.h"
#include "text/precompiled.h"
#include "text/unigram_model.h"

namespace infercost::text::detail {

// The characters one atom of a Replace regex names: code points, and every
// White_Space one where it says \s.
struct CharSet {
  std::vector<char32_t> chars;
  bool space = false;
  bool empty() const { return chars.empty() && !space; }
  bool contains(char32_t cp) const;
};

// One normalizer of a (flattened) Sequence.
struct NormalizerStep {
  enum class Kind { kPrecompiled, kReplace, kNfc, kNfd, kNfkc, kNfkd, kLowercase, kStrip, kPrepend };
  Kind kind = Kind::kPrecompiled;
  std::shared_ptr<const PrecompiledCharsmap> charsmap;  // kPrecompiled
  // kReplace: a literal pattern, or (run_set set) a run of characters of
  // run_set repeated run_min..run_max times (run_max 0: no bound), the
  // `/ {2,}/` kind, or else one character of single_set (DeBERTa's
  // `\s{2,}|[\n\r\t]`), leftmost first and greedy as a regex matches.
  // kPrepend: `content` is the prefix.
  std::string pattern;
  CharSet run_set, single_set;
  size_t run_min = 0, run_max = 0;
  std::string content;
  bool strip_left = false, strip_right = false;  // kStrip

  // Appends `text` normalized by this step to `out`. Clears `*at_origin`
  // when the step deletes the text's first characters in a way that moves
  // HF's alignment of what is left (Strip, Replace with nothing): the text no
  // longer starts at its original offset, which Metaspace's "first" asks.
  // (Precompiled deletions do not move it: HF aligns its output from 0.)
  void apply(std::string_view text, std::string& out, bool* at_origin) const;
};

// The normalizer: its steps in order (none: the text as it is).
struct Normalizer {
  std::vector<NormalizerStep> steps;
  // `text` normalized; the view points into `a` or `b` (or is `text`).
  // `*at_origin` as NormalizerStep::apply.
  std::string_view apply(std::string_view text, std::string& a, std::string& b, bool* at_origin) const;
};

// One pre-tokenizer of a (flattened) Sequence.
struct PreTokenizerStep {
  enum class Kind { kMetaspace, kWhitespaceSplit };
  enum class Prepend { kAlways, kFirst, kNever };
  Kind kind = Kind::kMetaspace;
  std::string replacement = "\xE2\x96\x81";  // U+2581
  Prepend prepend = Prepend::kAlways;
  bool split = true;
};

struct UnigramTables {
  Normalizer normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  UnigramModel model;
  AddedTokenSplitter raw_tokens;                // normalized=false: matched on the raw text
  AddedTokenSplitter normalized_tokens;         // normalized=true: matched after normalization
  std::vector<int32_t> prefix_ids, suffix_ids;  // the template around $A
  int max_length = 0;
  int32_t pad_id = 0;
  // id -> piece: the model's, then added tokens past them (empty between).
  std::vector<std::string> extra_pieces;
  size_t vocab_size = 0;
};

}  // namespace infercost::text::detail
