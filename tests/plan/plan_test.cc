#include "plan/plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "plan/print.h"
#include "report/format.h"
#include "test_utils.h"

namespace infercost::plan {
namespace {

using infercost::testing::TempDir;

// The plan's model: 1 layer, hidden 2, FFN 4, so row_flops(L) = 64 L + 8 L^2.
const ModelShape kShape{1, 2, 4};

// Four rows of lengths 2, 2, 4, 4 in one file of 100 bytes.
ScanResult four_rows() {
  ScanResult s;
  FileScan f;
  f.path = "in.jsonl";
  f.format = "jsonl";
  f.rows = 4;
  f.tokens = 12;
  f.longest = 4;
  f.bytes = 100;
  s.files.push_back(f);
  s.rows = 4;
  s.tokens = 12;
  s.bytes = 100;
  s.max_length = 32;
  s.length_counts = {0, 0, 2, 0, 2};
  s.seed_padding.batching = "seed";
  s.seed_padding.padded_rows_at_length = {0, 0, 0, 0, 4};  // every row padded to 4
  s.tokens_padding.batching = "tokens";
  s.tokens_padding.padded_rows_at_length = {0, 0, 0, 0, 4};  // one batch of 4 rows padded to 4
  return s;
}
// FLOPs of four_rows(): real lengths 2 x (128 + 32) + 2 x (256 + 128); padded 4 x 384.
constexpr double kRealFlops = 1088;
constexpr double kPaddedFlops = 1536;

record::Record base_record() {
  record::Record r;
  r.sweep_id = "sw1";
  r.point = 1;
  r.points = 4;
  r.started_at = "2026-12-01T03:40:00Z";
  r.config.device = "cpu";
  r.config.precision = "fp32";
  r.config.batching = "tokens";
  r.config.batch_size = 256;
  r.config.max_length = 32;
  r.model.name = "m";
  r.model.layers = 1;
  r.model.hidden = 2;
  r.model.intermediate = 4;
  // 100 rows of lengths 9..16, 1000 real tokens: 64 x 1000 + 8 x 100 x 12.5^2 = 189000 FLOPs.
  r.rows = 100;
  r.tokens = 1000;
  r.padded_tokens = 1100;
  r.computed_tokens = 1000;
  r.data.rows = 100;
  r.data.tokens = 1000;
  r.data.files = 1;
  r.data.bytes = 5000;
  r.data.length_edges = {1, 9, 17};
  r.data.length_counts = {0, 100, 0};
  r.wall_seconds = {0.5, 0.5, 0.5};  // 378000 FLOP/s
  return r;
}

record::InstanceInfo priced(const std::string& name, const std::string& list, double usd, int machines = 1) {
  record::InstanceInfo i;
  i.name = name;
  i.price_list = list;
  i.on_demand_usd_per_hour = usd;
  i.machines = machines;
  i.usd_per_hour = usd * machines;
  return i;
}

std::vector<cost::PriceList> test_lists() {
  cost::PriceList list;
  list.name = "test-list";
  list.source = "tests";
  list.date = "2026";
  cost::Instance big;
  big.name = "cpu.big";
  big.usd_per_hour = 2.0;
  big.vcpus = 32;
  cost::Instance small;
  small.name = "cpu.small";
  small.usd_per_hour = 0.36;
  cost::Instance gpu;
  gpu.name = "gpu.one";
  gpu.usd_per_hour = 3.6;
  gpu.gpus = 1;
  gpu.gpu = "T4";
  list.instances = {big, small, gpu};
  return {list};
}

// A: cpu.big fp32 tokens, 378000 FLOP/s, priced $2/h from test-list.
// B: cpu.big int8 seed, another model shape (2 layers): 128 x 200 + 16 x 10 x 20^2 = 89600 FLOPs / 0.1 s.
// C: no instance ("laptop"), fp32 tokens, 189000 FLOP/s.
// D: failed.
// E: cpu.big bf16 tokens, 756000 FLOP/s, priced under old-list at $1/h x 2 machines.
// F: rare.box (no list holds it), priced $3/h by the record, 378000 FLOP/s.
// G: cpu.small fp32 tokens, ran these very inputs in 0.01 s.
std::vector<SourcedRecord> fixture_records() {
  std::vector<SourcedRecord> out;
  record::Record a = base_record();
  a.instance = priced("cpu.big", "test-list", 2.0);
  out.push_back({a, "r.jsonl: line 1"});

  record::Record b = base_record();
  b.instance = priced("cpu.big", "test-list", 2.0);
  b.config.precision = "int8";
  b.config.batching = "seed";
  b.model.layers = 2;
  b.rows = b.data.rows = 10;
  b.tokens = b.data.tokens = 50;
  b.padded_tokens = b.computed_tokens = 200;
  b.data.length_counts = {10, 0, 0};
  b.wall_seconds = {0.1, 0.1, 0.1};
  out.push_back({b, "r.jsonl: line 2"});

  record::Record c = base_record();
  c.label = "laptop";
  c.wall_seconds = {1.0, 1.0, 1.0};
  out.push_back({c, "r.jsonl: line 3"});

  record::Record d = base_record();
  d.instance = priced("cpu.big", "test-list", 2.0);
  d.status = "failed";
  d.error = "out of memory";
  out.push_back({d, "r.jsonl: line 4"});

  record::Record e = base_record();
  e.instance = priced("cpu.big", "old-list", 1.0, 2);
  e.config.precision = "bf16";
  e.wall_seconds = {0.25, 0.25, 0.25};
  out.push_back({e, "r.jsonl: line 5"});

  record::Record f = base_record();
  f.instance = priced("rare.box", "their-list", 3.0);
  out.push_back({f, "r.jsonl: line 6"});

  record::Record g = base_record();
  g.instance = priced("cpu.small", "test-list", 0.36);
  g.rows = g.data.rows = 4;
  g.tokens = g.data.tokens = 12;
  g.padded_tokens = 16;
  g.computed_tokens = 12;
  g.data.bytes = 100;
  g.data.length_counts = {4, 0, 0};  // 64 x 12 + 8 x 4 x 4.5^2 = 1416 FLOPs
  g.wall_seconds = {0.01, 0.009, 0.012};
  g.repetitions.resize(3);
  out.push_back({g, "r.jsonl: line 7"});
  return out;
}

PlanOptions options(int64_t corpus_rows) {
  PlanOptions o;
  o.price_lists = test_lists();
  o.corpus_rows = corpus_rows;
  o.model = kShape;
  o.model_name = "plan-model";
  o.inputs = {"in.jsonl"};
  o.model_dir = "model dir";
  return o;
}

const Prediction* find(const PlanResult& plan, const std::string& target, const std::string& batching,
                       const std::string& precision) {
  for (const Prediction& p : plan.predictions) {
    if (p.target == target && p.batching == batching && p.precision == precision) return &p;
  }
  return nullptr;
}

TEST(Plan, WorkOfThePolicies) {
  std::vector<SourcedRecord> none;
  Result<PlanResult> plan = make_plan(four_rows(), none, options(0));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_DOUBLE_EQ(plan->tokens_flops, kRealFlops);
  EXPECT_DOUBLE_EQ(plan->seed_flops, kPaddedFlops);
  EXPECT_DOUBLE_EQ(plan->tokens_padded_flops, kPaddedFlops);
  EXPECT_TRUE(plan->predictions.empty());
  // Without records every listed instance is unmeasured, with no break-even to show.
  ASSERT_EQ(plan->unmeasured.size(), 3u);
  EXPECT_FALSE(plan->unmeasured[0].has_break_even);
  EXPECT_EQ(
      plan->unmeasured[2].bench_command,
      "infercost bench in.jsonl --model 'model dir' --batching seed,tokens --device cuda --instance gpu.one "
      "--out gpu.one.jsonl");
  // Without the CUDA module: the GPU instance's command says so, the CPU ones carry no note.
  EXPECT_NE(plan->unmeasured[2].bench_note.find(
                "needs the CUDA module (libinfercost_cuda.so), which this build does not have"),
            std::string::npos)
      << plan->unmeasured[2].bench_note;
  EXPECT_EQ(plan->unmeasured[0].bench_note, "");
  EXPECT_EQ(plan->unmeasured[0].bench_command,
            "infercost bench in.jsonl --model 'model dir' --batching seed,tokens --instance cpu.big --out "
            "cpu.big.jsonl");
  const std::string text = print_text(*plan);
  EXPECT_NE(text.find("no --records given"), std::string::npos);
  EXPECT_NE(text.find("On a GPU instance add --device cuda. Note: --device cuda needs the CUDA module "
                      "(libinfercost_cuda.so), which this build does not have"),
            std::string::npos)
      << text;
  auto j = nlohmann::json::parse(print_json(*plan));
  EXPECT_EQ(j["unmeasured"][2]["bench_note"], plan->unmeasured[2].bench_note);
  // A build with the backend drops the note.
  PlanOptions with_cuda = options(0);
  with_cuda.cuda_backend = true;
  Result<PlanResult> cuda = make_plan(four_rows(), none, with_cuda);
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->unmeasured[2].bench_note, "");
  EXPECT_EQ(cuda->unmeasured[2].bench_command, plan->unmeasured[2].bench_command);
  EXPECT_EQ(print_text(*cuda).find("which this build does not have"), std::string::npos);
}

TEST(Plan, PredictionsFromFixtureRecordsByHand) {
  Result<PlanResult> plan = make_plan(four_rows(), fixture_records(), options(4'000'000));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_DOUBLE_EQ(plan->scale, 1e6);

  // A: 1088e6 FLOPs / 378000 FLOP/s, at $2/h as the record was priced.
  const Prediction* a = find(*plan, "cpu.big", "tokens", "fp32");
  ASSERT_NE(a, nullptr);
  EXPECT_NEAR(a->seconds, kRealFlops * 1e6 / 378000.0, 1e-6);
  EXPECT_NEAR(a->seconds, 2878.3068783, 1e-6);
  EXPECT_NEAR(a->usd, 2878.3068783 / 3600 * 2.0, 1e-9);
  EXPECT_NEAR(a->usd_per_million_rows, a->usd / 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(a->usd_per_hour, 2.0);
  EXPECT_EQ(a->price_list, "test-list");
  EXPECT_FALSE(a->measured);
  EXPECT_FALSE(a->model_differs);
  EXPECT_FALSE(a->batching_differs);
  EXPECT_NE(a->how.find("projected"), std::string::npos);
  EXPECT_TRUE(a->record_terms);
  EXPECT_NE(a->price_how.find("the record's, as it was priced for this instance from this list"),
            std::string::npos)
      << a->price_how;
  EXPECT_EQ(plan->records[a->record].origin, "r.jsonl: line 1");
  EXPECT_DOUBLE_EQ(plan->records[a->record].rate.flops_per_second, 378000.0);

  // The seed policy from the same record (the only fp32 one on cpu.big): padded work.
  const Prediction* a_seed = find(*plan, "cpu.big", "seed", "fp32");
  ASSERT_NE(a_seed, nullptr);
  EXPECT_NEAR(a_seed->seconds, kPaddedFlops * 1e6 / 378000.0, 1e-6);
  EXPECT_TRUE(a_seed->batching_differs);
  EXPECT_NE(a_seed->how.find("rate measured with tokens batching"), std::string::npos) << a_seed->how;

  // B: another model shape, a seed run; 896000 FLOP/s. Tokens on its CPU: real lengths.
  const Prediction* b_tokens = find(*plan, "cpu.big", "tokens", "int8");
  const Prediction* b_seed = find(*plan, "cpu.big", "seed", "int8");
  ASSERT_NE(b_tokens, nullptr);
  ASSERT_NE(b_seed, nullptr);
  EXPECT_NEAR(b_tokens->seconds, kRealFlops * 1e6 / 896000.0, 1e-6);
  EXPECT_NEAR(b_seed->seconds, kPaddedFlops * 1e6 / 896000.0, 1e-6);
  EXPECT_TRUE(b_tokens->model_differs);
  EXPECT_TRUE(b_tokens->batching_differs);
  EXPECT_FALSE(b_seed->batching_differs);
  EXPECT_NE(b_seed->how.find("model differs (2 layers, hidden 2, FFN 4)"), std::string::npos) << b_seed->how;

  // E: priced under a list this plan does not use: re-priced at test-list's on-demand price of one
  // machine; its 2 machines belong to old-list's pricing, not to this list's.
  const Prediction* e = find(*plan, "cpu.big", "tokens", "bf16");
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->usd_per_hour, 2.0);
  EXPECT_FALSE(e->record_terms);
  EXPECT_EQ(e->terms.machines, 1);
  EXPECT_NEAR(e->usd, kRealFlops * 1e6 / 756000.0 / 3600 * 2.0, 1e-9);
  EXPECT_NE(
      e->price_how.find("test-list: on-demand $2.0000/h per machine; terms: on demand, one machine (the "
                        "record's terms, on demand, 2 machines, apply to cpu.big from old-list only)"),
      std::string::npos)
      << e->price_how;

  // F: no list holds rare.box: priced as its record was.
  const Prediction* f = find(*plan, "rare.box", "tokens", "fp32");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->usd_per_hour, 3.0);
  EXPECT_EQ(f->price_list, "their-list");

