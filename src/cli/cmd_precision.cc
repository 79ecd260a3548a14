// `infercost precision-check`: what a reduced precision does to a model's
// labels and outputs on the user's own rows, against fp32 on the same rows
// (run/precision_check.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/cpu_info.h"
#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "core/device.h"
#include "io/whole_file.h"
#include "run/precision_check.h"
#include "run/runner.h"

namespace infercost::cli {
namespace {

struct PrecisionFlags {
  RunOptions options;
  SettingFlags settings;
  std::vector<std::string> precisions;
  int64_t rows = 2000;
  int show = 10;
  std::string json_path;
};

// The reduced precisions the device runs: bf16 and fp16 on a GPU; int8 on
// the CPU, and bf16 where the CPU has native bf16.
std::vector<std::string> default_precisions(const std::string& device) {
  if (is_gpu_device(device)) return {"bf16", "fp16"};
  std::vector<std::string> out = {"int8"};
  if (backend::cpu_info().native_bf16()) out.push_back("bf16");
  return out;
}

std::string shortened(const std::string& text, size_t most = 80) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() <= most) return out;
  size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
  return out.substr(0, cut) + "...";
}

std::string scores_text(const std::vector<std::string>& labels, int label, const std::vector<float>& scores) {
  return fmt::format("{} {:.4f}", labels[static_cast<size_t>(label)], scores[static_cast<size_t>(label)]);
}

void print_text(const run::PrecisionCheck& check, const run::SampledRows& rows, int show) {
  std::printf("precision-check: %lld rows (%lld null), device %s, %d threads, max length %d, head %s\n",
              static_cast<long long>(check.rows), static_cast<long long>(check.rows_null),
              check.device.c_str(), check.threads, check.max_length, check.head_function.c_str());
  std::printf("  %-6s  the reference: %.2f s\n", check.reference.c_str(), check.reference_seconds);
  for (const run::PrecisionComparison& c : check.comparisons) {
    const std::string as = c.resolved == c.precision ? "" : " (ran as " + c.resolved + ")";
    std::printf(
        "  %-6s  label agreement %.2f %% (%lld of %lld rows; %zu flipped); outputs moved %.4f on average, "
        "%.4f at most; %.2f s (%.2fx fp32)%s\n",
        c.precision.c_str(), 100.0 * c.agreement(), static_cast<long long>(c.same_label),
        static_cast<long long>(c.rows), c.flips.size(), c.mean_abs_diff, c.max_abs_diff, c.seconds,
        c.seconds > 0 ? check.reference_seconds / c.seconds : 0.0, as.c_str());
  }
  for (const run::PrecisionComparison& c : check.comparisons) {
    if (c.flips.empty() || show <= 0) continue;
    std::vector<const run::PrecisionFlip*> flips;
    for (const run::PrecisionFlip& f : c.flips) flips.push_back(&f);
    // The most surprising first: those fp32 was surest of.
    std::stable_sort(flips.begin(), flips.end(),
                     [](const auto* a, const auto* b) { return a->reference_margin > b->reference_margin; });
    std::printf("  %s flipped %zu rows; the %zu fp32 was surest of:\n", c.precision.c_str(), flips.size(),
                std::min(flips.size(), static_cast<size_t>(show)));
    for (size_t i = 0; i < flips.size() && i < static_cast<size_t>(show); ++i) {
      const run::PrecisionFlip& f = *flips[i];
      const size_t row = static_cast<size_t>(f.row);
      std::printf("    %s  fp32 %s (margin %.4f) -> %s  \"%s\"\n", rows.where[row].c_str(),
                  scores_text(check.labels, f.reference_label, f.reference).c_str(), f.reference_margin,
                  scores_text(check.labels, f.label, f.scores).c_str(), shortened(rows.texts[row]).c_str());
    }
  }
}

