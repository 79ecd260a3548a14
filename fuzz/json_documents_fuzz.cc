// libFuzzer entry: the input is a JSON document of the kinds a model
// directory holds, read as each: a tokenizer.json (load_tokenizer's reading of
// it: nesting bounded, then the model and pipeline built) and a config.json
// (the model's description). Any outcome but a crash, a sanitizer report, a
// hang (a walk 50,000 levels deep) or a giant allocation is fine.
// fuzz/json.dict gives libFuzzer the tokens (and the nesting) these files use.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.h"
#include "text/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  infercost::text::TokenizerSettings settings;
  settings.max_length = 64;
  auto tokenizer = infercost::text::detail::load_tokenizer_json_text(text, "fuzz/tokenizer.json", settings);
  if (tokenizer.ok()) {
    std::vector<int32_t> ids;
    (void)tokenizer->tokenizer->encode_append("Hello, world! #nlp \xF0\x9F\x98\x80", ids);
  }
  (void)infercost::model::parse_config(std::string(text), "fuzz/config.json");
  return 0;
}
