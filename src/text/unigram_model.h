// The SentencePiece Unigram model as Hugging Face `tokenizers` runs it
// (models/unigram: Unigram::encode_optimized, then tokenize): a Viterbi pass
// over the pieces that start at each character of a word, scores summed in
// double. Private to infercost_text.
//
// What decides ties, as HF: start positions are visited left to right, the
// pieces from one start shortest first, the unknown piece last; a candidate
// replaces the best path into its end only when strictly better. A character
// with no piece of its own gets the unknown piece at the lowest score less 10;
// runs of unknown pieces are fused into one, which becomes its own id if it is
// a piece, else (byte_fallback) the <0xXX> pieces of its bytes when all exist,
// else the unknown id.
//
// Immutable after construction; encode() may run on any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "infercost/status.h"

namespace infercost::text::detail {

class UnigramModel {
 public:
  struct Piece {
    std::string text;
    double score = 0;
  };

  UnigramModel() = default;
  // kInvalidArgument when there are no pieces, unk_id is out of range, or the
  // trie would need more than 2^31 nodes. Of two equal pieces the later id
  // wins (HF's map).
  static Result<UnigramModel> create(std::vector<Piece> pieces, int32_t unk_id, bool byte_fallback);

  // Appends the ids of `word` (valid UTF-8, one pre-tokenized word) to `out`,
  // at most `room` of them (the rest are dropped: truncation); returns how
  // many were appended.
  size_t encode(std::string_view word, std::vector<int32_t>& out, size_t room) const;

  // The id of a piece spelled exactly `text`, or -1.
  int32_t find(std::string_view text) const;

  size_t size() const { return pieces_.size(); }
  const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)].text; }
  double score(int32_t id) const { return pieces_[static_cast<size_t>(id)].score; }
  int32_t unk_id() const { return unk_id_; }
  bool byte_fallback() const { return byte_fallback_; }
  double unk_score() const { return unk_score_; }

 private:
  // A byte trie of the pieces, nodes in breadth-first order so that the
  // children of a node are consecutive and sorted by label. Nodes with many
  // children also have a 256-entry table.
  struct Node {
    uint32_t first_child = 0;
    uint16_t children = 0;
    uint16_t dense = 0;  // 1 + index of the node's table, or 0
    int32_t id = -1;     // the piece ending here, or -1
  };
  static constexpr uint16_t kDenseFrom = 12;  // children from which a node gets a table

  // The child of `node` labelled `c`, or 0 (the root is nobody's child).
  uint32_t child(uint32_t node, unsigned char c) const {
    const Node& n = nodes_[node];
    if (n.dense) return dense_[(static_cast<size_t>(n.dense) - 1) * 256 + c];
    const unsigned char* l = labels_.data() + n.first_child;
    for (uint32_t i = 0; i < n.children; ++i) {
      if (l[i] == c) return n.first_child + i;
      if (l[i] > c) break;
    }
    return 0;
  }
  void build_trie();
  // Appends the ids of the fused unknown run `text`.
  void push_unknown(std::string_view text, std::vector<int32_t>& out) const;

  std::vector<Piece> pieces_;
  std::vector<Node> nodes_;
  std::vector<unsigned char> labels_;  // label of each node (the byte leading to it)
  std::vector<uint32_t> dense_;
  std::vector<double> leaf_score_;  // score of nodes_[i].id, beside it for the hot loop
  int32_t unk_id_ = 0;
  bool byte_fallback_ = false;
  double unk_score_ = 0;
  int32_t byte_ids_[256] = {};  // id of <0xXX>, or -1
};

}  // namespace infercost::text::detail
