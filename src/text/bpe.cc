#include "text/bpe.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "text/added_tokens.h"
#include "text/byte_level.h"
#include "text/token_table.h"

namespace infercost::text {
namespace detail {

// (left id, right id) -> (rank, merged id): open addressing on the 64-bit
// pair, probed once per adjacent pair of symbols.
class MergeTable {
 public:
  struct Entry {
    uint64_t key = kEmpty;
    uint32_t rank = 0;
    int32_t new_id = -1;
  };

  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Entry{});
    mask_ = cap - 1;
  }

  // A pair seen again takes the later rank and result (HF's map insert).
  void insert(int32_t a, int32_t b, uint32_t rank, int32_t new_id) {
    const uint64_t key = pack(a, b);
    size_t i = hash(key) & mask_;
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
    slots_[i] = Entry{key, rank, new_id};
  }

  const Entry* find(int32_t a, int32_t b) const {
    const uint64_t key = pack(a, b);
    size_t i = hash(key) & mask_;
    for (;;) {
      const Entry& e = slots_[i];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
      i = (i + 1) & mask_;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t pack(int32_t a, int32_t b) {
    return uint64_t{static_cast<uint32_t>(a)} << 32 | static_cast<uint32_t>(b);
  }
  static size_t hash(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 29;
    return static_cast<size_t>(x);
  }
  std::vector<Entry> slots_;
  size_t mask_ = 0;
};

struct BpeTables {
  std::vector<std::string> pieces;  // by id
  TokenTable vocab;
  MergeTable merges;
  // Id of byte b as a symbol of a word: [first][last] (the prefix goes on
  // every symbol but the first, the suffix on the last); -1 when absent.
  int32_t byte_id[2][2][256];
  int32_t unk_id = -1;
  bool fuse_unk = false;
  bool add_prefix_space = false;
  bool use_regex = true;
  bool nfc = false;
  // Words (raw bytes) -> their ids, for every vocabulary token that spells a
  // word: an entry is (offset, count) into cache_ids.
  TokenTable cache;
  std::vector<std::pair<uint32_t, uint32_t>> cache_entries;
  std::vector<int32_t> cache_ids;
  AddedTokenSplitter raw_added, normalized_added;
};

namespace {

struct Symbol {
  int32_t id;
  int32_t prev, next;
  bool removed;
};

struct PendingMerge {
  uint64_t key;  // rank << 32 | position: the lowest pops first
  int32_t new_id;
  bool operator>(const PendingMerge& o) const { return key > o.key; }
};

struct MergeScratch {
  std::vector<Symbol> symbols;
  std::vector<PendingMerge> heap;
};

MergeScratch& merge_scratch() {
  thread_local MergeScratch scratch;
  return scratch;
}

void push_symbol(std::vector<Symbol>& symbols, int32_t id) {
  const auto n = static_cast<int32_t>(symbols.size());
  if (n > 0) symbols.back().next = n;
  symbols.push_back(Symbol{id, n - 1, -1, false});
}

// HF's BPE::merge_word and Word::merge_all: symbols are the word's bytes
// (unknown ones as unk, fused if asked, or dropped without an unk token);
// the pending merge of lowest (rank, position) is applied first, and one
// whose pair no longer gives the same token is skipped.
void merge_word(const BpeTables& t, std::string_view word, std::vector<int32_t>& out) {
  MergeScratch& s = merge_scratch();
  std::vector<Symbol>& sym = s.symbols;
  sym.clear();
  const size_t n = word.size();
  bool pending_unk = false;
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = t.byte_id[i == 0][i + 1 == n][static_cast<uint8_t>(word[i])];
    if (id >= 0) {
      if (pending_unk) push_symbol(sym, t.unk_id);
      pending_unk = false;
      push_symbol(sym, id);
    } else if (t.unk_id >= 0) {
      if (pending_unk && !t.fuse_unk) push_symbol(sym, t.unk_id);
      pending_unk = true;
    }
  }
  if (pending_unk) push_symbol(sym, t.unk_id);

  std::vector<PendingMerge>& heap = s.heap;
  heap.clear();
  for (size_t i = 0; i + 1 < sym.size(); ++i) {
    if (const auto* m = t.merges.find(sym[i].id, sym[i + 1].id)) {
      heap.push_back(PendingMerge{uint64_t{m->rank} << 32 | i, m->new_id});
    }
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const PendingMerge top = heap.back();
    heap.pop_back();
    const auto pos = static_cast<int32_t>(top.key & 0xFFFFFFFFu);
    Symbol& left = sym[static_cast<size_t>(pos)];
    if (left.removed || left.next < 0) continue;
    Symbol& right = sym[static_cast<size_t>(left.next)];
    const auto* m = t.merges.find(left.id, right.id);
    if (m == nullptr || m->new_id != top.new_id) continue;
    left.id = top.new_id;
    right.removed = true;
    left.next = right.next;
    if (right.next >= 0) sym[static_cast<size_t>(right.next)].prev = pos;
    if (left.prev >= 0) {
      if (const auto* p = t.merges.find(sym[static_cast<size_t>(left.prev)].id, left.id)) {
        heap.push_back(PendingMerge{uint64_t{p->rank} << 32 | static_cast<uint32_t>(left.prev), p->new_id});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
    if (left.next >= 0) {
      if (const auto* p = t.merges.find(left.id, sym[static_cast<size_t>(left.next)].id)) {
        heap.push_back(PendingMerge{uint64_t{p->rank} << 32 | static_cast<uint32_t>(pos), p->new_id});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
  }
  for (int32_t i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
    out.push_back(sym[static_cast<size_t>(i)].id);
  }
}

void encode_word(const BpeTables& t, std::string_view word, std::vector<int32_t>& out) {
  const int32_t hit = t.cache.find(word);
  if (hit >= 0) {
    const auto [offset, count] = t.cache_entries[static_cast<size_t>(hit)];
    out.insert(out.end(), t.cache_ids.begin() + offset, t.cache_ids.begin() + offset + count);
    return;
  }
  merge_word(t, word, out);
}

// The ByteLevel pre-tokenizer and the model on one stretch of text between
// added tokens.
void encode_stretch(const BpeTables& t, std::string_view text, std::vector<int32_t>& out) {
  if (text.empty()) return;
  std::string spaced;
  if (t.add_prefix_space && text.front() != ' ') {
    spaced.reserve(text.size() + 1);
    spaced.push_back(' ');
    spaced.append(text);
    text = spaced;
  }
  if (!t.use_regex) {
    encode_word(t, text, out);
    return;
  }
  split_gpt2(text, [&](size_t begin, size_t end) { encode_word(t, text.substr(begin, end - begin), out); });
}

// The added tokens matched at one stage: on the raw text or the normalized.
std::vector<AddedToken> matched_on(const std::vector<AddedToken>& tokens, bool normalized) {
  std::vector<AddedToken> out;
  for (const AddedToken& a : tokens) {
    if (a.normalized != normalized) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace
}  // namespace detail

BpeTokenizer::~BpeTokenizer() = default;

namespace {

// The merges by rank, each pair's and its result's ids (every one in the vocab).
Status add_merges(detail::BpeTables& t, const BpeConfig& config) {
  const std::string& prefix = config.continuing_subword_prefix;
  t.merges.reserve(config.merges.size());
  for (size_t rank = 0; rank < config.merges.size(); ++rank) {
    const auto& [a, b] = config.merges[rank];
    const std::string where = "merges: rank " + std::to_string(rank) + " ('" + a + " " + b + "'): ";
    const int32_t a_id = t.vocab.find(a), b_id = t.vocab.find(b);
    if (a_id < 0) return corruption(where + "'" + a + "' is not in the vocab");
    if (b_id < 0) return corruption(where + "'" + b + "' is not in the vocab");
    if (b.size() < prefix.size()) return corruption(where + "'" + b + "' is shorter than the subword prefix");
    const std::string merged = a + b.substr(prefix.size());
    const int32_t new_id = t.vocab.find(merged);
    if (new_id < 0) return corruption(where + "the merged token '" + merged + "' is not in the vocab");
    t.merges.insert(a_id, b_id, static_cast<uint32_t>(rank), new_id);
  }
  return Status();
}

// The word cache (a vocabulary without affixes): every vocabulary token that
// is a whole word of its own (in the byte alphabet) with the ids the merges
// give it.
Status build_word_cache(detail::BpeTables& t, const BpeConfig& config) {
  std::vector<std::string> words;
  for (const auto& [token, id] : config.vocab) {
    std::string raw;
    bool ok = true;
    for (size_t i = 0; i < token.size() && ok;) {
      char32_t cp = 0;
      const int len = detail::decode_utf8(reinterpret_cast<const unsigned char*>(token.data()) + i,
                                          token.size() - i, &cp);
      const int byte = len > 0 ? detail::unicode_to_byte(cp) : -1;
      ok = byte >= 0;
      raw.push_back(static_cast<char>(byte));
      i += len > 0 ? static_cast<size_t>(len) : 1;
    }
    if (ok && !raw.empty()) words.push_back(std::move(raw));
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  std::vector<std::pair<std::string_view, int32_t>> keys;
  keys.reserve(words.size());
  for (const std::string& w : words) {
    const auto offset = static_cast<uint32_t>(t.cache_ids.size());
    detail::merge_word(t, w, t.cache_ids);
    keys.emplace_back(w, static_cast<int32_t>(t.cache_entries.size()));
    t.cache_entries.emplace_back(offset, static_cast<uint32_t>(t.cache_ids.size()) - offset);
  }
  if (!t.cache.build(keys)) return resource_exhausted("vocab: tokens too long in all for the word cache");
  return Status();
}

}  // namespace

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(BpeConfig config) {
  auto t = std::make_unique<detail::BpeTables>();
  int32_t max_id = -1;
  for (const auto& [token, id] : config.vocab) {
    if (id < 0) return corruption("vocab: token '" + token + "': negative id " + std::to_string(id));
    max_id = std::max(max_id, id);
  }
  for (const AddedToken& a : config.added_tokens) max_id = std::max(max_id, a.id);
  t->pieces.resize(static_cast<size_t>(max_id + 1));
  std::vector<std::pair<std::string_view, int32_t>> entries;
  entries.reserve(config.vocab.size());
  for (const auto& [token, id] : config.vocab) {
    t->pieces[static_cast<size_t>(id)] = token;
    entries.emplace_back(token, id);
  }
  for (const AddedToken& a : config.added_tokens) {
    if (t->pieces[static_cast<size_t>(a.id)].empty()) t->pieces[static_cast<size_t>(a.id)] = a.content;
  }
  if (!t->vocab.build(entries)) return resource_exhausted("vocab: tokens too long in all");

  const auto lookup = [&](std::string_view s) { return t->vocab.find(s); };
  if (config.unk_token) {
    t->unk_id = lookup(*config.unk_token);
    if (t->unk_id < 0) return corruption("model.unk_token '" + *config.unk_token + "' is not in the vocab");
  }
  t->fuse_unk = config.fuse_unk;
  t->add_prefix_space = config.add_prefix_space;
  t->use_regex = config.use_regex;
  t->nfc = config.nfc;
  const std::string& prefix = config.continuing_subword_prefix;
  const std::string& suffix = config.end_of_word_suffix;
  for (int first = 0; first < 2; ++first) {
    for (int last = 0; last < 2; ++last) {
      for (int b = 0; b < 256; ++b) {
        std::string s = first ? "" : prefix;
        s += detail::byte_to_unicode_utf8(static_cast<uint8_t>(b));
        if (last) s += suffix;
        t->byte_id[first][last][b] = lookup(s);
      }
    }
  }

  INFERCOST_RETURN_IF_ERROR(add_merges(*t, config));

  for (const AddedToken& a : config.added_tokens) {
    if (a.content.empty()) return corruption("added_tokens: id " + std::to_string(a.id) + ": empty content");
  }
  t->raw_added = detail::AddedTokenSplitter(detail::matched_on(config.added_tokens, false));
  std::vector<AddedToken> normalized_added = detail::matched_on(config.added_tokens, true);
  if (config.nfc) {  // matched in composed text, as their content composed (HF normalizes it too)
    for (AddedToken& a : normalized_added) {
      std::string composed;
      detail::append_normalized(a.content, detail::UnicodeForm::kNfc, composed);
      a.content = std::move(composed);
    }
  }
  t->normalized_added = detail::AddedTokenSplitter(std::move(normalized_added));

  const int specials = static_cast<int>(config.prefix_ids.size() + config.suffix_ids.size());
  for (const int32_t id : config.prefix_ids) {
    if (id < 0 || id > max_id)
      return corruption("post_processor: special token id " + std::to_string(id) + " out of range");
  }
  for (const int32_t id : config.suffix_ids) {
    if (id < 0 || id > max_id)
      return corruption("post_processor: special token id " + std::to_string(id) + " out of range");
  }
  if (config.max_length > 0 && config.max_length < specials) {
    return invalid_argument("max_length " + std::to_string(config.max_length) + " leaves no room for the " +
                            std::to_string(specials) + " special tokens");
  }

  if (prefix.empty() && suffix.empty()) INFERCOST_RETURN_IF_ERROR(build_word_cache(*t, config));

  auto tok = std::unique_ptr<BpeTokenizer>(new BpeTokenizer());
  tok->config_ = std::move(config);
  tok->tables_ = std::move(t);
  return tok;
}

int BpeTokenizer::special_tokens() const {
  return static_cast<int>(config_.prefix_ids.size() + config_.suffix_ids.size());
}

size_t BpeTokenizer::vocab_size() const {
  return tables_->pieces.size();
}

const std::string& BpeTokenizer::piece(int32_t id) const {
  return tables_->pieces.at(static_cast<size_t>(id));
}

Result<size_t> BpeTokenizer::encode_append(std::string_view text, std::vector<int32_t>& out) const {
  const size_t bad =
      detail::find_invalid_utf8(reinterpret_cast<const unsigned char*>(text.data()), text.size());
  if (bad != text.size()) return corruption("byte " + std::to_string(bad) + ": invalid UTF-8");
  const detail::BpeTables& t = *tables_;
  const size_t start = out.size();
  out.insert(out.end(), config_.prefix_ids.begin(), config_.prefix_ids.end());
  const size_t text_start = out.size();
  const size_t limit = config_.max_length > 0 ? static_cast<size_t>(config_.max_length - special_tokens())
                                              : static_cast<size_t>(-1);
  // Once the row is full the rest of the text is skipped (it would be cut).
  const auto full = [&] { return out.size() - text_start >= limit; };
  const auto on_token = [&](const detail::AddedToken& a) {
    if (!full()) out.push_back(a.id);
  };
  t.raw_added.split(
      text,
      [&](std::string_view piece, size_t) {
        if (full()) return;
        // ASCII is its own NFC: only text with other characters goes through utf8proc.
        if (t.nfc && std::any_of(piece.begin(), piece.end(), [](char c) { return (c & 0x80) != 0; })) {
          thread_local std::string composed;
          composed.clear();
          detail::append_normalized(piece, detail::UnicodeForm::kNfc, composed);
          piece = composed;
        }
        t.normalized_added.split(
            piece,
            [&](std::string_view stretch, size_t) {
              if (!full()) detail::encode_stretch(t, stretch, out);
            },
            on_token);
      },
      on_token);
  if (out.size() - text_start > limit) out.resize(text_start + limit);
  out.insert(out.end(), config_.suffix_ids.begin(), config_.suffix_ids.end());
  return out.size() - start;
}

}  // namespace infercost::text