  // C: no instance: time only.
  const Prediction* c = find(*plan, "laptop (unpriced)", "tokens", "fp32");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->priced);
  EXPECT_NEAR(c->seconds, kRealFlops * 1e6 / 189000.0, 1e-6);

  // G ran these inputs, but the plan is for 4 million rows: projected.
  const Prediction* g = find(*plan, "cpu.small", "tokens", "fp32");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->measured);
  EXPECT_NEAR(g->seconds, kRealFlops * 1e6 / (1416.0 / 0.01), 1e-6);

  // Sorted by cost, unpriced last: the cheapest is B's tokens prediction.
  EXPECT_EQ(plan->predictions.front().target, "cpu.big");
  EXPECT_EQ(plan->predictions.front().precision, "int8");
  EXPECT_EQ(plan->predictions.front().batching, "tokens");
  EXPECT_FALSE(plan->predictions.back().priced);
  for (size_t i = 1; i < plan->predictions.size(); ++i) {
    if (plan->predictions[i].priced) {
      EXPECT_LE(plan->predictions[i - 1].usd, plan->predictions[i].usd);
    }
  }
  // 3 instances x 2 policies for cpu.big precisions fp32, int8, bf16 = 6; cpu.small 2; rare.box 2; laptop 2.
  EXPECT_EQ(plan->predictions.size(), 12u);

  // gpu.one has no record: to beat $cheapest at $3.60/h it must finish within
  // cheapest / 3.6 hours, i.e. 4e6 rows / that many seconds.
  ASSERT_EQ(plan->unmeasured.size(), 1u);
  const Unmeasured& u = plan->unmeasured[0];
  EXPECT_EQ(u.instance, "gpu.one");
  ASSERT_TRUE(u.has_break_even);
  const double cheapest = kRealFlops * 1e6 / 896000.0 / 3600 * 2.0;
  EXPECT_NEAR(u.deadline_seconds, cheapest / 3.6 * 3600, 1e-6);
  EXPECT_NEAR(u.break_even_rows_per_second, 4e6 / (cheapest / 3.6 * 3600), 1e-6);
  EXPECT_NEAR(u.break_even_rows_per_second, 5929.41, 0.01);

  bool failed_noted = false;
  for (const std::string& n : plan->notes)
    failed_noted = failed_noted || n.find("1 failed") != std::string::npos;
  EXPECT_TRUE(failed_noted);
}

