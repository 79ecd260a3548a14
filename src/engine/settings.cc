#include "engine/settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <type_traits>

#include "backend/backend.h"
#include "engine/batching.h"
#include "engine/head.h"
#include "model/embedding.h"
#include "text/tokenizer.h"

namespace infercost::engine {

namespace {

// get / set of a member of each type, for the table below.
template <auto M>
std::string text_of(const RunOptions& o) {
  return o.*M;
}
template <auto M>
std::string whole_of(const RunOptions& o) {
  return std::to_string(o.*M);
}
template <auto M>
std::string number_of(const RunOptions& o) {
  return fmt::format("{}", o.*M);
}
template <auto M>
std::string switch_of(const RunOptions& o) {
  return o.*M ? "true" : "false";
}
template <auto M>
Status set_text(RunOptions& o, const SettingValue& v, std::string_view) {
  o.*M = std::get<std::string>(v);
  return Status();
}
template <auto M>
Status set_whole(RunOptions& o, const SettingValue& v, std::string_view label) {
  using Member = std::remove_reference_t<decltype(o.*M)>;
  const int64_t n = std::get<int64_t>(v);
  if (n < std::numeric_limits<Member>::min() || n > std::numeric_limits<Member>::max()) {
    return invalid_argument(fmt::format("{} {}: out of range", label, n));
  }
  o.*M = static_cast<Member>(n);
  return Status();
}
template <auto M>
std::string list_of(const RunOptions& o) {
  return fmt::format("{}", fmt::join(o.*M, ","));
}
template <auto M>
Status set_list(RunOptions& o, const SettingValue& v, std::string_view) {
  o.*M = std::get<std::vector<std::string>>(v);
  return Status();
}
template <auto M>
Status set_number(RunOptions& o, const SettingValue& v, std::string_view) {
  o.*M = std::get<double>(v);
  return Status();
}
template <auto M>
Status set_switch(RunOptions& o, const SettingValue& v, std::string_view) {
  o.*M = std::get<bool>(v);
  return Status();
}
// A kWholeOrAuto: the size member M and its "auto" member A.
template <auto M, auto A>
std::string size_of(const RunOptions& o) {
  return o.*A ? "auto" : std::to_string(o.*M);
}
template <auto M, auto A>
Status set_size(RunOptions& o, const SettingValue& v, std::string_view label) {
  o.*A = std::holds_alternative<std::string>(v);
  return o.*A ? Status() : set_whole<M>(o, v, label);
}
Status no_check(const RunOptions&, std::string_view) {
  return Status();
}

// "must be at least 1 (or 0 for ...)" of a whole-number member.
template <auto M>
Status at_least_zero(const RunOptions& o, std::string_view label, std::string_view zero) {
  if (o.*M >= 0) return Status();
  return invalid_argument(fmt::format("{} must be at least 1 (or 0 for {})", label, zero));
}

// Threads: 0 (a default) or 1 to kMaxThreads.
template <auto M>
Status thread_count(const RunOptions& o, std::string_view label, std::string_view zero) {
  if (o.*M >= 0 && o.*M <= kMaxThreads) return Status();
  return invalid_argument(
      fmt::format("{} {}: must be 1 to {} (or 0 for {})", label, o.*M, kMaxThreads, zero));
}

Status check_device(const RunOptions& o, std::string_view label) {
  Result<backend::DeviceSpec> device = backend::parse_device(o.device);
  if (!device.ok()) return invalid_argument(fmt::format("{}: {}", label, device.status().message()));
  return Status();
}

Status check_precision(const RunOptions& o, std::string_view label) {
  Result<backend::Precision> p = backend::resolve_precision(o.device, o.precision);
  if (!p.ok()) return invalid_argument(fmt::format("{}: {}", label, p.status().message()));
  return Status();
}

Status check_streams(const RunOptions& o, std::string_view label) {
  if (o.streams_per_device >= 0 && o.streams_per_device <= kMaxStreamsPerDevice) return Status();
  return invalid_argument(fmt::format("{} {}: must be 1 to {} (or 0 for the device's default)", label,
                                      o.streams_per_device, kMaxStreamsPerDevice));
}

Status set_batching(RunOptions& o, const SettingValue& v, std::string_view label) {
  Result<Batching> b = parse_batching(std::get<std::string>(v));
  if (!b.ok()) return invalid_argument(fmt::format("{}: {}", label, b.status().message()));
  o.batching = *b;
  return Status();
}

Status set_on_error(RunOptions& o, const SettingValue& v, std::string_view label) {
  const std::string& policy = std::get<std::string>(v);
  if (policy != "fail" && policy != "skip") {
    return invalid_argument(fmt::format("{} must be 'fail' or 'skip', not '{}'", label, policy));
  }
  o.on_bad_row = policy == "skip" ? OnBadRow::kSkip : OnBadRow::kFail;
  return Status();
}

Status check_max_length_setting(const RunOptions& o, std::string_view label) {
  if (o.max_length == 0) return Status();  // the model's own limit
  return text::check_max_length(o.max_length, label);
}

Status check_function(const RunOptions& o, std::string_view label) {
  if (o.function == "default" || parse_head_function(o.function).ok()) return Status();
  return invalid_argument(
      fmt::format("{} '{}': expected softmax, sigmoid, none or default (the model's)", label, o.function));
}

// The pooling's one parse: its text (empty: unset, the model's) to the
// typed value every later step reads.
std::string pooling_of(const RunOptions& o) {
  return o.pooling ? model::pooling_name(*o.pooling) : "";
}

Status set_pooling(RunOptions& o, const SettingValue& v, std::string_view label) {
  const std::string& name = std::get<std::string>(v);
  if (name.empty()) {
    o.pooling.reset();
    return Status();
  }
  Result<Pooling> p = model::parse_pooling(name);
  if (!p.ok()) return invalid_argument(fmt::format("{}: {}", label, p.status().message()));
  o.pooling = *p;
  return Status();
}

Status set_threshold(RunOptions& o, const SettingValue& v, std::string_view) {
  o.threshold = std::get<double>(v);
  return Status();
}

Status check_threshold(const RunOptions& o, std::string_view label) {
  if (!o.threshold) return Status();
  const double t = *o.threshold;
  if (t >= 0 && t <= 1) return Status();
  return invalid_argument(fmt::format("{} {}: must be in [0, 1]", label, t));
}

Status check_checkpoint_seconds(const RunOptions& o, std::string_view label) {
  if (o.checkpoint_seconds >= 0) return Status();  // NaN fails too
  return invalid_argument(fmt::format("{} {}: must be 0 or more seconds", label, o.checkpoint_seconds));
}

using C = ModelOptions;
using R = RunOptions;
constexpr SettingScope kModel = SettingScope::kModel;
constexpr SettingScope kPrice = SettingScope::kPrice;
constexpr SettingScope kRun = SettingScope::kRun;

// The table. Help texts say what a setting does; --help and help() add the default.
const std::array kSettings = {
    Setting{.name = "column",
            .type = SettingType::kText,
            .scope = kRun,
            .changes_output = true,
            .help = "Name of the text field",
            .get = text_of<&R::column>,
            .set = set_text<&R::column>,
            .check = no_check},
    Setting{.name = "input_format",
            .type = SettingType::kText,
            .scope = kRun,
            .changes_output = true,
            .help = "jsonl, json, csv or parquet for every input (empty: from each file's extension)",
            .get = text_of<&R::input_format>,
            .set = set_text<&R::input_format>,
            .check = no_check},
    Setting{.name = "output_format",
            .type = SettingType::kText,
            .scope = kRun,
            .changes_output = false,  // the job identity has the formats the output plan resolved
            .help = "jsonl, csv or parquet (empty: from the output's extension; for a folder, each input's "
                    "own format)",
            .get = text_of<&R::output_format>,
            .set = set_text<&R::output_format>,
            .check = no_check},
    Setting{.name = "compression",
            .type = SettingType::kText,
            .scope = kRun,
            .changes_output = true,
            .help = "Parquet output codec: snappy, zstd, gzip, brotli, lz4_raw, lz4 or none",
            .get = text_of<&R::compression>,
            .set = set_text<&R::compression>,
            .check = no_check},
    Setting{.name = "batching",
            .type = SettingType::kText,
            .scope = kModel,
            .changes_output = true,
            .help = "How rows become batches: 'tokens' (sort each window of rows by length and pack up to "
                    "{max_batch_tokens}; no compute spent on padding) or 'seed' (the study's method: fixed "
                    "batches in input order, padded to each file's longest row, padding computed)",
            .get = [](const R& o) { return std::string(batching_name(o.batching)); },
            .set = set_batching,
            .check = no_check},
    Setting{.name = "batch_size",
            .type = SettingType::kWholeOrAuto,
            .scope = kModel,
            .changes_output = false,
            .help =
                "Most rows per batch; 0 picks the policy's default: {=tokens_batch_size} for 'tokens' (a "
                "cap; the token budget usually binds first), {=seed_rows_per_thread} x threads for 'seed'; "
                "'auto': as many as the device's "
                "memory holds beside the token budget ('seed': rows of {max_length} tokens)",
            .get = size_of<&C::batch_size, &C::batch_size_auto>,
            .set = set_size<&C::batch_size, &C::batch_size_auto>,
            .check =
                [](const R& o, std::string_view l) {
                  return at_least_zero<&C::batch_size>(o, l, "the batching policy's default");
                }},
    Setting{.name = "max_batch_tokens",
            .type = SettingType::kWholeOrAuto,
            .scope = kModel,
            .changes_output = false,
            .help = "'tokens' batching: most tokens per batch (rows x longest row; a longer row runs alone); "
                    "'auto': as many as the device's memory holds",
            .get = size_of<&C::max_batch_tokens, &C::max_batch_tokens_auto>,
            .set = set_size<&C::max_batch_tokens, &C::max_batch_tokens_auto>,
            .check =
                [](const R& o, std::string_view l) {
                  return o.max_batch_tokens >= 1 ? Status()
                                                 : invalid_argument(fmt::format("{} must be at least 1", l));
                }},
    Setting{.name = "window_rows",
            .type = SettingType::kWhole,
            .scope = kRun,
            .changes_output = false,
            .help =
                "Rows read, tokenized and sorted together; bounds reordering and memory ('seed' rounds it "
                "up to whole batches; under 'tokens' no batch spans two windows)",
            .get = whole_of<&R::window_rows>,
            .set = set_whole<&R::window_rows>,
            .check =
                [](const R& o, std::string_view l) {
                  return o.window_rows >= 1 ? Status()
                                            : invalid_argument(fmt::format("{} must be at least 1", l));
                }},
    Setting{.name = "precision",
            .type = SettingType::kText,
            .scope = kModel,
            .changes_output = true,
            .help = "Linear-layer arithmetic: auto (CPU: bf16 where the CPU has native bf16, else fp32; GPU: "
                    "bf16, fp16 before compute capability 8.0), fp32, bf16, fp16 (GPU) or int8 (CPU)",
            .get = text_of<&C::precision>,
            .set = set_text<&C::precision>,
            .check = check_precision},
    Setting{
        .name = "threads",
        .type = SettingType::kWhole,
        .scope = kModel,
        .changes_output = false,
        .help = "Inference threads (0: all cores; at most {=max_threads})",
        .get = whole_of<&C::threads>,
        .set = set_whole<&C::threads>,
        .check = [](const R& o, std::string_view l) { return thread_count<&C::threads>(o, l, "all cores"); }},
    Setting{.name = "tokenizer_threads",
            .type = SettingType::kWhole,
            .scope = kModel,
            .changes_output = false,
            .help = "Threads tokenizing while inference runs (0: 1 on the CPU, else {threads}; at most "
                    "{=max_threads})",
            .get = whole_of<&C::tokenizer_threads>,
            .set = set_whole<&C::tokenizer_threads>,
            .check =
                [](const R& o, std::string_view l) {
                  return thread_count<&C::tokenizer_threads>(o, l, "the device's default");
                }},
    Setting{.name = "max_length",
            .type = SettingType::kWhole,
            .scope = kModel,
            .changes_output = true,
            .help = "Truncate each text to this many tokens, special tokens included (0: the model's limit, "
                    "the smaller of its positions and its tokenizer's model_max_length; embeddings: "
                    "sentence-transformers' max_seq_length where the model has one, as sentence-transformers "
                    "takes it, within the model's positions)",
            .get = whole_of<&C::max_length>,
            .set = set_whole<&C::max_length>,
            .check = check_max_length_setting},
    Setting{.name = "pooling",
            .type = SettingType::kText,
            .scope = kModel,
            .task = Task::kEmbed,
            .changes_output = true,
            .help = "How each text's token vectors become its one vector: cls (the first token's), mean, max "
                    "or lasttoken, over its real tokens (empty: the model's sentence-transformers Pooling; "
                    "required for a plain Hugging Face encoder directory)",
            .get = pooling_of,
            .set = set_pooling,
            .check = no_check},
    Setting{.name = "normalize",
            .type = SettingType::kOptionalSwitch,
            .scope = kModel,
            .task = Task::kEmbed,
            .changes_output = true,
            .help = "Scale each vector to unit length (unset: as the model's sentence-transformers modules "
                    "say, a Normalize module; else not)",
            .get = [](const R& o) { return o.normalize ? std::string(*o.normalize ? "true" : "false") : ""; },
            .set =
                [](R& o, const SettingValue& v, std::string_view) {
                  o.normalize = std::get<bool>(v);
                  return Status();
                },
            .check = no_check},
    Setting{.name = "prefix",
            .type = SettingType::kOptionalText,
            .scope = kModel,
            .task = Task::kEmbed,
            .changes_output = true,
            .help = "Text put before every row's text, as a model's prompt (\"query: \"); its tokens count "
                    "against {max_length} (unset: the model's default prompt, "
                    "config_sentence_transformers.json's default_prompt_name, usually none; '' for none)",
            .get = [](const R& o) { return o.prefix.value_or(""); },
            .identity = [](const R& o) { return o.prefix ? "'" + *o.prefix + "'" : std::string("(model)"); },
            .set =
                [](R& o, const SettingValue& v, std::string_view) {
                  o.prefix = std::get<std::string>(v);
                  return Status();
                },
            .check = no_check},
    Setting{.name = "function",
            .type = SettingType::kText,
            .scope = kModel,
            .task = Task::kClassify,
            .changes_output = true,  // as given: "default" is the model's, whose config is part of the job
            .help = "The head's output function, as Hugging Face's text-classification pipeline applies it: "
                    "softmax over the labels, sigmoid of each label (multi-label), none (the raw logits), or "
                    "default: the model's (problem_type regression: none; multi_label_classification or a "
                    "single label: sigmoid; else softmax; `infercost model info` says which)",
            .get = text_of<&C::function>,
            .set = set_text<&C::function>,
            .check = check_function},
    Setting{.name = "threshold",
            .type = SettingType::kOptionalNumber,
            .scope = kModel,
            .task = Task::kClassify,
            .changes_output = true,
            .help = "Multi-label outputs (sigmoid over several labels): the 'labels' column lists the labels "
                    "whose value is at or above this, in [0, 1] (unset: 0.5); refused for other outputs",
            .expected = "a number in [0, 1]",
            .get = [](const R& o) { return o.threshold ? fmt::format("{}", *o.threshold) : std::string(); },
            // Unset and 0.5 write the same labels.
            .identity = [](const R& o) { return fmt::format("{}", o.threshold.value_or(kDefaultThreshold)); },
            .set = set_threshold,
            .check = check_threshold},
    Setting{
        .name = "device",
        .type = SettingType::kText,
        .scope = kModel,
        .changes_output = false,  // the job identity has the device's kind (job.cc)
        .help = "Device to run on: cpu; cuda or cuda:all (every GPU); cuda:N or cuda:N,M,... (those GPUs). "
                "Each GPU runs its own workers, all pulling from one queue of batches",
        .get = text_of<&C::device>,
        .set = set_text<&C::device>,
        .check = check_device},
    Setting{.name = "streams_per_device",
            .type = SettingType::kWhole,
            .scope = kModel,
            .changes_output = false,
            .help = "Inference workers per device, each with its own stream and memory (0: 2 on a GPU, 1 on "
                    "the CPU; at most 16)",
            .get = whole_of<&C::streams_per_device>,
            .set = set_whole<&C::streams_per_device>,
            .check = check_streams},
    Setting{.name = "on_error",
            .type = SettingType::kText,
            .scope = kModel,
            .changes_output = true,
            .help = "Bad rows: 'fail' (stop, write nothing) or 'skip' (count and go on)",
            .get = [](const R& o) { return std::string(o.on_bad_row == OnBadRow::kSkip ? "skip" : "fail"); },
            .set = set_on_error,
            .check = no_check},
    Setting{
        .name = "keep_text",
        .type = SettingType::kSwitch,
        .scope = kRun,
        .changes_output = true,
        .help = "Write the text column to the output (false: leave it out)",
        .cli_flag = "--no-text",
        .cli_negates = true,
        .cli_help = "Leave the text column out of the output",
        .get = switch_of<&R::keep_text>,
        .identity = [](const R& o) { return std::string(o.keep_text ? "false" : "true"); },  // as --no-text
        .set = set_switch<&R::keep_text>,
        .check = no_check},
    Setting{
        .name = "resume",
        .type = SettingType::kSwitch,
        .scope = kRun,
        .changes_output = false,
        .help = "Continue the job that last wrote the output from its checkpoint (kept beside the output); "
                "without one, start it, or do nothing where its outputs are this same job's, finished. The "
                "job must be the same: inputs, model and output options",
        .get = switch_of<&R::resume>,
        .set = set_switch<&R::resume>,
        .check = no_check},
    Setting{.name = "force",
            .type = SettingType::kSwitch,
            .scope = kRun,
            .changes_output = false,
            .help = "Replace outputs that exist and start over, a previous run's checkpoint dropped (without "
                    "it an existing output is never replaced; a read-only file never is)",
            .get = switch_of<&R::force>,
            .set = set_switch<&R::force>,
            .check = no_check},
    Setting{.name = "checkpoint_seconds",
            .type = SettingType::kNumber,
            .scope = kRun,
            .changes_output = false,
            .help = "Most seconds between two checkpoints of an output file or folder (each taken at the end "
                    "of a window of rows; 0: after every window)",
            .get = number_of<&R::checkpoint_seconds>,
            .set = set_number<&R::checkpoint_seconds>,
            .check = check_checkpoint_seconds},
    // Pricing (engine/run_cost.h checks them, with the price lists, when the run starts).
    Setting{.name = "instance",
            .type = SettingType::kText,
            .scope = kPrice,
            .changes_output = false,
            .help = "The instance this run represents (e.g. p3.8xlarge): adds its cost-to-solution, cost per "
                    "million rows/tokens and the corpus projection to the summary and metrics",
            .get = text_of<&R::instance>,
            .set = set_text<&R::instance>,
            .check = no_check},
    Setting{.name = "price_list",
            .type = SettingType::kText,
            .scope = kPrice,
            .changes_output = false,
            .help = "Look {instance} up in this list only (e.g. seed-2021)",
            .get = text_of<&R::price_list>,
            .set = set_text<&R::price_list>,
            .check = no_check},
    Setting{.name = "price_files",
            .type = SettingType::kTextList,
            .scope = kPrice,
            .changes_output = false,
            .help = "JSON price lists of your own (docs/cost.md)",
            .cli_flag = "--prices",
            .cli_help = "A JSON price list of your own (docs/cost.md); repeatable",
            .get = list_of<&R::price_files>,
            .set = set_list<&R::price_files>,
            .check = no_check},
    Setting{.name = "spot_discount",
            .type = SettingType::kNumber,
            .scope = kPrice,
            .changes_output = false,
            .help = "Fraction off the on-demand price, 0 to <1 (e.g. 0.7 for spot at 30% of on-demand)",
            .get = number_of<&R::spot_discount>,
            .set = set_number<&R::spot_discount>,
            .check = no_check},
    Setting{.name = "platform_usd_per_hour",
            .type = SettingType::kNumber,
            .scope = kPrice,
            .changes_output = false,
            .help = "Surcharge per machine-hour on top of the instance price (e.g. Databricks DBUs in USD)",
            .get = number_of<&R::platform_usd_per_hour>,
            .set = set_number<&R::platform_usd_per_hour>,
            .check = no_check},
    Setting{.name = "machines",
            .type = SettingType::kWhole,
            .scope = kPrice,
            .changes_output = false,
            .help = "Machines in the cluster the run stands for",
            .get = whole_of<&R::machines>,
            .set = set_whole<&R::machines>,
            .check = no_check},
    Setting{.name = "corpus_rows",
            .type = SettingType::kWhole,
            .scope = kPrice,
            .changes_output = false,
            .help = "Project time and cost to this many rows (0: the rows of this run)",
            .get = whole_of<&R::corpus_rows>,
            .set = set_whole<&R::corpus_rows>,
            .check =
                [](const R& o, std::string_view l) {
                  return o.corpus_rows >= 0 ? Status()
                                            : invalid_argument(fmt::format("{} must not be negative", l));
                }},
};

const char* type_words(SettingType type) {
  return setting_type_names(type).words;
}

std::string_view value_kind(const SettingValue& v) {
  switch (v.index()) {
    case 0: return "a string";
    case 1: return "an integer";
    case 2: return "a real number";
    case 3: return "a bool";
    default: return "a list";
  }
}

// `value` as the setting's type wants it (an integer where a real number is
// asked, "auto" only for kWholeOrAuto), or kInvalidArgument.
Result<SettingValue> normalize(const Setting& s, const SettingValue& value, const std::string& label) {
  auto wrong = [&] {
    return invalid_argument(
        fmt::format("{} must be {}, not {}", label, type_words(s.type), value_kind(value)));
  };
  switch (s.type) {
    case SettingType::kText:
    case SettingType::kOptionalText:
      if (!std::holds_alternative<std::string>(value)) return wrong();
      return value;
    case SettingType::kSwitch:
    case SettingType::kOptionalSwitch:
      if (!std::holds_alternative<bool>(value)) return wrong();
      return value;
    case SettingType::kNumber:
    case SettingType::kOptionalNumber:
      if (const int64_t* n = std::get_if<int64_t>(&value)) return SettingValue(static_cast<double>(*n));
      if (!std::holds_alternative<double>(value)) return wrong();
      return value;
    case SettingType::kWholeOrAuto:
      if (const std::string* t = std::get_if<std::string>(&value)) {
        if (*t == "auto") return value;
        return invalid_argument(fmt::format("{} must be {}, not '{}'", label, type_words(s.type), *t));
      }
      [[fallthrough]];
    case SettingType::kWhole:
      if (!std::holds_alternative<int64_t>(value)) return wrong();
      return value;
    case SettingType::kTextList:
      if (const std::string* one = std::get_if<std::string>(&value)) {
        return SettingValue(std::vector<std::string>{*one});
      }
      if (!std::holds_alternative<std::vector<std::string>>(value)) return wrong();
      return value;
  }
  return wrong();
}

std::string flag_of(const Setting& s) {
  if (!s.cli_flag.empty()) return std::string(s.cli_flag);
  std::string flag = "--" + std::string(s.name);
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

Status check_scope(const RunOptions& options, SettingScope widest) {
  for (const Setting& s : kSettings) {
    if (!takes_setting(widest, s)) continue;
    INFERCOST_RETURN_IF_ERROR(s.check(options, setting_ref(s.name)));
  }
  static const RunOptions kDefaults;
  for (const Setting& s : kSettings) {
    if (!takes_setting(widest, s) || takes_setting(widest, s, options.task)) continue;
    if (s.get(options) == s.get(kDefaults)) continue;
    const bool embeds = *s.task == Task::kEmbed;
    return invalid_argument(fmt::format("{} applies to {} only, not to {}", setting_ref(s.name),
                                        embeds ? "embeddings" : "classification",
                                        embeds ? "classification" : "embeddings"));
  }
  return Status();
}

}  // namespace

bool takes_setting(SettingScope widest, const Setting& setting, std::optional<Task> task) {
  if (task && setting.task && *setting.task != *task) return false;
  return static_cast<int>(setting.scope) <= static_cast<int>(widest);
}

std::span<const Setting> run_settings() {
  return kSettings;
}

const SettingTypeNames& setting_type_names(SettingType type) {
  static constexpr SettingTypeNames kNames[] = {
      {"TEXT", "a str", "a string"},                                 // kText
      {"INT", "an int", "a whole number"},                           // kWhole
      {"FLOAT", "a number", "a number"},                             // kNumber
      {"", "a bool", "true or false"},                               // kSwitch
      {"INT|auto", "an int or 'auto'", "a whole number or 'auto'"},  // kWholeOrAuto
      {"FLOAT", "a number", "a number"},                             // kOptionalNumber
      {"FILE", "a list of str", "strings"},                          // kTextList
      {"", "a bool or None", "true or false"},                       // kOptionalSwitch
      {"TEXT", "a str or None", "a string"},                         // kOptionalText
  };
  const size_t i = static_cast<size_t>(type);
  INFERCOST_CHECK(i < std::size(kNames));
  return kNames[std::min(i, std::size(kNames) - 1)];
}

const Setting* find_setting(std::string_view name) {
  for (const Setting& s : kSettings) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string setting_label(const Setting& setting, Spelling spelling) {
  return spelling == Spelling::kFlag ? flag_of(setting) : std::string(setting.name);
}

std::string setting_label(std::string_view name, Spelling spelling) {
  const Setting* s = find_setting(name);
  INFERCOST_CHECK(s != nullptr);
  return setting_label(*s, spelling);
}

std::string setting_example(std::string_view name, std::string_view value, Spelling spelling) {
  if (spelling == Spelling::kFlag) return fmt::format("{} {}", setting_label(name, spelling), value);
  return fmt::format("{}='{}'", setting_label(name, spelling), value);
}

namespace {

// RunOptions members the front doors take as arguments of their own, not
// from the table (the CLI's --output, --metrics), that errors also name.
constexpr std::pair<std::string_view, std::string_view> kArguments[] = {
    {"output", "--output"},
    {"metrics_path", "--metrics"},
    {"model_dir", "--model"},
};

std::optional<std::string> argument_label(std::string_view name, Spelling spelling) {
  for (const auto& [member, flag] : kArguments) {
    if (member == name) return std::string(spelling == Spelling::kFlag ? flag : member);
  }
  return std::nullopt;
}

}  // namespace

std::string setting_ref(std::string_view name) {
  INFERCOST_CHECK(find_setting(name) != nullptr || argument_label(name, Spelling::kName));
  return fmt::format("{{{}}}", name);
}

std::string setting_ref(std::string_view name, std::string_view value) {
  INFERCOST_CHECK(find_setting(name) != nullptr);
  return fmt::format("{{{}={}}}", name, value);
}

namespace {

// The engine's defaults a help text names as "{=name}" (batching.h).
std::optional<std::string> help_constant(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kConstants[] = {
      {"=tokens_batch_size", kDefaultTokensBatchSize},
      {"=seed_rows_per_thread", kSeedRowsPerThread},
      {"=max_threads", kMaxThreads},
  };
  for (const auto& [key, value] : kConstants) {
    if (key == name) return std::to_string(value);
  }
  return std::nullopt;
}

// What "{inside}" stands for, spelled: a setting ("name"), a setting with a
// value ("name=value"), a help text's constant ("=name"); nullopt: none.
std::optional<std::string> spelled(std::string_view inside, Spelling spelling) {
  if (std::optional<std::string> constant = help_constant(inside)) return constant;
  const size_t eq = inside.find('=');
  const Setting* named = find_setting(inside.substr(0, eq));
  if (named == nullptr) return eq == std::string_view::npos ? argument_label(inside, spelling) : std::nullopt;
  if (eq == std::string_view::npos) return setting_label(*named, spelling);
  return setting_example(named->name, inside.substr(eq + 1), spelling);
}

}  // namespace

std::string spell_settings(std::string_view text, Spelling spelling) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find('{', i);
    const size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::optional<std::string> word = spelled(text.substr(open + 1, close - open - 1), spelling);
    out += text.substr(i, open - i);
    if (word) {
      out += *word;
      i = close + 1;
    } else {
      out += '{';
      i = open + 1;
    }
  }
  out += text.substr(i);
  return out;
}

Status spell_settings(const Status& status, Spelling spelling) {
  if (status.ok()) return status;
  return Status(status.code(), spell_settings(status.message(), spelling));
}

std::string setting_help(const Setting& setting, Spelling spelling) {
  const bool flags = spelling == Spelling::kFlag && !setting.cli_help.empty();
  return spell_settings(flags ? setting.cli_help : setting.help, spelling);
}

Result<SettingValue> parse_setting_text(const Setting& setting, const std::string& text) {
  const std::string flag = flag_of(setting);
  auto bad = [&] {
    return invalid_argument(
        fmt::format("{} '{}': expected {}", flag, text,
                    setting.expected.empty() ? type_words(setting.type) : setting.expected));
  };
  switch (setting.type) {
    case SettingType::kText:
    case SettingType::kOptionalText: return SettingValue(text);
    case SettingType::kTextList: return SettingValue(std::vector<std::string>{text});
    case SettingType::kSwitch:
    case SettingType::kOptionalSwitch:
      if (text == "true" || text == "false") return SettingValue(text == "true");
      return bad();
    case SettingType::kWholeOrAuto:
      if (text == "auto") return SettingValue(text);
      [[fallthrough]];
    case SettingType::kWhole: {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return bad();
      return SettingValue(n);
    }
    case SettingType::kNumber:
    case SettingType::kOptionalNumber: {
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) return bad();
      return SettingValue(d);
    }
  }
  return bad();
}

Status apply_setting(RunOptions& options, const Setting& setting, const SettingValue& value,
                     Spelling spelling) {
  const std::string label = setting_label(setting, spelling);
  INFERCOST_ASSIGN_OR_RETURN(SettingValue typed, normalize(setting, value, label));
  return setting.set(options, typed, label);
}

Status check_settings(const ModelOptions& options) {
  RunOptions run;
  static_cast<ModelOptions&>(run) = options;
  return check_scope(run, SettingScope::kModel);
}

Status check_settings(const RunOptions& options, SettingScope widest) {
  return check_scope(options, widest);
}

std::vector<std::pair<std::string, std::string>> output_settings(const RunOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Setting& s : kSettings) {
    if (!s.changes_output || !takes_setting(SettingScope::kRun, s, options.task)) continue;
    out.emplace_back(flag_of(s), s.identity ? s.identity(options) : s.get(options));
  }
  return out;
}

}  // namespace infercost::engine
