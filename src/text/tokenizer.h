// Tokenizers: the Tokenizer interface the engine uses (whole texts in, ids
// with the special tokens out), and BERT WordPiece, matching Hugging Face's
// fast tokenizer (`tokenizers` BertNormalizer + BertPreTokenizer + WordPiece,
// what BertTokenizerFast / AutoTokenizer use) id for id; where transformers'
// slow Python BertTokenizer differs, we follow the fast one (see tokenizer.cc).
//
// Thread safety: a constructed Vocab and Tokenizer are immutable; any number
// of threads may call encode() concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "infercost/status.h"

namespace infercost::text {

namespace detail {
struct EncoderTables;
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
}  // namespace detail

// Token string <-> id. Ids are line numbers in vocab.txt (0-based), or the
// "vocab" map of a tokenizer.json WordPiece model.
class Vocab {
 public:
  // vocab.txt: one token per line, id = line number. Empty lines are tokens
  // too (HF keeps them). Trailing "\r" is stripped. A token that appears twice
  // keeps its later id (HF's dict), though token(id) still returns it for both.
  // Errors: read_file's (missing or unreadable file), kCorruption (a line that
  // is not UTF-8, naming the line; an empty file).
  static Result<Vocab> load_txt(const std::string& path);
  static Vocab from_tokens(std::vector<std::string> tokens);

  size_t size() const { return tokens_.size(); }
  // -1 when absent.
  int32_t find(std::string_view token) const;
  const std::string& token(int32_t id) const { return tokens_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, detail::StringHash, std::equal_to<>> ids_;
};

// The tokens a row carries besides its text: [CLS] before it and [SEP] after
// it (BERT), <s> and </s> (RoBERTa, XLM-R). It is the fewest tokens an encoded
// row has, so the least max_length.
inline constexpr int kSpecialTokensPerRow = 2;

// A max_length given before any tokenizer is loaded (a flag, a spec):
// kInvalidArgument naming `what` unless it leaves room for the special tokens.
Status check_max_length(int max_length, std::string_view what = "--max-length");

// The tokenizer models the engine has: BERT's WordPiece, byte-level BPE
// (GPT-2, RoBERTa) and SentencePiece Unigram (XLM-R).
enum class TokenizerKind { kWordPiece, kBpe, kUnigram };
// "WordPiece", "BPE", "Unigram", as tokenizer.json's model.type names them.
const char* tokenizer_kind_name(TokenizerKind kind);

// What the engine needs of a tokenizer, whatever its model: the ids of a
// whole text, special tokens added and truncated to its max length; the
// padding id; the vocabulary's size and pieces. The pipeline, plan and the
// CLI use tokenizers only through it.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual TokenizerKind kind() const = 0;
  // Appends the ids of `text` (UTF-8) to `out` (no allocation once `out` has
  // grown); returns how many. Invalid UTF-8 is kCorruption naming the byte.
  virtual Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const = 0;
  // The same into a new vector.
  Result<std::vector<int32_t>> encode(std::string_view text) const;
  // Tokens encode() adds to every row besides its text (0 without them).
  virtual int special_tokens() const = 0;
  virtual int32_t pad_id() const = 0;
  virtual size_t vocab_size() const = 0;
  // The piece of an id below vocab_size().
  virtual const std::string& piece(int32_t id) const = 0;
  // Total ids per row at most, special tokens included; <= 0: no limit.
  virtual int max_length() const = 0;

 protected:
  Tokenizer() = default;
  Tokenizer(const Tokenizer&) = default;
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(const Tokenizer&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
};

// `base` encoding `prefix` + text for every text (an embedding model's
// prompt, "query: "): the prefix's tokens count against max_length as the
// text's do. A text the base refuses is refused with the base's error for
// the text alone (its byte offsets the text's own). kInvalidArgument for a
// prefix that is not valid UTF-8.
Result<std::shared_ptr<const Tokenizer>> with_prefix(std::shared_ptr<const Tokenizer> base,
                                                     std::string prefix);

struct TokenizerOptions {
  bool lowercase = true;
  // Unset: strip accents exactly when lowercasing (HF's rule).
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  bool add_special_tokens = true;  // [CLS] ... [SEP]
  // Total length including special tokens; longer inputs are truncated
  // (HF truncation=True, longest_first on a single sequence). <= 0: no limit
  // (a model's limit comes from the model: model::model_length_limit).
  int max_length = 0;
  int max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
  // Tokens matched verbatim in the raw text (before any normalization) and
  // never split, leftmost-longest first, as HF's added tokens with
  // normalized=false ("[CLS]" in the text gives id 101; "[cls]" does not).
  // Unset: the special tokens above that are in the vocabulary.
  std::optional<std::vector<std::string>> added_tokens;
  std::string continuing_subword_prefix = "##";
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // Fails (kInvalidArgument) if [UNK], [CLS], [SEP] or [PAD] (or an added
  // token) is missing from the vocabulary, or max_length leaves no room for
  // [CLS] and [SEP].
  static Result<WordPieceTokenizer> create(Vocab vocab, TokenizerOptions options);

  TokenizerKind kind() const override { return TokenizerKind::kWordPiece; }
  // Ids of `text` (UTF-8). Invalid UTF-8 is an error (kCorruption naming the
  // byte offset). With add_special_tokens the ids start with [CLS] and end
  // with [SEP], at most max_length of them.
  Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const override;

