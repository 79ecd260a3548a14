#include "plan/print.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/numbers.h"
#include "engine/run_metrics.h"
#include "report/format.h"

namespace infercost::plan {

namespace {

using Json = nlohmann::ordered_json;

std::string grouped(int64_t n) {
  return group_thousands(n);
}

std::string human_bytes(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} MB", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} kB", v / 1e3);
  return fmt::format("{} B", b);
}

// The report's formats, so that plan and report print the same figure alike.
using report::duration;

std::string money(double usd) {
  return report::usd(usd);
}

// A priced prediction whose hourly price is not the plain on-demand one.
bool special_terms(const Prediction& p) {
  return p.priced && p.record_terms && !cost::is_plain_on_demand(p.terms);
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100.0 * fraction);
}

std::string bucket_label(const std::vector<int>& edges, size_t i) {
  if (i + 1 < edges.size()) return fmt::format("{}-{}", edges[i], edges[i + 1] - 1);
  return fmt::format("{}+", edges[i]);
}

std::string record_line(const RecordUse& r) {
  const record::Setup& c = r.setup;
  std::string s = fmt::format("{}: {}, {} {} {} batch {}", r.origin, c.machine.empty() ? "?" : c.machine,
                              c.device.empty() ? "cpu" : c.device, c.precision, c.batching, r.batch_size);
  if (c.batching == "tokens" && c.max_batch_tokens > 0)
    s += fmt::format(" (<= {} tokens)", c.max_batch_tokens);
  if (c.threads > 0) s += fmt::format(", {} threads", c.threads);
  if (!r.sweep_id.empty()) s += fmt::format("; sweep {} point {}/{}", r.sweep_id, r.point, r.points);
  if (!r.started_at.empty()) s += ", started " + r.started_at;
  return s;
}

std::string rate_line(const RecordUse& r) {
  return fmt::format(
      "{} ({}): {} rows in {} median wall = {:.4g} FLOPs / {:.4g} s = {:.4g} FLOP/s; FLOPs from {}",
      r.setup.model.empty() ? "model" : r.setup.model, r.shape.describe(), grouped(r.rows),
      duration(r.rate.seconds), r.rate.flops, r.rate.seconds, r.rate.flops_per_second, r.rate.method);
}

// Adds one line to the text being printed.
using Line = std::function<void(const std::string&)>;

// The model, the inputs and each file's figures.
void text_inputs(const PlanResult& plan, const Line& line) {
  const ScanResult& s = plan.scan;
  const bool embeds = plan.embedding_dimensions > 0;
  line(fmt::format("infercost plan: a dry run (inputs tokenized, not {})",
                   embeds ? "embedded" : "classified"));
  line(fmt::format("model   {}{}: {}; max length {}", plan.model_name.empty() ? "?" : plan.model_name,
                   plan.model_synthetic ? " (synthetic: random weights, real speed)" : "",
                   plan.model.describe(), s.max_length));
  line(
      fmt::format("inputs  {} file(s), {} rows to {} ({} null, {} skipped), {} tokens, {}; scanned in {} "
                  "with {} tokenizer thread(s)",
                  s.files.size(), grouped(s.rows), embeds ? "embed" : "classify", grouped(s.rows_null),
                  grouped(s.rows_skipped), grouped(s.tokens), human_bytes(s.bytes), duration(s.seconds),
                  s.tokenizer_threads));
  if (!s.first_skip_reason.empty()) line("        first skipped row: " + s.first_skip_reason);
  if (plan.embedding_dimensions > 0) {
    line(fmt::format("output  {} vectors of {} float32: {} before compression ({} bytes a vector)",
                     grouped(plan.corpus_rows), plan.embedding_dimensions,
                     human_bytes(static_cast<uint64_t>(plan.vector_bytes)),
                     plan.embedding_dimensions * sizeof(float)));
  }
  line("");

  size_t name_width = 4;
  for (const FileScan& f : s.files) name_width = std::max(name_width, f.path.size());
  name_width = std::min<size_t>(name_width, 60);
  line(fmt::format("{:<{}}  {:<7} {:>12} {:>8} {:>8} {:>14} {:>8} {:>10}", "file", name_width, "format",
                   "rows", "null", "skipped", "tokens", "longest", "bytes"));
  for (const FileScan& f : s.files) {
    line(fmt::format("{:<{}}  {:<7} {:>12} {:>8} {:>8} {:>14} {:>8} {:>10}", f.path, name_width, f.format,
                     grouped(f.rows), grouped(f.rows_null), grouped(f.rows_skipped), grouped(f.tokens),
                     f.longest, human_bytes(f.bytes)));
  }
  line("");
}

