#include "report/analysis.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/device.h"
#include "cost/prices.h"
#include "report/format.h"
#include "report/report.h"

namespace infercost::report {
namespace {

const std::string kFixture = std::string(INFERCOST_TEST_DATA_DIR) + "/report/records.jsonl";

using record::SourcedRecord;

// The fixture's records, their origins as if read from the data folder
// ("records.jsonl: line 3").
std::vector<SourcedRecord> fixture() {
  auto loaded = record::load_sourced_records({kFixture});
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  std::vector<SourcedRecord> out = loaded.ok() ? *loaded : std::vector<SourcedRecord>{};
  for (SourcedRecord& r : out) r.origin = "records.jsonl" + r.origin.substr(kFixture.size());
  return out;
}

const Point* find_point(const ReportModel& m, const std::string& machine, const std::string& device,
                        int batch) {
  for (const Point& p : m.points) {
    const Configuration& c = m.configs[p.config];
    if (c.machine == machine && c.device == device && p.batch_size == batch) return &p;
  }
  return nullptr;
}

// The rows of the table under `header` (its first column) in the document.
std::vector<std::vector<std::string>> table_rows(const Document& doc, const std::string& section,
                                                 const std::string& first_column) {
  for (const Section& s : doc.sections) {
    if (s.id != section) continue;
    for (const Block& b : s.blocks) {
      if (b.kind == Block::Kind::kTable && !b.table.header.empty() && b.table.header[0] == first_column)
        return b.table.rows;
    }
  }
  return {};
}

size_t column(const Document& doc, const std::string& section, const std::string& first_column,
              const std::string& name) {
  for (const Section& s : doc.sections) {
    if (s.id != section) continue;
    for (const Block& b : s.blocks) {
      if (b.kind != Block::Kind::kTable || b.table.header.empty() || b.table.header[0] != first_column)
        continue;
      for (size_t i = 0; i < b.table.header.size(); ++i) {
        if (b.table.header[i] == name) return i;
      }
    }
  }
  ADD_FAILURE() << "no column " << name << " in section " << section;
  return 0;
}

// The memory section's table of GPU points, by "configuration batch size".
std::map<std::string, std::vector<std::string>> gpu_rows(const Document& doc) {
  std::map<std::string, std::vector<std::string>> by_point;
  for (const auto& row : table_rows(doc, "memory", "Configuration")) by_point[row[0] + " " + row[1]] = row;
  return by_point;
}

const Point* find_point(const ReportModel& m, const std::string& machine, const std::string& precision,
                        const std::string& shape, int batch) {
  for (const Point& p : m.points) {
    const Configuration& c = m.configs[p.config];
    if (c.machine == machine && c.precision == precision && c.shape == shape && p.batch_size == batch)
      return &p;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// ---- Durations ----

TEST(ParseDuration, AcceptsHoursMinutesSecondsAndCombinations) {
  struct Case {
    const char* text;
    double seconds;
  } cases[] = {{"2h", 7200},   {"90m", 5400},    {"3600s", 3600}, {"45s", 45},       {"1h30m", 5400},
               {"1.5h", 5400}, {"1h 30m", 5400}, {" 2h ", 7200},  {"1h0m30s", 3630}, {".5m", 30}};
  for (const Case& c : cases) {
    Result<double> d = parse_duration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().to_string();
    EXPECT_DOUBLE_EQ(*d, c.seconds) << c.text;
  }
}

TEST(ParseDuration, RefusesBadTextWithAClearMessage) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {{"", "empty"},
               {"2", "no unit"},
               {"3600", "no unit"},
               {"2x", "unknown unit 'x'"},
               {"2 hours", "unknown unit 'hours'"},
               {"30m1h", "order h, m, s"},
               {"1h1h", "order h, m, s"},
               {"0s", "longer than 0"},
               {"0h0m", "longer than 0"},
               {"h", "expected a number"},
               {"-1h", "expected a number"},
               {"1.2.3h", "'1.2' has no unit"},
               {"99999999999h", "too long"}};
  for (const Case& c : cases) {
    Result<double> d = parse_duration(c.text);
    ASSERT_FALSE(d.ok()) << c.text;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(d.status().message().find(c.says), std::string::npos) << c.text << ": " << d.status().message();
    EXPECT_NE(d.status().message().find(std::string("'") + c.text + "'"), std::string::npos)
        << "quotes the text: " << d.status().message();
  }
}

// ---- Front, choices and wording ----

TEST(Analysis, ParetoFrontKeepsOnlyUndominatedPointsFastestFirst) {
  //                       0          1          2          3          4          5
  std::vector<TimeCost> p{{10, 5.0}, {20, 2.0}, {15, 6.0}, {30, 1.0}, {20, 2.0}, {40, 1.0}};
  // 2 is beaten by 0 on both; 5 by 3 (slower, same cost); 1 and 4 are equal: both kept.
  EXPECT_EQ(pareto_front(p), (std::vector<size_t>{0, 1, 4, 3}));
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{5, 5}}), std::vector<size_t>{0});
}

