// `infercost report` run as a user runs it, and its HTML opened in headless
// Chromium (skipped when chromium or python3 is not installed).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "check_helpers.h"
#include "report/svg.h"
#include "test_utils.h"

namespace infercost {
namespace {

using testing::count_entries;
using testing::slurp;
using testing::TempDir;

const std::string kDir = std::string(INFERCOST_TEST_DATA_DIR) + "/report";
const char* kCharts[] = {"runtime.svg",         "cost-per-million-rows.svg", "cost-run.svg",
                         "throughput-rows.svg", "throughput-tokens.svg",     "padding.svg",
                         "gpu-memory.svg",      "host-memory.svg",           "runtime-vs-cost.svg"};

using Outcome = testing::CommandOutcome;
Outcome shell(const std::string& cmd) {
  return testing::run_shell(cmd);
}

Outcome report(const std::string& args) {
  return shell(std::string(INFERCOST_BINARY_DIR) + "/infercost report " + args);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ReportCli, Help) {
  Outcome help = report("--help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--out", "--deadline", "--corpus-rows", "--title", "--prices", "--price-list"}) {
    EXPECT_TRUE(contains(help.output, flag)) << flag << "\n" << help.output;
  }
  EXPECT_TRUE(contains(shell(std::string(INFERCOST_BINARY_DIR) + "/infercost --help").output, "report"));
}

TEST(ReportCli, WritesTheReportTheGoldenHolds) {
  TempDir work;
  const std::string out = work.file("out");
  // From the data folder, so the report names the file as the golden does.
  Outcome o = shell("cd " + kDir + " && " + INFERCOST_BINARY_DIR + "/infercost report records.jsonl --out " +
                    out + " --deadline 1m");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(contains(o.output, "Cheapest: ")) << o.output;
  EXPECT_TRUE(contains(o.output, "wrote " + out + "/report.html")) << o.output;
  EXPECT_EQ(slurp(out + "/report.md"), slurp(kDir + "/report.md"))
      << "the CLI's report.md differs from the golden (see Golden.MarkdownReportOfTheFixture)";
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out)) files.insert(e.path().filename().string());
  std::set<std::string> expected = {"report.html", "report.md"};
  for (const char* c : kCharts) expected.insert(c);
  EXPECT_EQ(files, expected) << "no temporaries, nothing else";
  for (const char* c : kCharts) {
    EXPECT_EQ(testing::xml_problem(slurp(out + "/" + c)), "") << c;
  }
  // Python's XML parser agrees, where there is one.
  if (shell("command -v python3").exit_code == 0) {
    std::string cmd =
        "python3 -c \"import sys, xml.etree.ElementTree as E; [E.parse(f) for f in sys.argv[1:]]\"";
    for (const char* c : kCharts) cmd += " " + out + "/" + c;
    Outcome py = shell(cmd);
    EXPECT_EQ(py.exit_code, 0) << py.output;
  }
  // A second run replaces the files in place.
  Outcome again = report(kDir + "/records.jsonl --out " + out + " --title 'Second <run>'");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(slurp(out + "/report.html"), "<title>Second &lt;run&gt;</title>"));
  EXPECT_TRUE(contains(slurp(out + "/report.md"), "# Second \\<run\\>"));
}

TEST(ReportCli, MissingFileIsAUsageErrorAndWritesNothing) {
  TempDir work;
  Outcome o = report(work.file("nope.jsonl") + " --out " + work.file("out"));
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(contains(o.output, "nope.jsonl")) << o.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out")));
}

TEST(ReportCli, BadLineIsNamedAndNothingIsLeftInDir) {
  TempDir work;
  const std::string good = slurp(kDir + "/records.jsonl");
  const std::string first_line = good.substr(0, good.find('\n') + 1);
  work.write("bad.jsonl",
             first_line + "\n{\"schema\": \"infercost.bench/1\", \"config\": {\"batch_size\": \"x\"}}\n");
  std::filesystem::create_directories(work.file("out"));
  Outcome o = report(work.file("bad.jsonl") + " --out " + work.file("out"));
  EXPECT_EQ(o.exit_code, 3) << o.output;
  EXPECT_TRUE(contains(o.output, "bad.jsonl: line 3")) << o.output;
  EXPECT_TRUE(contains(o.output, "config.batch_size")) << o.output;
  EXPECT_EQ(count_entries(work.file("out")), 0);

  work.write("broken.jsonl", "{not json\n");
  Outcome broken = report(work.file("broken.jsonl") + " --out " + work.file("out2"));
  EXPECT_EQ(broken.exit_code, 3) << broken.output;
  EXPECT_TRUE(contains(broken.output, "broken.jsonl: line 1: not valid JSON")) << broken.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out2")));

  work.write("empty.jsonl", "\n\n");
  Outcome empty = report(work.file("empty.jsonl") + " --out " + work.file("out3"));
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_TRUE(contains(empty.output, "no benchmark records")) << empty.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out3")));
}

