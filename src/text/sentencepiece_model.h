// A SentencePiece model file (spm.model: the ModelProto protocol buffer of
// google/sentencepiece's sentencepiece_model.proto), read without the
// protobuf library: the pieces with their scores and types, and the trainer
// and normalizer settings that say how the model was meant to be used.
// Private to infercost_text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::text::detail {

struct SentencePieceModel {
  // SentencePiece::Type: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6, UNUSED 5.
  enum class PieceType : int {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6
  };
  struct Piece {
    std::string piece;
    float score = 0.0f;
    PieceType type = PieceType::kNormal;
  };
  std::vector<Piece> pieces;
  // TrainerSpec.model_type: UNIGRAM 1, BPE 2, WORD 3, CHAR 4 (default 1).
  int model_type = 1;
  // TrainerSpec.vocab_size: the pieces the model holds; -1 where unset.
  int64_t trainer_vocab_size = -1;
  int unk_id = 0;
  bool byte_fallback = false;
  // NormalizerSpec.
  std::string normalizer_name;
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true;
};

// Parses the bytes of a ModelProto; `source` names the file in errors, which
// give the byte offset of what is wrong. Unknown fields are skipped as
// protobuf readers skip them. kCorruption for bytes that are not a ModelProto
// (a truncated field, a length past the end, a piece without its text, no
// pieces; a model without its trainer or normalizer spec, or whose pieces
// are not its trainer's vocab_size, as a file cut short is), every length
// checked against what remains before anything is allocated for it.
Result<SentencePieceModel> parse_sentencepiece_model(std::string_view bytes, const std::string& source);

}  // namespace infercost::text::detail
