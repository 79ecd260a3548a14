#include "infercost/report/analysis.h"

#include <gtest/gtest.h>

#include "infercost/report/format.h"
#include "infercost/report/report.h"

namespace infercost::report {
namespace {

const std::string kFixture = std::string(INFERCOST_TEST_DATA_DIR) + "/report/records.jsonl";

std::vector<LoadedRecord> fixture() {
  auto loaded = load({kFixture});
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  std::vector<LoadedRecord> out = loaded.ok() ? *loaded : std::vector<LoadedRecord>{};
  for (LoadedRecord& r : out) r.source = "records.jsonl";
  return out;
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

TEST(Analysis, ProjectsToTheCorpusAtTheMeasuredRate) {
  EXPECT_DOUBLE_EQ(project_seconds(30000, 42.3, 120000), 169.2);
  EXPECT_DOUBLE_EQ(project_seconds(30000, 42.3, 30000), 42.3);
  EXPECT_EQ(project_seconds(0, 42.3, 120000), 0);
  EXPECT_EQ(project_seconds(30000, 0, 120000), 0);
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

  // Pareto front: p3dn fp16 (fastest), p3.8 fp16 batch 280, c5 int8 (cheapest).
  ASSERT_EQ(m.pareto.size(), 3u);
  EXPECT_EQ(m.configs[m.points[m.pareto[0]].config].machine, "p3dn.24xlarge");
  EXPECT_EQ(m.configs[m.points[m.pareto[1]].config].machine, "p3.8xlarge");
  EXPECT_EQ(m.points[m.pareto[1]].batch_size, 280);
  EXPECT_EQ(m.configs[m.points[m.pareto[2]].config].machine, "c5.12xlarge");

  EXPECT_TRUE(contains(m.answer, "Cheapest: c5.12xlarge int8 tokens json-3 synthetic, batch size 480"));
  EXPECT_TRUE(contains(m.answer, "Fastest: p3dn.24xlarge fp16 tokens json-3, batch size 560"));
  EXPECT_TRUE(contains(m.answer, "is 2.5x faster and costs 2.3x more."));
  EXPECT_TRUE(contains(m.answer,
                       "Deadline 1m (1.00 min): the cheapest configuration that finishes the corpus within "
                       "it is p3.8xlarge fp16 tokens json-3, batch size 280"));
  EXPECT_TRUE(contains(m.answer, "Synthetic model: c5.12xlarge int8 tokens json-3 synthetic ran"));
  EXPECT_TRUE(contains(m.answer, "2 different data sets"));
  EXPECT_TRUE(contains(m.answer, "1 point failed"));
  EXPECT_TRUE(contains(m.answer, "Unpriced (no instance with an hourly price in the records): laptop"));
}

TEST(Model, DeadlineNoneMeetsNamesTheClosest) {
  Options options;
  options.deadline_seconds = 10;
  options.deadline_text = "10s";
  Result<ReportModel> m = build_model(fixture(), options);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(contains(m->answer,
                       "Deadline 10s (10.0 s): no priced configuration finishes the corpus within it. "
                       "The closest is p3dn.24xlarge fp16 tokens json-3, batch size 560, which takes "
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
  EXPECT_TRUE(contains(m->answer, "a corpus of 1,000,000 rows (--corpus-rows)"));
}

TEST(Model, WithoutGpuRecordsShowsHostMemoryInstead) {
  std::vector<LoadedRecord> cpu_only;
  for (LoadedRecord& r : fixture()) {
    if (r.record.config.device == "cpu") cpu_only.push_back(r);
  }
  Result<ReportModel> m = build_model(cpu_only, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->any_gpu_monitor);
  EXPECT_EQ(m->corpus_rows, 30000);
  EXPECT_EQ(m->data_sets.size(), 1u);
  EXPECT_TRUE(contains(m->answer, "Every point classified the same data"));
  EXPECT_TRUE(contains(m->answer, "No point failed."));
  EXPECT_TRUE(contains(m->answer, "No --deadline was given"));
  const std::string md = render_markdown(build_document(*m));
  EXPECT_NE(md.find("No record has GPU monitoring"), std::string::npos);
  EXPECT_NE(md.find("(host-memory.svg)"), std::string::npos);
  EXPECT_EQ(md.find("gpu-memory.svg"), std::string::npos);
}

TEST(Model, MergesRecordsOfTheSamePointAndKeepsOrderStable) {
  std::vector<LoadedRecord> records = fixture();
  LoadedRecord again = records[0];  // p3.8xlarge fp32 json-3 batch 160, 42.3 s median
  again.record.wall_seconds = {44.3, 40.0, 50.0};
  again.record.rows_per_second = {30000 / 44.3, 30000 / 50.0, 30000 / 40.0};
  again.source = "more.jsonl";
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
  std::vector<LoadedRecord> reversed(records.rbegin(), records.rend());
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
  std::vector<LoadedRecord> failed;
  for (LoadedRecord& r : fixture()) {
    if (!r.record.ok()) failed.push_back(r);
  }
  Result<ReportModel> m = build_model(failed, Options{});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->points.empty());
  EXPECT_TRUE(contains(m->answer, "No benchmark point succeeded"));
  const Document doc = build_document(*m);
  EXPECT_NE(render_markdown(doc).find("CUDA out of memory"), std::string::npos);
}

TEST(Reprice, UsesTheListPriceAndKeepsTheRecordsModifiers) {
  std::vector<LoadedRecord> records = fixture();
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
  std::vector<LoadedRecord> again = fixture();
  Status st = reprice(again, {list}, "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("records.jsonl"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("c5.12xlarge"), std::string::npos) << st.message();
  Status no_list = reprice(again, {list}, "nope");
  EXPECT_NE(no_list.message().find("no price list named 'nope'"), std::string::npos) << no_list.message();
}

}  // namespace
}  // namespace infercost::report
