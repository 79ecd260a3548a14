#include "synth_tokenizers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

namespace infercost::model {

namespace {

const char* const kSpecials[] = {"<s>", "<pad>", "</s>", "<unk>"};
constexpr const char* kMask = "<mask>";
constexpr const char* kMetaspace = "\xE2\x96\x81";  // U+2581, SentencePiece's word start

std::string utf8_of(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// The byte-level symbols of `text`, one per byte.
std::vector<std::string> byte_symbols(const std::vector<std::string>& alphabet, const std::string& text) {
  std::vector<std::string> out;
  out.reserve(text.size());
  for (unsigned char c : text) out.push_back(alphabet[c]);
  return out;
}

// Pair counts over a corpus of words (symbol id sequences), with the words
// each pair occurs in, so that a merge rewrites only those.
class PairTable {
 public:
  using Pair = std::pair<int32_t, int32_t>;

  explicit PairTable(const std::vector<std::string>& tokens) : tokens_(tokens) {}

  void add_word(const std::vector<int32_t>& w, int word) { update(w, word, +1); }
  void remove_word(const std::vector<int32_t>& w, int word) { update(w, word, -1); }

  // The most frequent pair (ties: the pair's strings in byte order), or
  // false when no pair is left.
  bool best(Pair& out) const {
    if (order_.empty()) return false;
    out = std::get<3>(*order_.begin());
    return true;
  }
  std::vector<int> words_with(const Pair& p) const {
    auto it = where_.find(p);
    if (it == where_.end()) return {};
    return {it->second.begin(), it->second.end()};
  }

 private:
  void update(const std::vector<int32_t>& w, int word, int delta) {
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      const Pair p{w[i], w[i + 1]};
      int& n = counts_[p];
      if (n > 0) order_.erase(key(p, n));
      n += delta;
      if (n > 0) {
        order_.insert(key(p, n));
      } else {
        counts_.erase(p);
      }
      if (delta > 0) {
        where_[p].insert(word);
      } else if (auto it = where_.find(p); it != where_.end()) {
        it->second.erase(word);
        if (it->second.empty()) where_.erase(it);
      }
    }
  }
  std::tuple<int, std::string, std::string, Pair> key(const Pair& p, int n) const {
    return {-n, tokens_[size_t(p.first)], tokens_[size_t(p.second)], p};
  }

  const std::vector<std::string>& tokens_;
  std::map<Pair, int> counts_;
  std::map<Pair, std::set<int>> where_;
  std::set<std::tuple<int, std::string, std::string, Pair>> order_;
};

}  // namespace

std::vector<std::string> byte_level_alphabet() {
  std::vector<std::string> out(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    out[b] = utf8_of(printable ? b : next++);
  }
  return out;
}

nlohmann::ordered_json bracket_special_tokens() {
  return {{"cls_token", "[CLS]"},
          {"sep_token", "[SEP]"},
          {"pad_token", "[PAD]"},
          {"unk_token", "[UNK]"},
          {"mask_token", "[MASK]"}};
}

std::vector<std::string> bpe_training_words(const std::vector<std::string>& lexicon) {
  enum Kind { kLetter, kDigit, kOther, kSpace };
  auto kind = [](unsigned char c) {
    if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return kLetter;
    if (c >= '0' && c <= '9') return kDigit;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return kSpace;
    return kOther;
  };
  std::set<std::string> words;
  for (const std::string& entry : lexicon) {
    size_t i = 0;
    while (i < entry.size()) {
      const Kind k = kind(static_cast<unsigned char>(entry[i]));
      size_t j = i + 1;
      while (j < entry.size() && kind(static_cast<unsigned char>(entry[j])) == k) ++j;
      if (k != kSpace) words.insert(entry.substr(i, j - i));
      i = j;
    }
  }
  return {words.begin(), words.end()};
}

Result<ByteLevelBpe> learn_byte_level_bpe(const std::vector<std::string>& words, int max_vocab) {
  ByteLevelBpe bpe;
  const std::vector<std::string> alphabet = byte_level_alphabet();
  for (const char* s : kSpecials) bpe.vocab.emplace_back(s);
  for (const std::string& b : alphabet) bpe.vocab.push_back(b);
  const size_t fixed = bpe.vocab.size() + 1;  // + <mask>
  if (fixed > static_cast<size_t>(max_vocab)) {
    return internal_error(
        fmt::format("a byte-level BPE needs {} tokens but the preset has {}", fixed, max_vocab));
  }
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < bpe.vocab.size(); ++i) ids.emplace(bpe.vocab[i], static_cast<int32_t>(i));

