#include "text/sentencepiece_model.h"

#include <fmt/format.h>

#include <cstring>

namespace infercost::text::detail {
namespace {

// Protocol buffer wire types.
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// A bounded reader over one message's bytes; `base` is the message's offset
// in the file, for errors.
class Wire {
 public:
  Wire(std::string_view bytes, size_t base, const std::string& source)
      : bytes_(bytes), base_(base), source_(source) {}

  bool done() const { return at_ == bytes_.size(); }

  Status error(const std::string& what) const {
    return corruption(
        fmt::format("{}: byte {}: {} (not a SentencePiece model?)", source_, base_ + at_, what));
  }

  Result<uint64_t> varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) return error("a number runs past the end");
      const uint8_t b = static_cast<uint8_t>(bytes_[at_++]);
      v |= uint64_t(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return error("a number longer than 10 bytes");
  }

  // The next field's number and wire type.
  Status key(int* field, int* wire) {
    INFERCOST_ASSIGN_OR_RETURN(uint64_t k, varint());
    *field = static_cast<int>(k >> 3);
    *wire = static_cast<int>(k & 7);
    if (*field == 0) return error("field number 0");
    return Status();
  }

  // A length-delimited field's bytes and the offset they start at.
  Result<std::string_view> bytes(size_t* offset) {
    INFERCOST_ASSIGN_OR_RETURN(uint64_t n, varint());
    if (n > bytes_.size() - at_) {
      return error(fmt::format("a field of {} bytes where {} remain", n, bytes_.size() - at_));
    }
    *offset = base_ + at_;
    std::string_view out = bytes_.substr(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return out;
  }

  Result<float> fixed32_float() {
    if (bytes_.size() - at_ < 4) return error("a 4-byte field runs past the end");
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= uint32_t(static_cast<uint8_t>(bytes_[at_ + size_t(i)])) << (8 * i);
    at_ += 4;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }

  // Skips a field of `wire` type that the reader does not use.
  Status skip(int wire) {
    size_t unused = 0;
    switch (wire) {
      case kVarint: return varint().status();
      case kFixed64:
        if (bytes_.size() - at_ < 8) return error("an 8-byte field runs past the end");
        at_ += 8;
        return Status();
      case kLengthDelimited: return bytes(&unused).status();
      case kFixed32:
        if (bytes_.size() - at_ < 4) return error("a 4-byte field runs past the end");
        at_ += 4;
        return Status();
      default: return error(fmt::format("wire type {} (groups and unknown types are not read)", wire));
    }
  }

  // Reads the message's fields to its end: read(field, wire) reads a field
  // it uses and says true, or says false and the field is skipped.
  template <typename Read>
  Status for_each_field(Read read) {
    while (!done()) {
      int field = 0, wire = 0;
      INFERCOST_RETURN_IF_ERROR(key(&field, &wire));
      INFERCOST_ASSIGN_OR_RETURN(bool used, read(field, wire));
      if (!used) INFERCOST_RETURN_IF_ERROR(skip(wire));
    }
    return Status();
  }

  Status expect(int wire, int want, const char* what) const {
    if (wire == want) return Status();
    return error(fmt::format("{} has wire type {}, expected {}", what, wire, want));
  }

 private:
  std::string_view bytes_;
  size_t base_;
  const std::string& source_;
  size_t at_ = 0;
};

Status parse_piece(std::string_view bytes, size_t base, const std::string& source,
                   SentencePieceModel::Piece& p) {
  Wire w(bytes, base, source);
  bool has_piece = false;
  INFERCOST_RETURN_IF_ERROR(w.for_each_field([&](int field, int wire) -> Result<bool> {
    size_t offset = 0;
    if (field == 1) {  // piece
      INFERCOST_RETURN_IF_ERROR(w.expect(wire, kLengthDelimited, "SentencePiece.piece"));
      INFERCOST_ASSIGN_OR_RETURN(std::string_view s, w.bytes(&offset));
      p.piece.assign(s);
      has_piece = true;
    } else if (field == 2) {  // score
      INFERCOST_RETURN_IF_ERROR(w.expect(wire, kFixed32, "SentencePiece.score"));
      INFERCOST_ASSIGN_OR_RETURN(p.score, w.fixed32_float());
    } else if (field == 3) {  // type
      INFERCOST_RETURN_IF_ERROR(w.expect(wire, kVarint, "SentencePiece.type"));
      INFERCOST_ASSIGN_OR_RETURN(uint64_t t, w.varint());
      if (t < 1 || t > 6) return w.error(fmt::format("piece type {} (1..6)", t));
      p.type = static_cast<SentencePieceModel::PieceType>(t);
    } else {
      return false;
    }
    return true;
  }));
  if (!has_piece) return corruption(fmt::format("{}: byte {}: a piece without its text", source, base));
  return Status();
}

Status parse_trainer_spec(std::string_view bytes, size_t base, const std::string& source,
                          SentencePieceModel& m) {
  Wire w(bytes, base, source);
  return w.for_each_field([&](int field, int wire) -> Result<bool> {
    if (!((field == 3 || field == 4 || field == 35 || field == 40) && wire == kVarint)) return false;
    INFERCOST_ASSIGN_OR_RETURN(uint64_t v, w.varint());
    if (field == 3) m.model_type = static_cast<int>(v);
    if (field == 4) m.trainer_vocab_size = static_cast<int64_t>(static_cast<int32_t>(v));
    if (field == 35) m.byte_fallback = v != 0;
    if (field == 40) m.unk_id = static_cast<int>(static_cast<int32_t>(v));
    return true;
  });
}

Status parse_normalizer_spec(std::string_view bytes, size_t base, const std::string& source,
                             SentencePieceModel& m) {
  Wire w(bytes, base, source);
  return w.for_each_field([&](int field, int wire) -> Result<bool> {
    size_t offset = 0;
    if ((field == 1 || field == 2) && wire == kLengthDelimited) {
      INFERCOST_ASSIGN_OR_RETURN(std::string_view s, w.bytes(&offset));
      (field == 1 ? m.normalizer_name : m.precompiled_charsmap).assign(s);
    } else if (field == 3 && wire == kVarint) {
      INFERCOST_ASSIGN_OR_RETURN(uint64_t v, w.varint());
      m.add_dummy_prefix = v != 0;
    } else {
      return false;
    }
    return true;
  });
}

}  // namespace

Result<SentencePieceModel> parse_sentencepiece_model(std::string_view bytes, const std::string& source) {
  SentencePieceModel m;
  bool has_trainer = false, has_normalizer = false;
  Wire w(bytes, 0, source);
  INFERCOST_RETURN_IF_ERROR(w.for_each_field([&](int field, int wire) -> Result<bool> {
    if (field < 1 || field > 3) return false;
    INFERCOST_RETURN_IF_ERROR(w.expect(wire, kLengthDelimited, "a ModelProto field"));
    size_t offset = 0;
    INFERCOST_ASSIGN_OR_RETURN(std::string_view sub, w.bytes(&offset));
    if (field == 1) {
      m.pieces.emplace_back();
      INFERCOST_RETURN_IF_ERROR(parse_piece(sub, offset, source, m.pieces.back()));
    } else if (field == 2) {
      has_trainer = true;
      INFERCOST_RETURN_IF_ERROR(parse_trainer_spec(sub, offset, source, m));
    } else {
      has_normalizer = true;
      INFERCOST_RETURN_IF_ERROR(parse_normalizer_spec(sub, offset, source, m));
    }
    return true;
  }));
  if (m.pieces.empty()) return corruption(source + ": no pieces (not a SentencePiece model?)");
  // SentencePiece writes the pieces, then its trainer and normalizer specs:
  // a file cut short lacks them, or, cut between pieces, has fewer pieces
  // than the trainer's vocab_size.
  if (!has_trainer || !has_normalizer) {
    return corruption(fmt::format(
        "{}: byte {}: the file ends after {} pieces without its {} (cut short, or not a SentencePiece model)",
        source, bytes.size(), m.pieces.size(),
        !has_trainer && !has_normalizer ? "trainer and normalizer specs"
        : !has_trainer                  ? "trainer spec"
                                        : "normalizer spec"));
  }
  if (m.trainer_vocab_size >= 0 && static_cast<size_t>(m.trainer_vocab_size) != m.pieces.size()) {
    return corruption(fmt::format("{}: holds {} pieces, but its trainer spec's vocab_size is {}", source,
                                  m.pieces.size(), m.trainer_vocab_size));
  }
  if (m.unk_id < 0 || static_cast<size_t>(m.unk_id) >= m.pieces.size()) {
    return corruption(
        fmt::format("{}: unk_id {} is outside the {} pieces", source, m.unk_id, m.pieces.size()));
  }
  return m;
}

}  // namespace infercost::text::detail