TEST(Analysis, CheapestAndFastestBreakTiesDeterministically) {
  std::vector<TimeCost> p{{10, 3}, {5, 3}, {5, 4}, {20, 1}, {20, 1}};
  EXPECT_EQ(cheapest(p), 3u);  // 3 and 4 tie: the lower index
  EXPECT_EQ(fastest(p), 1u);   // 1 and 2 tie on time: the cheaper
  EXPECT_FALSE(cheapest({}).has_value());
  EXPECT_FALSE(fastest({}).has_value());
}

TEST(Analysis, DeadlinePicksTheCheapestInTimeOrTheClosest) {
  std::vector<TimeCost> p{{3600, 9}, {7200, 4}, {7300, 2}, {1800, 20}};
  DeadlineChoice two_hours = choose_for_deadline(p, 7200);  // exactly on time counts
  EXPECT_EQ(two_hours.meets, 1u);
  EXPECT_FALSE(two_hours.closest.has_value());
  DeadlineChoice one_hour = choose_for_deadline(p, 3600);
  EXPECT_EQ(one_hour.meets, 0u);
  DeadlineChoice ten_minutes = choose_for_deadline(p, 600);
  EXPECT_FALSE(ten_minutes.meets.has_value());
  EXPECT_EQ(ten_minutes.closest, 3u);
  EXPECT_EQ(choose_for_deadline(p, 1e9).meets, 2u);
}

TEST(Analysis, RatioWording) {
  EXPECT_EQ(speed_phrase(10, 31), "3.1x faster");
  EXPECT_EQ(speed_phrase(31, 10), "3.1x slower");
  EXPECT_EQ(speed_phrase(10, 10.2), "about as fast");
  EXPECT_EQ(speed_phrase(10.2, 10), "about as fast");
  EXPECT_EQ(cost_phrase(1.8, 1), "costs 1.8x more");
  EXPECT_EQ(cost_phrase(0.55, 1), "costs 45% less");
  EXPECT_EQ(cost_phrase(1.02, 1), "costs about the same");
  EXPECT_EQ(cost_phrase(0, 1), "of unknown cost");
  EXPECT_EQ(comparison_sentence("A", {10, 1.8}, "B", {31, 1.0}),
            "Compared with B, A is 3.1x faster and costs 1.8x more.");
}

TEST(Analysis, PrecisionOrder) {
  EXPECT_LT(precision_rank("fp32"), precision_rank("bf16"));
  EXPECT_LT(precision_rank("bf16"), precision_rank("fp16"));
  EXPECT_LT(precision_rank("fp16"), precision_rank("int8"));
  EXPECT_LT(precision_rank("int8"), precision_rank("fp8"));
  EXPECT_EQ(precision_rank("fp8"), precision_rank(""));
  EXPECT_TRUE(is_gpu_device("cuda"));
  EXPECT_TRUE(is_gpu_device("cuda:3"));
  EXPECT_TRUE(is_gpu_device("cuda:all"));
  EXPECT_TRUE(is_gpu_device("cuda:0,1"));
  EXPECT_FALSE(is_gpu_device("cpu"));
  EXPECT_FALSE(is_gpu_device(""));
}

// ---- Formatting ----

