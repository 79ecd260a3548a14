// What a run writes, and what it never touches (README "Using it", docs/checkpoint.md): outputs
// streamed to FIFOs and descriptors, links followed, read-only files and the run's own inputs and
// model refused, an existing output never replaced without --force, a finished job's record
// telling a resume of the same job from another one, and a checkpoint that does not add up refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "test_utils.h"

namespace infercost {
namespace {

namespace fs = std::filesystem;
using testing::CommandOutcome;
using testing::run_infercost;
using testing::slurp;
using testing::TempDir;

bool mentions(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

constexpr int kRows = 60;

class OutputsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (const char* seed : {"1", "2"}) {
      auto m = run_infercost(std::string("model synth --preset tiny --seed ") + seed + " --out " +
                             dir_->file(std::string("tiny") + seed));
      ASSERT_EQ(m.exit_code, 0) << m.output;
    }
    auto d =
        run_infercost("datagen --quiet --rows " + std::to_string(kRows) + " --out " + dir_->file("in.jsonl"));
    ASSERT_EQ(d.exit_code, 0) << d.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model(int seed = 1) { return dir_->file("tiny" + std::to_string(seed)); }
  // A copy of the input in `work` (so that a test may change it).
  static std::string input(const TempDir& work) {
    const std::string path = work.file("in.jsonl");
    fs::copy_file(dir_->file("in.jsonl"), path, fs::copy_options::overwrite_existing);
    return path;
  }
  static std::string run(const std::string& in, const std::string& out, const std::string& more = "",
                         int seed = 1) {
    return "run " + in + " --model " + model(seed) + " --output " + out +
           " --threads 1 --precision fp32 --quiet " + more;
  }
  static TempDir* dir_;
};
TempDir* OutputsTest::dir_ = nullptr;

int lines_of(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A FIFO gets the rows as they come and stays a FIFO; nothing is written
// beside it (no temporary, checkpoint or record), and --resume is refused.
TEST_F(OutputsTest, AFifoIsStreamedToAndKeepsNoCheckpoint) {
  TempDir work;
  const std::string fifo = work.file("rows.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  testing::FifoReader reader(fifo);
  CommandOutcome o =
      run_infercost(run(input(work), fifo, "--output-format jsonl --metrics " + work.file("m.json")));
  const std::string got = reader.finish();
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(lines_of(got), kRows);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  const nlohmann::json m = nlohmann::json::parse(slurp(work.file("m.json")));
  EXPECT_EQ(m["output_stream"], "a FIFO") << m.dump();
  EXPECT_FALSE(m.contains("resume")) << m.dump();
  // The input, the FIFO, the metrics: nothing else.
  EXPECT_EQ(testing::count_entries(work.path()), 3);

  CommandOutcome resumed = run_infercost(run(input(work), fifo, "--output-format jsonl --resume"));
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_TRUE(mentions(resumed.output, "--resume needs an output file or folder (--output), not " + fifo +
                                           ", a FIFO: a stream is written as rows come, with no checkpoint"))
      << resumed.output;
}

// /dev/stdout names the run's own standard output, here a file of the test:
// written through the descriptor (as `>` set it up), not replaced by a file.
TEST_F(OutputsTest, ADescriptorByNameIsWrittenThrough) {
  TempDir work;
  const std::string in = input(work);
  CommandOutcome o = testing::run_shell("(" + std::string(INFERCOST_BINARY_DIR) + "/infercost " +
                                        run(in, "/dev/stdout", "--output-format csv") + " > " +
                                        work.file("captured.csv") + " 2> " + work.file("stderr.txt") + ")");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  ASSERT_EQ(run_infercost(run(in, work.file("file.csv"))).exit_code, 0);
  EXPECT_EQ(slurp(work.file("captured.csv")), slurp(work.file("file.csv")));
}

// A link is followed: the file it leads to gets the output (and the job's
// files beside it); the link stays. A link to nothing yet makes the file.
TEST_F(OutputsTest, ALinkIsFollowed) {
  TempDir work;
  fs::create_directories(work.file("real"));
  const std::string target = work.file("real/preds.jsonl");
  fs::create_symlink("real/preds.jsonl", work.file("link.jsonl"));  // dangling, relative
  const std::string in = input(work);
  CommandOutcome o = run_infercost(run(in, work.file("link.jsonl")));
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(fs::is_symlink(work.file("link.jsonl")));
  EXPECT_EQ(lines_of(slurp(target)), kRows);
  EXPECT_TRUE(fs::exists(work.file("real/.preds.jsonl.infercost-job"))) << "the record goes beside the file";
  // Again, through the link: the same job's output is there.
  CommandOutcome again = run_infercost(run(in, work.file("link.jsonl"), "--resume"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  CommandOutcome forced = run_infercost(run(in, work.file("link.jsonl"), "--force"));
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_TRUE(fs::is_symlink(work.file("link.jsonl")));
  EXPECT_EQ(lines_of(slurp(target)), kRows);
}

// A file its owner made read-only is never replaced, even by root, even
// with --force.
TEST_F(OutputsTest, AReadOnlyFileIsRefused) {
  TempDir work;
  const std::string out = work.write("out.jsonl", "keep me\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  for (const char* more : {"", "--force"}) {
    CommandOutcome o = run_infercost(run(input(work), out, more));
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_TRUE(mentions(o.output, out + ": the file is read-only (mode 0444); infercost does not replace"))
        << o.output;
  }
  EXPECT_EQ(slurp(out), "keep me\n");
  for (const auto& e : fs::directory_iterator(work.path())) {
    EXPECT_FALSE(mentions(e.path().filename().string(), ".tmp-")) << e.path();
  }
}

// The run's inputs, its model and its other outputs are never its output.
TEST_F(OutputsTest, AnInputOrTheModelIsNeverTheOutput) {
  TempDir work;
  const std::string in = input(work);
  const std::string before = slurp(in);
  CommandOutcome same = run_infercost(run(in, in));
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_TRUE(mentions(same.output, "--output " + in + " is input " + in)) << same.output;
  // Through another name of it.
  fs::create_symlink(in, work.file("alias.jsonl"));
  CommandOutcome alias = run_infercost(run(in, work.file("alias.jsonl"), "--force"));
  EXPECT_EQ(alias.exit_code, 2) << alias.output;
  EXPECT_TRUE(mentions(alias.output, "is input " + in)) << alias.output;
  // A folder output that is the inputs' folder.
  CommandOutcome folder = run_infercost(run(work.path(), work.path() + "/", "--force"));
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_TRUE(mentions(folder.output, "is the folder of input")) << folder.output;
  // The model's files and folder.
  CommandOutcome config = run_infercost(run(in, model() + "/config.json", "--output-format jsonl --force"));
  EXPECT_EQ(config.exit_code, 2) << config.output;
  EXPECT_TRUE(mentions(config.output, "is a file of the model")) << config.output;
  CommandOutcome into_model = run_infercost(run(in, model() + "/", "--force"));
  EXPECT_EQ(into_model.exit_code, 2) << into_model.output;
  EXPECT_TRUE(mentions(into_model.output, "is the model's folder")) << into_model.output;
  // --metrics onto the input or the output.
  CommandOutcome metrics_in = run_infercost(run(in, work.file("out.jsonl"), "--metrics " + in));
  EXPECT_EQ(metrics_in.exit_code, 2) << metrics_in.output;
  EXPECT_TRUE(mentions(metrics_in.output, "--metrics " + in + " is input " + in)) << metrics_in.output;
  CommandOutcome metrics_out =
      run_infercost(run(in, work.file("out.jsonl"), "--metrics " + work.file("out.jsonl")));
  EXPECT_EQ(metrics_out.exit_code, 2) << metrics_out.output;
  EXPECT_TRUE(mentions(metrics_out.output, "is the output")) << metrics_out.output;
  EXPECT_EQ(slurp(in), before);
  EXPECT_EQ(slurp(model() + "/config.json").substr(0, 1), "{");
  EXPECT_FALSE(fs::exists(work.file("out.jsonl")));
}

// The one rule: an output that exists is replaced only with --force; --resume
// of the same finished job has nothing to do; a resume of another job, or of
// an output changed since, is refused naming why.
TEST_F(OutputsTest, AnExistingOutputIsReplacedOnlyWithForce) {
  TempDir work;
  const std::string in = input(work);
  const std::string out = work.file("out.jsonl");
  ASSERT_EQ(run_infercost(run(in, out)).exit_code, 0);
  const std::string first = slurp(out);
  ASSERT_EQ(lines_of(first), kRows);
  ASSERT_TRUE(fs::exists(work.file(".out.jsonl.infercost-job")));

  CommandOutcome again = run_infercost(run(in, out));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_TRUE(mentions(again.output, out + " already exists (`infercost run` finished it at "))
      << again.output;
  EXPECT_TRUE(mentions(again.output, "this same job); infercost does not replace an output without --force"))
      << again.output;

  CommandOutcome same = run_infercost(run(in, out, "--resume --metrics " + work.file("m.json")));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(nlohmann::json::parse(slurp(work.file("m.json")))["resume"]["already_complete"].get<bool>());

  // Another job on the same output: each refused, naming what changed, the output kept.
  const struct {
    std::string more;
    int seed;
    std::string says;
  } others[] = {
      {"--resume --column text", 1, "--column: 'text' now, the finished job used 'full_text'"},
      {"--resume --max-length 32", 1, "--max-length: '32' now, the finished job used '512'"},
      {"--resume", 2, "--model is " + model(2) + " now, it was " + model(1)},
  };
  for (const auto& other : others) {
    CommandOutcome o = run_infercost(run(in, out, other.more, other.seed));
    EXPECT_EQ(o.exit_code, 2) << other.more << "\n" << o.output;
    EXPECT_TRUE(mentions(o.output, "cannot resume: " + other.says)) << o.output;
    EXPECT_TRUE(mentions(o.output, "It holds the finished output of another job")) << o.output;
  }
  {
    TempDir other;
    const std::string in2 = other.write("in.jsonl", "{\"full_text\":\"another input\"}\n");
    CommandOutcome o = run_infercost(run(in2, out, "--resume"));
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_TRUE(mentions(o.output, "cannot resume: input 1 is " + in2 + " now, it was " + in)) << o.output;
  }
  EXPECT_EQ(slurp(out), first);
  // The same model folder, its weights changed since.
  {
    TempDir other;
    const std::string m = other.file("m");
    fs::copy(model(1), m);
    const std::string out2 = other.file("out.jsonl");
    ASSERT_EQ(run_infercost("run " + in + " --model " + m + " --output " + out2 + " --quiet").exit_code, 0);
    fs::copy_file(model(2) + "/model.safetensors", m + "/model.safetensors",
                  fs::copy_options::overwrite_existing);
    CommandOutcome o =
        run_infercost("run " + in + " --model " + m + " --output " + out2 + " --quiet --resume");
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_TRUE(mentions(o.output, "cannot resume: the model's weights changed (" + m + ")")) << o.output;
  }

  // The output changed by hand after the job: not the job's any more.
  std::ofstream(out, std::ios::app) << "{\"text\":\"added\"}\n";
  CommandOutcome changed = run_infercost(run(in, out, "--resume"));
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_TRUE(mentions(changed.output, out + " changed after the job finished: its size changed"))
      << changed.output;
  // An output no record speaks for.
  fs::remove(work.file(".out.jsonl.infercost-job"));
  CommandOutcome unknown = run_infercost(run(in, out, "--resume"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(mentions(unknown.output, "no job record")) << unknown.output;
  // --force replaces it.
  CommandOutcome forced = run_infercost(run(in, out, "--force"));
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(slurp(out), first);
}

// A folder output: its parts are outputs too.
TEST_F(OutputsTest, AFolderOutputsPartsAreOutputs) {
  TempDir work;
  fs::create_directories(work.file("in"));
  fs::copy_file(dir_->file("in.jsonl"), work.file("in/a.jsonl"));
  fs::copy_file(dir_->file("in.jsonl"), work.file("in/b.jsonl"));
  const std::string out = work.file("out/");
  ASSERT_EQ(run_infercost(run(work.file("in"), out)).exit_code, 0);
  EXPECT_TRUE(fs::exists(work.file("out/.infercost-job")));
  CommandOutcome again = run_infercost(run(work.file("in"), out));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_TRUE(mentions(again.output, work.file("out/a.jsonl") + " (in " + out + ") already exists"))
      << again.output;
  EXPECT_EQ(run_infercost(run(work.file("in"), out, "--resume")).exit_code, 0);
  fs::remove(work.file("out/b.jsonl"));
  CommandOutcome missing = run_infercost(run(work.file("in"), out, "--resume"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(
      mentions(missing.output, work.file("out/b.jsonl") + " changed after the job finished: it is missing"))
      << missing.output;
  EXPECT_EQ(run_infercost(run(work.file("in"), out, "--force")).exit_code, 0);
  EXPECT_EQ(lines_of(slurp(work.file("out/b.jsonl"))), kRows);
}

// A checkpoint whose JSON is valid but whose counts were moved by hand does
// not add up against the inputs and the partial output: refused, nothing
// changed; the one left as written resumes to the uninterrupted output.
TEST_F(OutputsTest, ACheckpointThatDoesNotAddUpIsRefused) {
  TempDir work;
  const std::string in = input(work);
  const std::string want = work.file("want.jsonl");
  ASSERT_EQ(run_infercost(run(in, want, "--window-rows 8")).exit_code, 0);
  for (const char* format : {"jsonl", "csv", "parquet"}) {
    SCOPED_TRACE(format);
    const std::string out = work.file(std::string("out.") + format);
    const std::string flags = "--window-rows 8 --checkpoint-seconds 0";
    CommandOutcome killed =
        testing::run_shell("INFERCOST_TEST_CRASH_AT=checkpoint-saved:3 " + std::string(INFERCOST_BINARY_DIR) +
                           "/infercost " + run(in, out, flags));
    ASSERT_NE(killed.exit_code, 0) << killed.output;
    const std::string checkpoint = out + ".infercost-checkpoint";
    ASSERT_TRUE(fs::exists(checkpoint));
    const std::string saved = slurp(checkpoint);
    const nlohmann::json c = nlohmann::json::parse(saved);
    ASSERT_EQ(c["progress"]["rows_done"], 24) << saved;
    const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
      nlohmann::json j = c;
      edit(j);
      std::ofstream(checkpoint) << j.dump(1);
    };
    const struct {
      std::string what;
      std::function<void(nlohmann::json&)> edit;
      std::string says;
    } cases[] = {
        {"files_done moved", [](nlohmann::json& j) { j["progress"]["files_done"] = 1; },
         "every input is done, yet it holds a position in one"},
        {"rows skipped ahead",
         [](nlohmann::json& j) {
           j["progress"]["position"]["rows"] = 32;
           j["progress"]["rows_done"] = 32;
         },
         "its row 32 ends at byte"},
        {"rows and offset skipped ahead together",
         [&](nlohmann::json& j) {
           // Where row 32 really ends, and the counts to match: only the output can tell.
           j["progress"]["rows_done"] = 32;
           j["progress"]["position"]["rows"] = 32;
           j["progress"]["position"]["line"] = 32;
           std::string text = slurp(in);
           size_t at = 0;
           for (int i = 0; i < 32; ++i) at = text.find('\n', at) + 1;
           j["progress"]["position"]["offset"] = at;
         },
         "24 rows"},
        {"the output's rows", [](nlohmann::json& j) { j["progress"]["output"]["rows"] = 16; },
         "holds 24 rows where the checkpoint says 16"},
    };
    for (const auto& k : cases) {
      edited(k.edit);
      CommandOutcome o = run_infercost(run(in, out, flags + " --resume"));
      EXPECT_EQ(o.exit_code, 2) << k.what << "\n" << o.output;
      EXPECT_TRUE(mentions(o.output, "does not add up")) << k.what << "\n" << o.output;
      EXPECT_TRUE(mentions(o.output, k.says)) << k.what << "\n" << o.output;
      EXPECT_TRUE(mentions(o.output, "nothing was changed")) << o.output;
    }
    std::ofstream(checkpoint) << saved;
    CommandOutcome resumed = run_infercost(run(in, out, flags + " --resume"));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    if (std::string(format) == "jsonl") {
      EXPECT_EQ(slurp(out), slurp(want));
    }
    CommandOutcome cat = run_infercost("cat " + out + " --column label");
    ASSERT_EQ(cat.exit_code, 0) << cat.output;
    EXPECT_EQ(cat.output, run_infercost("cat " + want + " --column label").output);
  }
}

}  // namespace
}  // namespace infercost
