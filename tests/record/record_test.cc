#include "record/record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_utils.h"

namespace infercost::record {
namespace {

Record sample() {
  Record r;
  r.sweep_id = "s1";
  r.point = 2;
  r.points = 4;
  r.started_at = "2026-12-01T03:40:00Z";
  r.label = "laptop";
  r.command = {"infercost", "bench", "a.jsonl"};
  r.run_command = {"infercost", "run", "a.jsonl", "--batch-size", "32"};
  r.config = {{"cpu", "fp32", "seed", 4096, 2, 1, 512}, 32, "100xvcpus"};
  InstanceInfo i;
  i.name = "c5.12xlarge";
  i.price_list = "seed-2021";
  i.on_demand_usd_per_hour = 0.728;
  i.usd_per_hour = 0.728;
  i.vcpus = 48;
  i.price_source = "the study";
  i.price_date = "2021";
  i.spot_discount = 0.5;
  i.platform_usd_per_hour = 0.1;
  i.machines = 2;
  i.gpus = 0;
  i.gpu = "";
  r.instance = i;
  r.hardware.hostname = "h";
  r.hardware.cpu_model = "AMD EPYC";
  r.hardware.logical_cpus = 2;
  r.hardware.isa = "avx512_bf16";
  r.hardware.memory_bytes = 25276502016;
  r.hardware.gpus.push_back({0, "NVIDIA H200", 143771566080, "9.0", "580.1"});
  r.software = {"0.1.0", "abc1234", "gcc 12.2.0", "2.6.3", "Debian GNU/Linux 12 (bookworm)", "6.1.0"};
  r.model.architecture = "distilbert";
  r.model.layers = 6;
  r.model.hidden = 768;
  r.model.heads = 12;
  r.model.intermediate = 3072;
  r.model.vocab = 30522;
  r.data.files = 3;
  r.data.bytes = 123456;
  r.model.name = "synthetic";
  r.model.synthetic = true;
  r.model.parameters = 66955010;
  r.data.shape = "json-3";
  r.data.inputs = {"a.jsonl"};
  r.data.rows = 1000;
  r.data.tokens = 28000;
  r.data.length_edges = {1, 9, 17};
  r.data.length_counts = {0, 10, 990};
  r.data.content_sha256 = "ab";
  r.warmup = 1;
  r.min_repetitions = 3;
  r.min_seconds = 1.5;
  r.repetitions.push_back({10.0, 100.0, 2800.0, 1 << 20, {{"infer", 9.5}, {"read", 0.1}}});
  r.wall_seconds = {10.0, 9.5, 10.5};
  r.rows_per_second = {100.0, 95.2, 105.3};
  r.tokens_per_second = {2800.0, 2666.7, 2947.4};
  r.rows = 1000;
  r.tokens = 28000;
  r.padded_tokens = 30000;
  r.computed_tokens = 28000;
  r.padding_efficiency = 1.0;
  r.batch_fill = 28000.0 / 30000;
  r.stage_seconds = {{"infer", 9.5}};
  r.peak_rss_bytes = 123456789012;
  r.monitor.samples = 100;
  r.monitor.interval_seconds = 0.1;
  r.monitor.cpu_busy_mean = 1.75;
  r.monitor.cpu_busy_peak = 2.0;
  r.monitor.rss_mean_bytes = 5e8;
  r.monitor.rss_peak_bytes = 600000000;
  r.monitor.gpus.push_back({0, 143771566080, 1000, 500.5, 0.25, 0.9});
  CostInfo c;
  c.usd_per_hour = 0.728;
  c.cost_to_solution_usd = 0.002;
  c.usd_per_million_rows = 2.02;
  c.usd_per_million_tokens = 0.072;
  c.corpus_rows = 1000000;
  c.corpus_seconds = 10000;
  c.corpus_usd = 2.02;
  r.cost = c;
  return r;
}

// A record's setup: seed batching has no token budget, a label that only
// repeats the machine is no label, and batch size is no part of it.
// (record::Setup spelled out: inside a TEST, Setup names GoogleTest's trap for SetUp.)
TEST(Setup, OfARecordAndItsOrder) {
  Record r;
  r.instance = InstanceInfo{};
  r.instance->name = "p3.8xlarge";
  r.label = "p3.8xlarge";
  r.config.device = "cuda:0,1";
  r.config.precision = "bf16";
  r.config.batching = "seed";
  r.config.max_batch_tokens = 16384;
  r.config.batch_size = 80;
  r.model.name = "m";
  const record::Setup seed = setup_of(r, 12.24);
  EXPECT_EQ(seed.machine, "p3.8xlarge");
  EXPECT_EQ(seed.device, "cuda:0,1");
  EXPECT_EQ(seed.max_batch_tokens, 0);
  EXPECT_EQ(seed.label, "");
  EXPECT_EQ(seed.model, "m");
  EXPECT_EQ(seed.usd_per_hour, 12.24);
  r.config.batch_size = 160;
  EXPECT_EQ(setup_of(r, 12.24), seed);
  r.config.batching = "tokens";
  const record::Setup tokens = setup_of(r, 12.24);
  EXPECT_EQ(tokens.max_batch_tokens, 16384);
  EXPECT_FALSE(tokens == seed);
  // Precision sorts by precision_rank (fp32 before bf16), not by name.
  record::Setup fp32 = tokens;
  fp32.precision = "fp32";
  EXPECT_TRUE(fp32 < tokens);
  EXPECT_FALSE(tokens < fp32);
  record::Setup other_machine = fp32;
  other_machine.machine = "a";
  EXPECT_TRUE(other_machine < tokens);
}

TEST(Record, RoundTripsThroughJson) {
  const Record r = sample();
  const std::string line = to_json_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto parsed = parse_record(line, "t:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(to_json_line(*parsed), line);
  EXPECT_EQ(parsed->config.batch_size_rule, "100xvcpus");
  EXPECT_EQ(parsed->peak_rss_bytes, 123456789012);
  ASSERT_TRUE(parsed->instance.has_value());
  EXPECT_EQ(parsed->machine(), "c5.12xlarge");
  EXPECT_EQ(parsed->hardware.gpus.at(0).name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(parsed->monitor.gpus.at(0).utilization_peak, 0.9);
  EXPECT_DOUBLE_EQ(parsed->repetitions.at(0).stage_seconds.at("infer"), 9.5);
  // Field by field, so a parser that drops a field fails even if the writer also drops it.
  EXPECT_EQ(parsed->software.git, "abc1234");
  EXPECT_EQ(parsed->software.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(parsed->hardware.memory_bytes, 25276502016);
  EXPECT_EQ(parsed->model.vocab, 30522);
  EXPECT_EQ(parsed->data.files, 3);
  EXPECT_EQ(parsed->data.bytes, 123456);
  EXPECT_EQ(parsed->data.length_counts, (std::vector<int64_t>{0, 10, 990}));
  EXPECT_DOUBLE_EQ(parsed->monitor.cpu_busy_mean, 1.75);
  EXPECT_EQ(parsed->monitor.rss_peak_bytes, 600000000);
  EXPECT_DOUBLE_EQ(parsed->monitor.interval_seconds, 0.1);
  EXPECT_DOUBLE_EQ(parsed->rows_per_second.max, 105.3);
  EXPECT_EQ(parsed->instance->machines, 2);
  EXPECT_DOUBLE_EQ(parsed->instance->platform_usd_per_hour, 0.1);
  EXPECT_EQ(parsed->instance->price_date, "2021");
  ASSERT_TRUE(parsed->cost.has_value());
  EXPECT_DOUBLE_EQ(parsed->cost->usd_per_million_tokens, 0.072);
  EXPECT_EQ(parsed->cost->corpus_rows, 1000000);
  EXPECT_DOUBLE_EQ(parsed->cost->corpus_usd, 2.02);
  EXPECT_EQ(parsed->min_repetitions, 3);
  EXPECT_DOUBLE_EQ(parsed->min_seconds, 1.5);
  EXPECT_EQ(parsed->config.tokenizer_threads, 1);
}

// An embedding record says so (config.task "embed"); a classification's has
// no task key, as every record before embeddings, and reads as "classify";
// the setups of the two differ; another task is refused naming the field.
TEST(Record, TheTaskIsWrittenForEmbeddingsOnly) {
  Record r = sample();
  EXPECT_EQ(to_json_line(r).find("\"task\""), std::string::npos);
  r.config.task = "embed";
  const std::string line = to_json_line(r);
  EXPECT_NE(line.find("\"task\":\"embed\""), std::string::npos) << line;
  auto parsed = parse_record(line, "t:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->config.task, "embed");
  EXPECT_EQ(to_json_line(*parsed), line);
  EXPECT_FALSE(setup_of(*parsed, 1.0) == setup_of(sample(), 1.0));
  auto classified = parse_record(to_json_line(sample()), "t:2");
  ASSERT_TRUE(classified.ok());
  EXPECT_EQ(classified->config.task, "classify");
  std::string bad = line;
  bad.replace(bad.find("\"embed\""), 7, "\"other\"");
  auto refused = parse_record(bad, "t:3");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("config.task"), std::string::npos) << refused.status().message();
}

// A GLU and local windows (ModernBERT) and the relative terms (DeBERTa) are
// written where the model has them, read back, and left out for the BERT
// families.
TEST(Record, AGluAndLocalWindowsAreWrittenWhereTheModelHasThem) {
  Record r = sample();
  EXPECT_EQ(to_json_line(r).find("\"glu\""), std::string::npos);
  EXPECT_EQ(to_json_line(r).find("\"attention_windows\""), std::string::npos);
  r.model.glu = true;
  r.model.attention_windows = {0, 64, 64};
  EXPECT_EQ(to_json_line(r).find("\"relative_terms\""), std::string::npos);
  r.model.relative_terms = 2;  // not ModernBERT's, but each field is written on its own
  const std::string line = to_json_line(r);
  EXPECT_NE(line.find("\"vocab\":30522,\"glu\":true,\"attention_windows\":[0,64,64],\"relative_terms\":2}"),
            std::string::npos)
      << line;
  auto parsed = parse_record(line, "t:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_TRUE(parsed->model.glu);
  EXPECT_EQ(parsed->model.attention_windows, (std::vector<int>{0, 64, 64}));
  EXPECT_EQ(parsed->model.relative_terms, 2);
  EXPECT_EQ(to_json_line(*parsed), line);
}

// The line itself, to the byte: the schema's keys in their order
// (docs/bench-records.md). A field dropped from both the writer and the
// reader fails here.
TEST(Record, WritesTheSchemasKeysInOrder) {
  EXPECT_EQ(
      to_json_line(sample()),
      R"json({"schema":"infercost.bench/1","sweep_id":"s1","point":2,"points":4,"started_at":"2026-12-01T03:40:00Z","label":"laptop","command":["infercost","bench","a.jsonl"],"run_command":["infercost","run","a.jsonl","--batch-size","32"],"status":"ok",)json"
      R"json("config":{"device":"cpu","precision":"fp32","batching":"seed","batch_size":32,"batch_size_rule":"100xvcpus","max_batch_tokens":4096,"threads":2,"tokenizer_threads":1,"max_length":512},)json"
      R"json("instance":{"name":"c5.12xlarge","price_list":"seed-2021","price_source":"the study","price_date":"2021","on_demand_usd_per_hour":0.728,"spot_discount":0.5,"platform_usd_per_hour":0.1,"machines":2,"usd_per_hour":0.728,"gpus":0,"gpu":"","vcpus":48},)json"
      R"json("hardware":{"hostname":"h","cpu_model":"AMD EPYC","logical_cpus":2,"isa":"avx512_bf16","memory_bytes":25276502016,"gpus":[{"index":0,"name":"NVIDIA H200","memory_bytes":143771566080,"compute_capability":"9.0","driver":"580.1"}]},)json"
      R"json("software":{"infercost":"0.1.0","git":"abc1234","compiler":"gcc 12.2.0","onednn":"2.6.3","os":"Debian GNU/Linux 12 (bookworm)","kernel":"6.1.0"},)json"
      R"json("model":{"name":"synthetic","architecture":"distilbert","synthetic":true,"parameters":66955010,"layers":6,"hidden":768,"heads":12,"intermediate":3072,"vocab":30522},)json"
      R"json("data":{"shape":"json-3","inputs":["a.jsonl"],"files":3,"bytes":123456,"rows":1000,"tokens":28000,"length_edges":[1,9,17],"length_counts":[0,10,990],"content_sha256":"ab"},)json"
      R"json("warmup":1,"min_repetitions":3,"min_seconds":1.5,)json"
      R"json("repetitions":[{"wall_seconds":10.0,"rows_per_second":100.0,"tokens_per_second":2800.0,"peak_rss_bytes":1048576,"stages":{"infer":9.5,"read":0.1}}],)json"
      R"json("wall_seconds":{"median":10.0,"min":9.5,"max":10.5},"rows_per_second":{"median":100.0,"min":95.2,"max":105.3},"tokens_per_second":{"median":2800.0,"min":2666.7,"max":2947.4},)json"
      R"json("rows":1000,"tokens":28000,"padded_tokens":30000,"computed_tokens":28000,"padding_efficiency":1.0,"batch_fill":0.9333333333333333,)json"
      R"json("stages":{"infer":9.5},"peak_rss_bytes":123456789012,)json"
      R"json("monitor":{"interval_seconds":0.1,"samples":100,"cpu_busy_mean":1.75,"cpu_busy_peak":2.0,"rss_mean_bytes":500000000.0,"rss_peak_bytes":600000000,"gpus":[{"index":0,"memory_total_bytes":143771566080,"memory_used_peak_bytes":1000,"memory_used_mean_bytes":500.5,"utilization_mean":0.25,"utilization_peak":0.9}]},)json"
      R"json("cost":{"usd_per_hour":0.728,"cost_to_solution_usd":0.002,"usd_per_million_rows":2.02,"usd_per_million_tokens":0.072,"corpus_rows":1000000,"corpus_seconds":10000.0,"corpus_usd":2.02}})json");
}

TEST(Record, NaNWrittenAsNullReadsBackAsNaN) {
  Record r = sample();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.padding_efficiency = nan;
  r.rows_per_second.min = nan;
  r.repetitions.at(0).stage_seconds["infer"] = nan;
  const std::string line = to_json_line(r);
  EXPECT_NE(line.find("\"padding_efficiency\":null"), std::string::npos) << line;
  auto parsed = parse_record(line, "t:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_TRUE(std::isnan(parsed->padding_efficiency));
  EXPECT_TRUE(std::isnan(parsed->rows_per_second.min));
  EXPECT_TRUE(std::isnan(parsed->repetitions.at(0).stage_seconds.at("infer")));
  EXPECT_DOUBLE_EQ(parsed->rows_per_second.max, 105.3);
  EXPECT_EQ(to_json_line(*parsed), line);
  // A null where a whole number or a string belongs still keeps the default.
  auto nulls =
      parse_record(R"({"schema": "infercost.bench/1", "label": null, "peak_rss_bytes": null})", "t:2");
  ASSERT_TRUE(nulls.ok()) << nulls.status().to_string();
  EXPECT_EQ(nulls->peak_rss_bytes, 0);
}

TEST(Record, FailedPointKeepsItsReasonAndMachineFallsBack) {
  Record r = sample();
  r.status = "failed";
  r.error = "out of memory";
  r.instance.reset();
  r.cost.reset();
  auto parsed = parse_record(to_json_line(r), "t:1");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->ok());
  EXPECT_EQ(parsed->error, "out of memory");
  EXPECT_FALSE(parsed->instance.has_value());
  EXPECT_FALSE(parsed->cost.has_value());
  EXPECT_EQ(parsed->machine(), "laptop");
  parsed->label.clear();
  EXPECT_EQ(parsed->machine(), "h");
}

TEST(Record, MissingFieldsKeepDefaultsUnknownOnesAreIgnored) {
  auto parsed = parse_record(R"({"schema":"infercost.bench/1.3","rows":5,"future":{"x":1}})", "t:1");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->rows, 5);
  EXPECT_EQ(parsed->status, "ok");
  EXPECT_EQ(parsed->schema, "infercost.bench/1.3");
}

TEST(Record, RefusesBadInputNamingTheField) {
  auto bad = [](const std::string& line) {
    auto r = parse_record(line, "res.jsonl: line 7");
    EXPECT_FALSE(r.ok()) << line;
    return r.ok() ? std::string() : r.status().to_string();
  };
  EXPECT_NE(bad("{nope").find("res.jsonl: line 7: not valid JSON"), std::string::npos);
  EXPECT_NE(bad("[1]").find("JSON object"), std::string::npos);
  EXPECT_NE(bad(R"({"rows":1})").find("no \"schema\""), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"other/1"})").find("not an infercost benchmark record"), std::string::npos);
  auto v2 = parse_record(R"({"schema":"infercost.bench/2"})", "x");
  ASSERT_FALSE(v2.ok());
  EXPECT_EQ(v2.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(bad(R"({"schema":"infercost.bench/1","config":{"batch_size":"8"}})")
                .find("\"config.batch_size\" must be an integer"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"infercost.bench/1","status":"maybe"})").find("\"status\""), std::string::npos);
  EXPECT_NE(bad(R"({"schema":"infercost.bench/1","repetitions":[{"stages":{"infer":"x"}}]})")
                .find("repetitions[0].stages.infer"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"infercost.bench/1","data":{"length_edges":[1,2],"length_counts":[3]}})")
                .find("data.length_counts"),
            std::string::npos);
  EXPECT_NE(bad(R"({"schema":"infercost.bench/1","instance":{"usd_per_hour":1}})").find("instance.name"),
            std::string::npos);
}

TEST(Record, LoadsJsonLinesAndNamesTheBadLine) {
  infercost::testing::TempDir dir;
  const std::string good = to_json_line(sample());
  const std::string a = dir.write("a.jsonl", good + "\n\n" + good + "\n");
  const std::string b = dir.write("b.jsonl", good + "\n{\"schema\":\"infercost.bench/1\",\"rows\":\"x\"}\n");
  auto loaded = load_records({a});
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->size(), 2u);
  auto failed = load_records({a, b});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("b.jsonl: line 2"), std::string::npos)
      << failed.status().to_string();
  auto missing = load_records({dir.file("none.jsonl")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Record, SpreadOfRepetitions) {
  Spread s = spread_of({3, 1, 2});
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.relative_spread(), 1.0);
  EXPECT_DOUBLE_EQ(spread_of({4, 1, 2, 3}).median, 2.5);
  EXPECT_DOUBLE_EQ(spread_of({}).median, 0);
}

}  // namespace
}  // namespace infercost::record
