// libFuzzer entry: the input is a whole SentencePiece model file (DeBERTa-v3's
// spm.model). Parses it; any outcome but a crash, a sanitizer report, a hang
// or a giant allocation is fine.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/sentencepiece_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = infercost::text::detail::parse_sentencepiece_model(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.model");
  if (model.ok()) {
    size_t bytes = 0;
    for (const auto& p : model->pieces) bytes += p.piece.size();
    (void)bytes;
  }
  return 0;
}
