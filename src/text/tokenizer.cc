// The oracle is the Rust `tokenizers` library (what BertTokenizerFast and
// AutoTokenizer use), not transformers' slow Python BertTokenizer. Where the
// two differ we follow the fast one:
//  - the slow tokenizer lowercases before stripping accents; the fast one
//    strips first (NFD, drop Mn) and then lowercases with Rust's full
//    per-character lowercase (U+0130 -> "i" U+0307);
//  - the slow one treats U+001C..U+001F as whitespace (Python isspace); the
//    fast one drops them as control characters under clean_text;
//  - CJK Extension ranges start at U+2B920 in Rust, U+2B820 in Python;
//  - the fast one takes categories from older Unicode tables (see
//    unicode_props.cc);
//  - special tokens in the text ("[CLS]") are kept whole by the fast
//    tokenizer's added-token matcher, which runs on the raw text before
//    normalization; the slow one splits "[", "cls", "]" unless never_split.
#include "text/tokenizer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "core/enum_names.h"
#include "core/utf8.h"
#include "text/token_table.h"
#include "text/unicode_props.h"

namespace infercost::text {
namespace detail {

enum AsciiAction : uint8_t { kAppend, kSplit, kIsolate, kSkip };

struct EncoderTables {
  TokenTable initial;       // every vocabulary token
  TokenTable continuation;  // tokens that start with the prefix, prefix removed
  // Added tokens, longest first, so the first match at a position is the
  // leftmost-longest one.
  std::vector<std::pair<std::string, int32_t>> added;
  bool added_first_byte[256] = {};
  int single_first_byte = -1;  // when all added tokens start with one byte
  uint8_t ascii_action[128] = {};
  char ascii_lower[128] = {};
};

}  // namespace detail

namespace {

using detail::EncoderTables;

// Where the words of one call go. WordPieceSink (encode) turns each word
// into ids as soon as it ends; WordSink (basic_tokenize) keeps the words.
// A sink provides:
//   kWordLimit: words longer than max_input_chars_per_word need not be stored
//     (the bounded stack buffer relies on it);
//   done(): the length limit is reached;
//   word(w, chars): a finished word (chars code points, more than stored when
//     over the limit);
//   added(token): an added token matched in the raw text.
class WordPieceSink {
 public:
  static constexpr bool kWordLimit = true;

  WordPieceSink(const EncoderTables& tables, int32_t unk_id, size_t max_chars, std::vector<int32_t>& out,
                size_t body_begin, size_t limit)
      : t_(tables),
        unk_id_(unk_id),
        max_chars_(max_chars),
        out_(out),
        body_begin_(body_begin),
        limit_(limit) {}

  bool done() const { return out_.size() - body_begin_ >= limit_; }

  void word(const char* w, size_t len, size_t chars) {
    if (chars > max_chars_) {
      out_.push_back(unk_id_);
    } else {
      wordpiece(w, len);
    }
  }

  void added(const std::pair<std::string, int32_t>& token) { out_.push_back(token.second); }

 private:
  // Greedy longest-match-first; the whole word becomes [UNK] when some
  // position matches nothing.
  void wordpiece(const char* w, size_t len) {
    const size_t first = out_.size();
    size_t start = 0;
    while (start < len) {
      const detail::TokenTable& table = start == 0 ? t_.initial : t_.continuation;
      size_t end = std::min(len, start + table.max_key_bytes());
      while (end < len && (static_cast<unsigned char>(w[end]) & 0xC0) == 0x80) --end;
      int32_t id = -1;
      while (end > start) {
        id = table.find(std::string_view(w + start, end - start));
        if (id >= 0) break;
        do {
          --end;
        } while (end > start && (static_cast<unsigned char>(w[end]) & 0xC0) == 0x80);
      }
      if (id < 0) {
        out_.resize(first);
        out_.push_back(unk_id_);
        return;
      }
      out_.push_back(id);
      start = end;
    }
  }

  const EncoderTables& t_;
  const int32_t unk_id_;
  const size_t max_chars_;
  std::vector<int32_t>& out_;
  const size_t body_begin_;
  const size_t limit_;
};

class WordSink {
 public:
  static constexpr bool kWordLimit = false;

  explicit WordSink(std::vector<std::string>& words) : words_(words) {}

  static constexpr bool done() { return false; }
  void word(const char* w, size_t len, size_t /*chars*/) { words_.emplace_back(w, len); }
  void added(const std::pair<std::string, int32_t>& token) { words_.push_back(token.first); }

