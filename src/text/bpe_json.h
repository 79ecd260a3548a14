// The byte-level BPE tokenizer of a parsed tokenizer.json. Internal to
// infercost_text: load_tokenizer() dispatches here on model.type "BPE".
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "infercost/status.h"
#include "text/bpe.h"

namespace infercost::text {

// What we read of `root` (a tokenizer.json document; `source` names it in
// errors): model (type BPE: vocab, merges as "a b" strings or [a, b] pairs,
// unk_token, fuse_unk, continuing_subword_prefix, end_of_word_suffix),
// added_tokens, the pre-tokenizer (ByteLevel, alone or as the one member of a
// Sequence), the post-processor (RobertaProcessing, BertProcessing,
// TemplateProcessing's single template, ByteLevel, a Sequence of these, or
// null), padding.pad_id (else `<pad>`'s id, else 0). max_length > 0 sets the
// row length; otherwise the file's truncation.max_length does, if any.
// Errors: kCorruption naming the field and entry ("tokenizer.json:
// model.merges: entry 12: ..."); kUnsupported naming what is not handled (a
// normalizer other than null, another pre-tokenizer, dropout, byte_fallback,
// ignore_merges, left truncation, a template without one $A).
Result<std::unique_ptr<BpeTokenizer>> bpe_from_tokenizer_json(const nlohmann::json& root,
                                                              const std::string& source, int max_length);

}  // namespace infercost::text
