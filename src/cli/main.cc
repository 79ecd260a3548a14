#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "core/file.h"
#include "engine/settings.h"
#include "infercost/version.h"

namespace infercost::cli {

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kUnsupported: return 2;  // also a model or precision this build does not run
    case StatusCode::kCorruption: return 3;
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnavailable:
    case StatusCode::kNonFinite: return 4;
    default: return 1;
  }
}

void fail(const Status& status) {
  // The engine names settings as "{max_length}"; the CLI spells them as its flags.
  const Status spelled = engine::spell_settings(status, engine::Spelling::kFlag);
  std::fprintf(stderr, "infercost: error: %s\n", spelled.to_string().c_str());
  throw CliExit{exit_code_for(status)};
}

namespace {

// The commands, in the order `infercost --help` lists them: each one's name,
// what --help says it does, and the function (cmd_*.cc) adding its options.
struct CommandSpec {
  const char* name;
  const char* about;
  void (*define)(CLI::App* cmd);
};
constexpr CommandSpec kCommands[] = {
    {"run", "Classify every row of the inputs and write predictions in input order", define_run},
    {"embed",
     "Embed every row of the inputs (a sentence-transformers model, or an encoder with --pooling) and write "
     "one vector per row in input order",
     define_embed},
    {"tokenize",
     "Tokenize TEXT arguments, or lines of stdin, to JSON {\"tokens\", \"ids\"} (WordPiece, BPE, Unigram)",
     define_tokenize},
    {"model", "Inspect Hugging Face model directories or make a synthetic one", define_model},
    {"datagen",
     "Write synthetic tweet-like texts (columns id, full_text) in the study's shapes: jsonl, json-3, "
     "parquet, parquet-10; --lengths-from gives them a real corpus's words per row",
     define_datagen},
    {"demo", "Run the embedded default: a synthetic DistilBERT-base model over synthetic tweets (cached)",
     define_demo},
    {"cat",
     "Print rows as JSON lines (whole rows as objects, or one column's values with --column; null as null), "
     "from any input format",
     define_cat},
    {"inspect", "Describe a Parquet file: schema, row groups, encodings, compression, sizes and statistics",
     define_inspect},
    {"prices", "List the instance price lists (built in, and --prices files) with their sources and dates",
     define_prices},
    {"bench",
     "Benchmark a sweep of configurations (data shape x device x precision x batching x batch size x "
     "threads): each point runs a warm-up then repeated `infercost run`s in child processes, and gets one "
     "JSON record (docs/bench-records.md) with timings, throughput, memory, hardware, software and cost",
     define_bench},
    {"report",
     "Merge benchmark records (infercost bench) into one self-contained HTML page with SVG charts and a "
     "Markdown file: runtime vs batch size, cost to solution, throughput, padding, GPU memory, runtime vs "
     "cost with the Pareto front, and a plain-language answer (see docs/report.md)",
     define_report},
    {"plan",
     "Dry run: scan and tokenize the inputs (no inference), compute each batching policy's padding, and "
     "predict from benchmark records the time and cost on every instance of the price lists",
     define_plan},
    {"devices",
     "List this machine's CPU and GPUs (GPUs through NVML, loaded at run time) and the backends of this "
     "build that can use them",
     define_devices},
    {"precision-check",
     "Classify the first rows of the inputs in fp32 and in reduced precisions, and report label agreement, "
     "how far the outputs moved and the rows that flipped",
     define_precision_check},
};

}  // namespace

}  // namespace infercost::cli

int main(int argc, char** argv) {
  using namespace infercost::cli;
  CLI::App app{"infercost: batch inference and cost-to-solution benchmarks for transformer text classifiers"};
  infercost::install_temporary_cleanup_on_signals();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("infercost ") + infercost::kVersion);
  for (const CommandSpec& c : kCommands) c.define(app.add_subcommand(c.name, c.about));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CliExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infercost: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