  const Vocab& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }
  int32_t pad_id() const override { return pad_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t unk_id() const { return unk_id_; }
  // Tokens encode() adds to every row: kSpecialTokensPerRow, or 0 without
  // add_special_tokens.
  int special_tokens() const override { return options_.add_special_tokens ? kSpecialTokensPerRow : 0; }
  size_t vocab_size() const override { return vocab_.size(); }
  const std::string& piece(int32_t id) const override { return vocab_.token(id); }
  int max_length() const override { return options_.max_length; }

 private:
  Vocab vocab_;
  TokenizerOptions options_;
  int32_t pad_id_ = 0, cls_id_ = 0, sep_id_ = 0, unk_id_ = 0;
  std::shared_ptr<const detail::EncoderTables> tables_;
};

// The words the WordPiece step sees for `text` (UTF-8), by the same code as
// encode(): added tokens matched in the raw text and kept whole; then clean_text,
// CJK characters made words of their own, accents stripped, lowercased (per
// `options`), split at whitespace and around each punctuation character.
// No vocabulary is involved: with added_tokens unset, the added tokens are
// the five special tokens (pad, unk, cls, sep, mask). Words are returned
// whole, however long (max_input_chars_per_word, max_length and
// add_special_tokens are ignored). Errors: kCorruption naming the byte
// offset of invalid UTF-8.
Result<std::vector<std::string>> basic_tokenize(std::string_view text, const TokenizerOptions& options);

// Reads tokenizer.json (HF `tokenizers` format): the WordPiece vocab, the
// BertNormalizer flags (lowercase, strip_accents, handle_chinese_chars,
// clean_text), special tokens, and truncation max_length if present into
// `options` (fields it does not mention are left as they are): the file as
// `tokenizers` loads it (load_tokenizer() ignores the truncation).
// added_tokens become options.added_tokens (their ids join the vocab); a null
// post_processor turns add_special_tokens off, as in HF.
// Errors: kIOError, kCorruption (bad JSON or vocab), kUnsupported (a model
// other than WordPiece, a normalizer other than BertNormalizer, a
// pre-tokenizer other than BertPreTokenizer, or an added token with
// normalized/lstrip/rstrip/single_word set); messages name the file.
struct TokenizerJson {
  Vocab vocab;
  TokenizerOptions options;
};
Result<TokenizerJson> load_tokenizer_json(const std::string& path, TokenizerOptions defaults);

// What a loaded tokenizer does beyond what its files say.
struct TokenizerSettings {
  // Ids per row at most, special tokens included (HF truncation=True); <= 0:
  // no limit (a model's limit comes from the model: model::model_length_limit).
  int max_length = 0;
  bool add_special_tokens = true;  // [CLS] ... [SEP], <s> ... </s>
  // WordPiece's normalizer flags, when set, over whatever the files say;
  // kInvalidArgument for a tokenizer of another kind.
  std::optional<bool> lowercase, strip_accents;
  // The tokenizer class a model directory's tokenizer_config.json names, and
  // its add_prefix_space. transformers 5 builds the pipeline of these classes
  // itself, taking only the vocabulary (and merges) from the files:
  // XLMRobertaTokenizer and CamembertTokenizer run the file's Precompiled
  // normalizer alone, then WhitespaceSplit and Metaspace (prepend always, or
  // never without add_prefix_space); RobertaTokenizer runs ByteLevel with
  // add_prefix_space (default false). load_tokenizer() builds the same, so a
  // model directory tokenizes as AutoTokenizer.from_pretrained() does; a
  // bare tokenizer.json tokenizes as `tokenizers` loads it.
  std::string transformers_class;
  std::optional<bool> add_prefix_space;
  // DebertaV2Tokenizer's own flags (tokenizer_config.json): its normalizer
  // lowercases with do_lower_case (default false); split_by_punct (a
  // Punctuation pre-tokenizer) is refused by name. That class's pipeline is
  // rebuilt as transformers 5 builds it (load_tokenizer), whether the
  // vocabulary comes from a tokenizer.json or from DeBERTa's spm.model.
  std::optional<bool> do_lower_case;
  bool split_by_punct = false;
};

struct LoadedTokenizer {
  std::shared_ptr<const Tokenizer> tokenizer;
  // What it was read from: "tokenizer.json", "vocab.txt" or
  // "vocab.json + merges.txt".
  std::string source;
};

// The tokenizer at `path`, built by its model: a tokenizer.json (its
// model.type WordPiece, BPE or Unigram picks the tokenizer, the rest of the
// file its pipeline), a SentencePiece spm.model (DeBERTa-v3's: its Unigram
// pieces, in DebertaV2Tokenizer's pipeline), a vocab.txt (BERT WordPiece), or
// a folder holding one of tokenizer.json, vocab.json + merges.txt (byte-level
// BPE as RoBERTa's), spm.model or vocab.txt, tried in that order. `wordpiece` holds what a vocab.txt does not
// carry (the normalizer flags and special tokens, as tokenizer_config.json
// sets them) and the defaults a tokenizer.json overrides; `settings` come
// last. Only settings.max_length truncates: a tokenizer.json's own
// "truncation" is ignored, as transformers ignores it (it truncates to what
// each call asks), and so is its "padding" (one text is never padded).
// Errors name the file: kNotFound
// (nothing to load), kIOError, kCorruption (a malformed file), kUnsupported
// (another model type or pipeline step, named with what is supported).
Result<LoadedTokenizer> load_tokenizer(const std::string& path, const TokenizerSettings& settings,
                                       TokenizerOptions wordpiece = {});

}  // namespace infercost::text