// The token lengths of the scanned rows: their figures and histogram.
void text_lengths(const ScanResult& s, const Line& line) {
  if (s.rows == 0) return;
  line(fmt::format(
      "Token lengths ([CLS] and [SEP] included): mean {:.1f}, median {}, p90 {}, p99 {}, longest {}; "
      "{} row(s) reach --max-length {}",
      s.mean_length(), s.length_percentile(0.5), s.length_percentile(0.9), s.length_percentile(0.99),
      s.longest(), grouped(s.rows_at_max_length), s.max_length));
  const std::vector<int64_t> bins = s.binned_lengths();
  int64_t biggest = 1;
  for (int64_t b : bins) biggest = std::max(biggest, b);
  line(fmt::format("  {:>8} {:>12} {:>7}", "length", "rows", "share"));
  size_t shown = bins.size();  // up to the last bucket holding rows
  while (shown > 1 && bins[shown - 1] == 0) --shown;
  for (size_t i = 0; i < shown; ++i) {
    const int bar = static_cast<int>(std::lround(40.0 * static_cast<double>(bins[i]) / double(biggest)));
    line(fmt::format("  {:>8} {:>12} {:>7}  {}", bucket_label(length_histogram_edges(), i), grouped(bins[i]),
                     percent(double(bins[i]) / double(s.rows)), std::string(static_cast<size_t>(bar), '#')));
  }
  line("");
}

// Each batching policy's padding and the work it costs.
void text_padding(const PlanResult& plan, const Line& line) {
  const ScanResult& s = plan.scan;
  line("Padding per batching policy (exact, from the scanned lengths and the run's batching rules)");
  line(fmt::format("  {:<7} {:>10}  {:<24} {:>14} {:>14} {:>15} {:>11} {:>10}", "policy", "batches",
                   "batch limits", "real tokens", "padded tokens", "computed (CPU)", "padding eff",
                   "batch fill"));
  for (const PolicyPadding* p : {&s.seed_padding, &s.tokens_padding}) {
    const std::string limits =
        p->batching == "seed"
            ? fmt::format("{} rows", grouped(p->batch_size))
            : fmt::format("{} rows, {} tokens", grouped(p->batch_size), grouped(p->max_batch_tokens));
    line(fmt::format("  {:<7} {:>10}  {:<24} {:>14} {:>14} {:>15} {:>11} {:>10}", p->batching,
                     grouped(p->batches), limits, grouped(p->tokens), grouped(p->padded_tokens),
                     grouped(p->computed_tokens), percent(p->padding_efficiency()),
                     percent(p->batch_fill())));
  }
  line(
      "  seed: batches in input order, every row padded to its file's longest row and the padding computed "
      "(the "
      "study's method).");
  line(fmt::format(
      "  tokens: windows of {} rows sorted by length and packed; the CPU computes real tokens only "
      "(padded tokens: what a device that computes padding runs).",
      grouped(s.tokens_padding.window_rows)));
  line(fmt::format(
      "  work (FLOPs per row of L tokens = {}): seed {:.4g}, tokens {:.4g} (real lengths) or {:.4g} "
      "(batch-padded)",
      kWorkFormula, plan.seed_flops, plan.tokens_flops, plan.tokens_padded_flops));
  line("");
}

// The predictions, cheapest first.
void text_prediction_table(const PlanResult& plan, const Line& line) {
  const bool these = plan.corpus_rows == plan.scan.rows;
  line(fmt::format("Predictions for {} rows ({}), cheapest first", grouped(plan.corpus_rows),
                   these ? "these inputs" : "--corpus-rows, at the scanned mean"));
  bool any_special = false;
  for (const Prediction& p : plan.predictions) any_special = any_special || special_terms(p);
  line(
      "  USD/hour: the list's on-demand price of one machine (the record's, for an instance no loaded list "
      "holds)");
  if (any_special) {
    line(
        "  *: under a record's own spot discount, surcharge or machines, kept for the instance and list it "
        "was "
        "priced for (see \"How\")");
  }
  size_t target_width = 8;
  for (const Prediction& p : plan.predictions) target_width = std::max(target_width, p.target.size());
  line(fmt::format("  {:>3}  {:<{}}  {:<12} {:>9}  {:<8} {:<9} {:>10} {:>11} {:>11}  {:<9}  {}", "#",
                   "instance", target_width, "list", "USD/hour", "batching", "precision", "time", "cost",
                   plan.embedding_dimensions > 0 ? "$/M vectors" : "$/M rows", "basis", "record"));
  for (size_t i = 0; i < plan.predictions.size(); ++i) {
    const Prediction& p = plan.predictions[i];
    line(fmt::format("  {:>3}  {:<{}}  {:<12} {:>9}  {:<8} {:<9} {:>10} {:>11} {:>11}  {:<9}  [{}]", i + 1,
                     p.target, target_width, p.priced ? p.price_list : "-",
                     p.priced ? fmt::format("{:.4f}{}", p.usd_per_hour, special_terms(p) ? "*" : "") : "-",
                     p.batching, p.precision, duration(p.seconds), p.priced ? money(p.usd) : "-",
                     p.priced ? money(p.usd_per_million_rows) : "-", p.measured ? "measured" : "projected",
                     p.record + 1));
  }
  line("");
}