TEST(Plan, MeasuredWhenARecordRanTheseInputs) {
  Result<PlanResult> plan = make_plan(four_rows(), fixture_records(), options(0));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const Prediction* g = find(*plan, "cpu.small", "tokens", "fp32");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->measured);
  EXPECT_DOUBLE_EQ(g->seconds, 0.01);
  EXPECT_NEAR(g->usd, 0.01 / 3600 * 0.36, 1e-15);
  EXPECT_NE(g->how.find("3 repetition(s)"), std::string::npos) << g->how;
  // Its seed prediction is projected: G ran tokens batching.
  const Prediction* g_seed = find(*plan, "cpu.small", "seed", "fp32");
  ASSERT_NE(g_seed, nullptr);
  EXPECT_FALSE(g_seed->measured);
  EXPECT_NEAR(g_seed->seconds, kPaddedFlops / (1416.0 / 0.01), 1e-12);
}

TEST(Plan, ARecordOfTheseInputsBeatsAFasterOneOnOtherData) {
  std::vector<SourcedRecord> records = fixture_records();
  const record::Record* g = nullptr;
  for (const SourcedRecord& sr : records) {
    const record::Record& r = sr.record;
    if (r.instance && r.instance->name == "cpu.small" && r.config.batching == "tokens") g = &r;
  }
  ASSERT_NE(g, nullptr);
  record::Record faster = *g;  // ten times the rate, on other data
  faster.rows = faster.data.rows = g->data.rows * 10;
  faster.tokens = faster.data.tokens = g->data.tokens * 10;
  faster.computed_tokens = g->computed_tokens * 10;
  faster.data.content_sha256 = "other";
  records.push_back({faster, "r.jsonl: line 10"});
  Result<PlanResult> plan = make_plan(four_rows(), records, options(0));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const Prediction* p = find(*plan, "cpu.small", "tokens", "fp32");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->measured);
  EXPECT_DOUBLE_EQ(p->seconds, 0.01);
  EXPECT_NE(plan->records[p->record].origin, "r.jsonl: line 10");
}

