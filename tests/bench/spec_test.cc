#include "bench/spec.h"

#include <gtest/gtest.h>

#include "test_utils.h"

namespace infercost::bench {
namespace {

using testing::TempDir;

TEST(BatchSize, ParsesNumbersDefaultsAndRules) {
  struct Case {
    const char* text;
    BatchSize::Rule rule;
    int value;
    const char* shown;
  };
  const Case cases[] = {
      {"32", BatchSize::Rule::kNone, 32, "32"},
      {"default", BatchSize::Rule::kNone, 0, "default"},
      {"0", BatchSize::Rule::kNone, 0, "default"},
      {"100xvcpus", BatchSize::Rule::kVcpus, 100, "100xvcpus"},
      {"40xgpus", BatchSize::Rule::kGpus, 40, "40xgpus"},
      {"70XGPUS", BatchSize::Rule::kGpus, 70, "70xgpus"},
      {" 100x vcpus ", BatchSize::Rule::kVcpus, 100, "100xvcpus"},
  };
  for (const Case& c : cases) {
    Result<BatchSize> b = parse_batch_size(c.text);
    ASSERT_TRUE(b.ok()) << c.text << ": " << b.status().to_string();
    EXPECT_EQ(b->rule, c.rule) << c.text;
    EXPECT_EQ(b->value, c.value) << c.text;
    EXPECT_EQ(b->text(), c.shown) << c.text;
  }
  EXPECT_EQ(parse_batch_size("100xvcpus")->rule_text(), "100xvcpus");
  EXPECT_EQ(parse_batch_size("32")->rule_text(), "");
}

TEST(BatchSize, RefusesMalformedValuesNamingThem) {
  for (const char* bad : {"", "x", "-3", "12.5", "0xvcpus", "xvcpus", "40xtpus", "40x", "1e3", "32 rows"}) {
    Result<BatchSize> b = parse_batch_size(bad);
    ASSERT_FALSE(b.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(b.status().message().find("--batch-size '" + std::string(bad) + "'"), std::string::npos)
        << b.status().message();
  }
  EXPECT_NE(parse_batch_size("40xtpus").status().message().find("unknown rule 'tpus'"), std::string::npos);
}

TEST(BatchSize, ResolvesRulesPerPoint) {
  EXPECT_EQ(resolve_batch_size(*parse_batch_size("32"), 8, 0), 32);
  EXPECT_EQ(resolve_batch_size(*parse_batch_size("default"), 8, 0), 0);
  EXPECT_EQ(resolve_batch_size(*parse_batch_size("100xvcpus"), 48, 0), 4800);
  EXPECT_EQ(resolve_batch_size(*parse_batch_size("40xgpus"), 48, 4), 160);
  EXPECT_EQ(resolve_batch_size(*parse_batch_size("70xgpus"), 48, 8), 560);
}

TEST(Axes, SplitsCommasAndRefusesBadValues) {
  Axes a;
  ASSERT_TRUE(set_axis(a, "batch_size", {"8,32", "100xvcpus"}).ok());
  ASSERT_EQ(a.batch_sizes.size(), 3u);
  EXPECT_EQ(a.batch_sizes[2].text(), "100xvcpus");
  ASSERT_TRUE(set_axis(a, "threads", {"1, 2"}).ok());
  EXPECT_EQ(a.threads, (std::vector<int>{1, 2}));
  ASSERT_TRUE(set_axis(a, "device", {"cpu,cuda:0,cuda:all,cuda"}).ok());
  ASSERT_TRUE(set_axis(a, "precision", {"auto,fp32,bf16,int8"}).ok());

  auto error = [&](const char* key, const char* value) {
    Status s = set_axis(a, key, {value});
    EXPECT_FALSE(s.ok()) << key << " " << value;
    return s.message();
  };
  EXPECT_NE(error("batch_size", "8,,32").find("empty value"), std::string::npos);
  EXPECT_NE(error("batch_size", "8,32,8").find("--batch-size lists '8' twice"), std::string::npos);
  EXPECT_NE(error("threads", "two").find("--threads: 'two' is not a whole number"), std::string::npos);
  EXPECT_NE(error("shape", "csv-5").find("unknown shape 'csv-5'"), std::string::npos);
  EXPECT_NE(error("device", "gpu").find("unknown device 'gpu'"), std::string::npos);
  EXPECT_NE(error("device", "cuda:x").find("unknown device"), std::string::npos);
  EXPECT_NE(error("precision", "fp8").find("fp8"), std::string::npos);
  EXPECT_NE(error("batching", "greedy").find("greedy"), std::string::npos);
  EXPECT_NE(error("max_batch_tokens", "-1").find("--max-batch-tokens"), std::string::npos);
  // A failed set leaves the axis as it was.
  EXPECT_EQ(a.threads, (std::vector<int>{1, 2}));
}

// A multi-GPU device is one point: ';' separates points, and a comma before
// a GPU ordinal continues a cuda:N,M list.
TEST(Axes, DeviceListsOfGpusAreOnePoint) {
  Axes a;
  ASSERT_TRUE(set_axis(a, "device", {"cuda:0,1"}).ok());
  EXPECT_EQ(a.devices, (std::vector<std::string>{"cuda:0,1"}));
  ASSERT_TRUE(set_axis(a, "device", {"cpu,cuda:0,1;cuda:2,3, cuda"}).ok());
  EXPECT_EQ(a.devices, (std::vector<std::string>{"cpu", "cuda:0,1", "cuda:2,3", "cuda"}));
  ASSERT_TRUE(set_axis(a, "device", {"cuda:0;cuda:1", "cpu"}).ok());
  EXPECT_EQ(a.devices, (std::vector<std::string>{"cuda:0", "cuda:1", "cpu"}));
  ASSERT_TRUE(set_axis(a, "device", {"cpu,cuda"}).ok());
  EXPECT_EQ(a.devices, (std::vector<std::string>{"cpu", "cuda"}));

  auto error = [&](const char* value) {
    Status s = set_axis(a, "device", {value});
    EXPECT_FALSE(s.ok()) << value;
    return s.message();
  };
  EXPECT_NE(error("cpu,1").find("unknown device '1'"), std::string::npos);
  EXPECT_NE(error("cuda:all,1").find("unknown device '1'"), std::string::npos);
  EXPECT_NE(error("cuda:0,1;;cpu").find("empty value"), std::string::npos);
  EXPECT_NE(error("cuda:1,1").find("unknown device 'cuda:1,1'"), std::string::npos);
  EXPECT_NE(error("cuda:0,1;cuda:0,1").find("--device lists 'cuda:0,1' twice"), std::string::npos);
  EXPECT_EQ(a.devices, (std::vector<std::string>{"cpu", "cuda"}));
}

SweepSpec spec_with(std::initializer_list<std::pair<const char*, const char*>> axes) {
  SweepSpec s;
  s.model = "m";
  for (const auto& [key, values] : axes) EXPECT_TRUE(set_axis(s.axes, key, {values}).ok()) << key;
  fill_defaults(s);
  return s;
}

TEST(Sweep, ExpandsTheProductInTheDocumentedOrder) {
  SweepSpec s = spec_with({{"shape", "json-3,parquet"},
                           {"batching", "seed,tokens"},
                           {"batch_size", "8,100xvcpus"},
                           {"max_batch_tokens", "2048,4096"}});
  ASSERT_TRUE(validate(s).ok()) << validate(s).to_string();
  std::vector<Point> points = expand_points(s);
  // Per shape: seed x 2 batch sizes (max_batch_tokens does not apply) + tokens x 2 x 2.
  ASSERT_EQ(points.size(), 2u * (2 + 4));
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, static_cast<int>(i) + 1);
  auto key = [](const Point& p) {
    return p.shape + "/" + p.batching + "/" + p.batch_size.text() + "/" + std::to_string(p.max_batch_tokens);
  };
  const std::vector<std::string> expected_first = {
      "json-3/seed/8/0",      "json-3/seed/100xvcpus/0",      "json-3/tokens/8/2048",
      "json-3/tokens/8/4096", "json-3/tokens/100xvcpus/2048", "json-3/tokens/100xvcpus/4096",
      "parquet/seed/8/0"};
  for (size_t i = 0; i < expected_first.size(); ++i) EXPECT_EQ(key(points[i]), expected_first[i]) << i;
  EXPECT_EQ(points[0].device, "cpu");
  EXPECT_EQ(points[0].precision, "auto");
  EXPECT_EQ(points[0].threads, 0);
  EXPECT_EQ(points[2].describe(), "batch 8 auto tokens json-3 cpu all threads max 2048 tokens");

  // Devices vary slower than precision, precision slower than batching.
  SweepSpec t = spec_with({{"device", "cpu,cuda"}, {"precision", "fp32,int8"}, {"threads", "1,2"}});
  std::vector<Point> q = expand_points(t);
  ASSERT_EQ(q.size(), 8u);
  EXPECT_EQ(q[0].device + q[0].precision + std::to_string(q[0].threads), "cpufp321");
  EXPECT_EQ(q[1].device + q[1].precision + std::to_string(q[1].threads), "cpufp322");
  EXPECT_EQ(q[2].device + q[2].precision + std::to_string(q[2].threads), "cpuint81");
  EXPECT_EQ(q[4].device + q[4].precision + std::to_string(q[4].threads), "cudafp321");
}

TEST(Sweep, DefaultsAndWholeSpecChecks) {
  SweepSpec s = spec_with({});
  EXPECT_EQ(s.axes.shapes, std::vector<std::string>{"json-3"});
  EXPECT_EQ(expand_points(s).size(), 1u);
  EXPECT_TRUE(validate(s).ok());

  SweepSpec with_inputs;
  with_inputs.model = "m";
  with_inputs.inputs = {"a.jsonl"};
  fill_defaults(with_inputs);
  EXPECT_EQ(with_inputs.axes.shapes, std::vector<std::string>{"files"});
  EXPECT_TRUE(validate(with_inputs).ok());

  // A 'gpus' rule on a CPU point is a usage error, before anything runs.
  SweepSpec gpu_rule = spec_with({{"device", "cpu,cuda"}, {"batch_size", "40xgpus"}});
  Status st = validate(gpu_rule);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--batch-size 40xgpus: a 'gpus' rule needs a GPU device"), std::string::npos)
      << st.message();
  EXPECT_TRUE(validate(spec_with({{"device", "cuda:0"}, {"batch_size", "40xgpus,70xgpus"}})).ok());

  SweepSpec files_no_inputs = spec_with({{"shape", "files"}});
  EXPECT_NE(validate(files_no_inputs).message().find("none were given"), std::string::npos);
  SweepSpec inputs_no_files = spec_with({{"shape", "json-3"}});
  inputs_no_files.inputs = {"a.jsonl"};
  EXPECT_NE(validate(inputs_no_files).message().find("does not list 'files'"), std::string::npos);

  SweepSpec bad = spec_with({});
  bad.repetitions = 0;
  EXPECT_NE(validate(bad).message().find("--repetitions"), std::string::npos);
  bad = spec_with({});
  bad.model.clear();
  EXPECT_NE(validate(bad).message().find("--model is required"), std::string::npos);
  bad = spec_with({});
  bad.run.corpus_rows = 1000;
  EXPECT_NE(validate(bad).message().find("give --instance"), std::string::npos);
  bad = spec_with({});
  bad.run.instance = "c5.12xlarge";
  bad.run.spot_discount = 1.5;
  EXPECT_NE(validate(bad).message().find("--spot-discount"), std::string::npos);
  bad = spec_with({});
  bad.monitor_interval = 0;
  EXPECT_NE(validate(bad).message().find("--monitor-interval"), std::string::npos);
}

TEST(SweepFile, ReadsEveryKindOfKey) {
  TempDir dir;
  const std::string path = dir.write("sub/sweep.json", R"({
    "comment": "the study's CPU test",
    "inputs": ["a.jsonl", "/abs/b.parquet"],
    "model": "../models/m",
    "out": "results.jsonl",
    "append": true,
    "shape": ["files", "json-3"],
    "rows": 500,
    "data_seed": 7,
    "batch_size": [8, "100xvcpus"],
    "batching": "seed,tokens",
    "precision": "fp32",
    "device": ["cpu"],
    "threads": 2,
    "max_batch_tokens": [1024],
    "column": "text",
    "max_length": 128,
    "tokenizer_threads": 1,
    "instance": "c5.12xlarge",
    "price_list": "seed-2021",
    "spot_discount": 0.5,
    "platform_usd_per_hour": 0.1,
    "machines": 2,
    "corpus_rows": 1000000,
    "label": "laptop",
    "warmup": 0,
    "repetitions": 5,
    "min_seconds": 2.5,
    "timeout_seconds": 60,
    "monitor_interval": 0.5
  })");
  Result<SweepSpec> s = load_sweep_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->inputs, (std::vector<std::string>{dir.file("sub/a.jsonl"), "/abs/b.parquet"}));
  EXPECT_EQ(s->model, dir.file("models/m"));
  EXPECT_EQ(s->out, dir.file("sub/results.jsonl"));
  EXPECT_TRUE(s->append);
  EXPECT_EQ(s->axes.shapes, (std::vector<std::string>{"files", "json-3"}));
  EXPECT_EQ(s->rows, 500);
  EXPECT_EQ(s->data_seed, 7u);
  ASSERT_EQ(s->axes.batch_sizes.size(), 2u);
  EXPECT_EQ(s->axes.batch_sizes[0].value, 8);
  EXPECT_EQ(s->axes.batch_sizes[1].rule, BatchSize::Rule::kVcpus);
  EXPECT_EQ(s->axes.batchings, (std::vector<std::string>{"seed", "tokens"}));
  EXPECT_EQ(s->axes.threads, std::vector<int>{2});
  EXPECT_EQ(s->axes.max_batch_tokens, std::vector<int>{1024});
  EXPECT_EQ(s->run.column, "text");
  EXPECT_EQ(s->run.max_length, 128);
  EXPECT_EQ(s->run.instance, "c5.12xlarge");
  EXPECT_DOUBLE_EQ(s->run.spot_discount, 0.5);
  EXPECT_EQ(s->run.machines, 2);
  EXPECT_EQ(s->run.corpus_rows, 1000000);
  EXPECT_EQ(s->label, "laptop");
  EXPECT_EQ(s->warmup, 0);
  EXPECT_EQ(s->repetitions, 5);
  EXPECT_DOUBLE_EQ(s->min_seconds, 2.5);
  EXPECT_DOUBLE_EQ(s->timeout_seconds, 60);
  EXPECT_DOUBLE_EQ(s->monitor_interval, 0.5);
  SweepSpec spec = *s;
  fill_defaults(spec);
  EXPECT_TRUE(validate(spec).ok()) << validate(spec).to_string();
}