TEST(Format, FixedRules) {
  EXPECT_EQ(sig(0.0012345), "0.00123");
  EXPECT_EQ(sig(1234.6), "1235");
  EXPECT_EQ(sig(9.996), "10.0");
  EXPECT_EQ(sig(42.25), "42.2");  // round half to even on the exact binary value
  EXPECT_EQ(sig(0), "0");
  EXPECT_EQ(count(120000), "120,000");
  EXPECT_EQ(count(-1234), "-1,234");
  EXPECT_EQ(count(999), "999");
  EXPECT_EQ(duration(0.4123), "0.412 s");
  EXPECT_EQ(duration(169.2), "2.82 min");
  EXPECT_EQ(duration(8100), "2.25 h");
  EXPECT_EQ(duration(3 * 86400), "3.00 days");
  EXPECT_EQ(usd(0.0071234), "$0.00712");
  EXPECT_EQ(percent(0.3312), "33.1%");
  EXPECT_EQ(gib(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(times(3.14), "3.1x");
  EXPECT_EQ(plus_minus({10, 9, 11}), "± 10.0%");
  EXPECT_EQ(plus_minus({10, 10, 10}), "± 0.0%");
  EXPECT_EQ(plus_minus({0, 0, 0}), "");
  EXPECT_EQ(tick_label(20000, 0), "20k");
  EXPECT_EQ(tick_label(12500, 0), "12.5k");
  EXPECT_EQ(tick_label(2500000, 0), "2.5M");
  EXPECT_EQ(tick_label(0.25, 2), "0.25");
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(markdown_escape("#a|b_c*d"), "\\#a\\|b\\_c\\*d");
}

// ---- The model from the fixture records ----

TEST(Model, FromTheFixture) {
  Options options;
  options.deadline_seconds = 60;
  options.deadline_text = "1m";
  Result<ReportModel> built = build_model(fixture(), options);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const ReportModel& m = *built;
  EXPECT_EQ(m.records, 15u);
  EXPECT_EQ(m.points.size(), 14u);
  EXPECT_EQ(m.corpus_rows, 120000);  // the parquet data set's rows
  EXPECT_FALSE(m.corpus_rows_given);
  ASSERT_EQ(m.data_sets.size(), 2u);
  EXPECT_EQ(m.data_sets[0].shape, "json-3");
  EXPECT_EQ(m.data_sets[1].rows, 120000);
  ASSERT_EQ(m.failed.size(), 1u);
  EXPECT_EQ(m.failed[0].machine, "p3dn.24xlarge");
  EXPECT_EQ(m.failed[0].batch_size, 2240);
  EXPECT_NE(m.failed[0].reason.find("out of memory"), std::string::npos);
  EXPECT_EQ(m.failed[0].source, "records.jsonl: line 9");
  EXPECT_EQ(m.sources, std::vector<std::string>{"records.jsonl"});
  EXPECT_TRUE(m.any_gpu_monitor);

  const Point* p38 = find_point(m, "p3.8xlarge", "fp32", "json-3", 160);
  const Point* p3dn = find_point(m, "p3dn.24xlarge", "fp32", "json-3", 320);
  ASSERT_TRUE(p38 && p3dn);
  // The study's 33% vs 17% (the fixture's GPUs differ by +-1 point).
  EXPECT_NEAR(p38->gpu_memory_peak, 0.33, 0.005);
  EXPECT_NEAR(p3dn->gpu_memory_peak, 0.17, 0.005);
  EXPECT_NEAR(p38->gpu_memory_peak_max, 0.34, 0.005);
  EXPECT_EQ(p38->gpus_monitored, 4);
  EXPECT_EQ(p3dn->gpus_monitored, 8);
  EXPECT_EQ(p38->gpus, 4);
  EXPECT_EQ(m.configs[p38->config].gpus, 4);
  EXPECT_EQ(m.configs[p38->config].description,
            "cuda:all fp32 seed json-3, threads auto, 2 tokenizer threads, max length 512");
  // Medians and projection: 42.3 s for 30,000 rows -> 169.2 s for 120,000 rows at $1.66/h.
  EXPECT_DOUBLE_EQ(p38->wall_seconds.median, 42.3);
  EXPECT_DOUBLE_EQ(p38->wall_seconds.min, 41.8);
  EXPECT_NEAR(p38->corpus_seconds.median, 169.2, 1e-9);
  EXPECT_NEAR(p38->corpus_usd.median, 169.2 / 3600 * 1.66, 1e-12);
  EXPECT_NEAR(p38->run_usd.median, 42.3 / 3600 * 1.66, 1e-12);
  EXPECT_NEAR(p38->usd_per_million_rows.median, 42.3 / 3600 * 1.66 * 1e6 / 30000, 1e-9);

  // Unpriced laptop, synthetic c5 int8.
  for (const Configuration& c : m.configs) {
    EXPECT_EQ(c.usd_per_hour > 0, c.machine != "laptop") << c.name;
    EXPECT_EQ(c.synthetic, c.machine == "c5.12xlarge" && c.precision == "int8") << c.name;
  }
  // Short names carry only the fields that differ within a machine.
  EXPECT_EQ(m.configs[p38->config].name, "p3.8xlarge fp32 seed json-3");

  // Pareto front: p3dn bf16 (fastest), p3.8 bf16 batch 280, c5 int8 (cheapest).
  ASSERT_EQ(m.pareto.size(), 3u);
  EXPECT_EQ(m.configs[m.points[m.pareto[0]].config].machine, "p3dn.24xlarge");
  EXPECT_EQ(m.configs[m.points[m.pareto[1]].config].machine, "p3.8xlarge");
  EXPECT_EQ(m.points[m.pareto[1]].batch_size, 280);
  EXPECT_EQ(m.configs[m.points[m.pareto[2]].config].machine, "c5.12xlarge");

  EXPECT_TRUE(
      contains(answer_paragraphs(m), "Cheapest: c5.12xlarge int8 tokens json-3 synthetic, batch size 480"));
  EXPECT_TRUE(contains(answer_paragraphs(m), "Fastest: p3dn.24xlarge bf16 tokens json-3, batch size 560"));
  EXPECT_TRUE(contains(answer_paragraphs(m), "is 2.5x faster and costs 2.3x more."));
  EXPECT_TRUE(contains(answer_paragraphs(m),
                       "Deadline 1m (1.00 min): the cheapest configuration that finishes the corpus within "
                       "it is p3.8xlarge bf16 tokens json-3, batch size 280"));
  EXPECT_TRUE(
      contains(answer_paragraphs(m), "Synthetic model: c5.12xlarge int8 tokens json-3 synthetic ran"));
  EXPECT_TRUE(contains(answer_paragraphs(m), "2 different data sets"));
  EXPECT_TRUE(contains(answer_paragraphs(m), "1 point failed"));
  EXPECT_TRUE(
      contains(answer_paragraphs(m), "Unpriced (no instance with an hourly price in the records): laptop"));
  EXPECT_FALSE(contains(answer_paragraphs(m), "Warning")) << "one price list: nothing to warn about";
}

TEST(Model, DeadlineNoneMeetsNamesTheClosest) {
  Options options;
  options.deadline_seconds = 10;
  options.deadline_text = "10s";
  Result<ReportModel> m = build_model(fixture(), options);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(contains(answer_paragraphs(*m),
                       "Deadline 10s (10.0 s): no priced configuration finishes the corpus within it. "
                       "The closest is p3dn.24xlarge bf16 tokens json-3, batch size 560, which takes "
                       "32.4 s (3.2x the deadline)"));
}

TEST(Model, CorpusRowsOverride) {
  Options options;
  options.corpus_rows = 1000000;
  Result<ReportModel> m = build_model(fixture(), options);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->corpus_rows_given);
  EXPECT_EQ(m->corpus_rows, 1000000);
  const Point* p = find_point(*m, "p3.8xlarge", "fp32", "json-3", 160);
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->corpus_seconds.median, 42.3 * 1000000 / 30000, 1e-6);
  EXPECT_TRUE(contains(answer_paragraphs(*m), "a corpus of 1,000,000 rows (--corpus-rows)"));
}

