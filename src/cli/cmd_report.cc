// `infercost report`: benchmark records -> one HTML page, a Markdown file and
// SVG charts answering "which machine, which batch size, what does it cost".
#include <fmt/format.h>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cost/prices.h"
#include "record/record.h"
#include "report/analysis.h"
#include "report/report.h"

namespace infercost::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> results;
  std::string out;
  std::string deadline;
  int64_t corpus_rows = 0;
  std::string title = "infercost benchmark report";
  std::vector<std::string> price_files;
  std::string price_list;
};

void execute_report(const ReportFlags& flags) {
  report::Options options;
  options.title = flags.title;
  options.corpus_rows = flags.corpus_rows;
  if (!flags.deadline.empty()) {
    Result<double> deadline = report::parse_duration(flags.deadline);
    if (!deadline.ok()) fail(deadline.status().with_context("--deadline"));
    options.deadline_seconds = *deadline;
    options.deadline_text = flags.deadline;
  }
  Result<std::vector<record::SourcedRecord>> records = record::load_sourced_records(flags.results);
  if (!records.ok()) fail(records.status());

  if (!flags.price_files.empty() || !flags.price_list.empty()) {
    Result<std::vector<cost::PriceList>> loaded = cost::price_lists_with(flags.price_files);
    if (!loaded.ok()) fail(loaded.status());
    // Without --price-list, cost::find_instance searches the user's lists
    // first, then the current built-in ones, then seed-2021.
    Status st = report::reprice(*records, *loaded, flags.price_list);
    if (!st.ok()) fail(st.with_context("re-pricing the records"));
    std::string from = flags.price_list.empty() ? "" : "price list " + flags.price_list;
    if (flags.price_list.empty()) {
      for (const std::string& f : flags.price_files) from += (from.empty() ? "" : ", ") + f;
      from += " (then the current built-in lists, then seed-2021, for instances not in it)";
    }
    options.pricing_note = fmt::format(
        "The records were re-priced by instance name from {}; each record's spot discount, platform "
        "surcharge and machine count kept.",
        from);
  }

  Result<report::ReportModel> model = report::build_model(*records, options);
  if (!model.ok()) fail(model.status());
  const report::Document doc = report::build_document(*model);
  Status written = report::write_report(doc, flags.out);
  if (!written.ok()) fail(written);

  for (const std::string& line : report::answer_paragraphs(*model)) fmt::print("{}\n", line);
  std::string charts;
  for (const report::Chart& c : doc.charts) charts += (charts.empty() ? "" : ", ") + c.file;
  fmt::print("\nwrote {0}/report.html, {0}/report.md and {1} charts ({2})\n", flags.out, doc.charts.size(),
             charts);
}

}  // namespace

void define_report(CLI::App* cmd) {
  auto flags = bind_flags<ReportFlags>(*cmd, execute_report);
  cmd->add_option("results", flags->results, "Benchmark records (JSON lines written by infercost bench)")
      ->required()
      ->type_name("RESULTS.jsonl");
  cmd->add_option("--out", flags->out,
                  "Folder for report.html, report.md and one .svg per chart (created if missing)")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--deadline", flags->deadline,
                  "Also answer: the cheapest configuration that classifies the corpus within this time "
                  "(e.g. 2h, 90m, 3600s, 1h30m)")
      ->type_name("DURATION");
  cmd->add_option("--corpus-rows", flags->corpus_rows,
                  "Project every time and cost to a corpus of this many rows (default: the largest data.rows "
                  "among the records)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  cmd->add_option("--title", flags->title, "Title of the report")->capture_default_str();
  cmd->add_option(
         "--prices", flags->price_files,
         "Re-price the records by instance name from this JSON price list (docs/cost.md); repeatable; "
         "searched before the built-in lists (the current ones, then seed-2021)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->type_name("FILE");
  cmd->add_option(
         "--price-list", flags->price_list,
         "Re-price the records from this price list only (e.g. seed-2021, or a --prices list's name)")
      ->type_name("NAME");
}

}  // namespace infercost::cli