TEST(Plan, ContentHashesMustAgreeWhenBothAreKnown) {
  std::vector<SourcedRecord> records = fixture_records();
  records.back().record.data.content_sha256 = "aa";  // G
  ScanResult scan = four_rows();
  EXPECT_TRUE(needs_content_hash(scan, records));
  scan.content_sha256 = "bb";
  Result<PlanResult> other = make_plan(scan, records, options(0));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(find(*other, "cpu.small", "tokens", "fp32")->measured);
  scan.content_sha256 = "aa";
  Result<PlanResult> same = make_plan(scan, records, options(0));
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(find(*same, "cpu.small", "tokens", "fp32")->measured);
  // No record of these counts carries a hash: nothing to hash.
  EXPECT_FALSE(needs_content_hash(four_rows(), fixture_records()));
}

TEST(Plan, PreferTheSameShapeThenTheSamePolicyThenTheFastest) {
  std::vector<SourcedRecord> records = fixture_records();
  // A faster fp32 seed record of the plan's shape on cpu.big: seed now comes from it.
  record::Record h = base_record();
  h.instance = priced("cpu.big", "test-list", 2.0);
  h.config.batching = "seed";
  h.computed_tokens = h.padded_tokens = 2000;
  h.wall_seconds = {0.2, 0.2, 0.2};
  records.push_back({h, "r.jsonl: line 8"});
  // A much faster record of another shape: not used, the same shape exists.
  record::Record k = base_record();
  k.instance = priced("cpu.big", "test-list", 2.0);
  k.model.hidden = 64;
  k.wall_seconds = {0.0001, 0.0001, 0.0001};
  records.push_back({k, "r.jsonl: line 9"});
  Result<PlanResult> plan = make_plan(four_rows(), records, options(0));
  ASSERT_TRUE(plan.ok());
  const Prediction* seed = find(*plan, "cpu.big", "seed", "fp32");
  const Prediction* tokens = find(*plan, "cpu.big", "tokens", "fp32");
  ASSERT_NE(seed, nullptr);
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(plan->records[seed->record].origin, "r.jsonl: line 8");
  EXPECT_FALSE(seed->batching_differs);
  EXPECT_EQ(plan->records[tokens->record].origin, "r.jsonl: line 1");
}