TEST(Model, WithoutGpuRecordsShowsHostMemoryInstead) {
  std::vector<SourcedRecord> cpu_only;
  for (SourcedRecord& r : fixture()) {
    if (r.record.config.device == "cpu") cpu_only.push_back(r);
  }
  Result<ReportModel> m = build_model(cpu_only, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->any_gpu_monitor);
  EXPECT_EQ(m->corpus_rows, 30000);
  EXPECT_EQ(m->data_sets.size(), 1u);
  EXPECT_TRUE(contains(answer_paragraphs(*m), "Every point classified the same data"));
  EXPECT_TRUE(contains(answer_paragraphs(*m), "No point failed."));
  EXPECT_TRUE(contains(answer_paragraphs(*m), "No --deadline was given"));
  const std::string md = render_markdown(build_document(*m));
  EXPECT_NE(md.find("No point ran on a GPU"), std::string::npos);
  EXPECT_NE(md.find("(host-memory.svg)"), std::string::npos);
  EXPECT_EQ(md.find("gpu-memory.svg"), std::string::npos);
}

TEST(Model, MergesRecordsOfTheSamePointAndKeepsOrderStable) {
  std::vector<SourcedRecord> records = fixture();
  SourcedRecord again = records[0];  // p3.8xlarge fp32 json-3 batch 160, 42.3 s median
  again.record.wall_seconds = {44.3, 40.0, 50.0};
  again.record.rows_per_second = {30000 / 44.3, 30000 / 50.0, 30000 / 40.0};
  again.origin = "more.jsonl: line 1";
  records.push_back(again);
  Result<ReportModel> m = build_model(records, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->points.size(), 14u);
  const Point* p = find_point(*m, "p3.8xlarge", "fp32", "json-3", 160);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->records, 2);
  EXPECT_DOUBLE_EQ(p->wall_seconds.median, 43.3);  // median of 42.3 and 44.3
  EXPECT_DOUBLE_EQ(p->wall_seconds.min, 40.0);
  EXPECT_DOUBLE_EQ(p->wall_seconds.max, 50.0);
  EXPECT_EQ(p->sources, (std::vector<std::string>{"records.jsonl", "more.jsonl"}));
  // Input order does not change the output.
  std::vector<SourcedRecord> reversed(records.rbegin(), records.rend());
  Result<ReportModel> r = build_model(reversed, Options{});
  ASSERT_TRUE(r.ok());
  const std::string a = render_markdown(build_document(*r)), b = render_markdown(build_document(*m));
  EXPECT_EQ(a.substr(a.find("## Answer")), b.substr(b.find("## Answer")));
}