TEST(ReportCli, BadFlagsExitTwo) {
  TempDir work;
  const std::string records = kDir + "/records.jsonl";
  for (const char* deadline : {"2x", "soon", "0s", "30m1h", "90"}) {
    Outcome o = report(records + " --out " + work.file("out") + " --deadline " + deadline);
    EXPECT_EQ(o.exit_code, 2) << deadline << ": " << o.output;
    EXPECT_TRUE(contains(o.output, "--deadline")) << o.output;
    EXPECT_TRUE(contains(o.output, std::string("'") + deadline + "'")) << o.output;
  }
  EXPECT_FALSE(std::filesystem::exists(work.file("out")));
  EXPECT_EQ(report(records + " --out " + work.file("out") + " --corpus-rows 0").exit_code, 2);
  EXPECT_EQ(report(records).exit_code, 2);  // --out is required
  EXPECT_EQ(report("--out " + work.file("out")).exit_code, 2);
  work.write("file", "x");
  Outcome not_dir = report(records + " --out " + work.file("file"));
  EXPECT_EQ(not_dir.exit_code, 2) << not_dir.output;
  EXPECT_TRUE(contains(not_dir.output, "not a folder")) << not_dir.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out")));
}

TEST(ReportCli, RepricesFromAPriceList) {
  TempDir work;
  const std::string records = kDir + "/records.jsonl";
  work.write("mine.json",
             R"({"name": "mine", "source": "test invoice", "date": "2026-12", "instances": [
                 {"name": "p3.8xlarge", "usd_per_hour": 12.5}, {"name": "p3dn.24xlarge", "usd_per_hour": 31.25},
                 {"name": "c5.12xlarge", "usd_per_hour": 2.5}]})");
  Outcome o = report(records + " --out " + work.file("out") + " --prices " + work.file("mine.json") +
                     " --corpus-rows 1000000");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::string md = slurp(work.file("out/report.md"));
  EXPECT_TRUE(contains(md, "Prices: mine (test invoice; 2026-12)")) << md.substr(0, 800);
  EXPECT_TRUE(contains(md, "re-priced by instance name from")) << md.substr(0, 800);
  EXPECT_TRUE(contains(md, "| 12.5 |")) << "p3.8xlarge at its new hourly price";
  EXPECT_TRUE(contains(md, "corpus of 1,000,000 rows (--corpus-rows)"));

  Outcome seed = report(records + " --out " + work.file("out-seed") + " --price-list seed-2021");
  ASSERT_EQ(seed.exit_code, 0) << seed.output;
  EXPECT_TRUE(contains(slurp(work.file("out-seed/report.md")), "| 1.66 |"));

  EXPECT_FALSE(contains(md, "Warning: the costs")) << "every instance from one list";

  work.write("partial.json", R"({"name": "partial", "source": "s", "date": "d", "instances": [
                 {"name": "p3.8xlarge", "usd_per_hour": 1.0}]})");
  // Without --price-list: the user's list first, then the current built-in
  // list (not seed-2021) for the instances it lacks; the answer warns that
  // the costs mix two lists.
  Outcome mixed =
      report(records + " --out " + work.file("out-mixed") + " --prices " + work.file("partial.json"));
  ASSERT_EQ(mixed.exit_code, 0) << mixed.output;
  const std::string mixed_md = slurp(work.file("out-mixed/report.md"));
  EXPECT_TRUE(contains(mixed_md, "| p3.8xlarge | cuda:all |")) << mixed_md.substr(0, 2000);
  EXPECT_TRUE(contains(mixed_md, "| 1 | partial |")) << "p3.8xlarge from the user's list";
  EXPECT_TRUE(contains(mixed_md, "| 31.21 | aws-2026 |")) << "p3dn.24xlarge from aws-2026, not seed-2021";
  EXPECT_TRUE(contains(mixed.output,
                       "Warning: the costs below mix prices from different price lists or dates: aws-2026"))
      << mixed.output;
  EXPECT_TRUE(contains(mixed.output, "partial (d) for p3.8xlarge")) << mixed.output;
  EXPECT_TRUE(contains(mixed.output, "--price-list aws-2026")) << mixed.output;
  Outcome missing = report(records + " --out " + work.file("out2") + " --prices " +
                           work.file("partial.json") + " --price-list partial");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "p3dn.24xlarge")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "records.jsonl")) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(work.file("out2")));
}

// ---- The page in a real browser ----

std::string chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

// What a chart's capture shows: the share of pixels that are not the
// background, how many colours, and how many pixels of each palette colour.
struct Ink {
  double ink = 0;
  size_t colours = 0;
  int palette_colours = 0;  // palette colours with at least 4 solid pixels
};

