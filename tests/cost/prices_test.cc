#include "infercost/cost/prices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace infercost::cost {
namespace {

TEST(BuiltinPrices, SeedListIsTheStudysTable) {
  const auto& lists = builtin_price_lists();
  ASSERT_FALSE(lists.empty());
  const PriceList& seed = lists[0];
  EXPECT_EQ(seed.name, "seed-2021");
  EXPECT_EQ(seed.date, "2021");
  EXPECT_NE(seed.source.find("MISSION.md"), std::string::npos);
  ASSERT_EQ(seed.instances.size(), 10u);
  // Every row of ../shared/MISSION.md's table, as published.
  const std::vector<std::pair<const char*, double>> want = {
      {"g4dn.xlarge", 0.071}, {"g4dn.12xlarge", 0.856}, {"g4dn.16xlarge", 1.141}, {"p2.xlarge", 0.122},
      {"p2.8xlarge", 0.976},  {"p3.2xlarge", 0.415},    {"p3.8xlarge", 1.66},     {"p3dn.24xlarge", 4.233},
      {"c5.12xlarge", 0.728}, {"c5.24xlarge", 1.456}};
  for (const auto& [name, price] : want) {
    const Instance* i = seed.find(name);
    ASSERT_NE(i, nullptr) << name;
    EXPECT_DOUBLE_EQ(i->usd_per_hour, price) << name;
  }
  EXPECT_EQ(seed.find("p3.8xlarge")->gpus, 4);
  EXPECT_EQ(seed.find("p3.8xlarge")->gpu, "V100");
  EXPECT_EQ(seed.find("c5.24xlarge")->gpus, 0);
  EXPECT_EQ(seed.find("c5.24xlarge")->vcpus, 96);
  EXPECT_EQ(seed.find("p4d.24xlarge"), nullptr);
}

TEST(Cost, FormulasMatchHandComputedFigures) {
  // The study's finding: p3dn.24xlarge at $4.233/h. A run of 1,000,000 rows
  // and 30,000,000 tokens in 600 s.
  const CostEstimate c = estimate_cost(4.233, 600, 1000000, 30000000);
  EXPECT_DOUBLE_EQ(c.usd_per_hour, 4.233);
  EXPECT_NEAR(c.cost_to_solution_usd, 4.233 / 6, 1e-12);
  EXPECT_NEAR(c.usd_per_million_rows, 4.233 / 6, 1e-12);  // 1e6 / (1e6/600) * 4.233 / 3600
  EXPECT_NEAR(c.usd_per_million_tokens, 4.233 / 6 / 30, 1e-12);
  EXPECT_NEAR(c.corpus_seconds, 600, 1e-9);
  EXPECT_NEAR(c.corpus_usd, c.cost_to_solution_usd, 1e-12);
  // Projected to 10x the rows: 10x the time and money.
  const CostEstimate p = estimate_cost(4.233, 600, 1000000, 30000000, 10000000);
  EXPECT_NEAR(p.corpus_seconds, 6000, 1e-9);
  EXPECT_NEAR(p.corpus_usd, 4.233 * 6000 / 3600, 1e-9);
  // No rows: no rate, nothing projected, the wall time still costs.
  const CostEstimate none = estimate_cost(2.0, 1800, 0, 0);
  EXPECT_DOUBLE_EQ(none.cost_to_solution_usd, 1.0);
  EXPECT_EQ(none.usd_per_million_rows, 0);
  EXPECT_EQ(none.corpus_usd, 0);
}

TEST(Cost, SpotPlatformAndMachines) {
  Instance i;
  i.name = "x";
  i.usd_per_hour = 10;
  EXPECT_DOUBLE_EQ(hourly_usd(i, Pricing{}), 10);
  EXPECT_DOUBLE_EQ(hourly_usd(i, Pricing{0.7, 0, 1}), 3);
  EXPECT_DOUBLE_EQ(hourly_usd(i, Pricing{0, 1.5, 1}), 11.5);
  EXPECT_DOUBLE_EQ(hourly_usd(i, Pricing{0.5, 1, 4}), 24);
}

TEST(PriceFile, ParsesAllFields) {
  auto list = parse_price_list(R"({"name": "mine", "source": "our invoice", "date": "2026-11",
    "notes": "negotiated", "instances": [
      {"name": "box-a", "usd_per_hour": 2.5, "gpus": 2, "gpu": "L4", "vcpus": 16, "memory": "64 GiB"},
      {"name": "box-b", "usd_per_hour": 0.5}]})",
                               "mine.json");
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  EXPECT_EQ(list->name, "mine");
  EXPECT_EQ(list->notes, "negotiated");
  ASSERT_EQ(list->instances.size(), 2u);
  const Instance* a = list->find("box-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->gpus, 2);
  EXPECT_EQ(a->gpu, "L4");
  EXPECT_EQ(a->vcpus, 16);
  EXPECT_EQ(a->memory, "64 GiB");
  EXPECT_EQ(list->find("box-b")->gpus, 0);
}