// How each prediction was made, and the records it used.
void text_prediction_basis(const PlanResult& plan, const Line& line) {
  line("How each prediction was made");
  for (size_t i = 0; i < plan.predictions.size(); ++i) {
    const Prediction& p = plan.predictions[i];
    std::string text = fmt::format("  {:>3}  time {}", i + 1, p.how);
    if (!p.measured) text += "; work: " + p.flops_how;
    if (p.priced) text += "; price: " + p.price_how;
    line(text);
  }
  line("");
  line("Records used");
  for (size_t i = 0; i < plan.records.size(); ++i) {
    line(fmt::format("  [{}] {}", i + 1, record_line(plan.records[i])));
    line("      " + rate_line(plan.records[i]));
  }
  line("");
}

// The instances no record was measured on, and what each must do to beat
// the cheapest prediction.
void text_unmeasured_table(const PlanResult& plan, const Line& line) {
  bool compare = false;
  for (const Unmeasured& u : plan.unmeasured) compare = compare || u.has_break_even;
  const Prediction* cheapest = plan.has_cheapest ? &plan.predictions[plan.cheapest] : nullptr;
  const bool special = cheapest && compare && !cost::is_plain_on_demand(cheapest->terms);
  if (compare && cheapest) {
    line(
        fmt::format("Not measured: no records on these instances (what each must do to beat the cheapest "
                    "prediction, #{} "
                    "at {}; both priced {})",
                    plan.cheapest + 1, money(cheapest->usd), terms_text(cheapest->terms)));
  } else {
    line("Not measured: no records on these instances");
  }
  size_t width = 8;
  for (const Unmeasured& u : plan.unmeasured) width = std::max(width, u.instance.size());
  std::string header = fmt::format("  {:<{}}  {:<12} {:>9}  {:<14} {:>6}", "instance", width, "list",
                                   "USD/hour", "GPUs", "vCPUs");
  if (special) header += fmt::format("  {:>14}", "on those terms");
  if (compare) header += fmt::format("  {:>18} {:>18}", "must finish within", "break-even rows/s");
  line(header);
  for (const Unmeasured& u : plan.unmeasured) {
    std::string row = fmt::format("  {:<{}}  {:<12} {:>9.4f}  {:<14} {:>6}", u.instance, width, u.price_list,
                                  u.usd_per_hour, u.gpus > 0 ? fmt::format("{} x {}", u.gpus, u.gpu) : "-",
                                  u.vcpus > 0 ? std::to_string(u.vcpus) : "?");
    if (special) {
      row +=
          fmt::format("  {:>14}", u.has_break_even ? fmt::format("{:.4f}", u.break_even_usd_per_hour) : "-");
    }
    if (compare) {
      row += fmt::format("  {:>18} {:>18}", u.has_break_even ? duration(u.deadline_seconds) : "-",
                         u.has_break_even ? fmt::format("{:.1f}", u.break_even_rows_per_second) : "-");
    }
    line(row);
  }
}

// How to measure an unmeasured instance.
void text_unmeasured_command(const PlanResult& plan, const Line& line) {
  line("  To measure one, run on it (the JSON output has each instance's command):");
  line("    " + plan.bench_template);
  line("  and pass its results to this command with --records NAME.jsonl.");
  bool gpu = false;
  std::string gpu_note;
  for (const Unmeasured& u : plan.unmeasured) {
    if (u.gpus <= 0) continue;
    gpu = true;
    if (gpu_note.empty()) gpu_note = u.bench_note;
  }
  if (gpu) {
    line("  On a GPU instance add --device cuda." +
         (gpu_note.empty() ? std::string() : " Note: " + gpu_note + "."));
  }
  line("");
}

// `value` where it is known, else null.
Json known_or_null(bool known, Json value) {
  return known ? std::move(value) : Json(nullptr);
}

