// From a run's metrics to a benchmark record: parsing, assembly, cost, the
// length histogram, model and data facts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "bench/bench.h"
#include "bench/environment.h"
#include "core/sha256.h"
#include "corpus/tweets.h"
#include "engine/run_metrics.h"
#include "engine/settings.h"
#include "infercost/metrics.h"
#include "model/describe.h"
#include "record/record.h"
#include "test_utils.h"

namespace infercost::bench {
namespace {

using testing::TempDir;

// A metrics file as `infercost run --metrics` writes it.
std::string canned_metrics(double wall, int64_t rows = 1000, int64_t tokens = 30000) {
  return fmt::format(R"({{
  "rows": {}, "rows_null": 0, "rows_skipped": 0, "input_files": 3, "output_files": 3,
  "tokens": {}, "padded_tokens": 40000, "computed_tokens": 40000,
  "padding_efficiency": {}, "batch_fill": {}, "rows_at_max_length": 2, "batches": 10,
  "length_histogram": {{"edges": [1, 9, 17, 33, 65, 129, 257, 513], "counts": [0, 100, 300, 400, 150, 40, 8, 2]}},
  "wall_seconds": {}, "rows_per_second": {}, "tokens_per_second": {}, "infer_share": 0.9,
  "peak_rss_bytes": 500000000,
  "stages": {{"batch": 0.01, "infer": {}, "load": 0.2, "read": 0.05, "tokenize": 0.1, "write": 0.02}},
  "model": {{"name": "distilbert-base-synthetic", "synthetic": true}},
  "device": "cpu", "threads": 2, "batching": "seed", "precision": "fp32", "batch_size": 200,
  "max_batch_tokens": 4096, "window_rows": 8200, "tokenizer_threads": 1, "max_length": 512,
  "devices": ["cpu"], "workers": 1,
  "per_device": [{{"device": "cpu", "streams": 1, "batches": 10, "rows": {}, "infer_seconds": {},
                  "oom_retries": 0, "max_computed_tokens": 0}}],
  "oom_retries": 0, "batch_size_auto": false, "max_batch_tokens_auto": false,
  "model_flops": 2.5e12, "model_flops_per_second": {}
}})",
                     rows, tokens, double(tokens) / 40000, double(tokens) / 40000, wall, rows / wall,
                     tokens / wall, wall * 0.9, rows, wall * 0.9, 2.5e12 / wall);
}

