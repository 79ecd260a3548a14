// `infercost plan`: the dry run. Scans and tokenizes the inputs (no
// inference), computes each batching policy's padding exactly, and predicts
// from benchmark records the time and cost per instance (docs/plan.md).
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cli/setting_flags.h"
#include "core/file.h"
#include "core/test_point.h"
#include "cost/prices.h"
#include "engine/encoder.h"
#include "io/whole_file.h"
#include "model/model_dir.h"
#include "plan/plan.h"
#include "plan/print.h"
#include "text/tokenizer.h"

namespace infercost::cli {
namespace {

struct PlanFlags {
  // The settings of the run the plan predicts (its flags: `settings`), which the scan reads.
  plan::ScanOptions run;
  SettingFlags settings;
  std::string model_dir;
  std::vector<std::string> records;
  std::vector<std::string> price_files;
  std::string price_list;
  int64_t corpus_rows = 0;
  std::string json_path;
  bool quiet = false;
  bool embed = false;  // the job is `infercost embed`'s
};

// What the scan has done, for the progress line (written by the scan, read
// by the line's thread).
struct ScanProgress {
  std::atomic<int64_t> rows{0};
  std::atomic<uint64_t> bytes_done{0}, bytes_total{0};
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  std::string text() const {
    const int64_t n = rows.load();
    const uint64_t done = bytes_done.load(), total = bytes_total.load();
    const double expected =
        done > 0 ? static_cast<double>(n) * static_cast<double>(total) / static_cast<double>(done) : -1;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return "scanning: " + progress_text("rows", n, expected, false, seconds, 0);
  }
};

void execute_plan(PlanFlags& flags) {
  if (flags.embed) flags.run.task = Task::kEmbed;
  flags.settings.apply(flags.run);
  // The run's settings checked once, before anything is read.
  if (Status s = plan::check_scan_options(flags.run); !s.ok()) fail(s);
  // Everything that can be refused is checked before the (possibly long) scan.
  Result<std::vector<cost::PriceList>> lists = cost::price_lists_with(flags.price_files);
  if (!lists.ok()) fail(lists.status());
  Result<std::vector<plan::SourcedRecord>> records = record::load_sourced_records(flags.records);
  if (!records.ok()) fail(records.status());

  model::LoadOptions load;
  load.load_weights = false;
  load.max_length = flags.run.max_length;  // 0: the model's limit
  // An embedding job: the vectors as `infercost embed` would make them (its
  // truncation and prefix change the tokens scanned).
  std::optional<engine::EmbeddingSettings> embedding;
  if (flags.embed) {
    load.classification_head = false;
    Result<engine::EmbeddingSettings> e =
        engine::resolve_embedding(flags.model_dir, flags.run, load.max_length);
    if (!e.ok()) fail(e.status());
    embedding = std::move(*e);
  }
  Result<model::LoadedModel> model = model::load_model_dir(flags.model_dir, load);
  if (!model.ok()) fail(model.status());
  if (flags.run.max_length > model->config.max_positions()) {
    fail(invalid_argument(fmt::format("--max-length {} exceeds the model's {} positions",
                                      flags.run.max_length, model->config.max_positions())));
  }
  flags.run.max_length = model->tokenizer->max_length();  // the limit the scan counts rows at
  std::shared_ptr<const text::Tokenizer> tokenizer = model->tokenizer;
  if (embedding && !embedding->prefix.empty()) {
    Result<std::shared_ptr<const text::Tokenizer>> prefixed = text::with_prefix(tokenizer, embedding->prefix);
    if (!prefixed.ok()) fail(prefixed.status().with_context("--prefix"));
    tokenizer = *prefixed;
  }

  plan::PlanOptions options;
  options.price_lists = std::move(*lists);
  options.price_list = flags.price_list;
  options.corpus_rows = flags.corpus_rows;
  options.model = plan::shape_of(model->config);
  options.model_name = model->config.name;
  options.model_synthetic = model->config.synthetic;
  options.inputs = flags.run.inputs;
  options.model_dir = flags.model_dir;
  if (embedding) {
    options.embedding_dimensions = embedding->dimensions;
    options.pooling = flags.run.pooling;
  }
  // Whether this build has the CUDA module (not whether this machine has a
  // GPU: the suggested commands run on the instance they name).
  options.cuda_backend = false;
  for (const std::string& path : backend::cuda_module_candidates()) {
    if (::access(path.c_str(), F_OK) == 0) options.cuda_backend = true;
  }
  Status list_ok = plan::check_price_list(options.price_lists, options.price_list);
  if (!list_ok.ok()) fail(list_ok);

  ScanProgress progress;
  ProgressLine line(
      ProgressLine::wanted(flags.quiet), [&progress] { return progress.text(); }, 1.0);
  flags.run.on_progress = [&progress](int64_t rows, uint64_t done, uint64_t total) {
    progress.rows.store(rows);
    progress.bytes_done.store(done);
    progress.bytes_total.store(total);
    test_point("scan-progress");
  };
  Result<plan::ScanResult> scan = plan::scan_inputs(flags.run, *tokenizer);
  line.stop();
  flags.run.on_progress = nullptr;
  if (!scan.ok()) fail(scan.status());
  if (plan::needs_content_hash(*scan, *records)) {
    Status hashed = plan::hash_inputs(*scan);
    if (!hashed.ok()) fail(hashed);
  }

  Result<plan::PlanResult> result = plan::make_plan(std::move(*scan), *records, options);
  if (!result.ok()) fail(result.status());
  if (!flags.json_path.empty()) {
    if (Status s = io::write_whole_file(flags.json_path, plan::print_json(*result)); !s.ok()) fail(s);
  }
  const std::string text = plan::print_text(*result);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void define_plan(CLI::App* cmd) {
  auto flags = bind_flags<PlanFlags>(*cmd, execute_plan);
  plan::ScanOptions& s = flags->run;
  cmd->footer(
      "\nExample:\n"
      "  infercost plan tweets/ --model distilbert-sst2 --records c5.jsonl --records p3.jsonl --json "
      "plan.json\n"
      "\nPredicted seconds = FLOPs of these inputs as a policy computes them / the record's measured FLOP/s "
      "(FLOPs per row of L tokens = layers x (2 L (4 h^2 + 2 h f) + 4 L^2 h)); cost = seconds x the hourly "
      "price: the list's on-demand price of one machine, or, for the very instance and list a record was "
      "priced for, with its spot discount, surcharge and machines. GPU instances are measured with --device "
      "cuda (the CUDA module, docs/cuda.md). See docs/plan.md.");
  cmd->add_option("inputs", s.inputs,
                  "Input files, folders or globs (JSON lines, JSON arrays, CSV, Parquet), as `infercost run` "
                  "reads them")
      ->required();
  cmd->add_option("--model", flags->model_dir,
                  "Model directory (config.json and vocab.txt or tokenizer.json, and a sentence-transformers "
                  "model's modules.json with --embed; the weights are not read)")
      ->required();
  // The run's settings the plan predicts for, as `infercost run` takes them.
  flags->settings.add(cmd,
                      {"column", "input_format", "batch_size", "max_batch_tokens", "window_rows", "threads",
                       "tokenizer_threads", "max_length", "on_error", "pooling", "normalize", "prefix"});
  cmd->add_flag("--embed", flags->embed,
                "Plan `infercost embed` (a vector per row) rather than `infercost run`: the model's "
                "sentence-transformers truncation and prompt, or --pooling for a plain encoder; the output's "
                "size; cost per million vectors");
  cmd->add_option("--records", flags->records,
                  "Benchmark records (JSON lines from `infercost bench`) to predict from; repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);  // one file per flag: later words stay inputs
  cmd->add_option("--prices", flags->price_files, "A JSON price list of your own (docs/cost.md); repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);  // one file per flag: later words stay inputs
  cmd->add_option("--price-list", flags->price_list,
                  "Predict for the instances of this list only (e.g. seed-2021)");
  cmd->add_option("--corpus-rows", flags->corpus_rows,
                  "Predict for this many rows, at the scanned mean work per row (default: the rows scanned)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", flags->json_path, "Also write the plan as JSON to this file");
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress on stderr");
}

}  // namespace infercost::cli