 private:
  std::vector<std::string>& words_;
};

// One call: normalizes and pre-tokenizes code points into a word buffer and
// hands each finished word to the sink. With Sink::kWordLimit the buffer is
// the caller's (room for max_input_chars_per_word characters); otherwise it
// grows as needed.
template <class Sink>
class Encoder {
 public:
  Encoder(const EncoderTables& tables, const TokenizerOptions& options, Sink sink, char* word_buf)
      : t_(tables),
        lowercase_(options.lowercase),
        strip_accents_(options.strip_accents.value_or(options.lowercase)),
        chinese_(options.tokenize_chinese_chars),
        clean_(options.clean_text),
        max_chars_(static_cast<size_t>(std::max(options.max_input_chars_per_word, 0))),
        word_(word_buf),
        sink_(std::move(sink)) {}

  bool done() const { return sink_.done(); }
  Sink& sink() { return sink_; }

  // Encodes text[begin, end). Returns the offset where it stopped because
  // the length limit was reached, `end` when it did not, or the offset of
  // invalid UTF-8 with *bad set.
  size_t run(const unsigned char* text, size_t begin, size_t end, bool* bad) {
    size_t i = begin;
    while (i < end) {
      const unsigned b = text[i];
      if (b < 0x80) {
        switch (t_.ascii_action[b]) {
          case detail::kAppend: append_ascii(t_.ascii_lower[b]); break;
          case detail::kSplit:
            flush();
            if (done()) return i + 1;
            break;
          case detail::kIsolate:
            flush();
            append_ascii(static_cast<char>(b));
            flush();
            if (done()) return i + 1;
            break;
          case detail::kSkip: break;
        }
        ++i;
        continue;
      }
      char32_t cp;
      const int len = detail::decode_utf8(text + i, end - i, &cp);
      if (len == 0) {
        *bad = true;
        return i;
      }
      i += static_cast<size_t>(len);
      original_char(cp);
      if (done()) return i;
    }
    flush();
    return end;
  }

  // Ends the current word (pre-tokenizer boundary) and hands it on.
  void flush() {
    if (chars_ == 0) return;
    sink_.word(word_, len_, chars_);
    len_ = 0;
    chars_ = 0;
    barrier_ = 0;
  }

 private:
  // Counts one more character of the word; false when it is not stored
  // (over the limit), otherwise there is room for 4 more bytes.
  bool room() {
    if constexpr (Sink::kWordLimit) {
      return ++chars_ <= max_chars_;
    } else {
      ++chars_;
      if (len_ + 4 > grown_.size()) {
        grown_.resize(std::max<size_t>(64, grown_.size() * 2));
        word_ = grown_.data();
      }
      return true;
    }
  }

  void append_ascii(char c) {
    if (room()) word_[len_++] = c;
  }

  // BertNormalizer steps in HF's order: clean_text, CJK padding, strip
  // accents (NFD, drop Mn), lowercase; then the pre-tokenizer on each output
  // character.
  void original_char(char32_t cp) {
    const uint8_t f = detail::char_flags(cp);
    if (clean_) {
      if (f & detail::kDrop) return;
      if (f & detail::kSpace) {
        flush();
        return;
      }
    }
    if (chinese_ && (f & detail::kCjk)) {
      flush();
      normalized_char(cp, f);
      flush();
      return;
    }
    normalized_char(cp, f);
  }

  void normalized_char(char32_t cp, uint8_t f) {
    if (!strip_accents_) {
      lowered_char(cp, f, 0);
      return;
    }
    char32_t d[detail::kMaxDecomp];
    const int n = detail::nfd_decompose(cp, d);
    for (int k = 0; k < n; ++k) {
      const uint8_t fd = d[k] == cp ? f : detail::char_flags(d[k]);
      const int ccc = (fd & detail::kCombining) ? detail::combining_class(d[k]) : 0;
      if (fd & detail::kMn) {
        // A removed starter still blocks canonical reordering across it.
        if (ccc == 0) barrier_ = len_;
        continue;
      }
      lowered_char(d[k], fd, ccc);
    }
  }