nlohmann::ordered_json to_json(const run::PrecisionCheck& check, const run::SampledRows& rows) {
  nlohmann::ordered_json out = {{"rows", check.rows},
                                {"rows_null", check.rows_null},
                                {"rows_skipped", rows.rows_skipped},
                                {"device", check.device},
                                {"threads", check.threads},
                                {"max_length", check.max_length},
                                {"head_function", check.head_function},
                                {"labels", check.labels},
                                {"reference", check.reference},
                                {"reference_seconds", check.reference_seconds}};
  nlohmann::ordered_json comparisons = nlohmann::ordered_json::array();
  for (const run::PrecisionComparison& c : check.comparisons) {
    nlohmann::ordered_json flips = nlohmann::ordered_json::array();
    for (const run::PrecisionFlip& f : c.flips) {
      const size_t row = static_cast<size_t>(f.row);
      flips.push_back({{"row", f.row},
                       {"where", rows.where[row]},
                       {"text", rows.texts[row]},
                       {"reference_label", check.labels[static_cast<size_t>(f.reference_label)]},
                       {"label", check.labels[static_cast<size_t>(f.label)]},
                       {"reference_margin", f.reference_margin},
                       {"reference", f.reference},
                       {"scores", f.scores}});
    }
    comparisons.push_back({{"precision", c.precision},
                           {"resolved", c.resolved},
                           {"rows", c.rows},
                           {"same_label", c.same_label},
                           {"agreement", c.agreement()},
                           {"mean_abs_diff", c.mean_abs_diff},
                           {"max_abs_diff", c.max_abs_diff},
                           {"max_diff_row", c.max_diff_row},
                           {"seconds", c.seconds},
                           {"flips", std::move(flips)}});
  }
  out["comparisons"] = std::move(comparisons);
  return out;
}

void execute_precision_check(PrecisionFlags& flags) {
  RunOptions& options = flags.options;
  flags.settings.apply(options);
  // Checked once before anything is read; each precision's classifier then
  // checks its own (Encoder::open).
  if (Status s = engine::check_settings(options); !s.ok()) fail(s);
  if (flags.rows < 1) fail(invalid_argument("--rows must be at least 1"));
  if (flags.precisions.empty()) flags.precisions = default_precisions(options.device);
  Result<run::SampledRows> rows = run::read_first_rows(options, flags.rows);
  if (!rows.ok()) fail(rows.status());
  if (rows->texts.empty()) fail(invalid_argument("the inputs hold no rows"));
  std::vector<std::string_view> texts(rows->texts.begin(), rows->texts.end());
  Result<run::PrecisionCheck> check =
      run::check_precisions(options.model_dir, options, texts, rows->is_null, flags.precisions);
  if (!check.ok()) fail(check.status());
  if (!flags.json_path.empty()) {
    const std::string json =
        to_json(*check, *rows).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    if (Status s = io::write_whole_file(flags.json_path, json); !s.ok()) fail(s);
  }
  print_text(*check, *rows, flags.show);
}

}  // namespace

void define_precision_check(CLI::App* cmd) {
  auto flags = bind_flags<PrecisionFlags>(*cmd, execute_precision_check);
  RunOptions& o = flags->options;
  cmd->add_option("inputs", o.inputs, "Input files, folders or globs, read as `infercost run` reads them")
      ->required();
  cmd->add_option("--model", o.model_dir, "Model directory")->required();
  cmd->add_option("--precision", flags->precisions,
                  "Precisions to compare with fp32, comma-separated (default: those the device runs: int8, "
                  "and bf16 where the CPU has native bf16; bf16 and fp16 on a GPU)")
      ->delimiter(',');
  cmd->add_option("--rows", flags->rows, "Rows to compare: the first N of the inputs")->capture_default_str();
  cmd->add_option("--show", flags->show, "Flipped rows to print per precision (the JSON has them all)")
      ->capture_default_str();
  cmd->add_option("--json", flags->json_path,
                  "Write the whole comparison, every flipped row included, as JSON");
  flags->settings.add(
      cmd, {"column", "input_format", "device", "threads", "tokenizer_threads", "max_length", "batching",
            "batch_size", "max_batch_tokens", "streams_per_device", "function", "on_error"});
}

}  // namespace infercost::cli
