#include "text/unigram_model.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace infercost::text::detail {
namespace {

// The best path into one byte position of a word.
struct PathEnd {
  double score = 0;
  int32_t id = 0;
  int32_t start = -1;  // -1: not reached yet
};

// Per-thread buffers of encode(): no allocation once they have grown.
struct ViterbiScratch {
  std::vector<PathEnd> ends;
  std::vector<std::pair<uint32_t, uint32_t>> path;  // (start, end) of each piece, last first
  std::vector<int32_t> path_ids;
};

ViterbiScratch& viterbi_scratch() {
  thread_local ViterbiScratch s;
  return s;
}

// Length of the UTF-8 sequence led by `b` (1 for a stray byte, which valid
// input never has).
inline uint32_t viterbi_char_length(unsigned char b) {
  if (b < 0xC0) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

}  // namespace

Result<UnigramModel> UnigramModel::create(std::vector<Piece> pieces, int32_t unk_id, bool byte_fallback) {
  if (pieces.empty()) return invalid_argument("the Unigram model has no pieces");
  if (pieces.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return invalid_argument("the Unigram model has too many pieces");
  }
  if (unk_id < 0 || static_cast<size_t>(unk_id) >= pieces.size()) {
    return invalid_argument("unk_id " + std::to_string(unk_id) + " is out of range (" +
                            std::to_string(pieces.size()) + " pieces)");
  }
  size_t bytes = 0;
  for (const Piece& p : pieces) bytes += p.text.size();
  if (bytes >= (size_t{1} << 31)) return invalid_argument("the Unigram model's pieces exceed 2 GiB");
  UnigramModel m;
  m.pieces_ = std::move(pieces);
  m.unk_id_ = unk_id;
  m.byte_fallback_ = byte_fallback;
  double min_score = std::numeric_limits<double>::infinity();
  for (const Piece& p : m.pieces_) min_score = std::min(min_score, p.score);
  m.unk_score_ = min_score - 10.0;
  m.build_trie();
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    m.byte_ids_[b] = m.find(name);
  }
  return m;
}

void UnigramModel::build_trie() {
  // Piece ids sorted by their bytes (the first eight, big-endian, decide most
  // comparisons); equal pieces by id, so the last of a run is the one that
  // wins. The sorted keys are then copied into one arena, so the passes below
  // read memory in order.
  struct SortKey {
    uint64_t prefix;
    int32_t id;
  };
  std::vector<SortKey> sorted(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const std::string& t = pieces_[i].text;
    uint64_t prefix = 0;
    for (size_t k = 0; k < 8; ++k) {
      prefix = (prefix << 8) | (k < t.size() ? static_cast<unsigned char>(t[k]) : 0u);
    }
    sorted[i] = {prefix, static_cast<int32_t>(i)};
  }
  std::sort(sorted.begin(), sorted.end(), [&](const SortKey& a, const SortKey& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = pieces_[a.id].text.compare(pieces_[b.id].text);
    return c != 0 ? c < 0 : a.id < b.id;
  });
  std::vector<int32_t> order(sorted.size());
  std::vector<size_t> offsets(sorted.size() + 1, 0);
  std::string arena;
  for (size_t i = 0; i < sorted.size(); ++i) {
    order[i] = sorted[i].id;
    arena += pieces_[sorted[i].id].text;
    offsets[i + 1] = arena.size();
  }
  sorted = {};
  const auto key = [&](size_t i) {
    return std::string_view(arena).substr(offsets[i], offsets[i + 1] - offsets[i]);
  };

  // Breadth first: each queued node covers the sorted keys [lo, hi) that
  // share its `depth` leading bytes.
  struct Range {
    uint32_t lo, hi, depth;
  };
  nodes_.assign(1, Node{});
  labels_.assign(1, 0);
  std::vector<Range> queue;
  queue.reserve(order.size() * 4);
  queue.push_back({0, static_cast<uint32_t>(order.size()), 0});
  for (uint32_t q = 0; q < queue.size(); ++q) {
    const Range r = queue[q];
    uint32_t lo = r.lo;
    // Keys that end here sort first; the last of them wins. The root's
    // empty piece is never looked up (HF does not either).
    while (lo < r.hi && key(lo).size() == r.depth) {
      if (q != 0) nodes_[q].id = order[lo];
      ++lo;
    }
    nodes_[q].first_child = static_cast<uint32_t>(nodes_.size());
    uint16_t children = 0;
    while (lo < r.hi) {
      const unsigned char c = static_cast<unsigned char>(key(lo)[r.depth]);
      uint32_t hi = lo + 1;
      while (hi < r.hi && static_cast<unsigned char>(key(hi)[r.depth]) == c) ++hi;
      nodes_.push_back(Node{});
      labels_.push_back(c);
      queue.push_back({lo, hi, r.depth + 1});
      ++children;
      lo = hi;
    }
    nodes_[q].children = children;
  }
  queue = {};
  // Tables for the nodes with many children (the root and the common
  // prefixes such as "▁").
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (n.children < kDenseFrom || dense_.size() / 256 >= 0xFFFF) continue;
    const size_t base = dense_.size();
    dense_.resize(base + 256, 0);
    for (uint32_t k = 0; k < n.children; ++k) dense_[base + labels_[n.first_child + k]] = n.first_child + k;
    n.dense = static_cast<uint16_t>(base / 256 + 1);
  }
  leaf_score_.assign(nodes_.size(), 0.0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].id >= 0) leaf_score_[i] = pieces_[static_cast<size_t>(nodes_[i].id)].score;
  }
}

