// The checkpoint file: written and read back field by field, refused when
// broken or of another version, and compared as job identities.
#include "run/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

#include "test_utils.h"

namespace infercost::run {
namespace {

using infercost::testing::TempDir;

Checkpoint sample() {
  Checkpoint c;
  c.written_by = "infercost test";
  c.updated = "2026-12-01T12:00:00Z";
  c.job.inputs = {{"/data/a.jsonl", "jsonl", 1234, 1700000000123456789, std::string(64, 'a')},
                  {"/data/b.parquet", "parquet", 99, 5, std::string(64, 'b')}};
  c.job.model_dir = "/models/m";
  c.job.model_files_sha256 = std::string(64, 'c');
  c.job.weights_size = 267000000;
  c.job.weights_mtime_ns = 42;
  c.job.weights_head_tail_sha256 = std::string(64, 'd');
  c.job.options = {{"--column", "full_text"}, {"--max-length", "512"}, {"--no-text", "false"}};
  c.progress.files_done = 1;
  c.progress.position = {8192, 987654321, 8200};
  c.progress.rows_done = 20000;
  c.progress.rows_null = 3;
  c.progress.rows_skipped = 2;
  c.progress.first_skip_reason = "Corrupt input: a.jsonl: line 7: malformed JSON";
  c.progress.precision = "bf16";
  c.progress.output.bytes = 4096;
  c.progress.output.rows = 11808;
  c.progress.output.parquet_footer = std::string("\x00\x01\xff thrift\n", 11);
  return c;
}

TEST(Checkpoint, RoundTripsEveryField) {
  const Checkpoint c = sample();
  auto back = parse_checkpoint(checkpoint_json(c), "ck");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->written_by, c.written_by);
  EXPECT_EQ(back->updated, c.updated);
  ASSERT_EQ(back->job.inputs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->job.inputs[i].path, c.job.inputs[i].path);
    EXPECT_EQ(back->job.inputs[i].format, c.job.inputs[i].format);
    EXPECT_EQ(back->job.inputs[i].size, c.job.inputs[i].size);
    EXPECT_EQ(back->job.inputs[i].mtime_ns, c.job.inputs[i].mtime_ns);
    EXPECT_EQ(back->job.inputs[i].head_tail_sha256, c.job.inputs[i].head_tail_sha256);
  }
  EXPECT_EQ(back->job.model_dir, c.job.model_dir);
  EXPECT_EQ(back->job.model_files_sha256, c.job.model_files_sha256);
  EXPECT_EQ(back->job.weights_size, c.job.weights_size);
  EXPECT_EQ(back->job.weights_mtime_ns, c.job.weights_mtime_ns);
  EXPECT_EQ(back->job.weights_head_tail_sha256, c.job.weights_head_tail_sha256);
  EXPECT_EQ(back->job.options, c.job.options);
  EXPECT_EQ(back->progress.files_done, 1);
  EXPECT_EQ(back->progress.position.rows, 8192);
  EXPECT_EQ(back->progress.position.offset, 987654321u);
  EXPECT_EQ(back->progress.position.line, 8200);
  EXPECT_EQ(back->progress.rows_done, 20000);
  EXPECT_EQ(back->progress.rows_null, 3);
  EXPECT_EQ(back->progress.rows_skipped, 2);
  EXPECT_EQ(back->progress.first_skip_reason, c.progress.first_skip_reason);
  EXPECT_EQ(back->progress.precision, "bf16");
  EXPECT_EQ(back->progress.output.bytes, 4096u);
  EXPECT_EQ(back->progress.output.rows, 11808);
  EXPECT_EQ(back->progress.output.parquet_footer, c.progress.output.parquet_footer);
  EXPECT_EQ(identity_difference(c.job, back->job), "");
  // Every length of footer survives base64.
  for (size_t n = 0; n < 7; ++n) {
    Checkpoint d = c;
    d.progress.output.parquet_footer = std::string(n, '\xab');
    EXPECT_EQ(parse_checkpoint(checkpoint_json(d), "ck")->progress.output.parquet_footer,
              d.progress.output.parquet_footer);
  }
}

