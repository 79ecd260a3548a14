#include "cost/prices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "test_utils.h"

namespace infercost::cost {
namespace {

TEST(BuiltinPrices, SeedListIsTheStudysTable) {
  const auto& lists = builtin_price_lists();
  ASSERT_FALSE(lists.empty());
  const PriceList& seed = lists[0];
  EXPECT_EQ(seed.name, "seed-2021");
  EXPECT_EQ(seed.date, "2021");
  // Cited by its title and address: a user has no copy of the team's notes.
  EXPECT_NE(
      seed.source.find("Are GPUs Really Expensive? Benchmarking GPUs for Inference on Databricks Clusters"),
      std::string::npos);
  EXPECT_NE(seed.source.find("https://www.databricks.com/blog/2021/12/15/"), std::string::npos);
  EXPECT_EQ(seed.source.find("../"), std::string::npos);
  ASSERT_EQ(seed.instances.size(), 10u);
  // Every row of the study's table, as published.
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
  EXPECT_EQ(p.corpus_rows, 10000000);
  EXPECT_EQ(c.corpus_rows, 1000000) << "no corpus given: the run's own rows";
  // No rows: no rate, nothing projected, the wall time still costs.
  const CostEstimate none = estimate_cost(2.0, 1800, 0, 0);
  EXPECT_DOUBLE_EQ(none.cost_to_solution_usd, 1.0);
  EXPECT_EQ(none.usd_per_million_rows, 0);
  EXPECT_EQ(none.corpus_usd, 0);
}

TEST(Cost, EstimateOnAPricedInstanceIsAtItsHourlyPrice) {
  Instance i;
  i.name = "x";
  i.usd_per_hour = 10;
  const Pricing spot{0.7, 0.5, 2};  // (10 x 0.3 + 0.5) x 2 = 7 USD/h
  const CostEstimate on_instance = estimate_cost(i, spot, 1800, 500, 2000, 1000);
  const CostEstimate at_price = estimate_cost(hourly_usd(i, spot), 1800, 500, 2000, 1000);
  EXPECT_DOUBLE_EQ(on_instance.usd_per_hour, 7);
  EXPECT_DOUBLE_EQ(on_instance.cost_to_solution_usd, 3.5);
  EXPECT_DOUBLE_EQ(on_instance.usd_per_million_rows, at_price.usd_per_million_rows);
  EXPECT_DOUBLE_EQ(on_instance.usd_per_million_tokens, at_price.usd_per_million_tokens);
  EXPECT_EQ(on_instance.corpus_rows, 1000);
  EXPECT_DOUBLE_EQ(on_instance.corpus_seconds, 3600);
  EXPECT_DOUBLE_EQ(on_instance.corpus_usd, 7);
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
  testing::TempDir scratch;
  const std::string path = scratch.file("infercost_prices_test.json");
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
  // The user's list comes first, then the current built-in lists, then the seed.
  auto first = find_instance(lists, "p3.8xlarge");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->list->name, "mine");
  EXPECT_DOUBLE_EQ(first->instance->usd_per_hour, 12.24);
  lists.pop_back();
  EXPECT_EQ(find_instance(lists, "p3.8xlarge")->list->name, "aws-2026");
  EXPECT_EQ(find_instance(lists, "p2.xlarge")->list->name, "seed-2021");  // only the seed has it
  lists.push_back(*mine);
  auto named = find_instance(lists, "p3.8xlarge", "mine");
  ASSERT_TRUE(named.ok());
  EXPECT_DOUBLE_EQ(named->instance->usd_per_hour, 12.24);
  EXPECT_EQ(find_instance(lists, "box")->list->name, "mine");
  auto missing = find_instance(lists, "p9.huge");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(
                "'p9.huge' is not in the price lists mine, aws-2026, gcp-2026, seed-2021"),
            std::string::npos)
      << missing.status().message();
  auto no_list = find_instance(lists, "box", "nope");
  ASSERT_FALSE(no_list.ok());
  EXPECT_NE(no_list.status().message().find("known: seed-2021, aws-2026, gcp-2026, mine"), std::string::npos);
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
  testing::TempDir scratch;
  const std::string path = scratch.file("infercost_prices_with.json");
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

// Lists are looked up by name, so a user list named like a built-in one (or
// like another file's) would be shadowed without a word: it is refused.
TEST(PriceLists, RefuseAListNamedLikeAnother) {
  testing::TempDir scratch;
  const std::filesystem::path dir = scratch.path();
  auto write = [&dir](const std::string& file, const std::string& name) {
    const std::string path = (dir / file).string();
    std::ofstream out(path);
    out << R"({"name": ")" << name
        << R"(", "source": "s", "date": "d", "instances": [{"name": "p3.8xlarge", "usd_per_hour": 1}]})";
    return path;
  };
  for (const char* builtin : {"aws-2026", "seed-2021", "gcp-2026"}) {
    const std::string path = write("infercost_prices_clash.json", builtin);
    auto lists = price_lists_with({path});
    std::filesystem::remove(path);
    ASSERT_FALSE(lists.ok()) << builtin;
    EXPECT_EQ(lists.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(lists.status().message().find(path + ": price list name '" + builtin +
                                            "' is already taken by a built-in list"),
              std::string::npos)
        << lists.status().message();
  }
  const std::string first = write("infercost_prices_mine_1.json", "mine");
  const std::string second = write("infercost_prices_mine_2.json", "mine");
  auto both = price_lists_with({first, second});
  auto one = price_lists_with({first});
  std::filesystem::remove(first);
  std::filesystem::remove(second);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(both.status().message().find(second +
                                         ": price list name 'mine' is already taken by the list in " + first),
            std::string::npos)
      << both.status().message();
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->back().name, "mine");
}

}  // namespace
}  // namespace infercost::cost