Ink ink_of(const testing::Image& image) {
  std::map<uint32_t, size_t> histogram;
  for (uint32_t px : image.rgb) ++histogram[px];
  size_t background = 0;
  for (const auto& [colour, n] : histogram) background = std::max(background, n);
  Ink out;
  out.ink = image.rgb.empty() ? 0 : 1.0 - double(background) / double(image.rgb.size());
  out.colours = histogram.size();
  for (const char* hex : report::svg::kPalette) {
    const auto it = histogram.find(uint32_t(std::strtoul(hex + 1, nullptr, 16)));
    out.palette_colours += it != histogram.end() && it->second >= 4;
  }
  return out;
}

// The page in headless Chromium, driven through the DevTools protocol by
// tests/report/browser_check.py at a desktop and a phone width: no console
// message; every chart the Markdown lists is an <svg> on the page, visible,
// with content, and drawn (captured in its own box, wherever the layout puts
// it: non-blank, several colours, the palette's solid fills); the page never
// scrolls sideways, and a table wider than the page scrolls inside its own box.
TEST(ReportBrowser, EveryChartIsDrawnAndNoTableOverflowsThePage) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  if (shell("command -v python3").exit_code != 0) GTEST_SKIP() << "python3 is not installed";
  TempDir work;
  const std::string out = work.file("out");
  Outcome o = report(kDir + "/records.jsonl --out " + out + " --deadline 1m");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::string md = slurp(out + "/report.md");
  size_t charts_listed = 0;
  for (size_t at = md.find("\n!["); at != std::string::npos; at = md.find("\n![", at + 1)) ++charts_listed;
  ASSERT_EQ(charts_listed, std::size(kCharts)) << "the fixture's report lists every chart";

  const std::string facts_path = work.file("facts.json");
  // `timeout`: a guard against a browser that hangs, not a measure of speed.
  Outcome check =
      shell("timeout 600 python3 " + std::string(INFERCOST_SOURCE_DIR) + "/tests/report/browser_check.py " +
            browser + " " + out + "/report.html " + work.path() + " 1280 390 > " + facts_path);
  ASSERT_EQ(check.exit_code, 0) << "the browser could not be driven:\n" << check.output;
  const nlohmann::json facts = nlohmann::json::parse(slurp(facts_path));
  EXPECT_TRUE(facts["console"].empty()) << facts["console"].dump(2);

  for (const char* width : {"1280", "390"}) {
    SCOPED_TRACE(std::string("viewport ") + width + " px");
    const nlohmann::json& page = facts["widths"][width];
    const int viewport = page["viewport"].get<int>();
    EXPECT_EQ(viewport, std::stoi(width));
    EXPECT_LE(page["page_width"].get<int>(), viewport) << "the page scrolls sideways";
    const nlohmann::json& charts = page["charts"];
    ASSERT_EQ(charts.size(), charts_listed) << "an <svg> per chart";
    for (const nlohmann::json& c : charts) {
      SCOPED_TRACE("chart " + std::to_string(c["index"].get<int>()));
      EXPECT_TRUE(c["visible"].get<bool>());
      EXPECT_GE(c["elements"].get<int>(), 10) << "an empty chart";
      EXPECT_GE(c["width"].get<double>(), 0.8 * std::min(viewport, 920) - 60)
          << "the chart does not fill its box";
      EXPECT_GE(c["height"].get<double>(), 100);
      EXPECT_LE(c["x"].get<double>() + c["width"].get<double>(), viewport + 0.5) << "the chart sticks out";
      ASSERT_NE(c["png"].get<std::string>(), "") << "no box to capture";
      testing::Image image;
      ASSERT_EQ(testing::decode_png(slurp(c["png"].get<std::string>()), image), "");
      EXPECT_NEAR(image.width, c["width"].get<double>(), 1.5);
      const Ink ink = ink_of(image);
      EXPECT_GT(ink.ink, 0.01) << "the chart is blank";
      EXPECT_GE(ink.colours, 20u) << "too few colours for axes, text and data";
      EXPECT_GE(ink.palette_colours, 1) << "no series drawn in the palette's colours";
    }
    const nlohmann::json& tables = page["tables"];
    EXPECT_GE(tables.size(), 3u);
    for (const nlohmann::json& t : tables) {
      SCOPED_TRACE("table " + std::to_string(t["index"].get<int>()));
      EXPECT_LE(t["box_right"].get<double>(), viewport + 0.5) << "the table's box is wider than the page";
      if (std::string(width) == "1280") {
        EXPECT_FALSE(t["scrolls"].get<bool>()) << "a table does not fit a desktop page: " << t.dump();
      } else if (t["scrolls"].get<bool>()) {
        const std::string overflow = t["overflow_x"].get<std::string>();
        EXPECT_TRUE(overflow == "auto" || overflow == "scroll") << "a wide table is cut: " << t.dump();
      }
    }
  }
  // Keep the whole page for people to look at when asked to.
  if (const char* keep = std::getenv("INFERCOST_KEEP_SCREENSHOT")) {
    std::filesystem::copy_file(work.file("page-1280.png"), keep,
                               std::filesystem::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace infercost