  void lowered_char(char32_t cp, uint8_t f, int ccc) {
    if (!lowercase_ || !(f & detail::kLower)) {
      pretokenized_char(cp, f, ccc);
      return;
    }
    char32_t l[2];
    const int n = detail::to_lower_full(cp, l);
    for (int k = 0; k < n; ++k) pretokenized_char(l[k], detail::char_flags(l[k]), ccc);
  }

  void pretokenized_char(char32_t cp, uint8_t f, int ccc) {
    if (f & detail::kSpace) {
      flush();
    } else if (f & detail::kPunct) {
      flush();
      append(cp, 0);
      flush();
    } else {
      append(cp, ccc);
    }
  }

  void append(char32_t cp, int ccc) {
    if (!room()) return;
    const size_t at = len_;
    len_ += static_cast<size_t>(detail::encode_utf8(cp, word_ + len_));
    if (ccc > 0) reorder(at, ccc);
  }

  // NFD's canonical ordering: a combining character moves before preceding
  // ones of higher class (stable). Only non-Mn combining characters survive
  // accent stripping, so this is rare (Mc marks such as U+1D165).
  void reorder(size_t at, int ccc) {
    size_t pos = at;
    while (pos > barrier_) {
      size_t prev = pos - 1;
      while (prev > barrier_ && (static_cast<unsigned char>(word_[prev]) & 0xC0) == 0x80) --prev;
      char32_t pc;
      if (detail::decode_utf8(reinterpret_cast<const unsigned char*>(word_ + prev), pos - prev, &pc) == 0)
        break;
      const int pccc = detail::combining_class(pc);
      if (pccc <= ccc) break;
      pos = prev;
    }
    if (pos == at) return;
    char moved[4];
    const size_t n = len_ - at;
    std::memcpy(moved, word_ + at, n);
    std::memmove(word_ + pos + n, word_ + pos, at - pos);
    std::memcpy(word_ + pos, moved, n);
  }