int32_t UnigramModel::find(std::string_view text) const {
  if (text.empty()) return -1;
  uint32_t node = 0;
  for (const char ch : text) {
    node = child(node, static_cast<unsigned char>(ch));
    if (node == 0) return -1;
  }
  return nodes_[node].id;
}

void UnigramModel::push_unknown(std::string_view text, std::vector<int32_t>& out) const {
  const int32_t id = find(text);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  if (byte_fallback_) {
    bool all = true;
    for (const char ch : text) all = all && byte_ids_[static_cast<unsigned char>(ch)] >= 0;
    if (all) {
      for (const char ch : text) out.push_back(byte_ids_[static_cast<unsigned char>(ch)]);
      return;
    }
  }
  out.push_back(unk_id_);
}

size_t UnigramModel::encode(std::string_view word, std::vector<int32_t>& out, size_t room) const {
  const size_t n = word.size();
  if (n == 0 || room == 0) return 0;
  ViterbiScratch& s = viterbi_scratch();
  s.ends.assign(n + 1, PathEnd{});
  PathEnd* ends = s.ends.data();
  const auto* w = reinterpret_cast<const unsigned char*>(word.data());
  for (size_t start = 0; start < n;) {
    const double till = ends[start].score;
    const uint32_t char_len =
        std::min<uint32_t>(viterbi_char_length(w[start]), static_cast<uint32_t>(n - start));
    bool has_single = false;
    uint32_t node = 0;
    for (size_t j = start; j < n; ++j) {
      node = child(node, w[j]);
      if (node == 0) break;
      const int32_t id = nodes_[node].id;
      if (id < 0) continue;
      PathEnd& e = ends[j + 1];
      const double candidate = leaf_score_[node] + till;
      if (e.start < 0 || candidate > e.score) {
        e.score = candidate;
        e.start = static_cast<int32_t>(start);
        e.id = id;
      }
      if (j + 1 - start == char_len) has_single = true;
    }
    if (!has_single) {
      PathEnd& e = ends[start + char_len];
      const double candidate = unk_score_ + till;
      if (e.start < 0 || candidate > e.score) {
        e.score = candidate;
        e.start = static_cast<int32_t>(start);
        e.id = unk_id_;
      }
    }
    start += char_len;
  }

  // Back from the end; a run of unknown pieces becomes one.
  s.path.clear();
  s.path_ids.clear();
  for (size_t end = n; end > 0;) {
    const PathEnd& e = ends[end];
    const auto start = static_cast<uint32_t>(e.start);
    if (e.id == unk_id_ && !s.path.empty() && s.path_ids.back() == unk_id_) {
      s.path.back().first = start;  // extend the run leftwards
    } else {
      s.path.emplace_back(start, static_cast<uint32_t>(end));
      s.path_ids.push_back(e.id);
    }
    end = start;
  }
  const size_t before = out.size();
  for (size_t k = s.path.size(); k-- > 0 && out.size() - before < room;) {
    if (s.path_ids[k] == unk_id_) {
      push_unknown(word.substr(s.path[k].first, s.path[k].second - s.path[k].first), out);
    } else {
      out.push_back(s.path_ids[k]);
    }
  }
  if (out.size() - before > room) out.resize(before + room);  // byte fallback can overshoot
  return out.size() - before;
}

}  // namespace infercost::text::detail