  // Each word bare and in its word-start form, once.
  std::set<std::string> forms;
  for (const std::string& w : words) {
    if (w.empty()) continue;
    forms.insert(w);
    forms.insert(" " + w);
  }
  std::vector<std::vector<int32_t>> corpus;
  for (const std::string& f : forms) {
    std::vector<int32_t> symbols;
    for (const std::string& s : byte_symbols(alphabet, f)) symbols.push_back(ids.at(s));
    corpus.push_back(std::move(symbols));
  }
  PairTable table(bpe.vocab);
  for (size_t w = 0; w < corpus.size(); ++w) table.add_word(corpus[w], static_cast<int>(w));

  bpe.first_merged = static_cast<int32_t>(bpe.vocab.size());
  PairTable::Pair p;
  while (bpe.vocab.size() + 1 < static_cast<size_t>(max_vocab) && table.best(p)) {
    const std::string merged = bpe.vocab[size_t(p.first)] + bpe.vocab[size_t(p.second)];
    bpe.merges.emplace_back(bpe.vocab[size_t(p.first)], bpe.vocab[size_t(p.second)]);
    int32_t id;
    if (auto it = ids.find(merged); it != ids.end()) {
      id = it->second;  // another split of the same string: one token, one more merge
    } else {
      id = static_cast<int32_t>(bpe.vocab.size());
      bpe.vocab.push_back(merged);
      ids.emplace(merged, id);
    }
    for (int w : table.words_with(p)) {
      std::vector<int32_t>& word = corpus[size_t(w)];
      table.remove_word(word, w);
      std::vector<int32_t> out;
      out.reserve(word.size());
      for (size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == p.first && word[i + 1] == p.second) {
          out.push_back(id);
          ++i;
        } else {
          out.push_back(word[i]);
        }
      }
      word = std::move(out);
      table.add_word(word, w);
    }
  }
  bpe.end_merged = static_cast<int32_t>(bpe.vocab.size());
  bpe.vocab.emplace_back(kMask);
  for (const std::string& w : words) {
    if (w.empty()) continue;
    std::string form;
    for (const std::string& s : byte_symbols(alphabet, " " + w)) form += s;
    if (auto it = ids.find(form); it != ids.end() && it->second >= bpe.first_merged)
      bpe.word_ids.push_back(it->second);
  }
  std::sort(bpe.word_ids.begin(), bpe.word_ids.end());
  bpe.word_ids.erase(std::unique(bpe.word_ids.begin(), bpe.word_ids.end()), bpe.word_ids.end());
  return bpe;
}

std::string bpe_vocab_json(const ByteLevelBpe& bpe) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t i = 0; i < bpe.vocab.size(); ++i) j[bpe.vocab[i]] = static_cast<int64_t>(i);
  return j.dump() + "\n";
}

std::string bpe_merges_txt(const ByteLevelBpe& bpe) {
  std::string out = "#version: 0.2\n";
  for (const auto& [a, b] : bpe.merges) out += a + " " + b + "\n";
  return out;
}

