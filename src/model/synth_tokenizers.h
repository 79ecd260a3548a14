// The tokenizer files `infercost model synth` builds for the RoBERTa family
// and ModernBERT from the project's tweet word list: a byte-level BPE
// (vocab.json + merges.txt, as RoBERTa's; a tokenizer.json as ModernBERT's)
// and a SentencePiece-style Unigram (tokenizer.json, as XLM-R's). Plausible tokens per tweet, not a real
// vocabulary. Private to src/model (synth.cc).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "infercost/status.h"

namespace infercost::model {

// The special tokens both put first, at RoBERTa's and XLM-R's ids.
inline constexpr int32_t kRobertaBosId = 0, kRobertaPadId = 1, kRobertaEosId = 2, kRobertaUnkId = 3;
// ModernBERT's special tokens, after its BPE vocabulary, at ModernBERT-base's ids.
inline constexpr int32_t kModernBertUnkId = 50280, kModernBertClsId = 50281, kModernBertSepId = 50282,
                         kModernBertPadId = 50283, kModernBertMaskId = 50284;

// GPT-2's byte-level alphabet: the UTF-8 symbol that stands for each byte
// (printable Latin-1 bytes stand for themselves; the others map to U+0100
// on, so a space is "Ġ").
std::vector<std::string> byte_level_alphabet();

struct ByteLevelBpe {
  std::vector<std::string> vocab;                           // by id: specials, 256 bytes, merged, <mask>
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  int32_t first_merged = 0, end_merged = 0;                 // ids of the merged tokens
  std::vector<int32_t> word_ids;                            // "Ġ" + a whole word, in id order
};

// <s> <pad> </s> <unk>, the 256 byte symbols, then the merges learned from
// `words` (each also in its word-start form, "Ġ" + word), most frequent pair
// first, ties in byte order of the pair, until every word is one token or
// the vocabulary (with <mask> last) would exceed `max_vocab`.
Result<ByteLevelBpe> learn_byte_level_bpe(const std::vector<std::string>& words, int max_vocab);
// vocab.json (ids in order) and merges.txt ("#version: 0.2" first), as HF
// writes them.
std::string bpe_vocab_json(const ByteLevelBpe& bpe);
std::string bpe_merges_txt(const ByteLevelBpe& bpe);

struct UnigramVocab {
  std::vector<std::pair<std::string, double>> pieces;  // by id: specials, pieces by score, <mask>
  int32_t first_word = 0, end_word = 0;                // ids of the pieces
  std::vector<int32_t> word_ids;                       // "▁" + a whole word, in id order
};

// <s> <pad> </s> <unk>, then the pieces of `words`: each word in its
// word-start form ("▁" + word) and bare, every character they use and "▁";
// scored by the log of their frequency as substrings of the word-start
// forms; <mask> last. kInternal where that exceeds `max_vocab`.
Result<UnigramVocab> build_unigram_vocab(const std::vector<std::string>& words, int max_vocab);
// ModernBERT's tokenizer.json layout around `bpe` (whose vocabulary must end
// before kModernBertUnkId): NFC, ByteLevel without a prefix space, the
// special tokens at ModernBERT-base's ids ([MASK] lstrip), TemplateProcessing
// "[CLS] $A [SEP]". `bpe`'s own <s> <pad> </s> <unk> <mask> stay plain
// vocabulary entries.
std::string modernbert_tokenizer_json(const ByteLevelBpe& bpe);
// A tokenizer.json in HF tokenizers' format: Unigram model (unk_id 3),
// Metaspace pre-tokenizer and decoder, TemplateProcessing "<s> $A </s>".
std::string unigram_tokenizer_json(const UnigramVocab& vocab);
// DeBERTa-v3's layout of the same vocabulary: its first four pieces renamed
// [PAD] [CLS] [SEP] [UNK] (ids 0..3, as DeBERTa-v3's), the last one [MASK];
// DebertaV2Tokenizer's normalizer (whitespace runs, NFC, Strip right),
// Metaspace, TemplateProcessing "[CLS] $A [SEP]".
inline constexpr int32_t kDebertaPadId = 0, kDebertaClsId = 1, kDebertaSepId = 2, kDebertaUnkId = 3;
std::string deberta_tokenizer_json(const UnigramVocab& vocab);
// tokenizer_config.json's special tokens of DeBERTa-v3 and ModernBERT, in
// their order: cls, sep, pad, unk and mask ([CLS] [SEP] [PAD] [UNK] [MASK]).
nlohmann::ordered_json bracket_special_tokens();

// The lexicon's entries cut about where GPT-2's pre-tokenizer cuts them:
// runs of letters (any non-ASCII byte counts as one), of digits, and of
// other symbols; what the BPE learns from. (The Unigram takes the entries as
// they are: Metaspace splits on spaces only, and they have none.)
std::vector<std::string> bpe_training_words(const std::vector<std::string>& lexicon);

}  // namespace infercost::model
