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
#include "infercost/report/analysis.h"
#include "infercost/report/report.h"
#include "test_utils.h"

namespace infercost::report {
namespace {

const std::string kDir = std::string(INFERCOST_TEST_DATA_DIR) + "/report";

// The options the golden was made with; the CLI test uses the same flags
// (--deadline 1m) from the data folder.
Document golden_document() {
  auto loaded = load({kDir + "/records.jsonl"});
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  if (!loaded.ok()) return {};
  for (LoadedRecord& r : *loaded) r.source = "records.jsonl";
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

TEST(Golden, HtmlHoldsTheSameTablesAndInlineCharts) {
  const Document doc = golden_document();
  const std::string html = render_html(doc);
  // Self-contained: nothing fetched, nothing run.
  for (const char* bad : {"http://", "https://", "<script", "<link", "@import", "url(", "<img", "<iframe"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_EQ(svgs, doc.charts.size());
  EXPECT_GE(doc.charts.size(), 8u);
  size_t tables = 0, md_tables = 0;
  for (const Section& s : doc.sections) {
    for (const Block& b : s.blocks) tables += b.kind == Block::Kind::kTable;
  }
  for (size_t p = html.find("<table>"); p != std::string::npos; p = html.find("<table>", p + 1)) ++md_tables;
  EXPECT_EQ(md_tables, tables);
  for (const Chart& c : doc.charts) {
    EXPECT_EQ(testing::xml_problem(c.standalone), "") << c.file;
    EXPECT_EQ(testing::xml_problem(c.inline_svg), "") << c.file;
  }
  EXPECT_NE(html.find("Compared with the cheapest"), std::string::npos);
}

}  // namespace
}  // namespace infercost::report