Result<UnigramVocab> build_unigram_vocab(const std::vector<std::string>& words, int max_vocab) {
  // The word-start forms are the corpus; every piece's frequency is the
  // number of times it occurs in them.
  std::set<std::string> corpus_set;
  for (const std::string& w : words) {
    if (!w.empty() && w.find(' ') == std::string::npos) corpus_set.insert(kMetaspace + w);
  }
  const std::vector<std::string> corpus(corpus_set.begin(), corpus_set.end());
  std::set<std::string> pieces;
  for (const std::string& form : corpus) {
    pieces.insert(form);
    pieces.insert(form.substr(std::string(kMetaspace).size()));
    for (size_t i = 0; i < form.size();) {
      size_t n = 1;
      while (i + n < form.size() && (static_cast<unsigned char>(form[i + n]) & 0xC0) == 0x80) ++n;
      pieces.insert(form.substr(i, n));
      i += n;
    }
  }
  for (const char* s : kSpecials) pieces.erase(s);
  pieces.erase(kMask);
  const size_t size = pieces.size() + std::size(kSpecials) + 1;
  if (size > static_cast<size_t>(max_vocab)) {
    return internal_error(fmt::format(
        "the synthetic Unigram vocabulary needs {} pieces but the preset has {}", size, max_vocab));
  }
  std::vector<std::pair<std::string, double>> scored;
  double total = 0;
  for (const std::string& piece : pieces) {
    int64_t freq = 0;
    for (const std::string& form : corpus) {
      for (size_t at = form.find(piece); at != std::string::npos; at = form.find(piece, at + 1)) ++freq;
    }
    scored.emplace_back(piece, static_cast<double>(std::max<int64_t>(freq, 1)));
    total += scored.back().second;
  }
  // Four significant digits, as sentencepiece's files show them, so that a
  // last-bit difference in log() on another platform does not change the file.
  for (auto& [piece, score] : scored) score = std::stod(fmt::format("{:.4g}", std::log(score / total)));
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  UnigramVocab v;
  for (const char* s : kSpecials) v.pieces.emplace_back(s, 0.0);
  v.first_word = static_cast<int32_t>(v.pieces.size());
  v.pieces.insert(v.pieces.end(), scored.begin(), scored.end());
  v.end_word = static_cast<int32_t>(v.pieces.size());
  v.pieces.emplace_back(kMask, 0.0);
  for (int32_t id = v.first_word; id < v.end_word; ++id) {
    if (corpus_set.count(v.pieces[size_t(id)].first)) v.word_ids.push_back(id);
  }
  return v;
}

namespace {

nlohmann::ordered_json added(int64_t id, const std::string& content, bool lstrip = false) {
  return nlohmann::ordered_json{{"id", id},         {"content", content}, {"single_word", false},
                                {"lstrip", lstrip}, {"rstrip", false},    {"normalized", false},
                                {"special", true}};
}

nlohmann::ordered_json special(const char* id) {
  return nlohmann::ordered_json{{"SpecialToken", {{"id", id}, {"type_id", 0}}}};
}

nlohmann::ordered_json sequence(const char* id) {
  return nlohmann::ordered_json{{"Sequence", {{"id", id}, {"type_id", 0}}}};
}

// A tokenizer.json's opening keys: version 1.0, no truncation, no padding.
nlohmann::ordered_json tokenizer_json_start() {
  nlohmann::ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  return j;
}

// Metaspace ("▁", prepended always): the Unigrams' pre-tokenizer and decoder.
nlohmann::ordered_json metaspace_json() {
  return {{"type", "Metaspace"}, {"replacement", kMetaspace}, {"prepend_scheme", "always"}, {"split", true}};
}

// TemplateProcessing "[CLS] $A [SEP]" ("[CLS] $A [SEP] $B [SEP]" for pairs) at these ids.
nlohmann::ordered_json cls_sep_template(int32_t cls_id, int32_t sep_id) {
  nlohmann::ordered_json post;
  post["type"] = "TemplateProcessing";
  post["single"] = {special("[CLS]"), sequence("A"), special("[SEP]")};
  post["pair"] = {special("[CLS]"), sequence("A"), special("[SEP]"), sequence("B"), special("[SEP]")};
  post["special_tokens"] = {
      {"[CLS]", {{"id", "[CLS]"}, {"ids", {cls_id}}, {"tokens", {"[CLS]"}}}},
      {"[SEP]", {{"id", "[SEP]"}, {"ids", {sep_id}}, {"tokens", {"[SEP]"}}}},
  };
  return post;
}

// The file's text as HF tokenizers writes it: indent 2, UTF-8 kept, a final newline.
std::string tokenizer_json_text(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::strict) + "\n";
}

}  // namespace

