// `infercost tokenize`: BERT WordPiece ids for texts given as arguments or as
// lines of stdin, one JSON object per text.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "infercost/model/model_dir.h"
#include "infercost/text/tokenizer.h"

namespace infercost::cli {
namespace {

struct TokenizeArgs {
  std::string vocab;
  std::string model;
  bool no_lowercase = false;
  bool strip_accents = false;
  bool no_strip_accents = false;
  bool no_special_tokens = false;
  int max_length = 512;
  std::vector<std::string> texts;
};

Result<text::WordPieceTokenizer> make_tokenizer(const TokenizeArgs& a) {
  std::optional<bool> strip;
  if (a.strip_accents) strip = true;
  if (a.no_strip_accents) strip = false;
  if (!a.model.empty()) {
    model::LoadOptions opts;
    opts.load_weights = false;
    opts.max_length = a.max_length;
    if (a.no_lowercase) opts.lowercase = false;
    opts.strip_accents = strip;
    INFERCOST_ASSIGN_OR_RETURN(model::LoadedModel loaded, model::load_model_dir(a.model, opts));
    const text::WordPieceTokenizer* wordpiece = loaded.wordpiece();
    if (!wordpiece) return internal_error(a.model + ": model directory loaded without a WordPiece tokenizer");
    text::TokenizerOptions options = wordpiece->options();
    options.add_special_tokens = !a.no_special_tokens;
    options.max_length = a.max_length;
    return text::WordPieceTokenizer::create(wordpiece->vocab(), options);
  }
  INFERCOST_ASSIGN_OR_RETURN(text::Vocab vocab, text::Vocab::load_txt(a.vocab));
  text::TokenizerOptions options;
  options.lowercase = !a.no_lowercase;
  options.strip_accents = strip;
  options.add_special_tokens = !a.no_special_tokens;
  options.max_length = a.max_length;
  return text::WordPieceTokenizer::create(std::move(vocab), options);
}

void print(const text::Tokenizer& tok, const std::string& line, size_t index, std::vector<int32_t>& ids) {
  ids.clear();
  auto n = tok.encode_append(line, ids);
  if (!n.ok()) fail(n.status().with_context("text " + std::to_string(index + 1)));
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int32_t id : ids) tokens.push_back(tok.piece(id));
  nlohmann::ordered_json out = {{"tokens", std::move(tokens)}, {"ids", ids}};
  std::cout << out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void run_tokenize(const TokenizeArgs& a) {
  if (a.vocab.empty() == a.model.empty())
    fail(invalid_argument("give exactly one of --vocab FILE or --model DIR"));
  if (a.max_length < 0) fail(invalid_argument("--max-length must be >= 0 (0: no limit)"));
  auto tok = make_tokenizer(a);
  if (!tok.ok()) fail(tok.status());
  std::vector<int32_t> ids;
  if (!a.texts.empty()) {
    for (size_t i = 0; i < a.texts.size(); ++i) print(*tok, a.texts[i], i, ids);
  } else {
    std::string line;
    for (size_t i = 0; std::getline(std::cin, line); ++i) print(*tok, line, i, ids);
  }
  std::cout.flush();
}

}  // namespace

void register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize", "BERT WordPiece-tokenize TEXT arguments, or lines of stdin, to JSON {\"tokens\", \"ids\"}");
  auto* vocab = cmd->add_option("--vocab", args->vocab, "vocab.txt of a BERT WordPiece vocabulary");
  auto* model = cmd->add_option("--model", args->model, "Hugging Face model directory (its tokenizer)");
  vocab->excludes(model);
  cmd->add_flag("--no-lowercase", args->no_lowercase, "keep case (accents then kept unless --strip-accents)");
  auto* strip = cmd->add_flag("--strip-accents", args->strip_accents, "remove accents (NFD, drop marks)");
  auto* keep =
      cmd->add_flag("--no-strip-accents", args->no_strip_accents, "keep accents even when lowercasing");
  strip->excludes(keep);
  cmd->add_flag("--no-special-tokens", args->no_special_tokens, "do not add [CLS] and [SEP]");
  cmd->add_option("--max-length", args->max_length,
                  "truncate to this many ids, specials included (0: no limit)")
      ->capture_default_str();
  cmd->add_option("text", args->texts, "texts to tokenize (default: one per line of stdin)");
  cmd->callback([args] { run_tokenize(*args); });
}

}  // namespace infercost::cli