TEST(Checkpoint, BrokenFilesAndOtherVersionsAreRefusedNamingTheProblem) {
  const std::string good = checkpoint_json(sample());
  auto expect_refused = [](const std::string& text, const std::string& says) {
    auto r = parse_checkpoint(text, "/out/x.infercost-checkpoint");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("/out/x.infercost-checkpoint: not a valid checkpoint"),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
  };
  expect_refused(good.substr(0, good.size() / 2), "not JSON");
  expect_refused("", "not JSON");
  std::string v2 = good;
  v2.replace(v2.find("infercost.checkpoint/1"), 22, "infercost.checkpoint/2");
  expect_refused(v2, "this infercost reads infercost.checkpoint/1");
  std::string missing = good;
  missing.replace(missing.find("\"rows_done\""), 11, "\"rows_gone\"");
  expect_refused(missing, "'progress.rows_done' is missing");
  std::string typed = good;
  typed.replace(typed.find("\"files_done\": 1"), 15, "\"files_done\": \"1\"");
  expect_refused(typed, "'progress.files_done' is not a whole number");
  std::string beyond = good;
  beyond.replace(beyond.find("\"files_done\": 1"), 15, "\"files_done\": 9");
  expect_refused(beyond, "the job has 2 inputs");
  std::string b64 = good;
  b64.replace(b64.find("\"parquet_footer_base64\": \"") + 26, 1, "*");
  expect_refused(b64, "is not base64");
}

TEST(Checkpoint, IdentityDifferencesAreNamed) {
  const JobIdentity a = sample().job;
  JobIdentity b = a;
  b.inputs[1].size = 100;
  EXPECT_EQ(identity_difference(a, b), "input 2 (/data/b.parquet): its size changed (99 -> 100 bytes)");
  b = a;
  b.inputs[0].head_tail_sha256 = std::string(64, 'e');
  EXPECT_EQ(identity_difference(a, b), "input 1 (/data/a.jsonl): its contents changed");
  b = a;
  b.inputs.pop_back();
  EXPECT_EQ(identity_difference(a, b), "the inputs are 1 files now, the checkpoint's job had 2");
  b = a;
  b.weights_mtime_ns = 43;
  EXPECT_EQ(identity_difference(a, b), "the model's weights changed (/models/m)");
  b = a;
  b.options[1].second = "128";
  EXPECT_EQ(identity_difference(a, b), "--max-length: '128' now, the checkpoint's run used '512'");
  b = a;
  b.options.pop_back();
  EXPECT_EQ(identity_difference(a, b), "--no-text: the checkpoint's run used 'false'");
}

TEST(Checkpoint, WrittenAtomicallyAndReadBack) {
  TempDir dir;
  const std::string path = dir.file("x.infercost-checkpoint");
  auto none = read_checkpoint(path);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(write_checkpoint(path, sample()).ok());
  auto back = read_checkpoint(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->progress.rows_done, 20000);
  EXPECT_EQ(testing::count_entries(dir.path()), 1) << "no temporary left";
  dir.write("x.infercost-checkpoint", "{");
  EXPECT_EQ(read_checkpoint(path).status().code(), StatusCode::kInvalidArgument);
}

TEST(Checkpoint, OneLockPerOutput) {
  TempDir dir;
  const std::string lock_path = dir.file("out.infercost-lock");
  {
    auto held = JobLock::acquire(lock_path, "out.jsonl");
    ASSERT_TRUE(held.ok()) << held.status().to_string();
    auto second = JobLock::acquire(lock_path, "out.jsonl");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(
        second.status().message().find("out.jsonl: another infercost run (PID " + std::to_string(::getpid())),
        std::string::npos)
        << second.status().message();
  }
  EXPECT_FALSE(testing::count_entries(dir.path()) != 0) << "the lock file is removed on release";
  auto again = JobLock::acquire(lock_path, "out.jsonl");
  EXPECT_TRUE(again.ok());
}

TEST(Checkpoint, JobFilesBesideAFileInsideAFolder) {
  const JobFiles file = JobFiles::for_output("/o/preds.parquet", false);
  EXPECT_EQ(file.checkpoint, "/o/preds.parquet.infercost-checkpoint");
  EXPECT_EQ(file.lock, "/o/preds.parquet.infercost-lock");
  EXPECT_EQ(JobFiles::partial_of("/o/preds.parquet", false), "/o/preds.parquet.infercost-partial");
  const JobFiles folder = JobFiles::for_output("/o/parts/", true);
  EXPECT_EQ(folder.checkpoint, "/o/parts/.infercost-checkpoint");
  EXPECT_EQ(folder.lock, "/o/parts/.infercost-lock");
  EXPECT_EQ(JobFiles::partial_of("/o/parts/a.parquet", true), "/o/parts/.a.parquet.infercost-partial");
}

}  // namespace
}  // namespace infercost::run
