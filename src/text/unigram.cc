#include "text/unigram.h"

#include <cstdlib>
#include <limits>

#include "text/unicode_props.h"
#include "text/unigram_pipeline.h"

namespace infercost::text {
namespace detail {
namespace {

// Per-thread buffers of UnigramTokenizer::encode_append.
struct UnigramScratch {
  std::string norm_a, norm_b;
  std::vector<std::string> pre;  // one per pre-tokenizer step
};

std::vector<size_t>& run_ends_scratch() {
  thread_local std::vector<size_t> ends;
  return ends;
}

UnigramScratch& unigram_scratch() {
  thread_local UnigramScratch s;
  return s;
}

bool unigram_space_at(const unsigned char* p, size_t n, size_t i, int* len) {
  char32_t cp = 0;
  *len = decode_utf8(p + i, n - i, &cp);
  if (*len == 0) *len = 1;
  return (char_flags(cp) & kSpace) != 0;
}

// Lowercase's step: each character's full lowercase mapping, a byte that is
// not UTF-8 as to_lower_full maps what decode_utf8 makes of it.
void append_lowercase(std::string_view text, std::string& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const int len = decode_utf8(p + i, text.size() - i, &cp);
    char32_t lower[3];
    const int k = to_lower_full(cp, lower);
    for (int c = 0; c < k; ++c) {
      char buf[4];
      out.append(buf, static_cast<size_t>(encode_utf8(lower[c], buf)));
    }
    i += static_cast<size_t>(len > 0 ? len : 1);
  }
}

// Strip's step: `text` without its white space on the left and / or right.
std::string_view stripped(std::string_view text, bool left, bool right) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t begin = 0, end = text.size();
  int len;
  if (left) {
    while (begin < end && unigram_space_at(p, end, begin, &len)) begin += static_cast<size_t>(len);
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (p[start] & 0xC0) == 0x80) --start;
      if (!unigram_space_at(p, end, start, &len)) break;
      end = start;
    }
  }
  return text.substr(begin, end - begin);
}

}  // namespace

bool CharSet::contains(char32_t cp) const {
  if (space && cp <= 0x10FFFF && (char_flags(cp) & kSpace) != 0) return true;
  for (char32_t c : chars) {
    if (c == cp) return true;
  }
  return false;
}

void NormalizerStep::apply(std::string_view text, std::string& out, bool* at_origin) const {
  switch (kind) {
    case Kind::kPrecompiled: charsmap->normalize(text, out); return;
    case Kind::kReplace: {
      if (run_set.empty()) {
        size_t at = 0;
        if (content.empty() && text.substr(0, pattern.size()) == pattern) *at_origin = false;
        for (size_t hit; (hit = text.find(pattern, at)) != std::string_view::npos;
             at = hit + pattern.size()) {
          out.append(text, at, hit - at);
          out.append(content);
        }
        out.append(text, at);
        return;
      }
      const auto* p = reinterpret_cast<const unsigned char*>(text.data());
      const auto next = [&](size_t i, char32_t* cp) {
        const int len = decode_utf8(p + i, text.size() - i, cp);
        if (len == 0) *cp = 0xFFFFFFFF;  // not valid UTF-8: in no set
        return len == 0 ? size_t(1) : size_t(len);
      };
      size_t at = 0;
      while (at < text.size()) {
        char32_t cp = 0;
        size_t len = next(at, &cp);
        if (run_set.contains(cp)) {
          // The run of run_set characters from here, in bytes per character.
          std::vector<size_t>& ends = run_ends_scratch();
          ends.clear();
          for (size_t j = at; j < text.size();) {
            char32_t c = 0;
            const size_t l = next(j, &c);
            if (!run_set.contains(c)) break;
            j += l;
            ends.push_back(j);
          }
          size_t done = 0;  // characters of the run consumed
          if (at == 0 && content.empty() && ends.size() >= run_min) *at_origin = false;
          while (ends.size() - done >= run_min) {  // leftmost-greedy X{min,max}
            const size_t left = ends.size() - done;
            done += run_max == 0 ? left : std::min(left, run_max);
            out.append(content);
            if (done == ends.size()) break;
          }
          if (done > 0) {
            at = ends[done - 1];
            continue;
          }
          len = ends.front() - at;  // no run: one character, then the other alternative
        }
        if (single_set.contains(cp)) {
          if (at == 0 && content.empty()) *at_origin = false;
          out.append(content);
        } else {
          out.append(text, at, len);
        }
        at += len;
      }
      return;
    }
    case Kind::kNfc: append_normalized(text, UnicodeForm::kNfc, out); return;
    case Kind::kNfd: append_normalized(text, UnicodeForm::kNfd, out); return;
    case Kind::kNfkc: append_normalized(text, UnicodeForm::kNfkc, out); return;
    case Kind::kNfkd: append_normalized(text, UnicodeForm::kNfkd, out); return;
    case Kind::kLowercase: append_lowercase(text, out); return;
    case Kind::kStrip: {
      const std::string_view kept = stripped(text, strip_left, strip_right);
      if (kept.data() != text.data()) *at_origin = false;
      out.append(kept);
      return;
    }
    case Kind::kPrepend:
      if (!text.empty()) out.append(content);
      out.append(text);
      return;
  }
}

std::string_view Normalizer::apply(std::string_view text, std::string& a, std::string& b,
                                   bool* at_origin) const {
  std::string_view cur = text;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string& dst = (i % 2 == 0) ? a : b;
    dst.clear();
    steps[i].apply(cur, dst, at_origin);
    cur = dst;
  }
  return cur;
}

namespace {

// One encode_append call: where ids go and how many more the text may add.
struct UnigramEncode {
  const UnigramTables& t;
  std::vector<int32_t>& out;
  UnigramScratch& scratch;
  size_t room;