Json scan_json(const ScanResult& s) {
  Json files = Json::array();
  for (const FileScan& f : s.files) {
    files.push_back({{"path", f.path},
                     {"format", f.format},
                     {"rows", f.rows},
                     {"rows_null", f.rows_null},
                     {"rows_skipped", f.rows_skipped},
                     {"tokens", f.tokens},
                     {"longest", f.longest},
                     {"bytes", f.bytes}});
  }
  Json lengths = Json::array(), counts = Json::array();
  for (size_t L = 0; L < s.length_counts.size(); ++L) {
    if (s.length_counts[L] == 0) continue;
    lengths.push_back(L);
    counts.push_back(s.length_counts[L]);
  }
  return {{"files", files},
          {"rows", s.rows},
          {"rows_null", s.rows_null},
          {"rows_skipped", s.rows_skipped},
          {"first_skip_reason", s.first_skip_reason},
          {"tokens", s.tokens},
          {"bytes", s.bytes},
          {"content_sha256", s.content_sha256},
          {"max_length", s.max_length},
          {"rows_at_max_length", s.rows_at_max_length},
          {"longest", s.longest()},
          {"mean_length", s.mean_length()},
          {"median_length", s.length_percentile(0.5)},
          {"p90_length", s.length_percentile(0.9)},
          {"p99_length", s.length_percentile(0.99)},
          {"length_histogram", {{"lengths", lengths}, {"counts", counts}}},
          {"length_edges", length_histogram_edges()},
          {"length_bins", s.binned_lengths()},
          {"threads", s.threads},
          {"tokenizer_threads", s.tokenizer_threads},
          {"seconds", s.seconds}};
}

Json padding_json(const PlanResult& plan) {
  const ScanResult& s = plan.scan;
  Json padding = Json::array();
  for (const PolicyPadding* p : {&s.seed_padding, &s.tokens_padding}) {
    Json e = {{"batching", p->batching},
              {"batch_size", p->batch_size},
              {"max_batch_tokens", p->max_batch_tokens},
              {"window_rows", p->window_rows},
              {"batches", p->batches},
              {"rows", p->rows},
              {"tokens", p->tokens},
              {"padded_tokens", p->padded_tokens},
              {"computed_tokens", p->computed_tokens},
              {"padding_efficiency", p->padding_efficiency()},
              {"batch_fill", p->batch_fill()}};
    if (p->batching == "seed") {
      e["flops"] = plan.seed_flops;
    } else {
      e["flops"] = plan.tokens_flops;
      e["flops_padded"] = plan.tokens_padded_flops;
    }
    padding.push_back(e);
  }
  return padding;
}

Json records_json(const PlanResult& plan) {
  Json records = Json::array();
  for (size_t k = 0; k < plan.records.size(); ++k) {
    const RecordUse& r = plan.records[k];
    records.push_back({{"number", k + 1},
                       {"origin", r.origin},
                       {"machine", r.setup.machine},
                       {"sweep_id", r.sweep_id},
                       {"point", r.point},
                       {"points", r.points},
                       {"started_at", r.started_at},
                       {"device", r.setup.device},
                       {"precision", r.setup.precision},
                       {"batching", r.setup.batching},
                       {"batch_size", r.batch_size},
                       {"max_batch_tokens", r.setup.max_batch_tokens},
                       {"threads", r.setup.threads},
                       {"model",
                        {{"name", r.setup.model},
                         {"layers", r.shape.layers},
                         {"hidden", r.shape.hidden},
                         {"intermediate", r.shape.intermediate}}},
                       {"rows", r.rows},
                       {"tokens", r.tokens},
                       {"computed_tokens", r.computed_tokens},
                       {"flops", r.rate.flops},
                       {"wall_seconds_median", r.rate.seconds},
                       {"flops_per_second", r.rate.flops_per_second},
                       {"flops_method", r.rate.method},
                       {"skips_padding", r.skips_padding},
                       {"skips_padding_why", r.skips_padding_why}});
  }
  return records;
}

Json prediction_json(const Prediction& p, size_t k) {
  Json e = {{"number", k + 1},
            {"target", p.target},
            {"instance", p.instance},
            {"price_list", p.price_list},
            {"priced", p.priced},
            {"batching", p.batching},
            {"precision", p.precision},
            {"rows", p.rows},
            {"flops", p.flops},
            {"flops_how", p.flops_how},
            {"seconds", p.seconds},
            {"basis", p.measured ? "measured" : "projected"},
            {"how", p.how},
            {"model_differs", p.model_differs},
            {"batching_differs", p.batching_differs},
            {"record", p.record + 1}};
  e["usd_per_hour"] = known_or_null(p.priced, p.usd_per_hour);
  e["pricing"] = known_or_null(p.priced, {{"terms", p.record_terms ? "record" : "on-demand"},
                                          {"on_demand_usd_per_hour", p.on_demand_usd_per_hour},
                                          {"spot_discount", p.terms.spot_discount},
                                          {"platform_usd_per_hour", p.terms.platform_usd_per_hour},
                                          {"machines", p.terms.machines},
                                          {"text", terms_text(p.terms)}});
  if (p.priced) e["price_how"] = p.price_how;
  e["usd"] = known_or_null(p.priced, p.usd);
  e["usd_per_million_rows"] = known_or_null(p.priced, p.usd_per_million_rows);
  return e;
}