TEST(PriceFile, BadListsNameTheFileAndInstance) {
  auto expect_error = [](const char* json, const char* fragment) {
    auto r = parse_price_list(json, "p.json");
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("p.json"), std::string::npos) << r.status().message();
  };
  expect_error("{", "not valid JSON");
  expect_error("[]", "must be a JSON object");
  expect_error(R"({"source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1}]})",
               "\"name\"");
  expect_error(R"({"name": "n", "source": "s", "date": "d", "instances": []})", "non-empty array");
  expect_error(
      R"({"name": "n", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": -1}]})",
      "instances[0] (a): \"usd_per_hour\" must be a positive number");
  expect_error(R"({"name": "n", "source": "s", "date": "d", "instances": [{"name": "a"}]})", "usd_per_hour");
  expect_error(R"({"name": "n", "source": "s", "date": "d",
                   "instances": [{"name": "a", "usd_per_hour": 1}, {"name": "a", "usd_per_hour": 2}]})",
               "instances[1] (a): listed twice");
  expect_error(
      R"({"name": "n", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1, "gpus": 1.5}]})",
      "\"gpus\" must be a non-negative integer");
  expect_error(
      R"({"name": "n", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1, "gpu": 3}]})",
      "\"gpu\" must be a string");
}

TEST(PriceFile, LoadReadsAFileAndReportsAMissingOne) {
  const std::string path = (std::filesystem::temp_directory_path() / "infercost_prices_test.json").string();
  {
    std::ofstream out(path);
    out << R"({"name": "f", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1}]})";
  }
  auto list = load_price_list(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  EXPECT_EQ(list->name, "f");
  auto missing = load_price_list(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos) << missing.status().message();
}

}  // namespace
}  // namespace infercost::cost

namespace infercost::cost {
namespace {

TEST(FindInstance, SearchesListsInOrderOrOneByName) {
  auto mine = parse_price_list(R"({"name": "mine", "source": "s", "date": "d",
    "instances": [{"name": "p3.8xlarge", "usd_per_hour": 12.24}, {"name": "box", "usd_per_hour": 1}]})",
                               "m.json");
  ASSERT_TRUE(mine.ok());
  std::vector<PriceList> lists = builtin_price_lists();
  lists.push_back(*mine);
  auto first = find_instance(lists, "p3.8xlarge");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->list->name, "seed-2021");
  EXPECT_DOUBLE_EQ(first->instance->usd_per_hour, 1.66);
  auto named = find_instance(lists, "p3.8xlarge", "mine");
  ASSERT_TRUE(named.ok());
  EXPECT_DOUBLE_EQ(named->instance->usd_per_hour, 12.24);
  EXPECT_EQ(find_instance(lists, "box")->list->name, "mine");
  auto missing = find_instance(lists, "p9.huge");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'p9.huge' is not in the price lists seed-2021, mine"),
            std::string::npos)
      << missing.status().message();
  auto no_list = find_instance(lists, "box", "nope");
  ASSERT_FALSE(no_list.ok());
  EXPECT_NE(no_list.status().message().find("known: seed-2021, mine"), std::string::npos);
}

TEST(Pricing, Validation) {
  EXPECT_TRUE(validate(Pricing{}).ok());
  EXPECT_TRUE(validate(Pricing{0.9, 2, 3}).ok());
  EXPECT_FALSE(validate(Pricing{1.0, 0, 1}).ok());
  EXPECT_FALSE(validate(Pricing{-0.1, 0, 1}).ok());
  EXPECT_FALSE(validate(Pricing{0, -1, 1}).ok());
  EXPECT_FALSE(validate(Pricing{0, 0, 0}).ok());
}

}  // namespace
}  // namespace infercost::cost

namespace infercost::cost {
namespace {

TEST(PriceLists, BuiltInFirstThenFilesInOrderAndErrorsNameTheFile) {
  const std::string path = (std::filesystem::temp_directory_path() / "infercost_prices_with.json").string();
  {
    std::ofstream out(path);
    out << R"({"name": "extra", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1}]})";
  }
  auto lists = price_lists_with({path});
  ASSERT_TRUE(lists.ok()) << lists.status().to_string();
  ASSERT_EQ(lists->size(), builtin_price_lists().size() + 1);
  EXPECT_EQ(lists->front().name, "seed-2021");
  EXPECT_EQ(lists->back().name, "extra");
  std::filesystem::remove(path);
  auto missing = price_lists_with({path});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
  EXPECT_EQ(price_lists_with({})->size(), builtin_price_lists().size());
}

}  // namespace
}  // namespace infercost::cost