  const EncoderTables& t_;
  const bool lowercase_, strip_accents_, chinese_, clean_;
  const size_t max_chars_;
  char* word_;
  std::string grown_;   // the word buffer when Sink::kWordLimit is false
  size_t len_ = 0;      // bytes in word_
  size_t chars_ = 0;    // characters in the word (may exceed max_chars_)
  size_t barrier_ = 0;  // reordering never crosses this byte offset
  Sink sink_;
};

Status invalid_utf8(size_t offset) {
  return corruption("invalid UTF-8 at byte offset " + std::to_string(offset));
}

// The added-token matcher, which runs on the raw text, and the encoder on the
// text between matches. Returns where encoding stopped (the length limit), or
// text.size().
template <class Sink>
Result<size_t> run_text(const EncoderTables& t, Encoder<Sink>& enc, const unsigned char* p, size_t n) {
  bool bad = false;
  size_t seg = 0;  // start of the text not yet encoded
  if (!t.added.empty()) {
    size_t pos = 0;
    while (pos < n) {
      if (t.single_first_byte >= 0) {
        const void* hit = std::memchr(p + pos, t.single_first_byte, n - pos);
        if (hit == nullptr) break;
        pos = static_cast<size_t>(static_cast<const unsigned char*>(hit) - p);
      } else if (!t.added_first_byte[p[pos]]) {
        ++pos;
        continue;
      }
      const std::pair<std::string, int32_t>* match = nullptr;
      for (const auto& a : t.added) {
        if (a.first.size() <= n - pos && std::memcmp(p + pos, a.first.data(), a.first.size()) == 0) {
          match = &a;
          break;
        }
      }
      if (match == nullptr) {
        ++pos;
        continue;
      }
      const size_t at = enc.run(p, seg, pos, &bad);
      if (bad) return invalid_utf8(at);
      if (at != pos || enc.done()) return at;
      enc.sink().added(*match);
      pos += match->first.size();
      seg = pos;
      if (enc.done()) return pos;
    }
  }
  const size_t stop = enc.run(p, seg, n, &bad);
  if (bad) return invalid_utf8(stop);
  return stop;
}

// The tables the normalizer and pre-tokenizer use: the added tokens and the
// per-ASCII-byte actions.
void build_text_tables(const TokenizerOptions& options, std::vector<std::pair<std::string, int32_t>> added,
                       EncoderTables& tables) {
  tables.added = std::move(added);
  std::stable_sort(tables.added.begin(), tables.added.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [token, id] : tables.added) {
    const auto b = static_cast<unsigned char>(token[0]);
    tables.added_first_byte[b] = true;
    if (tables.single_first_byte == -1) {
      tables.single_first_byte = b;
    } else if (tables.single_first_byte != b) {
      tables.single_first_byte = -2;
    }
  }

  for (unsigned b = 0; b < 128; ++b) {
    const uint8_t f = detail::char_flags(b);
    detail::AsciiAction action = detail::kAppend;
    if (options.clean_text && (f & detail::kDrop)) {
      action = detail::kSkip;
    } else if (f & detail::kSpace) {
      action = detail::kSplit;
    } else if (f & detail::kPunct) {
      action = detail::kIsolate;
    }
    tables.ascii_action[b] = action;
    tables.ascii_lower[b] = static_cast<char>(options.lowercase && b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
  }
}

}  // namespace

Status check_max_length(int max_length, std::string_view what) {
  if (max_length >= kSpecialTokensPerRow) return Status::ok_status();
  return invalid_argument(std::string(what) + " must be at least " + std::to_string(kSpecialTokensPerRow) +
                          " (the special tokens around a text: [CLS] and [SEP], or <s> and </s>), got " +
                          std::to_string(max_length));
}

Result<WordPieceTokenizer> WordPieceTokenizer::create(Vocab vocab, TokenizerOptions options) {
  WordPieceTokenizer tok;
  auto require = [&](const std::string& token, const char* what, int32_t* id) -> Status {
    *id = vocab.find(token);
    if (*id < 0)
      return invalid_argument(std::string(what) + " token '" + token + "' is not in the vocabulary");
    return Status::ok_status();
  };
  INFERCOST_RETURN_IF_ERROR(require(options.unk_token, "unknown", &tok.unk_id_));
  INFERCOST_RETURN_IF_ERROR(require(options.cls_token, "classifier", &tok.cls_id_));
  INFERCOST_RETURN_IF_ERROR(require(options.sep_token, "separator", &tok.sep_id_));
  INFERCOST_RETURN_IF_ERROR(require(options.pad_token, "padding", &tok.pad_id_));
  if (options.add_special_tokens && options.max_length > 0 && options.max_length < kSpecialTokensPerRow) {
    return invalid_argument("max_length " + std::to_string(options.max_length) +
                            " leaves no room for the [CLS] and [SEP] tokens");
  }

  auto tables = std::make_shared<detail::EncoderTables>();
  std::vector<std::pair<std::string_view, int32_t>> initial, continuation;
  initial.reserve(vocab.size());
  const std::string& prefix = options.continuing_subword_prefix;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::string& token = vocab.tokens()[i];
    // Later duplicates win through build(); find() agrees with Vocab::find.
    initial.emplace_back(token, static_cast<int32_t>(i));
    if (token.compare(0, prefix.size(), prefix) == 0 && token.size() >= prefix.size()) {
      continuation.emplace_back(std::string_view(token).substr(prefix.size()), static_cast<int32_t>(i));
    }
  }
  if (!tables->initial.build(initial) || !tables->continuation.build(continuation)) {
    return unsupported("vocabulary tokens longer than 11 bytes total 16 MB or more");
  }

  std::vector<std::string> added_tokens;
  if (options.added_tokens) {
    added_tokens = *options.added_tokens;
  } else {
    for (const std::string* t : {&options.pad_token, &options.unk_token, &options.cls_token,
                                 &options.sep_token, &options.mask_token}) {
      if (vocab.find(*t) >= 0) added_tokens.push_back(*t);
    }
  }
  std::vector<std::pair<std::string, int32_t>> added;
  for (const std::string& token : added_tokens) {
    if (token.empty()) continue;
    const int32_t id = vocab.find(token);
    if (id < 0) return invalid_argument("added token '" + token + "' is not in the vocabulary");
    added.emplace_back(token, id);
  }
  build_text_tables(options, std::move(added), *tables);

