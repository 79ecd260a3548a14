// Building tokenizers from a parsed tokenizer.json, one function per model
// type; load_tokenizer() (tokenizer.h) reads the file once and picks one by
// model.type. Private to infercost_text.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "text/tokenizer.h"

namespace infercost::text::detail {

// model.type "WordPiece": the vocabulary and the options the file sets over
// `defaults` (see load_tokenizer_json). Missing keys and wrong types throw
// nlohmann::json exceptions; the caller names the file.
Result<TokenizerJson> wordpiece_from_tokenizer_json(const nlohmann::json& root, TokenizerOptions defaults);

// The tokenizer of a tokenizer.json's text (`path` names it in errors), as
// load_tokenizer() reads the file: its nesting bounded before it is parsed
// (core/json_text.h), every error kCorruption or kUnsupported naming it.
Result<LoadedTokenizer> load_tokenizer_json_text(std::string_view data, const std::string& path,
                                                 const TokenizerSettings& settings,
                                                 TokenizerOptions options = {});

}  // namespace infercost::text::detail
