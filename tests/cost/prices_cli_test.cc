// End-to-end: `infercost prices` run the way a user runs it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "test_utils.h"

namespace infercost {
namespace {

using Outcome = infercost::testing::CommandOutcome;
Outcome run_cli(const std::string& args) {
  return infercost::testing::run_infercost(args);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PricesCli, CurrentListShowsEachPricesSourceDateAndRegion) {
  Outcome aws = run_cli("prices --list aws-2026");
  ASSERT_EQ(aws.exit_code, 0) << aws.output;
  EXPECT_FALSE(has(aws.output, "seed-2021")) << "--list shows one list";
  EXPECT_TRUE(has(aws.output, "aws-2026  (date: ")) << aws.output;
  EXPECT_TRUE(has(aws.output, "  note: ")) << aws.output;
  EXPECT_TRUE(has(aws.output, "--prices FILE")) << aws.output;
  // A row: name, price, GPUs, vCPUs, memory, region, date and its source's number.
  std::string p5;
  for (size_t at = 0, end; at < aws.output.size(); at = end + 1) {
    end = aws.output.find('\n', at);
    if (end == std::string::npos) end = aws.output.size();
    const std::string line = aws.output.substr(at, end - at);
    if (has(line, " p5.48xlarge ")) p5 = line;
  }
  ASSERT_FALSE(p5.empty()) << aws.output;
  for (const char* part : {"55.0400", "8 x H100", "192", "us-east-1", "2026-01-21", "[2]"}) {
    EXPECT_TRUE(has(p5, part)) << part << " missing from: " << p5;
  }
  EXPECT_TRUE(has(aws.output, "  sources:\n    [1] tsaol/aws-gpu")) << aws.output;
  EXPECT_TRUE(has(aws.output, "e385a0d348ed")) << aws.output;
  // Long text is wrapped for a terminal.
  for (size_t at = 0, end; at < aws.output.size(); at = end + 1) {
    end = aws.output.find('\n', at);
    if (end == std::string::npos) end = aws.output.size();
    EXPECT_LE(end - at, 120u) << aws.output.substr(at, end - at);
  }

  Outcome gcp = run_cli("prices --list gcp-2026");
  ASSERT_EQ(gcp.exit_code, 0) << gcp.output;
  EXPECT_TRUE(has(gcp.output, "g2-standard-4")) << gcp.output;
  EXPECT_TRUE(has(gcp.output, "0.7068")) << gcp.output;
  EXPECT_TRUE(has(gcp.output, "us-central1")) << gcp.output;
}

TEST(PricesCli, SeedListKeepsItsTableAndHelpNamesTheLists) {
  Outcome seed = run_cli("prices --list seed-2021");
  ASSERT_EQ(seed.exit_code, 0) << seed.output;
  EXPECT_TRUE(has(seed.output, "4.2330")) << seed.output;
  EXPECT_FALSE(has(seed.output, "sources:")) << "the seed list has one source: " << seed.output;
  EXPECT_FALSE(has(seed.output, "region")) << seed.output;

  Outcome help = run_cli("prices --help");
  ASSERT_EQ(help.exit_code, 0) << help.output;
  for (const char* part : {"seed-2021", "aws-2026", "gcp-2026", "--prices", "--list"}) {
    EXPECT_TRUE(has(help.output, part)) << part << " missing from --help: " << help.output;
  }
}

TEST(PricesCli, UserListShowsItsOwnPerInstanceSources) {
  testing::TempDir work;
  const std::string file =
      work.write("mine.json", R"({"name": "mine", "source": "our invoices", "date": "2026",
    "instances": [{"name": "box-a", "usd_per_hour": 2.5, "gpus": 2, "gpu": "L4", "region": "eu-west-1",
                   "source": "invoice 12", "date": "2026-10-01"},
                  {"name": "box-b", "usd_per_hour": 1}]})");
  Outcome mine = run_cli("prices --prices " + file + " --list mine");
  ASSERT_EQ(mine.exit_code, 0) << mine.output;
  EXPECT_TRUE(has(mine.output, "eu-west-1")) << mine.output;
  const std::string row = mine.output.substr(mine.output.find("  box-a"));
  const std::string box_a = row.substr(0, row.find('\n'));
  EXPECT_TRUE(has(box_a, "2026-10-01")) << box_a;
  EXPECT_TRUE(has(box_a, "[1]")) << box_a;
  EXPECT_TRUE(has(mine.output, "[1] invoice 12")) << mine.output;
  EXPECT_TRUE(has(mine.output, "source: our invoices")) << mine.output;
}

TEST(PricesCli, AListNamedLikeABuiltInOneIsAUsageError) {
  testing::TempDir work;
  const std::string file = work.write(
      "aws.json",
      R"({"name": "aws-2026", "source": "s", "date": "d", "instances": [{"name": "p3.8xlarge", "usd_per_hour": 1}]})");
  Outcome clash = run_cli("prices --prices " + file);
  EXPECT_EQ(clash.exit_code, 2) << clash.output;
  EXPECT_TRUE(has(clash.output, file + ": price list name 'aws-2026' is already taken by a built-in list"))
      << clash.output;
}

}  // namespace
}  // namespace infercost