namespace infercost::cost {
namespace {

const PriceList& builtin(const std::string& name) {
  for (const PriceList& list : builtin_price_lists()) {
    if (list.name == name) return list;
  }
  ADD_FAILURE() << "no built-in list " << name;
  static const PriceList kEmpty;
  return kEmpty;
}

TEST(BuiltinPrices, SeedFirstThenTheCurrentLists) {
  const auto& lists = builtin_price_lists();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].name, "seed-2021");
  EXPECT_EQ(lists[1].name, "aws-2026");
  EXPECT_EQ(lists[2].name, "gcp-2026");
}

TEST(BuiltinPrices, EveryPriceIsPositiveFiniteAndEveryNameUnique) {
  std::set<std::string> list_names;
  for (const PriceList& list : builtin_price_lists()) {
    EXPECT_TRUE(list_names.insert(list.name).second) << "list listed twice: " << list.name;
    EXPECT_FALSE(list.source.empty()) << list.name;
    EXPECT_FALSE(list.date.empty()) << list.name;
    EXPECT_FALSE(list.instances.empty()) << list.name;
    std::set<std::string> names;
    for (const Instance& i : list.instances) {
      EXPECT_TRUE(names.insert(i.name).second) << list.name << ": " << i.name << " listed twice";
      EXPECT_TRUE(std::isfinite(i.usd_per_hour) && i.usd_per_hour > 0) << list.name << ": " << i.name;
      EXPECT_GE(i.gpus, 0) << i.name;
      EXPECT_EQ(i.gpus > 0, !i.gpu.empty()) << list.name << ": " << i.name << " GPU count and model disagree";
      EXPECT_GT(i.vcpus, 0) << list.name << ": " << i.name;
      EXPECT_FALSE(i.memory.empty()) << list.name << ": " << i.name;
    }
  }
}