// The metrics of a run, read back as RunMetrics (its round trip is
// tested in tests/pipeline/metrics_test.cc).
TEST(RunMetricsFile, ParsesTheMetricsOfARun) {
  Result<RunMetrics> r = parse_run_metrics(canned_metrics(2.0), "m.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, 1000);
  EXPECT_EQ(r->tokens, 30000);
  EXPECT_EQ(r->input_files, 3);
  EXPECT_DOUBLE_EQ(r->wall_seconds, 2.0);
  EXPECT_DOUBLE_EQ(r->rows_per_second(), 500.0);
  EXPECT_DOUBLE_EQ(r->stage_seconds.at("infer"), 1.8);
  EXPECT_EQ(r->batching, "seed");
  EXPECT_EQ(r->batch_size, 200);
  const std::vector<int64_t> bins = bin_lengths(r->length_counts, length_histogram_edges());
  EXPECT_EQ(bins, (std::vector<int64_t>{0, 100, 300, 400, 150, 40, 8, 2}));
}

TEST(LengthHistogram, BinsExactLengthsIntoHalfOpenBuckets) {
  const std::vector<int>& edges = length_histogram_edges();
  EXPECT_EQ(edges, (std::vector<int>{1, 9, 17, 33, 65, 129, 257, 513}));
  std::vector<int64_t> by_length(600, 0);
  by_length[0] = 5;     // below the first edge: dropped
  by_length[1] = 1;     // [1, 9)
  by_length[8] = 2;     // [1, 9)
  by_length[9] = 3;     // [9, 17)
  by_length[16] = 4;    // [9, 17)
  by_length[17] = 5;    // [17, 33)
  by_length[64] = 6;    // [33, 65)
  by_length[65] = 7;    // [65, 129)
  by_length[256] = 8;   // [129, 257)
  by_length[257] = 9;   // [257, 513)
  by_length[512] = 10;  // [257, 513)
  by_length[513] = 11;  // [513, inf)
  by_length[599] = 12;  // [513, inf)
  EXPECT_EQ(bin_lengths(by_length, edges), (std::vector<int64_t>{3, 7, 5, 6, 7, 8, 19, 23}));
  EXPECT_EQ(bin_lengths({}, edges), std::vector<int64_t>(8, 0));
}

TEST(RecordAssembly, FillsMeasurementsFromTheTimedRuns) {
  std::vector<RunMetrics> runs;
  for (double wall : {2.0, 2.5, 1.6}) {
    Result<RunMetrics> run = parse_run_metrics(canned_metrics(wall), "m.json");
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    runs.push_back(*run);
  }
  record::Record r;
  r.config.batch_size_rule = "100xvcpus";
  fill_measurements(r, runs, {600000000, 0, 700000000});
  ASSERT_EQ(r.repetitions.size(), 3u);
  EXPECT_DOUBLE_EQ(r.wall_seconds.median, 2.0);
  EXPECT_DOUBLE_EQ(r.wall_seconds.min, 1.6);
  EXPECT_DOUBLE_EQ(r.wall_seconds.max, 2.5);
  EXPECT_DOUBLE_EQ(r.rows_per_second.median, 500.0);
  EXPECT_DOUBLE_EQ(r.rows_per_second.max, 1000 / 1.6);
  EXPECT_DOUBLE_EQ(r.stage_seconds.at("infer"), 1.8);  // the median
  // The parent's peak RSS where it has one, else the run's own.
  EXPECT_EQ(r.repetitions[1].peak_rss_bytes, 500000000);
  EXPECT_EQ(r.peak_rss_bytes, 700000000);
  EXPECT_EQ(r.rows, 1000);
  EXPECT_EQ(r.tokens, 30000);
  EXPECT_EQ(r.padded_tokens, 40000);
  EXPECT_DOUBLE_EQ(r.padding_efficiency, 0.75);
  EXPECT_EQ(r.config.batching, "seed");
  EXPECT_EQ(r.config.batch_size, 200);
  EXPECT_EQ(r.config.batch_size_rule, "100xvcpus");
  EXPECT_EQ(r.config.threads, 2);
  EXPECT_EQ(r.data.rows, 1000);
  EXPECT_EQ(r.data.length_edges, length_histogram_edges());
  EXPECT_EQ(r.data.length_counts, (std::vector<int64_t>{0, 100, 300, 400, 150, 40, 8, 2}));

  cost::PriceList list;
  list.name = "seed-2021";
  list.source = "study";
  list.date = "2021";
  cost::Instance c5;
  c5.name = "c5.12xlarge";
  c5.usd_per_hour = 0.728;
  c5.vcpus = 48;
  list.instances.push_back(c5);
  cost::Pricing pricing;
  pricing.machines = 2;
  cost::PricedInstance priced{&list, &list.instances[0]};
  record::InstanceInfo inst = instance_info(priced, pricing);
  EXPECT_EQ(inst.name, "c5.12xlarge");
  EXPECT_EQ(inst.vcpus, 48);
  EXPECT_DOUBLE_EQ(inst.usd_per_hour, 0.728 * 2);
  record::CostInfo c = cost_info(inst, r.wall_seconds.median, r.rows, r.tokens, 0);
  EXPECT_NEAR(c.cost_to_solution_usd, 2.0 / 3600 * 1.456, 1e-12);
  EXPECT_EQ(c.corpus_rows, 1000);
  EXPECT_NEAR(c.usd_per_million_rows, 1e6 / 500.0 * 1.456 / 3600, 1e-9);
  // A list-wide source and date where the instance has none of its own.
  EXPECT_EQ(inst.price_list, "seed-2021");
  EXPECT_EQ(inst.price_source, "study");
  EXPECT_EQ(inst.price_date, "2021");
  r.instance = inst;
  r.cost = c;
  // The assembled record survives the JSON lines format.
  Result<record::Record> back = record::parse_record(record::to_json_line(r), "test");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->repetitions.size(), 3u);
  EXPECT_EQ(back->data.length_counts, r.data.length_counts);
  EXPECT_DOUBLE_EQ(back->cost->cost_to_solution_usd, c.cost_to_solution_usd);
}