TEST(Plan, PriceListRestrictionAndUnknownList) {
  PlanOptions o = options(0);
  o.price_list = "test-list";
  Result<PlanResult> plan = make_plan(four_rows(), fixture_records(), o);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(find(*plan, "rare.box", "tokens", "fp32"), nullptr);
  bool noted = false;
  for (const std::string& n : plan->notes)
    noted = noted || n.find("other than test-list") != std::string::npos;
  EXPECT_TRUE(noted);
  o.price_list = "nope";
  Result<PlanResult> unknown = make_plan(four_rows(), fixture_records(), o);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("test-list"), std::string::npos);
}

TEST(Plan, TokensOnADeviceThatComputesPaddingUsesBatchPaddedWork) {
  ScanResult scan = four_rows();
  scan.tokens_padding.padded_rows_at_length = {0, 0, 0, 3,
                                               1};  // different from real lengths to tell them apart
  record::Record r = base_record();
  r.instance = priced("gpu.one", "test-list", 3.6);
  r.config.device = "cuda:0";
  r.computed_tokens = 1100;  // computed its padding
  std::vector<SourcedRecord> records = {{r, "g.jsonl: line 1"}};
  Result<PlanResult> plan = make_plan(scan, records, options(0));
  ASSERT_TRUE(plan.ok());
  const Prediction* p = find(*plan, "gpu.one", "tokens", "fp32");
  ASSERT_NE(p, nullptr);
  // 3 x (192 + 72) + 1 x 384 FLOPs.
  EXPECT_DOUBLE_EQ(p->flops, 3 * 264.0 + 384.0);
  EXPECT_NE(p->flops_how.find("padded to their batch's longest row"), std::string::npos) << p->flops_how;
}

