// The run metrics JSON: RunMetrics::to_json() and parse_run_metrics() are one
// format; every field survives the round trip.
#include "infercost/metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "engine/encoder_metrics.h"
#include "engine/flops.h"
#include "engine/run_metrics.h"

namespace infercost::engine {
namespace {

// Every field set, each to its own value (no two alike, none a default), so
// that a field the writer or the reader drops, or writes under another's
// name, shows. The histogram's rows sit at bucket edges (what the file can
// hold exactly).
RunMetrics every_field_set() {
  RunMetrics m;
  m.rows = 1001;
  m.rows_null = 1002;
  m.input_files = 1003;
  m.output_files = 1004;
  m.rows_skipped = 1005;
  m.first_skip_reason = "in.jsonl: line 7: malformed JSON";
  m.tokens = 1006;
  m.padded_tokens = 1007;
  m.computed_tokens = 1008;
  m.rows_at_max_length = 1009;
  m.batches = 1010;
  m.length_counts.assign(514, 0);
  m.length_counts[1] = 11;
  m.length_counts[17] = 12;
  m.length_counts[65] = 13;
  m.length_counts[513] = 14;
  m.wall_seconds = 2.25;
  m.stage_seconds = {{"batch", 0.125}, {"infer", 1.75}, {"load", 0.5}, {"read", 0.0625}, {"write", 0.03125}};
  m.peak_rss_bytes = 1011;
  m.threads = 1012;
  m.batch_size = 1013;
  m.max_batch_tokens = 1014;
  m.window_rows = 1015;
  m.tokenizer_threads = 1016;
  m.max_length = 1017;
  m.batching = "seed";
  m.precision = "bf16";
  m.device = "cuda:all";
  m.devices = {"cuda:0", "cuda:1"};
  m.workers = 1018;
  DeviceRunMetrics d0;
  d0.name = "cuda:0";
  d0.streams = 1019;
  d0.batches = 1020;
  d0.rows = 1021;
  d0.infer_seconds = 0.875;
  d0.oom_retries = 1022;
  d0.max_computed_tokens = 1023;
  DeviceRunMetrics d1;
  d1.name = "cuda:1";
  d1.streams = 1024;
  d1.batches = 1025;
  d1.rows = 1026;
  d1.infer_seconds = 0.9375;
  d1.oom_retries = 1027;
  d1.max_computed_tokens = 1028;
  m.per_device = {d0, d1};
  m.oom_retries = 1029;
  m.batch_size_auto = true;
  m.max_batch_tokens_auto = true;
  m.capacity_max_tokens = 1030;
  m.capacity_max_rows = 1031;
  m.capacity_basis = "free memory 20.5 GiB";
  m.model_flops = 3.5e12;
  m.model_name = "distilbert-base-synthetic";
  m.model_synthetic = true;
  m.head_function = "sigmoid";
  m.labels_column = true;
  m.threshold = 0.375;
  GpuUsage g0;
  g0.index = 3;
  g0.memory_total_bytes = 1032;
  g0.memory_used_peak_bytes = 1033;
  g0.memory_used_mean_bytes = 1034.5;
  g0.utilization_mean = 0.375;
  g0.utilization_peak = 0.625;
  GpuUsage g1;
  g1.index = 5;
  g1.memory_total_bytes = 1035;
  g1.memory_used_peak_bytes = 1036;
  g1.memory_used_mean_bytes = 1037.5;
  g1.utilization_mean = 0.4375;
  g1.utilization_peak = 0.6875;
  m.gpus = {g0, g1};
  m.gpu_monitor = "NVML sample failed: GPU is lost";
  m.gpu_sample_interval_seconds = 0.046875;
  m.gpu_samples = 1038;
  m.checkpoint = "out/.infercost-checkpoint.json";
  m.resumed = true;
  m.resumed_rows = 1039;
  m.already_complete = true;
  m.checkpoints = 1040;
  m.checkpoint_seconds = 0.015625;
  return m;
}

void expect_device_eq(const DeviceRunMetrics& back, const DeviceRunMetrics& m) {
  EXPECT_EQ(back.name, m.name);
  EXPECT_EQ(back.streams, m.streams);
  EXPECT_EQ(back.batches, m.batches);
  EXPECT_EQ(back.rows, m.rows);
  EXPECT_EQ(back.infer_seconds, m.infer_seconds);
  EXPECT_EQ(back.oom_retries, m.oom_retries);
  EXPECT_EQ(back.max_computed_tokens, m.max_computed_tokens);
}

void expect_gpu_eq(const GpuUsage& back, const GpuUsage& m) {
  EXPECT_EQ(back.index, m.index);
  EXPECT_EQ(back.memory_total_bytes, m.memory_total_bytes);
  EXPECT_EQ(back.memory_used_peak_bytes, m.memory_used_peak_bytes);
  EXPECT_EQ(back.memory_used_mean_bytes, m.memory_used_mean_bytes);
  EXPECT_EQ(back.utilization_mean, m.utilization_mean);
  EXPECT_EQ(back.utilization_peak, m.utilization_peak);
}

TEST(RunMetricsJson, EveryFieldComesBack) {
  const RunMetrics m = every_field_set();
  Result<RunMetrics> read = parse_run_metrics(m.to_json(), "m.json");
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  const RunMetrics& back = *read;
  EXPECT_EQ(back.rows, m.rows);
  EXPECT_EQ(back.rows_null, m.rows_null);
  EXPECT_EQ(back.input_files, m.input_files);
  EXPECT_EQ(back.output_files, m.output_files);
  EXPECT_EQ(back.rows_skipped, m.rows_skipped);
  EXPECT_EQ(back.first_skip_reason, m.first_skip_reason);
  EXPECT_EQ(back.tokens, m.tokens);
  EXPECT_EQ(back.padded_tokens, m.padded_tokens);
  EXPECT_EQ(back.computed_tokens, m.computed_tokens);
  EXPECT_EQ(back.rows_at_max_length, m.rows_at_max_length);
  EXPECT_EQ(back.batches, m.batches);
  EXPECT_EQ(back.length_counts, m.length_counts);
  EXPECT_EQ(back.wall_seconds, m.wall_seconds);
  EXPECT_EQ(back.stage_seconds, m.stage_seconds);
  EXPECT_EQ(back.peak_rss_bytes, m.peak_rss_bytes);
  EXPECT_EQ(back.threads, m.threads);
  EXPECT_EQ(back.batch_size, m.batch_size);
  EXPECT_EQ(back.max_batch_tokens, m.max_batch_tokens);
  EXPECT_EQ(back.window_rows, m.window_rows);
  EXPECT_EQ(back.tokenizer_threads, m.tokenizer_threads);
  EXPECT_EQ(back.max_length, m.max_length);
  EXPECT_EQ(back.batching, m.batching);
  EXPECT_EQ(back.precision, m.precision);
  EXPECT_EQ(back.device, m.device);
  EXPECT_EQ(back.devices, m.devices);
  EXPECT_EQ(back.workers, m.workers);
  ASSERT_EQ(back.per_device.size(), m.per_device.size());
  for (size_t i = 0; i < m.per_device.size(); ++i) expect_device_eq(back.per_device[i], m.per_device[i]);
  EXPECT_EQ(back.oom_retries, m.oom_retries);
  EXPECT_EQ(back.batch_size_auto, m.batch_size_auto);
  EXPECT_EQ(back.max_batch_tokens_auto, m.max_batch_tokens_auto);
  EXPECT_EQ(back.capacity_max_tokens, m.capacity_max_tokens);
  EXPECT_EQ(back.capacity_max_rows, m.capacity_max_rows);
  EXPECT_EQ(back.capacity_basis, m.capacity_basis);
  EXPECT_EQ(back.model_flops, m.model_flops);
  EXPECT_EQ(back.model_name, m.model_name);
  EXPECT_EQ(back.model_synthetic, m.model_synthetic);
  EXPECT_EQ(back.head_function, m.head_function);
  EXPECT_EQ(back.labels_column, m.labels_column);
  EXPECT_EQ(back.threshold, m.threshold);
  ASSERT_EQ(back.gpus.size(), m.gpus.size());
  for (size_t i = 0; i < m.gpus.size(); ++i) expect_gpu_eq(back.gpus[i], m.gpus[i]);
  EXPECT_EQ(back.gpu_monitor, m.gpu_monitor);
  EXPECT_EQ(back.gpu_sample_interval_seconds, m.gpu_sample_interval_seconds);
  EXPECT_EQ(back.gpu_samples, m.gpu_samples);
  EXPECT_EQ(back.checkpoint, m.checkpoint);
  EXPECT_EQ(back.resumed, m.resumed);
  EXPECT_EQ(back.resumed_rows, m.resumed_rows);
  EXPECT_EQ(back.already_complete, m.already_complete);
  EXPECT_EQ(back.checkpoints, m.checkpoints);
  EXPECT_EQ(back.checkpoint_seconds, m.checkpoint_seconds);
  // The whole struct too: it catches a member added without a line above.
  EXPECT_TRUE(back == m);
  // And the derived figures follow.
  EXPECT_EQ(back.rows_per_second(), m.rows_per_second());
  EXPECT_EQ(back.padding_efficiency(), m.padding_efficiency());
  EXPECT_EQ(back.infer_share(), m.infer_share());
}

TEST(RunMetricsJson, WritesTheSameBytesAgain) {
  const std::string json = every_field_set().to_json();
  Result<RunMetrics> back = parse_run_metrics(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->to_json(), json);
}

// The JSON itself, to the byte: names, order, nesting and number formatting
// are what readers of --metrics (infercost bench, scripts, notebooks) rely on.
// A field dropped from both the writer and the reader fails here.
TEST(RunMetricsJson, WritesTheFieldsInTheirOrderAndFormat) {
  RunMetrics m = every_field_set();
  EXPECT_EQ(m.to_json(), R"json({
  "rows": 1001,
  "rows_null": 1002,
  "rows_skipped": 1005,
  "input_files": 1003,
  "output_files": 1004,
  "first_skip_reason": "in.jsonl: line 7: malformed JSON",
  "tokens": 1006,
  "padded_tokens": 1007,
  "computed_tokens": 1008,
  "padding_efficiency": 0.998015873015873,
  "batch_fill": 0.9990069513406157,
  "rows_at_max_length": 1009,
  "batches": 1010,
  "length_histogram": {
    "edges": [
      1,
      9,
      17,
      33,
      65,
      129,
      257,
      513
    ],
    "counts": [
      11,
      0,
      12,
      0,
      13,
      0,
      0,
      14
    ]
  },
  "wall_seconds": 2.25,
  "rows_per_second": 444.8888888888889,
  "tokens_per_second": 447.1111111111111,
  "infer_share": 0.0007640253219820999,
  "peak_rss_bytes": 1011,
  "stages": {
    "batch": 0.125,
    "infer": 1.75,
    "load": 0.5,
    "read": 0.0625,
    "write": 0.03125
  },
  "model": {
    "name": "distilbert-base-synthetic",
    "synthetic": true
  },
  "task": "classify",
  "head": {
    "function": "sigmoid",
    "labels_column": true,
    "threshold": 0.375
  },
  "device": "cuda:all",
  "threads": 1012,
  "batching": "seed",
  "precision": "bf16",
  "batch_size": 1013,
  "max_batch_tokens": 1014,
  "window_rows": 1015,
  "tokenizer_threads": 1016,
  "max_length": 1017,
  "devices": [
    "cuda:0",
    "cuda:1"
  ],
  "workers": 1018,
  "per_device": [
    {
      "device": "cuda:0",
      "streams": 1019,
      "batches": 1020,
      "rows": 1021,
      "infer_seconds": 0.875,
      "oom_retries": 1022,
      "max_computed_tokens": 1023
    },
    {
      "device": "cuda:1",
      "streams": 1024,
      "batches": 1025,
      "rows": 1026,
      "infer_seconds": 0.9375,
      "oom_retries": 1027,
      "max_computed_tokens": 1028
    }
  ],
  "oom_retries": 1029,
  "batch_size_auto": true,
  "max_batch_tokens_auto": true,
  "capacity": {
    "max_tokens": 1030,
    "max_rows": 1031,
    "basis": "free memory 20.5 GiB"
  },
  "model_flops": 3500000000000.0,
  "model_flops_per_second": 1555555555555.5557,
  "gpu_sample_interval_seconds": 0.046875,
  "gpu_samples": 1038,
  "gpus": [
    {
      "index": 3,
      "memory_total_bytes": 1032,
      "memory_used_peak_bytes": 1033,
      "memory_used_mean_bytes": 1034.5,
      "utilization_mean": 0.375,
      "utilization_peak": 0.625
    },
    {
      "index": 5,
      "memory_total_bytes": 1035,
      "memory_used_peak_bytes": 1036,
      "memory_used_mean_bytes": 1037.5,
      "utilization_mean": 0.4375,
      "utilization_peak": 0.6875
    }
  ],
  "gpu_monitor": "NVML sample failed: GPU is lost",
  "resume": {
    "checkpoint": "out/.infercost-checkpoint.json",
    "resumed": true,
    "resumed_rows": 1039,
    "already_complete": true,
    "checkpoints": 1040,
    "checkpoint_seconds": 0.015625
  }
}
)json");
}

// A CPU run that resumes nothing: the sections written only sometimes are
// absent, and the defaults come back.
TEST(RunMetricsJson, SectionsWrittenOnlySometimesKeepTheirDefaults) {
  RunMetrics m;
  m.rows = 4;
  m.device = "cpu";
  m.devices = {"cpu"};
  const std::string json = m.to_json();
  const nlohmann::json j = nlohmann::json::parse(json);
  for (const char* absent : {"first_skip_reason", "capacity", "gpus", "gpu_monitor", "resume"})
    EXPECT_FALSE(j.contains(absent)) << absent;
  Result<RunMetrics> back = parse_run_metrics(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(*back == m);
  EXPECT_EQ(back->to_json(), json);
}

// The file holds the histogram's buckets, not the exact lengths: rows come
// back at their bucket's lower edge, and the histogram written again is the same.
TEST(RunMetricsJson, ExactLengthsComeBackAtTheirBucketsEdge) {
  RunMetrics m;
  m.length_counts = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2};  // one row of 9 tokens, two of 12
  Result<RunMetrics> back = parse_run_metrics(m.to_json(), "m.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->length_counts, (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 3}));
  EXPECT_EQ(bin_lengths(back->length_counts, length_histogram_edges()),
            (std::vector<int64_t>{0, 3, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(back->to_json(), m.to_json());
}

std::string message_of(const nlohmann::ordered_json& j) {
  Result<RunMetrics> r = parse_run_metrics(j.dump(), "m.json");
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  return r.status().message();
}

TEST(RunMetricsJson, RefusesMalformedMetricsNamingTheField) {
  EXPECT_EQ(parse_run_metrics("[]", "m.json").status().message(), "m.json: not a JSON object");
  EXPECT_EQ(parse_run_metrics("{\"rows\": ", "m.json").status().message(), "m.json: not a JSON object");
  const auto good = nlohmann::ordered_json::parse(every_field_set().to_json());
  auto j = good;
  j.erase("rows");
  EXPECT_EQ(message_of(j), "m.json: no \"rows\"");
  j = good;
  j["threads"] = "2";
  EXPECT_EQ(message_of(j), "m.json: \"threads\" must be an integer");
  j = good;
  j["per_device"][1].erase("streams");
  EXPECT_EQ(message_of(j), "m.json: no \"per_device[1].streams\"");
  j = good;
  j["gpus"][0]["utilization_mean"] = true;
  EXPECT_EQ(message_of(j), "m.json: \"gpus[0].utilization_mean\" must be a number");
  j = good;
  j["devices"][1] = 7;
  EXPECT_EQ(message_of(j), "m.json: \"devices[1]\" must be a string");
  j = good;
  j["stages"]["infer"] = "fast";
  EXPECT_EQ(message_of(j), "m.json: \"stages.infer\" must be a number");
  j = good;
  j["resume"]["resumed"] = 1;
  EXPECT_EQ(message_of(j), "m.json: \"resume.resumed\" must be a boolean");
  j = good;
  j["length_histogram"]["counts"].erase(0);
  EXPECT_NE(message_of(j).find("\"length_histogram\" must hold \"edges\" [1, 9, 17"), std::string::npos);
  j = good;
  j["length_histogram"]["edges"][1] = 10;
  EXPECT_NE(message_of(j).find("\"length_histogram\""), std::string::npos);
  j = good;
  j["model"] = "distilbert";
  EXPECT_EQ(message_of(j), "m.json: \"model\" must be an object");
  j = good;
  j["head"].erase("threshold");
  EXPECT_EQ(message_of(j), "m.json: no \"head.threshold\"");
  j = good;
  j["head"]["function"] = 1;
  EXPECT_EQ(message_of(j), "m.json: \"head.function\" must be a string");
}

// The head: a softmax run writes no threshold; metrics from before the head
// was recorded read as the softmax every run applied then.
TEST(RunMetricsJson, HeadWithoutLabelsColumnHasNoThreshold) {
  RunMetrics m;
  m.head_function = "none";
  const nlohmann::json j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["head"], nlohmann::json::parse(R"({"function": "none", "labels_column": false})"));
  Result<RunMetrics> back = parse_run_metrics(m.to_json(), "m.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(*back == m);
  nlohmann::json old = j;
  old.erase("head");
  Result<RunMetrics> before = parse_run_metrics(old.dump(), "m.json");
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  EXPECT_EQ(before->head_function, "softmax");
  EXPECT_FALSE(before->labels_column);
}

// An embedding run's metrics: the task and how the vectors were made, in an
// `embedding` object written for embeddings only; metrics from before the
// task was recorded read as classify.
TEST(RunMetricsJson, EmbeddingRunsSayHowTheVectorsWereMade) {
  RunMetrics m;
  m.task = "embed";
  m.head_function = "none";
  m.embedding_dimensions = 384;
  m.embedding_pooling = "mean";
  m.embedding_normalized = true;
  m.embedding_prefix = "query: ";
  const nlohmann::json j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["task"], "embed");
  EXPECT_EQ(j["embedding"],
            nlohmann::json::parse(
                R"({"dimensions": 384, "pooling": "mean", "normalized": true, "prefix": "query: "})"));
  Result<RunMetrics> back = parse_run_metrics(m.to_json(), "m.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(*back == m);
  EXPECT_NE(m.to_summary().find("embedding mean pooling, normalized, 384 dimensions, prefix 'query: '"),
            std::string::npos)
      << m.to_summary();

  RunMetrics classified;
  const nlohmann::json c = nlohmann::json::parse(classified.to_json());
  EXPECT_EQ(c["task"], "classify");
  EXPECT_FALSE(c.contains("embedding"));
  nlohmann::json old = c;
  old.erase("task");
  Result<RunMetrics> before = parse_run_metrics(old.dump(), "m.json");
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  EXPECT_EQ(before->task, "classify");
}

// One classify() call's metrics (a binding's) count what ran between two
// snapshots of the classifier's stats: the counts and busy times less the
// earlier ones, a device's streams and learned limit as they are now.
TEST(EncoderMetrics, StatsSinceCountsOnlyWhatRanBetween) {
  EncoderStats before;
  before.rows = 2;
  before.rows_null = 1;
  before.rows_skipped = 1;
  before.tokens = 10;
  before.padded_tokens = 12;
  before.computed_tokens = 11;
  before.rows_at_max_length = 1;
  before.batches = 1;
  before.length_counts = {0, 1, 1};
  before.tokenize_seconds = 0.5;
  before.batch_seconds = 0.25;
  before.infer_seconds = 1.0;
  before.devices = {DeviceRunMetrics{"cpu", 2, 3, 2, 1.0, 1, 40}};
  EncoderStats after = before;
  after.rows = 5;
  after.rows_null = 3;
  after.rows_skipped = 4;
  after.tokens = 25;
  after.padded_tokens = 32;
  after.computed_tokens = 31;
  after.rows_at_max_length = 3;
  after.batches = 4;
  after.length_counts = {0, 1, 3, 1};
  after.tokenize_seconds = 1.25;
  after.batch_seconds = 0.5;
  after.infer_seconds = 4.0;
  after.devices = {DeviceRunMetrics{"cpu", 2, 7, 5, 4.0, 2, 30}};
  const EncoderStats d = stats_since(before, after);
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.rows_null, 2);
  EXPECT_EQ(d.rows_skipped, 3);
  EXPECT_EQ(d.tokens, 15);
  EXPECT_EQ(d.padded_tokens, 20);
  EXPECT_EQ(d.computed_tokens, 20);
  EXPECT_EQ(d.rows_at_max_length, 2);
  EXPECT_EQ(d.batches, 3);
  EXPECT_EQ(d.length_counts, (std::vector<int64_t>{0, 0, 2, 1}));
  EXPECT_EQ(d.tokenize_seconds, 0.75);
  EXPECT_EQ(d.batch_seconds, 0.25);
  EXPECT_EQ(d.infer_seconds, 3.0);
  ASSERT_EQ(d.devices.size(), 1u);
  EXPECT_EQ(d.devices[0], (DeviceRunMetrics{"cpu", 2, 4, 3, 3.0, 1, 30}));
}

// The encoder FLOP model: linear in the length plus the attention's square,
// summed over rows at each length (what model_flops and `infercost plan` count).
TEST(EncoderFlops, RowsAtEachLengthAddUp) {
  const EncoderShape tiny{1, 2, 4};
  EXPECT_EQ(encoder_linear_flops_per_token(tiny), 64.0);  // 2 (4 h^2 + 2 h f)
  EXPECT_EQ(encoder_attention_flops(tiny, 3), 8.0 * 9);   // 4 h L^2
  EXPECT_EQ(encoder_row_flops(tiny, 3), 64.0 * 3 + 8.0 * 9);
  EXPECT_EQ(encoder_flops_of_lengths(tiny, {0, 0, 0, 2, 1}), 2 * (64.0 * 3 + 8.0 * 9) + 64.0 * 4 + 8.0 * 16);
  EXPECT_EQ(encoder_flops_of_lengths(tiny, {}), 0.0);
  // Of a config: BERT's is the same formula; a GLU and local windows count what they compute.
  model::ModelConfig bert;
  bert.num_layers = 2, bert.hidden_size = 8, bert.intermediate_size = 16;
  const std::vector<int64_t> lengths = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3};
  EXPECT_EQ(encoder_shape(bert), (EncoderShape{2, 8, 16}));
  EXPECT_EQ(encoder_flops_of_lengths(bert, lengths),
            encoder_flops_of_lengths(EncoderShape{2, 8, 16}, lengths));
  model::ModelConfig modern = bert;
  modern.glu = true;
  modern.attention_window = {0, 2};  // layer 1 sees 2 tokens each side
  EXPECT_EQ(encoder_shape(modern), (EncoderShape{2, 8, 16, true, {0, 2}}));
  EXPECT_EQ(encoder_shape(modern).describe(),
            "2 layers, hidden 8, FFN 16, GLU, 1 of 2 layers local (window 2)");
  // Per layer 2 L (4 h^2 + 3 h f); layer 0: 4 h L^2; layer 1 at L = 10: 4 h (10 x 5 - 2 x 3) pairs; at L = 1:
  // 1 pair.
  const double h = 8, f = 16, linear = 2 * (4 * h * h + 3 * h * f);
  const double row10 = 2 * linear * 10 + 4 * h * 100 + 4 * h * (10 * 5 - 6);
  const double row1 = 2 * linear * 1 + 4 * h * 1 + 4 * h * 1;
  EXPECT_EQ(encoder_flops_of_lengths(modern, lengths), 3 * row10 + row1);
  // Global on every layer: the windows list is empty.
  modern.attention_window = {0, 0};
  EXPECT_TRUE(encoder_shape(modern).windows.empty());
  // DeBERTa: each pair's c2p and p2c products, 2 h apiece, beside the 4 h.
  model::ModelConfig deberta = bert;
  deberta.relative_attention = deberta.c2p = deberta.p2c = true;
  EXPECT_EQ(encoder_shape(deberta), (EncoderShape{2, 8, 16, false, {}, 2}));
  EXPECT_EQ(encoder_shape(deberta).describe(),
            "2 layers, hidden 8, FFN 16, disentangled attention (2 relative terms)");
  const double plain = 2 * (4 * h * h + 2 * h * f);
  EXPECT_EQ(encoder_flops_of_lengths(deberta, lengths),
            3 * 2 * (plain * 10 + 8 * h * 100) + 2 * (plain * 1 + 8 * h * 1));
  deberta.p2c = false;
  EXPECT_EQ(encoder_shape(deberta).relative_terms, 1);
  EXPECT_EQ(encoder_shape(deberta).describe(),
            "2 layers, hidden 8, FFN 16, disentangled attention (1 relative term)");
}

}  // namespace
}  // namespace infercost::engine