TEST(RecordAssembly, TakesTheInstancesOwnPriceSourceAndDate) {
  SweepSpec spec;
  spec.run.instance = "g5.xlarge";
  spec.run.price_list = "aws-2026";
  std::vector<cost::PriceList> lists;
  Result<std::optional<cost::PricedInstance>> priced = find_spec_instance(spec, lists);
  ASSERT_TRUE(priced.ok()) << priced.status().to_string();
  ASSERT_TRUE(priced->has_value());
  record::InstanceInfo inst = instance_info(**priced, cost::Pricing{});
  EXPECT_EQ(inst.name, "g5.xlarge");
  EXPECT_EQ(inst.price_list, "aws-2026");
  // The instance's own date and catalog, not the list's range and summary.
  EXPECT_EQ(inst.price_date, "2026-01-21");
  EXPECT_NE(inst.price_date, (*priced)->list->date);
  EXPECT_EQ(inst.price_source, (*priced)->instance->source);
  EXPECT_FALSE(inst.price_source.empty());
  EXPECT_NE(inst.price_source, (*priced)->list->source);
  EXPECT_EQ(inst.gpus, 1);
}

TEST(SpreadText, IsHalfTheRangeOverTheMedianAsTheReportPrintsIt) {
  record::Spread s;
  s.median = 100;
  s.min = 90;
  s.max = 110;
  EXPECT_EQ(spread_text(s), "± 10.0%");
  s.min = 44.4;
  s.max = 66.8;
  s.median = 64.6;
  EXPECT_EQ(spread_text(s), "± 17.3%");
  s.min = s.max = s.median;  // one repetition
  EXPECT_EQ(spread_text(s), "± 0.0%");
  s.median = 0;
  EXPECT_EQ(spread_text(s), "");
}

TEST(RunArguments, CarryThePointAndTheSweepSettings) {
  SweepSpec s;
  s.model = "/m";
  s.run.max_length = 128;
  s.run.tokenizer_threads = 2;
  Point p;
  p.device = "cpu";
  p.precision = "int8";
  p.batching = "tokens";
  p.threads = 4;
  p.max_batch_tokens = 2048;
  const std::vector<std::string> a =
      run_arguments(s, p, {"/d/a.jsonl", "/d/b.jsonl"}, 400, "/t/out/", "/t/m.json");
  const std::vector<std::string> expected = {"run",        "/d/a.jsonl",
                                             "/d/b.jsonl", "--model",
                                             "/m",         "--output",
                                             "/t/out/",    "--metrics",
                                             "/t/m.json",  "--quiet",
                                             "--force",    "--column",
                                             "full_text",  "--device",
                                             "cpu",        "--precision",
                                             "int8",       "--batching",
                                             "tokens",     "--batch-size",
                                             "400",        "--max-batch-tokens",
                                             "2048",       "--threads",
                                             "4",          "--tokenizer-threads",
                                             "2",          "--max-length",
                                             "128"};
  EXPECT_EQ(a, expected);
  // The run's default batch size: no --batch-size.
  const std::vector<std::string> d = run_arguments(s, p, {"/d/a.jsonl"}, 0, "/t/out/", "/t/m.json");
  EXPECT_EQ(std::find(d.begin(), d.end(), "--batch-size"), d.end());

  s.data_dir = "/cache";
  s.rows = 500;
  s.data_seed = 3;
  // The generator's version is part of the name: a changed generator makes new data.
  static_assert(corpus::kTweetGeneratorVersion == 1, "update the names below");
  EXPECT_EQ(dataset_path(s, "json-3"), "/cache/json-3-500rows-seed3-gen1");
  EXPECT_EQ(dataset_path(s, "parquet"), "/cache/parquet-500rows-seed3-gen1.parquet");
  EXPECT_EQ(dataset_path(s, "jsonl"), "/cache/jsonl-500rows-seed3-gen1.jsonl");
}

