// A UnigramTokenizer from a parsed tokenizer.json whose model.type is
// "Unigram". Private to infercost_text: the tokenizer factory parses the file
// once and calls this.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "infercost/status.h"
#include "text/unigram.h"

namespace infercost::text {

// `source` names the file in every message ("<source>: model.vocab[12]: ...").
// max_length: ids per row at most, the template's included (<= 0: no limit);
// add_special_tokens false leaves the template out (HF's
// add_special_tokens=False). Errors: kCorruption (a malformed field: a piece
// without a score, unk_id out of range, bad base64 or a truncated
// precompiled_charsmap, a bad added token), kUnsupported (a normalizer,
// pre-tokenizer, post-processor or Replace regex we do not have, named),
// kInvalidArgument (max_length below the template's tokens).
Result<std::unique_ptr<UnigramTokenizer>> unigram_from_tokenizer_json(const nlohmann::json& root,
                                                                      const std::string& source,
                                                                      int max_length,
                                                                      bool add_special_tokens = true);

}  // namespace infercost::text