Json unmeasured_json(const Unmeasured& u) {
  Json e = {{"instance", u.instance},
            {"price_list", u.price_list},
            {"usd_per_hour", u.usd_per_hour},
            {"gpus", u.gpus},
            {"gpu", u.gpu},
            {"vcpus", u.vcpus},
            {"memory", u.memory}};
  e["break_even_usd_per_hour"] = known_or_null(u.has_break_even, u.break_even_usd_per_hour);
  e["deadline_seconds"] = known_or_null(u.has_break_even, u.deadline_seconds);
  e["break_even_rows_per_second"] = known_or_null(u.has_break_even, u.break_even_rows_per_second);
  e["bench_command"] = u.bench_command;
  e["bench_note"] = u.bench_note;
  return e;
}

}  // namespace

std::string print_text(const PlanResult& plan) {
  std::string o;
  const Line line = [&o](const std::string& text) { o += text + "\n"; };
  text_inputs(plan, line);
  text_lengths(plan.scan, line);
  text_padding(plan, line);
  if (!plan.predictions.empty()) {
    text_prediction_table(plan, line);
    text_prediction_basis(plan, line);
  }
  if (!plan.unmeasured.empty()) {
    text_unmeasured_table(plan, line);
    text_unmeasured_command(plan, line);
  }
  if (!plan.notes.empty()) {
    line("Notes");
    for (const std::string& n : plan.notes) line("  - " + n);
  }
  return o;
}

std::string print_json(const PlanResult& plan) {
  Json j;
  j["schema"] = kPlanSchema;
  j["model"] = {{"name", plan.model_name},
                {"synthetic", plan.model_synthetic},
                {"layers", plan.model.layers},
                {"hidden", plan.model.hidden},
                {"intermediate", plan.model.intermediate},
                {"shape", plan.model.describe()}};
  if (plan.model.glu) j["model"]["glu"] = true;
  if (!plan.model.windows.empty()) j["model"]["attention_windows"] = plan.model.windows;
  if (plan.model.relative_terms > 0) j["model"]["relative_terms"] = plan.model.relative_terms;
  j["scan"] = scan_json(plan.scan);
  j["padding"] = padding_json(plan);
  j["work_model"] = {{"flops_per_row", kWorkFormula},
                     {"note",
                      "L tokens, h hidden, f FFN size; multiply-adds count 2; embeddings, LayerNorm, "
                      "softmax, GELU and the classifier head left out"}};
  j["price_list"] = plan.price_list;
  j["task"] = plan.embedding_dimensions > 0 ? "embed" : "classify";
  if (plan.embedding_dimensions > 0) {
    j["embedding"] = {{"dimensions", plan.embedding_dimensions}, {"vector_bytes", plan.vector_bytes}};
  }
  j["corpus_rows"] = plan.corpus_rows;
  j["scale"] = plan.scale;
  j["records"] = records_json(plan);
  Json predictions = Json::array();
  for (size_t k = 0; k < plan.predictions.size(); ++k)
    predictions.push_back(prediction_json(plan.predictions[k], k));
  j["predictions"] = predictions;
  // The prediction the unmeasured instances' break-even figures are against.
  if (plan.has_cheapest) {
    const Prediction& c = plan.predictions[plan.cheapest];
    j["break_even"] = {
        {"prediction", plan.cheapest + 1},        {"usd", c.usd},
        {"spot_discount", c.terms.spot_discount}, {"platform_usd_per_hour", c.terms.platform_usd_per_hour},
        {"machines", c.terms.machines},           {"terms", terms_text(c.terms)}};
  } else {
    j["break_even"] = nullptr;
  }
  Json unmeasured = Json::array();
  for (const Unmeasured& u : plan.unmeasured) unmeasured.push_back(unmeasured_json(u));
  j["unmeasured"] = unmeasured;
  j["bench_command_template"] = plan.bench_template;
  j["records_read"] = plan.records_read;
  j["notes"] = plan.notes;
  return j.dump(2) + "\n";
}

}  // namespace infercost::plan