// The child's flags are spelled by the run's settings table: "auto" sizes,
// the embedding's pooling, and the defaults left out.
TEST(RunArguments, SpellAutoSizesAndPoolingAsTheRunTakesThem) {
  SweepSpec s;
  s.model = "/m";
  s.run.task = Task::kEmbed;
  s.run.pooling = Pooling::kMean;
  Point p;
  p.device = "cuda:0,1";
  p.precision = "auto";
  p.batching = "seed";
  p.batch_size.rule = BatchSize::Rule::kAuto;
  p.max_batch_tokens = kAutoMaxBatchTokens;
  const std::vector<std::string> a = run_arguments(s, p, {"/d/a.jsonl"}, 0, "/t/out/", "/t/m.json");
  const std::vector<std::string> expected = {"embed",
                                             "/d/a.jsonl",
                                             "--model",
                                             "/m",
                                             "--pooling",
                                             "mean",
                                             "--output",
                                             "/t/out/",
                                             "--metrics",
                                             "/t/m.json",
                                             "--quiet",
                                             "--force",
                                             "--column",
                                             "full_text",
                                             "--device",
                                             "cuda:0,1",
                                             "--precision",
                                             "auto",
                                             "--batching",
                                             "seed",
                                             "--batch-size",
                                             "auto",
                                             "--max-batch-tokens",
                                             "auto",
                                             "--threads",
                                             "0",
                                             "--max-length",
                                             "0"};
  EXPECT_EQ(a, expected);
}

TEST(ModelInfo, ReadsConfigAndCountsParameters) {
  Result<record::ModelInfo> m =
      read_model_info(std::string(INFERCOST_TEST_DATA_DIR) + "/model/hf_tiny_distilbert");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->architecture, "distilbert");
  EXPECT_FALSE(m->synthetic);
  EXPECT_EQ(m->layers, 2);
  EXPECT_EQ(m->hidden, 8);
  EXPECT_EQ(m->heads, 2);
  EXPECT_EQ(m->intermediate, 16);
  EXPECT_EQ(m->vocab, 64);
  // Embeddings 64x8 + 32x8 + LayerNorm 2x8; per layer q,k,v,o 4x(8x8+8), two
  // LayerNorms 4x8, FFN 8x16+16 + 16x8+8; pre-classifier 8x8+8, classifier 8x2+2.
  const int64_t expected =
      (64 * 8 + 32 * 8 + 16) + 2 * (4 * (64 + 8) + 32 + (128 + 16) + (128 + 8)) + (64 + 8) + 18;
  EXPECT_EQ(m->parameters, expected);
  Result<record::ModelInfo> missing = read_model_info("/no/such/model");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/model/config.json"), std::string::npos)
      << missing.status().message();
}

// The record's model is the model's description (model::describe_model_dir),
// read without the tensors: a copy whose data section is cut off gives it.
TEST(ModelInfo, IsTheModelsDescription) {
  TempDir dir;
  const std::filesystem::path from = std::string(INFERCOST_TEST_DATA_DIR) + "/golden/tiny-roberta";
  std::filesystem::copy(from, dir.file("tiny-roberta"), std::filesystem::copy_options::recursive);
  const std::string weights = dir.file("tiny-roberta/model.safetensors");
  const std::string bytes = testing::slurp(weights);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  dir.write("tiny-roberta/model.safetensors", bytes.substr(0, 8 + header_len));
  Result<record::ModelInfo> m = read_model_info(dir.file("tiny-roberta"));
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  Result<model::ModelDescription> d = model::describe_model_dir(from.string());
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(m->name, "tiny-roberta");
  EXPECT_EQ(m->name, d->config.name);
  EXPECT_EQ(m->architecture, "roberta");
  EXPECT_EQ(m->parameters, d->parameters);
  EXPECT_EQ(m->layers, d->config.num_layers);
  EXPECT_EQ(m->hidden, d->config.hidden_size);
  EXPECT_EQ(m->vocab, d->config.vocab_size);
}

TEST(InputFiles, HashesTheBytesInInputOrder) {
  TempDir dir;
  dir.write("data/b.jsonl", "{\"full_text\": \"b\"}\n");
  dir.write("data/a.jsonl", "{\"full_text\": \"a\"}\n");
  Result<InputFiles> f = describe_inputs({dir.file("data")});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->files.size(), 2u);
  EXPECT_EQ(f->files[0], dir.file("data/a.jsonl"));  // a folder's files, sorted
  EXPECT_EQ(f->bytes, 38);
  EXPECT_EQ(f->content_sha256, sha256_hex("{\"full_text\": \"a\"}\n{\"full_text\": \"b\"}\n"));
  Result<InputFiles> reversed = describe_inputs({dir.file("data/b.jsonl"), dir.file("data/a.jsonl")});
  ASSERT_TRUE(reversed.ok());
  EXPECT_NE(reversed->content_sha256, f->content_sha256);
  EXPECT_FALSE(describe_inputs({dir.file("nothing.jsonl")}).ok());
}

}  // namespace
}  // namespace infercost::bench
