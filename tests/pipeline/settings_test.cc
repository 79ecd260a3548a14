// The settings table (engine/settings.h): scopes that nest, checks and
// errors in the caller's words, the job identity keyed by CLI flags.
#include "engine/settings.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

namespace infercost::engine {
namespace {

std::set<std::string> taken_by(SettingScope widest) {
  std::set<std::string> names;
  for (const Setting& s : run_settings()) {
    if (takes_setting(widest, s)) names.emplace(s.name);
  }
  return names;
}

TEST(SettingsTest, ScopesNest) {
  const std::set<std::string> model = taken_by(SettingScope::kModel);
  const std::set<std::string> priced = taken_by(SettingScope::kPrice);
  const std::set<std::string> run = taken_by(SettingScope::kRun);
  EXPECT_EQ(run.size(), run_settings().size());
  for (const std::string& name : model) EXPECT_TRUE(priced.count(name)) << name;
  for (const std::string& name : priced) EXPECT_TRUE(run.count(name)) << name;
  // infercost.Model takes the device and the pricing, not the file job's settings.
  EXPECT_TRUE(model.count("device"));
  EXPECT_FALSE(model.count("instance"));
  EXPECT_TRUE(priced.count("instance"));
  EXPECT_TRUE(priced.count("corpus_rows"));
  EXPECT_FALSE(priced.count("column"));
  EXPECT_FALSE(priced.count("resume"));
}

// `infercost run` and `infercost embed` take the shared settings and their
// task's own: the head's (function, threshold) or the embedding's (pooling,
// normalize, prefix); a front door of both tasks (infercost.Model) takes all.
TEST(SettingsTest, EachTaskTakesItsOwnSettings) {
  auto taken = [](std::optional<Task> task) {
    std::set<std::string> names;
    for (const Setting& s : run_settings()) {
      if (takes_setting(SettingScope::kRun, s, task)) names.emplace(s.name);
    }
    return names;
  };
  const std::set<std::string> classify = taken(Task::kClassify);
  const std::set<std::string> embed = taken(Task::kEmbed);
  EXPECT_EQ(taken(std::nullopt).size(), run_settings().size());
  for (const char* name : {"function", "threshold"}) {
    EXPECT_TRUE(classify.count(name)) << name;
    EXPECT_FALSE(embed.count(name)) << name;
  }
  for (const char* name : {"pooling", "normalize", "prefix"}) {
    EXPECT_TRUE(embed.count(name)) << name;
    EXPECT_FALSE(classify.count(name)) << name;
  }
  EXPECT_EQ(classify.size() + 3, run_settings().size());
  EXPECT_EQ(embed.size() + 2, run_settings().size());
}

// A setting of the other task set to other than its default is refused,
// naming both tasks, as each door spells them; left at its default it is not.
TEST(SettingsTest, TheOtherTasksSettingsAreRefused) {
  RunOptions options;
  options.task = Task::kEmbed;
  EXPECT_TRUE(check_settings(options).ok());
  options.threshold = 0.3;
  Status s = spell_settings(check_settings(options), Spelling::kFlag);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--threshold applies to classification only, not to embeddings");
  options = RunOptions();
  options.pooling = Pooling::kMean;
  s = spell_settings(check_settings(static_cast<const ModelOptions&>(options)), Spelling::kName);
  EXPECT_EQ(s.message(), "pooling applies to embeddings only, not to classification");
  // A pooling is parsed once, where it is set: an unknown one is refused there.
  options.task = Task::kEmbed;
  s = apply_setting(options, *find_setting("pooling"), std::string("sum"), Spelling::kName);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("pooling: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("cls"), std::string::npos) << s.message();
}

// The job identity holds the task's settings only: a run's is as it was
// before embeddings existed, plus the command (job.cc).
TEST(SettingsTest, TheJobIdentityHoldsTheTasksSettings) {
  RunOptions options;
  std::set<std::string> flags;
  for (const auto& [flag, value] : output_settings(options)) flags.insert(flag);
  EXPECT_TRUE(flags.count("--function"));
  EXPECT_FALSE(flags.count("--pooling"));
  options.task = Task::kEmbed;
  options.prefix = "";
  flags.clear();
  std::string prefix;
  for (const auto& [flag, value] : output_settings(options)) {
    flags.insert(flag);
    if (flag == "--prefix") prefix = value;
  }
  EXPECT_FALSE(flags.count("--function"));
  EXPECT_TRUE(flags.count("--pooling") && flags.count("--normalize"));
  EXPECT_EQ(prefix, "''");  // none asked, not the model's default prompt ("(model)")
}

TEST(SettingsTest, ChecksStopAtTheScope) {
  RunOptions options;
  options.corpus_rows = -1;  // a pricing setting out of range
  EXPECT_TRUE(check_settings(options, SettingScope::kModel).ok());
  EXPECT_TRUE(check_settings(static_cast<const ModelOptions&>(options)).ok());
  const Status priced = spell_settings(check_settings(options, SettingScope::kPrice), Spelling::kFlag);
  EXPECT_EQ(priced.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(priced.message().find("--corpus-rows"), std::string::npos) << priced.message();
  const Status api = spell_settings(check_settings(options), Spelling::kName);
  EXPECT_NE(api.message().find("corpus_rows"), std::string::npos) << api.message();
  EXPECT_EQ(api.message().find("--corpus-rows"), std::string::npos) << api.message();
}

TEST(SettingsTest, ValuesOfTheWrongTypeAreNamedInTheCallersWords) {
  RunOptions options;
  const Setting* threads = find_setting("threads");
  ASSERT_NE(threads, nullptr);
  const Status cli = apply_setting(options, *threads, SettingValue(std::string("x")), Spelling::kFlag);
  EXPECT_EQ(cli.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cli.message().find("--threads"), std::string::npos) << cli.message();
  const Status api = apply_setting(options, *threads, SettingValue(std::string("x")), Spelling::kName);
  EXPECT_EQ(api.message().find("--threads"), std::string::npos) << api.message();
  EXPECT_TRUE(apply_setting(options, *threads, SettingValue(int64_t{3}), Spelling::kName).ok());
  EXPECT_EQ(options.threads, 3);
  EXPECT_EQ(find_setting("no_such_setting"), nullptr);
}

TEST(SettingsTest, TheJobIdentityHoldsWhatChangesTheOutputByFlag) {
  RunOptions options;
  options.keep_text = false;
  bool saw_no_text = false;
  for (const auto& [flag, value] : output_settings(options)) {
    EXPECT_EQ(flag.rfind("--", 0), 0u) << flag;
    EXPECT_NE(flag, "--instance");  // pricing does not change the output
    EXPECT_NE(flag, "--resume");
    if (flag == "--no-text") {
      saw_no_text = true;
      EXPECT_EQ(value, "true");
    }
  }
  EXPECT_TRUE(saw_no_text);
}

TEST(SettingsTest, HelpNamesOtherSettingsAndTheEnginesDefaults) {
  const Setting* batch_size = find_setting("batch_size");
  ASSERT_NE(batch_size, nullptr);
  const std::string cli = setting_help(*batch_size, Spelling::kFlag);
  EXPECT_NE(cli.find(std::to_string(kDefaultTokensBatchSize) + " for 'tokens'"), std::string::npos) << cli;
  EXPECT_NE(cli.find(std::to_string(kSeedRowsPerThread) + " x threads"), std::string::npos) << cli;
  EXPECT_NE(cli.find("--max-length"), std::string::npos) << cli;
  EXPECT_EQ(cli.find('{'), std::string::npos) << cli;
  const std::string api = setting_help(*batch_size, Spelling::kName);
  EXPECT_NE(api.find("max_length"), std::string::npos) << api;
  EXPECT_EQ(api.find("--max-length"), std::string::npos) << api;
  for (const Setting& s : run_settings()) {
    EXPECT_EQ(setting_help(s, Spelling::kName).find('{'), std::string::npos) << s.name;
  }
}

}  // namespace
}  // namespace infercost::engine