std::string modernbert_tokenizer_json(const ByteLevelBpe& bpe) {
  nlohmann::ordered_json j = tokenizer_json_start();
  j["added_tokens"] = {added(kModernBertUnkId, "[UNK]"), added(kModernBertClsId, "[CLS]"),
                       added(kModernBertSepId, "[SEP]"), added(kModernBertPadId, "[PAD]"),
                       added(kModernBertMaskId, "[MASK]", /*lstrip=*/true)};
  j["normalizer"] = {{"type", "NFC"}};
  const nlohmann::ordered_json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  j["pre_tokenizer"] = byte_level;
  j["post_processor"] = cls_sep_template(kModernBertClsId, kModernBertSepId);
  j["decoder"] = byte_level;
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (size_t i = 0; i < bpe.vocab.size(); ++i) vocab[bpe.vocab[i]] = static_cast<int64_t>(i);
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const auto& [a, b] : bpe.merges) merges.push_back({a, b});
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", merges}};
  return tokenizer_json_text(j);
}

std::string unigram_tokenizer_json(const UnigramVocab& v) {
  nlohmann::ordered_json j = tokenizer_json_start();
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < static_cast<int64_t>(std::size(kSpecials)); ++i)
    tokens.push_back(added(i, kSpecials[i]));
  tokens.push_back(added(static_cast<int64_t>(v.pieces.size()) - 1, kMask));
  j["added_tokens"] = tokens;
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = metaspace_json();
  nlohmann::ordered_json post;
  post["type"] = "TemplateProcessing";
  post["single"] = {special("<s>"), sequence("A"), special("</s>")};
  post["pair"] = {special("<s>"),  sequence("A"), special("</s>"),
                  special("</s>"), sequence("B"), special("</s>")};
  post["special_tokens"] = {
      {"</s>", {{"id", "</s>"}, {"ids", {kRobertaEosId}}, {"tokens", {"</s>"}}}},
      {"<s>", {{"id", "<s>"}, {"ids", {kRobertaBosId}}, {"tokens", {"<s>"}}}},
  };
  j["post_processor"] = post;
  j["decoder"] = metaspace_json();
  nlohmann::ordered_json vocab = nlohmann::ordered_json::array();
  for (const auto& [piece, score] : v.pieces) vocab.push_back({piece, score});
  j["model"] = {{"type", "Unigram"}, {"unk_id", kRobertaUnkId}, {"vocab", vocab}, {"byte_fallback", false}};
  return tokenizer_json_text(j);
}

std::string deberta_tokenizer_json(const UnigramVocab& v) {
  static constexpr const char* kNames[] = {"[PAD]", "[CLS]", "[SEP]", "[UNK]"};
  nlohmann::ordered_json j = tokenizer_json_start();
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < 4; ++i) tokens.push_back(added(i, kNames[i]));
  tokens.push_back(added(static_cast<int64_t>(v.pieces.size()) - 1, "[MASK]"));
  j["added_tokens"] = tokens;
  j["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Replace"}, {"pattern", {{"Regex", "\\s{2,}|[\\n\\r\\t]"}}}, {"content", " "}},
        {{"type", "NFC"}},
        {{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}}}}};
  j["pre_tokenizer"] = metaspace_json();
  j["post_processor"] = cls_sep_template(kDebertaClsId, kDebertaSepId);
  j["decoder"] = metaspace_json();
  nlohmann::ordered_json vocab = nlohmann::ordered_json::array();
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    const std::string piece = i < 4 ? kNames[i] : i + 1 == v.pieces.size() ? "[MASK]" : v.pieces[i].first;
    vocab.push_back({piece, i < 4 || i + 1 == v.pieces.size() ? 0.0 : v.pieces[i].second});
  }
  j["model"] = {{"type", "Unigram"}, {"unk_id", kDebertaUnkId}, {"vocab", vocab}, {"byte_fallback", false}};
  return tokenizer_json_text(j);
}

}  // namespace infercost::model
