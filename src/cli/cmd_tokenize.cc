// `infercost tokenize`: the ids of texts given as arguments or as lines of
// stdin, one JSON object per text, by any tokenizer the engine has.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/threads.h"
#include "model/model_dir.h"
#include "run/run_input.h"
#include "text/tokenizer.h"

namespace infercost::cli {
namespace {

struct TokenizeArgs {
  std::string vocab;
  std::string model;
  std::string tokenizer;
  bool no_lowercase = false;
  bool strip_accents = false;
  bool no_strip_accents = false;
  bool no_special_tokens = false;
  int max_length = 0;  // the model's limit (model::LoadOptions), none for a tokenizer file
  int threads = 1;
  std::vector<std::string> texts;
};

Result<std::shared_ptr<const text::Tokenizer>> make_tokenizer(const TokenizeArgs& a) {
  std::optional<bool> strip;
  if (a.strip_accents) strip = true;
  if (a.no_strip_accents) strip = false;
  if (!a.model.empty()) {
    model::LoadOptions opts;
    opts.load_weights = false;
    opts.max_length = a.max_length;
    opts.add_special_tokens = !a.no_special_tokens;
    if (a.no_lowercase) opts.lowercase = false;
    opts.strip_accents = strip;
    INFERCOST_ASSIGN_OR_RETURN(model::LoadedModel loaded, model::load_model_dir(a.model, opts));
    return loaded.tokenizer;
  }
  text::TokenizerSettings settings;
  settings.max_length = a.max_length;
  settings.add_special_tokens = !a.no_special_tokens;
  if (a.no_lowercase) settings.lowercase = false;
  settings.strip_accents = strip;
  INFERCOST_ASSIGN_OR_RETURN(text::LoadedTokenizer loaded,
                             text::load_tokenizer(a.vocab.empty() ? a.tokenizer : a.vocab, settings));
  return loaded.tokenizer;
}

void print(const text::Tokenizer& tok, const std::vector<int32_t>& ids) {
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (int32_t id : ids) tokens.push_back(tok.piece(id));
  nlohmann::ordered_json out = {{"tokens", std::move(tokens)}, {"ids", ids}};
  std::cout << out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

// Texts are tokenized a block at a time, spread over the threads as a run's
// windows are (run::tokenize_window), and printed in input order: the
// first failing text, in input order, fails.
constexpr size_t kBlockTexts = 4096;

void tokenize_block(const text::Tokenizer& tok, std::vector<std::string> texts, size_t first_index,
                    int threads) {
  run::Window window;
  window.rows.texts = std::move(texts);
  run::tokenize_window(tok, window, threads);
  for (size_t i = 0; i < window.ids.size(); ++i) {
    if (!window.errors[i].ok()) {
      std::cout.flush();
      fail(window.errors[i].with_context("text " + std::to_string(first_index + i + 1)));
    }
    print(tok, window.ids[i]);
  }
}

void run_tokenize(const TokenizeArgs& a) {
  if (a.vocab.empty() + a.model.empty() + a.tokenizer.empty() != 2)
    fail(invalid_argument("give exactly one of --tokenizer PATH, --model DIR or --vocab FILE"));
  if (a.max_length < 0) fail(invalid_argument("--max-length must be >= 0 (0: no limit)"));
  if (a.threads < 0) fail(invalid_argument("--threads must be >= 0 (0: all cores)"));
  const int threads = resolve_threads(a.threads);
  auto tok = make_tokenizer(a);
  if (!tok.ok()) fail(tok.status());
  if (!a.texts.empty()) {
    tokenize_block(**tok, a.texts, 0, threads);
  } else {
    std::vector<std::string> block;
    size_t first = 0;
    std::string line;
    while (std::getline(std::cin, line)) {
      block.push_back(std::move(line));
      if (block.size() == kBlockTexts) {
        tokenize_block(**tok, std::move(block), first, threads);
        first += kBlockTexts;
        block.clear();
      }
    }
    tokenize_block(**tok, std::move(block), first, threads);
  }
  std::cout.flush();
}

}  // namespace

void define_tokenize(CLI::App* cmd) {
  auto args = bind_flags<TokenizeArgs>(*cmd, run_tokenize);
  auto* tokenizer = cmd->add_option(
      "--tokenizer", args->tokenizer,
      "a tokenizer.json (WordPiece, BPE or Unigram), a DeBERTa-v3 spm.model, a vocab.txt, or a "
      "folder with tokenizer.json, vocab.json + merges.txt, spm.model or vocab.txt");
  auto* vocab = cmd->add_option("--vocab", args->vocab, "vocab.txt of a BERT WordPiece vocabulary");
  auto* model = cmd->add_option("--model", args->model, "Hugging Face model directory (its tokenizer)");
  vocab->excludes(model);
  tokenizer->excludes(vocab);
  tokenizer->excludes(model);
  cmd->add_flag("--no-lowercase", args->no_lowercase,
                "WordPiece: keep case (accents then kept unless --strip-accents)");
  auto* strip = cmd->add_flag("--strip-accents", args->strip_accents, "remove accents (NFD, drop marks)");
  auto* keep =
      cmd->add_flag("--no-strip-accents", args->no_strip_accents, "keep accents even when lowercasing");
  strip->excludes(keep);
  cmd->add_flag("--no-special-tokens", args->no_special_tokens,
                "do not add the special tokens ([CLS] ... [SEP], <s> ... </s>)");
  cmd->add_option(
         "--max-length", args->max_length,
         "truncate to this many ids, specials included (0: the model's limit with --model, none otherwise)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "threads tokenizing (0: all cores); the output keeps input order")
      ->capture_default_str();
  cmd->add_option("text", args->texts, "texts to tokenize (default: one per line of stdin)");
}

}  // namespace infercost::cli