TEST(BuiltinPrices, EveryCurrentPriceNamesItsSourceDateAndRegion) {
  for (const char* name : {"aws-2026", "gcp-2026"}) {
    const PriceList& list = builtin(name);
    EXPECT_FALSE(list.notes.empty()) << name << ": the notes say prices change and how to override them";
    EXPECT_NE(list.notes.find("--prices"), std::string::npos) << name;
    for (const Instance& i : list.instances) {
      EXPECT_FALSE(i.source.empty()) << name << ": " << i.name;
      EXPECT_FALSE(i.date.empty()) << name << ": " << i.name;
      EXPECT_FALSE(i.region.empty()) << name << ": " << i.name;
      // A source a reader can find: a repository file pinned to a commit.
      EXPECT_NE(i.source.find("at commit "), std::string::npos) << name << ": " << i.name;
      EXPECT_EQ(i.date.substr(0, 4), "2026") << name << ": " << i.name;
    }
  }
  for (const Instance& i : builtin("aws-2026").instances) EXPECT_EQ(i.region, "us-east-1") << i.name;
  for (const Instance& i : builtin("gcp-2026").instances) EXPECT_EQ(i.region, "us-central1") << i.name;
}

TEST(BuiltinPrices, AwsCoversTheIssuesInstanceFamilies) {
  const PriceList& aws = builtin("aws-2026");
  for (const char* name :
       {"g4dn.xlarge",  "g4dn.12xlarge", "g4dn.16xlarge", "g5.xlarge",   "g5.12xlarge",  "g5.48xlarge",
        "g6.xlarge",    "g6.12xlarge",   "g6.48xlarge",   "p3.2xlarge",  "p3.8xlarge",   "p3dn.24xlarge",
        "p4d.24xlarge", "p5.48xlarge",   "c5.12xlarge",   "c5.24xlarge", "c6i.12xlarge", "c6i.24xlarge",
        "c7i.12xlarge", "c7i.24xlarge",  "m7i.12xlarge",  "m7i.24xlarge"}) {
    EXPECT_NE(aws.find(name), nullptr) << name;
  }
}

// Spot checks against the cited rows (docs/cost.md lists every price and where it was read).
TEST(BuiltinPrices, ValuesMatchTheCitedRows) {
  struct Want {
    const char* list;
    const char* name;
    double usd_per_hour;
    int gpus;
    const char* gpu;
    int vcpus;
  };
  const Want want[] = {
      // tsaol/aws-gpu data/all_gpu_instances.js @7412fd2, pricing["us-east-1"].onDemand
      {"aws-2026", "g4dn.xlarge", 0.526, 1, "T4", 4},
      {"aws-2026", "g4dn.12xlarge", 3.912, 4, "T4", 48},
      {"aws-2026", "g5.xlarge", 1.006, 1, "A10G", 4},
      {"aws-2026", "g5.48xlarge", 16.288, 8, "A10G", 192},
      {"aws-2026", "g6.xlarge", 0.8048, 1, "L4", 4},
      {"aws-2026", "g6.12xlarge", 4.6016, 4, "L4", 48},
      {"aws-2026", "p3.8xlarge", 12.24, 4, "V100", 32},
      {"aws-2026", "p3dn.24xlarge", 31.212, 8, "V100", 96},
      // the same in both catalogs (after the June 2025 cut)
      {"aws-2026", "p4d.24xlarge", 21.957642, 8, "A100", 96},
      {"aws-2026", "p5.4xlarge", 6.88, 1, "H100", 16},
      {"aws-2026", "p5.48xlarge", 55.04, 8, "H100", 192},
      // skypilot-catalog catalogs/v8/aws/vms.csv @e385a0d, us-east-1 rows
      {"aws-2026", "c5.12xlarge", 2.04, 0, "", 48},
      {"aws-2026", "c6i.24xlarge", 4.08, 0, "", 96},
      {"aws-2026", "c7i.12xlarge", 2.142, 0, "", 48},
      {"aws-2026", "c7i.24xlarge", 4.284, 0, "", 96},
      {"aws-2026", "m7i.12xlarge", 2.4192, 0, "", 48},
      {"aws-2026", "m7i.24xlarge", 4.8384, 0, "", 96},
      // skypilot-catalog catalogs/v8/gcp/vms.csv @8427bbf, us-central1: VM row + GPU row
      {"gcp-2026", "g2-standard-4", 0.14679 + 0.56004, 1, "L4", 4},
      {"gcp-2026", "a2-highgpu-1g", 0.73948 + 2.93391, 1, "A100", 12},
      {"gcp-2026", "n4-standard-48", 2.1768, 0, "", 48},
  };
  for (const Want& w : want) {
    const Instance* i = builtin(w.list).find(w.name);
    ASSERT_NE(i, nullptr) << w.list << ": " << w.name;
    EXPECT_NEAR(i->usd_per_hour, w.usd_per_hour, 1e-9) << w.name;
    EXPECT_EQ(i->gpus, w.gpus) << w.name;
    EXPECT_EQ(i->gpu, w.gpu) << w.name;
    EXPECT_EQ(i->vcpus, w.vcpus) << w.name;
  }
  // The sums as stored.
  EXPECT_DOUBLE_EQ(builtin("gcp-2026").find("g2-standard-4")->usd_per_hour, 0.70683);
  EXPECT_DOUBLE_EQ(builtin("gcp-2026").find("a2-highgpu-1g")->usd_per_hour, 3.67339);
}