// "embed" and "pooling" are the runs' task and pooling, the pooling parsed
// once, as it is read; a pooling without embed is refused by validate().
TEST(SweepFile, EmbedAndPoolingAreTheRunsSettings) {
  Result<SweepSpec> s = parse_sweep_file(R"({"model": "m", "embed": true, "pooling": "max"})", "f.json", "");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->run.task, Task::kEmbed);
  EXPECT_EQ(s->run.pooling, Pooling::kMax);
  Result<SweepSpec> bad = parse_sweep_file(R"({"embed": true, "pooling": "sum"})", "f.json", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--pooling: "), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("f.json: key \"pooling\": "), std::string::npos)
      << bad.status().message();
  Result<SweepSpec> classify = parse_sweep_file(R"({"model": "m", "pooling": "cls"})", "f.json", "");
  ASSERT_TRUE(classify.ok()) << classify.status().to_string();
  fill_defaults(*classify);
  EXPECT_NE(validate(*classify).message().find("add --embed"), std::string::npos);
}

TEST(SweepFile, UnknownKeysAndWrongTypesNameTheFileAndKey) {
  auto error = [](const char* json) {
    Result<SweepSpec> s = parse_sweep_file(json, "my-sweep.json", "");
    EXPECT_FALSE(s.ok()) << json;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    return s.status().message();
  };
  std::string m = error(R"({"model": "m", "batchsize": [8]})");
  EXPECT_NE(m.find("my-sweep.json: unknown key \"batchsize\""), std::string::npos) << m;
  EXPECT_NE(m.find("batch_size"), std::string::npos) << "the known keys are listed: " << m;
  m = error(R"({"warmup": "1"})");
  EXPECT_NE(m.find("my-sweep.json: key \"warmup\" must be a whole number"), std::string::npos) << m;
  m = error(R"({"append": 1})");
  EXPECT_NE(m.find("key \"append\" must be true or false"), std::string::npos) << m;
  m = error(R"({"batch_size": [8, true]})");
  EXPECT_NE(m.find("key \"batch_size\" must be"), std::string::npos) << m;
  m = error(R"({"batching": [1]})");
  EXPECT_NE(m.find("key \"batching\" must be a string or an array of strings"), std::string::npos) << m;
  m = error(R"({"threads": []})");
  EXPECT_NE(m.find("key \"threads\""), std::string::npos) << m;
  m = error(R"({"batch_size": ["40xtpus"]})");
  EXPECT_NE(m.find("my-sweep.json: key \"batch_size\": --batch-size '40xtpus'"), std::string::npos) << m;
  m = error(R"({"inputs": [3]})");
  EXPECT_NE(m.find("key \"inputs\" must be a string or an array of strings"), std::string::npos) << m;
  m = error(R"({"min_seconds": "2"})");
  EXPECT_NE(m.find("key \"min_seconds\" must be a number"), std::string::npos) << m;
  EXPECT_NE(error("[1, 2]").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error("{\"model\": ").find("not valid JSON"), std::string::npos);
  Result<SweepSpec> missing = load_sweep_file("/no/such/sweep.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/sweep.json"), std::string::npos);
}

}  // namespace
}  // namespace infercost::bench
