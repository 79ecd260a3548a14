// The Markdown report of the fixed records (tests/data_files/report/records.jsonl,
// made by tools/gen_report_fixture.py) compared byte for byte with the
// committed golden. After an intended change of the report, regenerate it:
//
//   INFERCOST_UPDATE_GOLDEN=1 build/tests/report/report_tests --gtest_filter='Golden.*'
//
// and review the diff of tests/data_files/report/report.md before committing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "check_helpers.h"
#include "report/analysis.h"
#include "report/format.h"
#include "report/report.h"
#include "test_utils.h"

namespace infercost::report {
namespace {

const std::string kDir = std::string(INFERCOST_TEST_DATA_DIR) + "/report";

// The options the golden was made with; the CLI test uses the same flags
// (--deadline 1m) from the data folder.
Document golden_document() {
  const std::string path = kDir + "/records.jsonl";
  auto loaded = record::load_sourced_records({path});
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (!loaded.ok()) return {};
  for (record::SourcedRecord& r : *loaded) r.origin = "records.jsonl" + r.origin.substr(path.size());
  Options options;
  options.deadline_seconds = 60;
  options.deadline_text = "1m";
  auto model = build_model(*loaded, options);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return model.ok() ? build_document(*model) : Document{};
}

TEST(Golden, MarkdownReportOfTheFixture) {
  const std::string md = render_markdown(golden_document());
  const std::string golden_path = kDir + "/report.md";
  const char* update = std::getenv("INFERCOST_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << md;
    GTEST_SKIP() << "rewrote " << golden_path << "; review its diff";
  }
  const std::string golden = testing::slurp(golden_path);
  ASSERT_FALSE(golden.empty()) << golden_path
                               << " is missing; run with INFERCOST_UPDATE_GOLDEN=1 to create it";
  if (md != golden) {
    // Point at the first difference instead of printing two long files.
    size_t i = 0;
    while (i < md.size() && i < golden.size() && md[i] == golden[i]) ++i;
    const size_t line = size_t(std::count(md.begin(), md.begin() + i, '\n')) + 1;
    FAIL() << "report.md differs from " << golden_path << " at line " << line
           << ":\n  got:    " << md.substr(md.rfind('\n', i) + 1, 200)
           << "\n  golden: " << golden.substr(golden.rfind('\n', i) + 1, 200)
           << "\nIf the change is intended: INFERCOST_UPDATE_GOLDEN=1 build/tests/report/report_tests "
              "--gtest_filter='Golden.*'";
  }
}

// The header cells of every table of a Markdown text, one vector per table:
// a table is a "| a | b |" line followed by its "|---|---:|" line.
std::vector<std::vector<std::string>> markdown_table_headers(const std::string& md) {
  std::vector<std::string> lines;
  for (size_t p = 0; p < md.size();) {
    const size_t end = md.find('\n', p);
    lines.push_back(md.substr(p, end == std::string::npos ? std::string::npos : end - p));
    p = end == std::string::npos ? md.size() : end + 1;
  }
  std::vector<std::vector<std::string>> tables;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("| ", 0) != 0 || lines[i + 1].rfind("|---", 0) != 0) continue;
    std::vector<std::string> cells;
    const std::string& l = lines[i];
    size_t start = 1;
    for (size_t k = 1; k < l.size(); ++k) {
      if (l[k] == '|' && l[k - 1] != '\\') {
        std::string cell = l.substr(start, k - start);
        cell = cell.substr(1, cell.size() - 2);  // the spaces around it
        std::string plain;                       // Markdown escapes removed
        for (size_t c = 0; c < cell.size(); ++c) {
          if (cell[c] == '\\' && c + 1 < cell.size()) ++c;
          plain += cell[c];
        }
        cells.push_back(plain);
        start = k + 1;
      }
    }
    tables.push_back(cells);
  }
  return tables;
}

// The HTML holds what the golden Markdown holds: its tables (checked by
// their header cells, in order) and cells and sentences the golden shows,
// read from the golden file itself rather than from the Document both come
// from.
TEST(Golden, HtmlHoldsTheSameTablesAndInlineCharts) {
  const Document doc = golden_document();
  const std::string html = render_html(doc);
  // Self-contained: nothing fetched, nothing run. (An address may be cited
  // as text, as the seed-2021 price list's source is; never loaded or linked.)
  for (const char* bad : {"src=", "href=\"http", "href=\"//", "<script", "<link", "@import", "url(", "<img",
                          "<iframe", "<object", "<embed"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, doc.charts.size());
  EXPECT_GE(doc.charts.size(), 9u);
  for (const Chart& c : doc.charts) {
    EXPECT_EQ(testing::xml_problem(c.standalone), "") << c.file;
    EXPECT_EQ(testing::xml_problem(c.inline_svg), "") << c.file;
    EXPECT_NE(html.find("Also saved as " + c.file), std::string::npos) << c.file;
  }

  const std::string golden = testing::slurp(kDir + "/report.md");
  ASSERT_FALSE(golden.empty());
  const auto tables = markdown_table_headers(golden);
  ASSERT_GE(tables.size(), 10u) << "the golden's tables";
  size_t html_tables = 0;
  for (size_t p = html.find("<table>"); p != std::string::npos; p = html.find("<table>", p + 1))
    ++html_tables;
  EXPECT_EQ(html_tables, tables.size());
  // Each table's header, in order, cell by cell.
  size_t at = 0;
  for (const auto& header : tables) {
    at = html.find("<thead><tr>", at);
    ASSERT_NE(at, std::string::npos) << "fewer tables in the HTML than in the golden";
    const size_t end = html.find("</tr></thead>", at);
    std::string cells;
    const size_t row = at + std::string("<thead><tr>").size();
    for (size_t p = html.find("<th", row); p != std::string::npos && p < end; p = html.find("<th", p + 1)) {
      const size_t open_end = html.find('>', p);
      const size_t close = html.find("</th>", open_end);
      cells += html.substr(open_end + 1, close - open_end - 1) + "\n";
    }
    std::string wanted;
    for (const std::string& h : header) wanted += xml_escape(h) + "\n";
    EXPECT_EQ(cells, wanted);
    at = end;
  }
  // Cells and sentences of the golden (so of the Markdown printer) that the
  // HTML printer must show too.
  for (const char* text :
       {"Compared with the cheapest", "CUDA out of memory: tried to allocate 18.4 GiB",
        "records.jsonl: line 9", "p3.8xlarge fp32 seed json-3", "c5.12xlarge int8 tokens json-3 synthetic",
        "distilbert-base-uncased-finetuned-sst-2-english", "120,000", "leaves out loading the model"}) {
    ASSERT_NE(golden.find(text), std::string::npos) << "the golden lacks: " << text;
    EXPECT_NE(html.find(text), std::string::npos) << "the HTML lacks: " << text;
  }
}

}  // namespace
}  // namespace infercost::report