TEST(Plan, TextAndJsonSayTheSame) {
  Result<PlanResult> plan = make_plan(four_rows(), fixture_records(), options(4'000'000));
  ASSERT_TRUE(plan.ok());
  const std::string text = print_text(*plan);
  for (const char* want : {"Predictions for 4,000,000 rows", "projected", "laptop (unpriced)", "gpu.one",
                           "break-even", "r.jsonl: line 1", "sweep sw1 point 1/4", "2026-12-01T03:40:00Z",
                           "Padding per batching policy", "1 failed"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  // Durations and money as `infercost report` prints them.
  const Prediction& first = plan->predictions[0];
  EXPECT_NE(text.find(report::duration(first.seconds)), std::string::npos) << text;
  EXPECT_NE(text.find(report::usd(first.usd)), std::string::npos) << text;
  auto j = nlohmann::json::parse(print_json(*plan));
  EXPECT_EQ(j["schema"], kPlanSchema);
  EXPECT_EQ(j["corpus_rows"], 4000000);
  EXPECT_EQ(j["predictions"].size(), plan->predictions.size());
  EXPECT_EQ(j["predictions"][0]["basis"], "projected");
  EXPECT_NEAR(j["predictions"][0]["usd"].get<double>(), plan->predictions[0].usd, 1e-12);
  EXPECT_TRUE(j["predictions"].back()["usd"].is_null());
  EXPECT_EQ(j["unmeasured"][0]["instance"], "gpu.one");
  EXPECT_EQ(j["scan"]["length_histogram"]["lengths"], nlohmann::json::parse("[2, 4]"));
  EXPECT_EQ(j["scan"]["length_histogram"]["counts"], nlohmann::json::parse("[2, 2]"));
  // Record numbers are 1-based in both: the text's [n] is the JSON's "record" n, records[n - 1].
  const size_t n = j["predictions"][0]["record"].get<size_t>();
  ASSERT_GE(n, 1u);
  EXPECT_EQ(n, plan->predictions[0].record + 1);
  EXPECT_EQ(j["records"][n - 1]["origin"], "r.jsonl: line 2");
  EXPECT_EQ(j["records"][n - 1]["number"], n);
}

// A record priced for cpu.big from test-list at spot discount 0.25, a $0.5/h platform surcharge and 2
// machines: (2 x 0.75 + 0.5) x 2 = $4/h. A second list prices cpu.big at $5/h on demand.
std::vector<SourcedRecord> spot_record() {
  record::Record r = base_record();
  record::InstanceInfo i = priced("cpu.big", "test-list", 2.0, 2);
  i.spot_discount = 0.25;
  i.platform_usd_per_hour = 0.5;
  i.usd_per_hour = 4.0;
  r.instance = i;
  return {{r, "spot.jsonl: line 1"}};
}

PlanOptions two_lists(int64_t corpus_rows) {
  PlanOptions o = options(corpus_rows);
  cost::PriceList other;
  other.name = "other-list";
  other.source = "tests";
  other.date = "2026";
  cost::Instance big;
  big.name = "cpu.big";
  big.usd_per_hour = 5.0;
  other.instances = {big};
  o.price_lists.push_back(other);
  return o;
}

// The projected time of base_record()'s rate (378000 FLOP/s) on four_rows() scaled to 4e6 rows.
constexpr double kTokensSeconds = kRealFlops * 1e6 / 378000.0;  // 2878.3068783 s

TEST(Plan, ARecordsTermsStayWithItsOwnInstanceAndList) {
  Result<PlanResult> plan = make_plan(four_rows(), spot_record(), two_lists(4'000'000));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_NEAR(kTokensSeconds, 2878.3068783, 1e-6);
  const Prediction* own = nullptr;
  const Prediction* other = nullptr;
  for (const Prediction& p : plan->predictions) {
    if (p.batching != "tokens") continue;
    if (p.price_list == "test-list") own = &p;
    if (p.price_list == "other-list") other = &p;
  }
  ASSERT_NE(own, nullptr);
  ASSERT_NE(other, nullptr);
  // The instance and list the record was priced for: its terms, on the list's price.
  EXPECT_TRUE(own->record_terms);
  EXPECT_DOUBLE_EQ(own->on_demand_usd_per_hour, 2.0);
  EXPECT_DOUBLE_EQ(own->usd_per_hour, 4.0);
  EXPECT_EQ(own->terms.machines, 2);
  EXPECT_NEAR(own->seconds, kTokensSeconds, 1e-6);
  EXPECT_NEAR(own->usd, 2878.3068783 / 3600 * 4.0, 1e-8);  // $3.198
  EXPECT_NE(own->price_how.find("test-list: on-demand $2.0000/h per machine; terms: spot discount 0.25, "
                                "platform $0.5/h per machine, 2 machines (the record's"),
            std::string::npos)
      << own->price_how;
  // The same instance name in another list: that list's on-demand price of one machine, $5/h, not
  // (5 x 0.75 + 0.5) x 2 = $8.50/h.
  EXPECT_FALSE(other->record_terms);
  EXPECT_DOUBLE_EQ(other->usd_per_hour, 5.0);
  EXPECT_EQ(other->terms.machines, 1);
  EXPECT_DOUBLE_EQ(other->terms.spot_discount, 0.0);
  EXPECT_NEAR(other->usd, 2878.3068783 / 3600 * 5.0, 1e-8);  // $3.998
  EXPECT_NE(
      other->price_how.find("other-list: on-demand $5.0000/h per machine; terms: on demand, one machine"),
      std::string::npos)
      << other->price_how;

  // Text and JSON say which terms apply.
  const std::string text = print_text(*plan);
  EXPECT_NE(text.find("USD/hour: the list's on-demand price of one machine"), std::string::npos) << text;
  EXPECT_NE(text.find("4.0000*"), std::string::npos) << text;
  EXPECT_NE(text.find(" 5.0000 "), std::string::npos) << text;
  auto j = nlohmann::json::parse(print_json(*plan));
  bool seen_own = false, seen_other = false;
  for (const auto& p : j["predictions"]) {
    if (p["batching"] != "tokens") continue;
    if (p["price_list"] == "test-list") {
      seen_own = true;
      EXPECT_EQ(p["pricing"]["terms"], "record");
      EXPECT_EQ(p["pricing"]["machines"], 2);
      EXPECT_DOUBLE_EQ(p["pricing"]["spot_discount"].get<double>(), 0.25);
      EXPECT_DOUBLE_EQ(p["pricing"]["on_demand_usd_per_hour"].get<double>(), 2.0);
    } else {
      seen_other = true;
      EXPECT_EQ(p["pricing"]["terms"], "on-demand");
      EXPECT_EQ(p["pricing"]["machines"], 1);
      EXPECT_DOUBLE_EQ(p["usd_per_hour"].get<double>(), 5.0);
    }
  }
  EXPECT_TRUE(seen_own && seen_other);
}

TEST(Plan, BreakEvenPricesBothSidesWithTheSameTerms) {
  Result<PlanResult> plan = make_plan(four_rows(), spot_record(), two_lists(4'000'000));
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  // The cheapest: cpu.big tokens from test-list at $4/h under the record's terms.
  ASSERT_TRUE(plan->has_cheapest);
  const Prediction& cheapest = plan->predictions[plan->cheapest];
  EXPECT_EQ(plan->cheapest, 0u);
  EXPECT_EQ(cheapest.price_list, "test-list");
  EXPECT_EQ(cheapest.batching, "tokens");
  const double cheapest_usd = 2878.3068783 / 3600 * 4.0;
  EXPECT_NEAR(cheapest.usd, cheapest_usd, 1e-8);
  ASSERT_EQ(plan->unmeasured.size(), 2u);  // cpu.small and gpu.one
  for (const Unmeasured& u : plan->unmeasured) {
    ASSERT_TRUE(u.has_break_even) << u.instance;
    // Under the same terms: gpu.one (3.6 x 0.75 + 0.5) x 2 = $6.40/h, cpu.small (0.36 x 0.75 + 0.5) x 2 =
    // $1.54/h; the table's price stays the on-demand one.
    const double at_terms = u.instance == "gpu.one" ? 6.4 : 1.54;
    EXPECT_DOUBLE_EQ(u.usd_per_hour, u.instance == "gpu.one" ? 3.6 : 0.36);
    EXPECT_NEAR(u.break_even_usd_per_hour, at_terms, 1e-12) << u.instance;
    EXPECT_NEAR(u.deadline_seconds, cheapest_usd / at_terms * 3600, 1e-6) << u.instance;
    EXPECT_NEAR(u.break_even_rows_per_second, 4e6 / (cheapest_usd / at_terms * 3600), 1e-6) << u.instance;
  }
  // gpu.one: $3.198 / $6.40/h = 1798.94 s (at its bare $3.60/h it would be 3198.1 s).
  EXPECT_NEAR(plan->unmeasured[1].deadline_seconds, 1798.9418, 1e-3);
  EXPECT_NEAR(plan->unmeasured[1].break_even_rows_per_second, 2223.53, 0.01);

  const std::string text = print_text(*plan);
  EXPECT_NE(text.find("beat the cheapest prediction, #1 at $3.20; both priced spot discount 0.25, platform "
                      "$0.5/h per machine, 2 machines"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("on those terms"), std::string::npos) << text;
  EXPECT_NE(text.find("6.4000"), std::string::npos) << text;
  auto j = nlohmann::json::parse(print_json(*plan));
  EXPECT_EQ(j["break_even"]["prediction"], 1);
  EXPECT_EQ(j["break_even"]["machines"], 2);
  EXPECT_NEAR(j["break_even"]["usd"].get<double>(), cheapest_usd, 1e-8);
  EXPECT_NEAR(j["unmeasured"][1]["break_even_usd_per_hour"].get<double>(), 6.4, 1e-12);
  EXPECT_DOUBLE_EQ(j["unmeasured"][1]["usd_per_hour"].get<double>(), 3.6);

  // On-demand terms both sides when the cheapest is on demand: the fixture's cheapest is B's $2/h.
  Result<PlanResult> fixture = make_plan(four_rows(), fixture_records(), options(4'000'000));
  ASSERT_TRUE(fixture.ok());
  ASSERT_EQ(fixture->unmeasured.size(), 1u);
  EXPECT_DOUBLE_EQ(fixture->unmeasured[0].break_even_usd_per_hour, 3.6);
  EXPECT_EQ(print_text(*fixture).find("on those terms"), std::string::npos);
}

// Cuts the text's line that starts with `prefix` (empty if none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at, end - at);
    at = end + 1;
  }
  return "";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every number the text shows for a prediction or an unmeasured instance is the JSON's, as formatted.
TEST(Plan, TextAndJsonAgreeOnEveryNumber) {
  for (bool spot : {false, true}) {
    Result<PlanResult> plan = spot ? make_plan(four_rows(), spot_record(), two_lists(4'000'000))
                                   : make_plan(four_rows(), fixture_records(), options(4'000'000));
    ASSERT_TRUE(plan.ok());
    const std::string text = print_text(*plan);
    auto j = nlohmann::json::parse(print_json(*plan));
    ASSERT_EQ(j["predictions"].size(), plan->predictions.size());
    for (size_t k = 0; k < plan->predictions.size(); ++k) {
      const auto& p = j["predictions"][k];
      EXPECT_EQ(p["number"], k + 1);
      const std::string row =
          line_starting(text, fmt::format("  {:>3}  {} ", k + 1, p["target"].get<std::string>()));
      ASSERT_FALSE(row.empty()) << k << "\n" << text;
      EXPECT_TRUE(ends_with(row, fmt::format("[{}]", p["record"].get<size_t>()))) << row;
      EXPECT_NE(row.find(" " + p["basis"].get<std::string>() + " "), std::string::npos) << row;
      EXPECT_NE(row.find(" " + p["batching"].get<std::string>() + " "), std::string::npos) << row;
      if (p["priced"].get<bool>()) {
        EXPECT_NE(row.find(fmt::format(" {:.4f}", p["usd_per_hour"].get<double>())), std::string::npos)
            << row;
        const double usd = p["usd"].get<double>();
        const std::string cost = usd >= 100 ? fmt::format("${:.0f}", usd)
                                 : usd >= 1
                                     ? fmt::format("${:.2f}", usd)
                                     : fmt::format("${:.{}f}", usd, 2 - int(std::floor(std::log10(usd))));
        EXPECT_NE(row.find(" " + cost + " "), std::string::npos) << cost << " in " << row;
        EXPECT_EQ(p["pricing"]["terms"] == "record" && p["pricing"]["machines"] != 1,
                  row.find(fmt::format("{:.4f}*", p["usd_per_hour"].get<double>())) != std::string::npos)
            << row;
      }
      // The record it names is the one listed under that number.
      const size_t n = p["record"].get<size_t>();
      const std::string used = line_starting(text, fmt::format("  [{}] ", n));
      EXPECT_NE(used.find(j["records"][n - 1]["origin"].get<std::string>()), std::string::npos) << used;
    }
    for (const auto& u : j["unmeasured"]) {
      const std::string row = line_starting(text, "  " + u["instance"].get<std::string>() + " ");
      ASSERT_FALSE(row.empty()) << u;
      EXPECT_NE(row.find(fmt::format("{:.4f}", u["usd_per_hour"].get<double>())), std::string::npos) << row;
      ASSERT_FALSE(u["break_even_rows_per_second"].is_null());
      EXPECT_NE(row.find(fmt::format(" {:.1f}", u["break_even_rows_per_second"].get<double>())),
                std::string::npos)
          << row;
    }
    const size_t cheapest = j["break_even"]["prediction"].get<size_t>();
    EXPECT_EQ(cheapest, plan->cheapest + 1);
    EXPECT_NE(text.find(fmt::format("beat the cheapest prediction, #{} at ", cheapest)), std::string::npos);
  }
}

TEST(Plan, LoadRecordFilesNamesFileAndLine) {
  TempDir dir;
  record::Record r = base_record();
  const std::string good =
      dir.write("good.jsonl", record::to_json_line(r) + "\n\n" + record::to_json_line(r) + "\n");
  Result<std::vector<SourcedRecord>> loaded = record::load_sourced_records({good});
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[1].origin, good + ": line 3");
  EXPECT_EQ((*loaded)[1].record.computed_tokens, 1000);
  const std::string bad = dir.write("bad.jsonl", record::to_json_line(r) +
                                                     "\n{\"schema\": \"infercost.bench/1\", "
                                                     "\"rows\": \"many\"}\n");
  Result<std::vector<SourcedRecord>> refused = record::load_sourced_records({good, bad});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find(bad + ": line 2"), std::string::npos)
      << refused.status().to_string();
  EXPECT_EQ(record::load_sourced_records({dir.file("none.jsonl")}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace infercost::plan