TEST(BuiltinPrices, SeedListCarriesNoPerInstanceSources) {
  // The study's table is one source; its rows stay as they were.
  for (const Instance& i : builtin("seed-2021").instances) {
    EXPECT_TRUE(i.source.empty() && i.date.empty() && i.region.empty()) << i.name;
  }
}

TEST(FindInstance, CurrentInstancesResolveToTheirListAndSource) {
  const auto& lists = builtin_price_lists();
  auto g5 = find_instance(lists, "g5.xlarge");
  ASSERT_TRUE(g5.ok()) << g5.status().to_string();
  EXPECT_EQ(g5->list->name, "aws-2026");
  EXPECT_NE(g5->source().find("tsaol/aws-gpu"), std::string::npos) << g5->source();
  EXPECT_EQ(g5->date(), "2026-01-21");
  // A name in both the seed and the current list: the current list wins, the
  // study's price is one --price-list away.
  EXPECT_EQ(find_instance(lists, "p3.8xlarge")->list->name, "aws-2026");
  auto current = find_instance(lists, "p3.8xlarge", "aws-2026");
  ASSERT_TRUE(current.ok());
  EXPECT_DOUBLE_EQ(current->instance->usd_per_hour, 12.24);
  // The seed's rows fall back to the list's source and date.
  auto seed = find_instance(lists, "p3.8xlarge", "seed-2021");
  ASSERT_TRUE(seed.ok());
  EXPECT_EQ(seed->source(), seed->list->source);
  EXPECT_EQ(seed->date(), "2021");
  EXPECT_EQ(PricedInstance{}.source(), "");
}

TEST(PriceFile, PerInstanceSourceDateAndRegionAreOptionalStrings) {
  auto list = parse_price_list(R"({"name": "mine", "source": "invoices", "date": "2026",
    "instances": [
      {"name": "a", "usd_per_hour": 1, "region": "eu-west-1", "source": "invoice 12", "date": "2026-10-01"},
      {"name": "b", "usd_per_hour": 2}]})",
                               "mine.json");
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  EXPECT_EQ(list->find("a")->region, "eu-west-1");
  EXPECT_EQ(list->find("a")->source, "invoice 12");
  EXPECT_EQ(list->find("a")->date, "2026-10-01");
  EXPECT_TRUE(list->find("b")->source.empty());
  auto bad = parse_price_list(
      R"({"name": "n", "source": "s", "date": "d", "instances": [{"name": "a", "usd_per_hour": 1, "region": 5}]})",
      "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("p.json: instances[0] (a): \"region\" must be a string"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace infercost::cost