TEST(Model, NoRecordsIsAnError) {
  Result<ReportModel> m = build_model({}, Options{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
}

TEST(Model, OnlyFailuresStillReport) {
  std::vector<SourcedRecord> failed;
  for (SourcedRecord& r : fixture()) {
    if (!r.record.ok()) failed.push_back(r);
  }
  Result<ReportModel> m = build_model(failed, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->points.empty());
  EXPECT_TRUE(contains(answer_paragraphs(*m), "No benchmark point succeeded"));
  const Document doc = build_document(*m);
  EXPECT_NE(render_markdown(doc).find("CUDA out of memory"), std::string::npos);
}

TEST(Reprice, UsesTheListPriceAndKeepsTheRecordsModifiers) {
  std::vector<SourcedRecord> records = fixture();
  records[0].record.instance->spot_discount = 0.5;
  cost::PriceList list;
  list.name = "mine";
  list.source = "test";
  list.date = "2026-12";
  auto instance = [](const char* name, double usd_per_hour) {
    cost::Instance i;
    i.name = name;
    i.usd_per_hour = usd_per_hour;
    return i;
  };
  list.instances = {instance("p3.8xlarge", 2.0), instance("p3dn.24xlarge", 8.0),
                    instance("c5.12xlarge", 1.0)};
  ASSERT_TRUE(reprice(records, {list}, "").ok());
  EXPECT_DOUBLE_EQ(records[0].record.instance->usd_per_hour, 1.0);  // 2.0 at a 50% spot discount
  EXPECT_DOUBLE_EQ(records[1].record.instance->usd_per_hour, 2.0);
  EXPECT_EQ(records[1].record.instance->price_list, "mine");
  EXPECT_FALSE(records[1].record.cost.has_value());
  EXPECT_FALSE(records.back().record.instance.has_value());  // the laptop stays unpriced

  list.instances.pop_back();  // no c5.12xlarge
  std::vector<SourcedRecord> again = fixture();
  Status st = reprice(again, {list}, "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("records.jsonl: line 11"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("c5.12xlarge"), std::string::npos) << st.message();
  Status no_list = reprice(again, {list}, "nope");
  EXPECT_NE(no_list.message().find("no price list named 'nope'"), std::string::npos) << no_list.message();
}

// The user's lists come first even when they follow the built-in ones (as
// cost::price_lists_with returns them); an instance they lack is priced from
// the current built-in list, not seed-2021, with that instance's own source
// and date.
TEST(Reprice, SearchesTheUsersListsThenTheCurrentThenSeed2021) {
  Result<std::vector<cost::PriceList>> lists = cost::price_lists_with({});
  ASSERT_TRUE(lists.ok());
  cost::PriceList mine;
  mine.name = "mine";
  mine.source = "test";
  mine.date = "2026-12";
  cost::Instance p3;
  p3.name = "p3.8xlarge";
  p3.usd_per_hour = 2.0;
  mine.instances = {p3};
  lists->push_back(mine);
  std::vector<SourcedRecord> records = fixture();
  ASSERT_TRUE(reprice(records, *lists, "").ok());
  const record::InstanceInfo& p38 = *records[0].record.instance;
  EXPECT_EQ(p38.price_list, "mine");
  EXPECT_DOUBLE_EQ(p38.usd_per_hour, 2.0);
  EXPECT_EQ(p38.price_source, "test");
  EXPECT_EQ(p38.price_date, "2026-12");
  const record::InstanceInfo& p3dn = *records[5].record.instance;
  ASSERT_EQ(p3dn.name, "p3dn.24xlarge");
  EXPECT_EQ(p3dn.price_list, "aws-2026");
  Result<cost::PricedInstance> aws = cost::find_instance(*lists, "p3dn.24xlarge", "aws-2026");
  ASSERT_TRUE(aws.ok());
  EXPECT_DOUBLE_EQ(p3dn.usd_per_hour, aws->instance->usd_per_hour);
  EXPECT_EQ(p3dn.price_source, aws->source());
  EXPECT_EQ(p3dn.price_date, aws->date());
  EXPECT_NE(p3dn.price_date, "2026-12");
}

// ---- Review findings ----

// A CPU point's monitor.gpus (the idle GPUs of its machine) is not GPU
// memory; a GPU point's rows per GPU divide by its own GPUs.
TEST(Model, GpuMemoryCountsOnlyGpuPointsAndTheirOwnGpus) {
  std::vector<SourcedRecord> all = fixture();
  SourcedRecord cpu = all[11];  // c5.12xlarge cpu fp32 seed, batch 480
  ASSERT_EQ(cpu.record.config.device, "cpu");
  for (int g = 0; g < 8; ++g) {
    GpuUsage u;
    u.index = g;
    u.memory_total_bytes = int64_t(16) << 30;
    u.memory_used_peak_bytes = int64_t(15) << 30;
    u.memory_used_mean_bytes = double(int64_t(15) << 30);
    u.utilization_mean = 0.9;
    cpu.record.monitor.gpus.push_back(u);
  }
  SourcedRecord gpu = all[0];          // p3.8xlarge cuda:all, batch 160, 4 GPUs monitored
  SourcedRecord unmonitored = all[3];  // p3.8xlarge cuda:all bf16, batch 280
  unmonitored.record.monitor.gpus.clear();
  SourcedRecord one_gpu = all[0];
  one_gpu.record.config.device = "cuda:0";
  one_gpu.record.config.batch_size = 40;
  one_gpu.record.config.batch_size_rule = "";
  one_gpu.record.monitor.gpus.clear();

  Result<ReportModel> cpu_only = build_model({cpu}, Options{});
  ASSERT_TRUE(cpu_only.ok());
  EXPECT_FALSE(cpu_only->any_gpu_monitor) << "a CPU point with stray monitor.gpus is not a GPU record";
  EXPECT_EQ(cpu_only->points[0].gpus_monitored, 0);
  EXPECT_EQ(cpu_only->points[0].gpus, 0);
  const std::string cpu_md = render_markdown(build_document(*cpu_only));
  EXPECT_EQ(cpu_md.find("gpu-memory.svg"), std::string::npos);
  EXPECT_NE(cpu_md.find("(host-memory.svg)"), std::string::npos);

  Result<ReportModel> m = build_model({cpu, gpu, unmonitored, one_gpu}, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->any_gpu_monitor);
  const Point* c5 = find_point(*m, "c5.12xlarge", "cpu", 480);
  const Point* p38 = find_point(*m, "p3.8xlarge", "cuda:all", 160);
  const Point* p38_unmonitored = find_point(*m, "p3.8xlarge", "cuda:all", 280);
  const Point* p38_one = find_point(*m, "p3.8xlarge", "cuda:0", 40);
  ASSERT_TRUE(c5 && p38 && p38_unmonitored && p38_one);
  EXPECT_EQ(c5->gpus_monitored, 0);
  EXPECT_EQ(c5->gpu_memory_peak, 0);
  EXPECT_EQ(p38->gpus_monitored, 4);
  EXPECT_EQ(p38->gpus, 4);
  EXPECT_NEAR(p38->gpu_memory_peak, 0.33, 0.005);
  EXPECT_EQ(p38_unmonitored->gpus_monitored, 0);
  EXPECT_EQ(p38_unmonitored->gpus, 4);  // the instance's GPUs
  EXPECT_EQ(p38_one->gpus, 1);          // cuda:0

  const Document doc = build_document(*m);
  ASSERT_FALSE(table_rows(doc, "memory", "Configuration").empty());
  const size_t per_gpu = column(doc, "memory", "Configuration", "Rows per GPU");
  const size_t gpus = column(doc, "memory", "Configuration", "GPUs");
  const size_t memory = column(doc, "memory", "Configuration", "Memory per GPU");
  std::map<std::string, std::vector<std::string>> by_point = gpu_rows(doc);
  EXPECT_EQ(by_point.size(), 3u) << "GPU points only";
  for (const auto& [key, row] : by_point) EXPECT_EQ(key.find("c5.12xlarge"), std::string::npos) << key;
  const std::string p38_name = m->configs[p38->config].name;
  ASSERT_TRUE(by_point.count(p38_name + " 160 (40xgpus)")) << p38_name;
  EXPECT_EQ(by_point[p38_name + " 160 (40xgpus)"][per_gpu], "40.0");
  EXPECT_EQ(by_point[p38_name + " 160 (40xgpus)"][gpus], "4");
  const std::string unmonitored_key = m->configs[p38_unmonitored->config].name + " 280 (70xgpus)";
  ASSERT_TRUE(by_point.count(unmonitored_key)) << unmonitored_key;
  EXPECT_EQ(by_point[unmonitored_key][per_gpu], "70.0");
  EXPECT_EQ(by_point[unmonitored_key][memory], "not monitored");
  const std::string one_key = m->configs[p38_one->config].name + " 40";
  ASSERT_TRUE(by_point.count(one_key)) << one_key;
  EXPECT_EQ(by_point[one_key][per_gpu], "40.0");
  // The CPU point keeps the host memory view.
  bool host_chart = false;
  for (const Chart& c : doc.charts) {
    if (c.file != "host-memory.svg") continue;
    host_chart = true;
    EXPECT_NE(c.standalone.find("c5.12xlarge"), std::string::npos);
  }
  EXPECT_TRUE(host_chart);
}

// cuda:0,1 runs on two GPUs (backend device grammar), not one and not the
// instance's four: its rows per GPU divide by 2.
TEST(Model, ListedGpusCountEachGpu) {
  std::vector<SourcedRecord> all = fixture();
  SourcedRecord two = all[0];  // p3.8xlarge (4 GPUs) cuda:all, batch 160
  ASSERT_EQ(two.record.instance->gpus, 4);
  two.record.config.device = "cuda:0,1";
  two.record.config.batch_size = 80;
  two.record.config.batch_size_rule = "";
  two.record.monitor.gpus.clear();
  SourcedRecord three = two;
  three.record.config.device = "cuda:1,2,3";
  three.record.config.batch_size = 120;

  // all[0] is monitored: the report then has its table of GPU points.
  Result<ReportModel> m = build_model({all[0], two, three}, Options{});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Point* p2 = find_point(*m, "p3.8xlarge", "cuda:0,1", 80);
  const Point* p3 = find_point(*m, "p3.8xlarge", "cuda:1,2,3", 120);
  ASSERT_TRUE(p2 && p3);
  EXPECT_EQ(m->configs[p2->config].gpus, 2);
  EXPECT_EQ(p2->gpus, 2);
  EXPECT_EQ(m->configs[p3->config].gpus, 3);
  EXPECT_EQ(p3->gpus, 3);
  EXPECT_TRUE(p2->priced);

  const Document doc = build_document(*m);
  const size_t per_gpu = column(doc, "memory", "Configuration", "Rows per GPU");
  const size_t gpus = column(doc, "memory", "Configuration", "GPUs");
  std::map<std::string, std::vector<std::string>> by_point = gpu_rows(doc);
  const std::string key2 = m->configs[p2->config].name + " 80";
  ASSERT_TRUE(by_point.count(key2)) << key2;
  EXPECT_EQ(by_point[key2][gpus], "2");
  EXPECT_EQ(by_point[key2][per_gpu], "40.0");
  const std::string key3 = m->configs[p3->config].name + " 120";
  ASSERT_TRUE(by_point.count(key3)) << key3;
  EXPECT_EQ(by_point[key3][gpus], "3");
  EXPECT_EQ(by_point[key3][per_gpu], "40.0");
}

// bench --max-batch-tokens 2048,4096 (and --max-length, --tokenizer-threads)
// resolve to the same batch size: they are different configurations.
TEST(Model, TokenBudgetMaxLengthAndTokenizerThreadsKeepPointsApart) {
  std::vector<SourcedRecord> records = fixture();
  const size_t points = 14;
  SourcedRecord budget = records[2];  // p3.8xlarge bf16 tokens, batch 160, 16384 tokens per batch
  ASSERT_EQ(budget.record.config.max_batch_tokens, 16384);
  budget.record.config.max_batch_tokens = 2048;
  budget.record.wall_seconds = {20.0, 19.0, 21.0};
  SourcedRecord length = records[2];
  length.record.config.max_length = 128;
  SourcedRecord tokenizer = records[2];
  tokenizer.record.config.tokenizer_threads = 4;
  // Seed batching has no token budget: a different max_batch_tokens is the
  // same point run again.
  SourcedRecord seed = records[0];
  seed.record.config.max_batch_tokens = 4096;
  // An embedding run of the same configuration (`bench --embed`) is another one.
  SourcedRecord embed = records[2];
  embed.record.config.task = "embed";
  records.push_back(budget);
  records.push_back(length);
  records.push_back(tokenizer);
  records.push_back(seed);
  records.push_back(embed);
  Result<ReportModel> m = build_model(records, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->points.size(), points + 4);
  std::set<std::string> names;
  for (const Configuration& c : m->configs) {
    EXPECT_TRUE(names.insert(c.name).second) << "two configurations named " << c.name;
    if (c.machine != "p3.8xlarge" || c.precision != "bf16") continue;
    if (c.max_batch_tokens == 2048) {
      EXPECT_NE(c.name.find("2048 tokens/batch"), std::string::npos) << c.name;
      EXPECT_NE(c.description.find("at most 2,048 tokens per batch"), std::string::npos) << c.description;
    }
    if (c.max_length == 128) {
      EXPECT_NE(c.name.find("max length 128"), std::string::npos) << c.name;
      EXPECT_NE(c.description.find("max length 128"), std::string::npos) << c.description;
    }
    if (c.tokenizer_threads == 4) {
      EXPECT_NE(c.name.find("4 tokenizer threads"), std::string::npos) << c.name;
      EXPECT_NE(c.description.find("4 tokenizer threads"), std::string::npos) << c.description;
    }
    EXPECT_EQ(c.task == "embed", c.name.find(" embed") != std::string::npos) << c.name;
    EXPECT_EQ(c.task == "embed", c.description.find(", embedding") != std::string::npos) << c.description;
  }
  const Point* seed_point = find_point(*m, "p3.8xlarge", "fp32", "json-3", 160);
  ASSERT_TRUE(seed_point);
  EXPECT_EQ(seed_point->records, 2);
  EXPECT_EQ(m->configs[seed_point->config].max_batch_tokens, 0);
  // The configurations table shows the new fields.
  const Document doc = build_document(*m);
  const size_t budget_column = column(doc, "configurations", "Configuration", "Tokens per batch");
  std::set<std::string> budgets;
  for (const auto& row : table_rows(doc, "configurations", "Configuration"))
    budgets.insert(row[budget_column]);
  EXPECT_EQ(budgets, (std::set<std::string>{"-", "2,048", "16,384"}));
}

// Prices from different lists (or dates) for the report's points: the
// answer says so and how to re-price on one list.
TEST(Model, MixedPriceListsAreWarned) {
  std::vector<SourcedRecord> records = fixture();
  record::InstanceInfo& i = *records[0].record.instance;  // p3.8xlarge, seed-2021 in the fixture
  i.price_list = "aws-2026";
  i.price_date = "2026-01-21";
  i.price_source = "a catalog";
  i.on_demand_usd_per_hour = i.usd_per_hour = 12.24;
  Result<ReportModel> m = build_model(records, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(contains(answer_paragraphs(*m),
                       "Warning: the costs below mix prices from different price lists or dates: aws-2026 "
                       "(2026-01-21) for p3.8xlarge; seed-2021 (2021) for c5.12xlarge, p3.8xlarge and "
                       "p3dn.24xlarge."));
  EXPECT_TRUE(contains(answer_paragraphs(*m), "infercost report --price-list aws-2026"));
  // It comes before the answers it qualifies.
  size_t warning = 0, cheapest = 0;
  const std::vector<std::string> answer = answer_paragraphs(*m);
  for (size_t k = 0; k < answer.size(); ++k) {
    if (answer[k].rfind("Warning", 0) == 0) warning = k;
    if (answer[k].rfind("Cheapest", 0) == 0) cheapest = k;
  }
  EXPECT_LT(warning, cheapest);

  // One list, but one instance at two dates: also warned.
  std::vector<SourcedRecord> dated = fixture();
  dated[0].record.instance->price_date = "2020";
  Result<ReportModel> d = build_model(dated, Options{});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(contains(answer_paragraphs(*d), "seed-2021 (2020) for p3.8xlarge; seed-2021 (2021) for"));

  // Re-priced on one list: no warning.
  Result<std::vector<cost::PriceList>> lists = cost::price_lists_with({});
  ASSERT_TRUE(lists.ok());
  ASSERT_TRUE(reprice(records, *lists, "aws-2026").ok());
  Result<ReportModel> one = build_model(records, Options{});
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(contains(answer_paragraphs(*one), "Warning")) << answer_paragraphs(*one)[1];
}

// The hourly price and every cost figure come from the cost module.
TEST(Model, CostFiguresAreTheCostModules) {
  std::vector<SourcedRecord> records = fixture();
  record::Record& r = records[0].record;  // p3.8xlarge fp32 seed json-3, batch 160
  r.instance->usd_per_hour = 0;           // only the on-demand price and the modifiers
  r.instance->spot_discount = 0.5;
  r.instance->platform_usd_per_hour = 0.1;
  r.instance->machines = 2;
  r.cost.reset();
  Result<ReportModel> m = build_model(records, Options{});
  ASSERT_TRUE(m.ok());
  const Point* p = find_point(*m, "p3.8xlarge", "fp32", "json-3", 160);
  ASSERT_TRUE(p);
  cost::Instance instance;
  instance.usd_per_hour = 1.66;
  const double hourly = cost::hourly_usd(instance, {0.5, 0.1, 2});
  EXPECT_DOUBLE_EQ(m->configs[p->config].usd_per_hour, hourly);
  const cost::CostEstimate median = cost::estimate_cost(hourly, 42.3, 30000, 840000, 120000);
  const cost::CostEstimate fastest = cost::estimate_cost(hourly, 41.8, 30000, 840000, 120000);
  EXPECT_DOUBLE_EQ(p->run_usd.median, median.cost_to_solution_usd);
  EXPECT_DOUBLE_EQ(p->run_usd.min, fastest.cost_to_solution_usd);
  EXPECT_DOUBLE_EQ(p->usd_per_million_rows.median, median.usd_per_million_rows);
  EXPECT_DOUBLE_EQ(p->usd_per_million_tokens, median.usd_per_million_tokens);
  EXPECT_DOUBLE_EQ(p->corpus_seconds.median, median.corpus_seconds);
  EXPECT_DOUBLE_EQ(p->corpus_usd.median, median.corpus_usd);
  EXPECT_DOUBLE_EQ(p->corpus_usd.min, fastest.corpus_usd);
}

// Throughput keeps models apart and names the configuration of each bar.
TEST(Document, ThroughputGroupsByModelAndNamesTheConfiguration) {
  std::vector<SourcedRecord> records = fixture();
  SourcedRecord real = records[12];  // c5.12xlarge int8 tokens, synthetic model, 20.1 s
  ASSERT_TRUE(real.record.model.synthetic);
  real.record.model.name = "distilbert-base-uncased-finetuned-sst-2-english";
  real.record.model.synthetic = false;
  real.record.wall_seconds = {40.0, 39.0, 41.0};
  real.record.rows_per_second = {750.0, 731.7, 769.2};
  records.push_back(real);
  Result<ReportModel> m = build_model(records, Options{});
  ASSERT_TRUE(m.ok());
  const Document doc = build_document(*m);
  const size_t model = column(doc, "throughput", "Machine", "Model");
  const size_t config = column(doc, "throughput", "Machine", "Fastest configuration");
  const size_t precision = column(doc, "throughput", "Machine", "Precision");
  std::set<std::string> int8_models, int8_configs;
  for (const auto& row : table_rows(doc, "throughput", "Machine")) {
    if (row[0] != "c5.12xlarge" || row[precision] != "int8") continue;
    int8_models.insert(row[model]);
    int8_configs.insert(row[config]);
  }
  EXPECT_EQ(int8_models, (std::set<std::string>{"distilbert-base-uncased-finetuned-sst-2-english",
                                                "synthetic-distilbert-base (synthetic)"}));
  std::set<std::string> expected;
  for (const Configuration& c : m->configs) {
    if (c.machine == "c5.12xlarge" && c.precision == "int8") expected.insert(c.name);
  }
  EXPECT_EQ(int8_configs, expected);
  EXPECT_EQ(expected.size(), 2u);
}

// Each failed point names the file and line of its record.
TEST(Document, FailedPointsNameTheFileAndLine) {
  Result<ReportModel> m = build_model(fixture(), Options{});
  ASSERT_TRUE(m.ok());
  const Document doc = build_document(*m);
  const auto rows = table_rows(doc, "failed", "Machine");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].back(), "records.jsonl: line 9");
  EXPECT_EQ(column(doc, "failed", "Machine", "File and line"), rows[0].size() - 1);
}

}  // namespace
}  // namespace infercost::report