  // Pre-tokenizer steps from `step` on, then the model, over `piece`;
  // `at_start`: the piece begins the original text (Metaspace's "first").
  void pre_tokenize(size_t step, std::string_view piece, bool at_start) {
    if (room == 0 || piece.empty()) return;
    if (step == t.pre_tokenizer.size()) {
      room -= t.model.encode(piece, out, room);
      return;
    }
    const PreTokenizerStep& st = t.pre_tokenizer[step];
    const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
    if (st.kind == PreTokenizerStep::Kind::kWhitespaceSplit) {
      size_t i = 0;
      while (i < piece.size()) {
        int len;
        while (i < piece.size() && unigram_space_at(p, piece.size(), i, &len)) i += static_cast<size_t>(len);
        const size_t word = i;
        while (i < piece.size() && !unigram_space_at(p, piece.size(), i, &len)) i += static_cast<size_t>(len);
        if (i > word) pre_tokenize(step + 1, piece.substr(word, i - word), at_start && word == 0);
      }
      return;
    }
    // Metaspace: spaces become the replacement, which may lead the piece,
    // and each replacement starts a word.
    std::string& buf = scratch.pre[step];
    buf.clear();
    const std::string& rep = st.replacement;
    const bool starts = piece.substr(0, rep.size()) == rep || piece[0] == ' ';
    if (!starts && (st.prepend == PreTokenizerStep::Prepend::kAlways ||
                    (st.prepend == PreTokenizerStep::Prepend::kFirst && at_start))) {
      buf.append(rep);
    }
    for (size_t i = 0; i < piece.size();) {
      const size_t space = piece.find(' ', i);
      const size_t stop = space == std::string_view::npos ? piece.size() : space;
      buf.append(piece, i, stop - i);
      if (space == std::string_view::npos) break;
      buf.append(rep);
      i = space + 1;
    }
    if (!st.split) {
      pre_tokenize(step + 1, buf, at_start);
      return;
    }
    const std::string_view all = buf;
    size_t word = 0;
    for (size_t at = 0; word < all.size(); word = at) {
      at = all.find(rep, word + 1);
      if (at == std::string_view::npos) at = all.size();
      pre_tokenize(step + 1, all.substr(word, at - word), at_start && word == 0);
      if (room == 0) return;
    }
  }

  void push_token(const AddedToken& token) {
    if (room == 0) return;
    out.push_back(token.id);
    --room;
  }

  // A stretch of the raw text between raw-matched added tokens.
  void text_piece(std::string_view piece, size_t offset) {
    if (room == 0) return;
    bool at_origin = offset == 0;
    const std::string_view normalized = t.normalizer.apply(piece, scratch.norm_a, scratch.norm_b, &at_origin);
    if (t.normalized_tokens.empty()) {
      pre_tokenize(0, normalized, at_origin);
      return;
    }
    // normalized is in norm_a or norm_b, which nothing below writes.
    t.normalized_tokens.split(
        normalized,
        [&](std::string_view sub, size_t sub_offset) { pre_tokenize(0, sub, at_origin && sub_offset == 0); },
        [&](const AddedToken& token) { push_token(token); });
  }
};

}  // namespace
}  // namespace detail

UnigramTokenizer::UnigramTokenizer(std::shared_ptr<const detail::UnigramTables> tables)
    : tables_(std::move(tables)) {}

Result<size_t> UnigramTokenizer::encode_append(std::string_view text, std::vector<int32_t>& out) const {
  const detail::UnigramTables& t = *tables_;
  const size_t bad =
      detail::find_invalid_utf8(reinterpret_cast<const unsigned char*>(text.data()), text.size());
  if (bad != text.size()) return corruption("invalid UTF-8 at byte offset " + std::to_string(bad));
  const size_t before = out.size();
  const size_t specials = t.prefix_ids.size() + t.suffix_ids.size();
  size_t room = std::numeric_limits<size_t>::max();
  if (t.max_length > 0) room = static_cast<size_t>(t.max_length) > specials ? t.max_length - specials : 0;
  out.insert(out.end(), t.prefix_ids.begin(), t.prefix_ids.end());
  detail::UnigramScratch& scratch = detail::unigram_scratch();
  if (scratch.pre.size() < t.pre_tokenizer.size()) scratch.pre.resize(t.pre_tokenizer.size());
  detail::UnigramEncode e{t, out, scratch, room};
  t.raw_tokens.split(
      text, [&](std::string_view piece, size_t offset) { e.text_piece(piece, offset); },
      [&](const detail::AddedToken& token) { e.push_token(token); });
  out.insert(out.end(), t.suffix_ids.begin(), t.suffix_ids.end());
  return out.size() - before;
}

int UnigramTokenizer::special_tokens() const {
  return static_cast<int>(tables_->prefix_ids.size() + tables_->suffix_ids.size());
}
int32_t UnigramTokenizer::pad_id() const {
  return tables_->pad_id;
}
size_t UnigramTokenizer::vocab_size() const {
  return tables_->vocab_size;
}
int UnigramTokenizer::max_length() const {
  return tables_->max_length;
}
int32_t UnigramTokenizer::unk_id() const {
  return tables_->model.unk_id();
}

const std::string& UnigramTokenizer::piece(int32_t id) const {
  const detail::UnigramTables& t = *tables_;
  static const std::string kNone;
  if (id < 0) return kNone;
  const auto i = static_cast<size_t>(id);
  if (i < t.model.size()) return t.model.piece(id);
  if (i - t.model.size() < t.extra_pieces.size()) return t.extra_pieces[i - t.model.size()];
  return kNone;
}

}  // namespace infercost::text