  tok.vocab_ = std::move(vocab);
  tok.options_ = std::move(options);
  tok.tables_ = std::move(tables);
  return tok;
}

const char* tokenizer_kind_name(TokenizerKind kind) {
  static constexpr const char* kNames[] = {"WordPiece", "BPE", "Unigram"};  // TokenizerKind's order
  return enum_name(kind, kNames);
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  INFERCOST_ASSIGN_OR_RETURN(size_t n, encode_append(text, ids));
  (void)n;
  return ids;
}

namespace {

class PrefixedTokenizer final : public Tokenizer {
 public:
  PrefixedTokenizer(std::shared_ptr<const Tokenizer> base, std::string prefix)
      : base_(std::move(base)), prefix_(std::move(prefix)) {}
  TokenizerKind kind() const override { return base_->kind(); }
  Result<size_t> encode_append(std::string_view text, std::vector<int32_t>& out) const override {
    thread_local std::string joined;
    joined.assign(prefix_).append(text);
    const size_t had = out.size();
    Result<size_t> n = base_->encode_append(joined, out);
    if (n.ok()) return n;
    out.resize(had);
    Result<size_t> alone = base_->encode_append(text, out);  // the text's own error
    out.resize(had);
    return alone.ok() ? n.status() : alone.status();
  }
  int special_tokens() const override { return base_->special_tokens(); }
  int32_t pad_id() const override { return base_->pad_id(); }
  size_t vocab_size() const override { return base_->vocab_size(); }
  const std::string& piece(int32_t id) const override { return base_->piece(id); }
  int max_length() const override { return base_->max_length(); }

 private:
  std::shared_ptr<const Tokenizer> base_;
  std::string prefix_;
};

}  // namespace

Result<std::shared_ptr<const Tokenizer>> with_prefix(std::shared_ptr<const Tokenizer> base,
                                                     std::string prefix) {
  if (const size_t bad = find_invalid_utf8(prefix); bad != std::string_view::npos) {
    return invalid_argument("the prefix is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  if (prefix.empty()) return base;
  return std::shared_ptr<const Tokenizer>(
      std::make_shared<PrefixedTokenizer>(std::move(base), std::move(prefix)));
}

Result<size_t> WordPieceTokenizer::encode_append(std::string_view text, std::vector<int32_t>& out) const {
  const EncoderTables& t = *tables_;
  const size_t begin = out.size();
  const bool special = options_.add_special_tokens;
  if (special) out.push_back(cls_id_);
  const size_t body_begin = out.size();
  size_t limit = std::numeric_limits<size_t>::max();
  if (options_.max_length > 0) limit = static_cast<size_t>(options_.max_length) - (special ? 2 : 0);

  // A word longer than max_input_chars_per_word is [UNK] whatever it holds,
  // so the buffer needs room for that many characters only.
  const size_t max_chars = static_cast<size_t>(std::max(options_.max_input_chars_per_word, 0));
  const size_t word_cap = max_chars * 4 + 8;
  char stack_buf[1024];
  std::unique_ptr<char[]> heap_buf;
  char* word_buf = stack_buf;
  if (word_cap > sizeof(stack_buf)) {
    heap_buf = std::make_unique<char[]>(word_cap);
    word_buf = heap_buf.get();
  }

  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  Encoder<WordPieceSink> enc(t, options_, WordPieceSink(t, unk_id_, max_chars, out, body_begin, limit),
                             word_buf);
  size_t stop = 0;  // where encoding stopped early (length limit), or n
  if (limit > 0) {
    INFERCOST_ASSIGN_OR_RETURN(stop, run_text(t, enc, p, n));
  }
  if (stop < n) {
    // Stopped at the length limit: the rest must still be valid UTF-8.
    const size_t bad_at = stop + detail::find_invalid_utf8(p + stop, n - stop);
    if (bad_at < n) return invalid_utf8(bad_at);
  }
  if (out.size() - body_begin > limit) out.resize(body_begin + limit);
  if (special) out.push_back(sep_id_);
  return out.size() - begin;
}

Result<std::vector<std::string>> basic_tokenize(std::string_view text, const TokenizerOptions& options) {
  std::vector<std::string> tokens =
      options.added_tokens ? *options.added_tokens
                           : std::vector<std::string>{options.pad_token, options.unk_token, options.cls_token,
                                                      options.sep_token, options.mask_token};
  std::vector<std::pair<std::string, int32_t>> added;
  for (std::string& token : tokens) {
    if (!token.empty()) added.emplace_back(std::move(token), -1);
  }
  detail::EncoderTables tables;
  build_text_tables(options, std::move(added), tables);

  std::vector<std::string> words;
  Encoder<WordSink> enc(tables, options, WordSink(words), nullptr);
  INFERCOST_ASSIGN_OR_RETURN(
      size_t stop, run_text(tables, enc, reinterpret_cast<const unsigned char*>(text.data()), text.size()));
  (void)stop;
  return words;
}

}  // namespace infercost::text
