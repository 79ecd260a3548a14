// A run's settings, described once: each one's name, type, default, checks,
// help text and whether it changes what the output holds. The CLI's `run`
// flags, the Python keyword arguments of run() and Model() (with their
// defaults and help), infercost.spark's, a checkpoint's job identity and the
// engine's own option checks are all made from this table.
//
//   for (const Setting& s : run_settings()) ...            // every setting
//   apply_setting(options, *find_setting("max_length"), int64_t{256}, Spelling::kName);
//   check_settings(options)                     // every range; errors name settings "{max_length}"
//   spell_settings(status, Spelling::kFlag)     // ... as the CLI does: "--max-length"
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "infercost/options.h"
#include "infercost/status.h"

namespace infercost::engine {

enum class SettingType {
  kText,            // a string, perhaps one of a few choices
  kWhole,           // an integer
  kNumber,          // a real number
  kSwitch,          // true or false (a CLI flag without a value)
  kWholeOrAuto,     // an integer, or "auto" (sized from the device's memory)
  kOptionalNumber,  // a real number, or unset (the engine decides)
  kTextList,        // strings (a CLI flag given once per item)
  kOptionalSwitch,  // true, false or unset (the model decides): CLI --name and --no-name
  kOptionalText,    // a string, or unset (the model decides)
};

// Which front doors take a setting; each scope takes the ones before it too.
// kModel: the classifier's (ModelOptions: infercost.Model, Spark, and
// the runs); kPrice: a run's pricing (RunOptions::instance ...: the runs, and
// infercost.Model, which prices each classify() call); kRun: the file
// runner's only (RunOptions: `infercost run`, infercost.run()).
enum class SettingScope { kModel, kPrice, kRun };

// A setting's value as a front door hands it over: text for kText and
// kOptionalText (and "auto" for kWholeOrAuto), an integer for kWhole / kWholeOrAuto, a real number for
// kNumber / kOptionalNumber (an integer is taken too), a bool for kSwitch and kOptionalSwitch,
// strings for kTextList.
using SettingValue = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

struct Setting {
  std::string_view name;  // the RunOptions member's and the Python keyword's name
  SettingType type;
  SettingScope scope;
  // The one task it applies to (the embedding settings, the classifier
  // head's); unset: both. A front door of one task does not take the other's.
  std::optional<Task> task = std::nullopt;
  // Part of a checkpoint's job identity: a resumed run must have the same.
  bool changes_output;
  // What it does (the default is shown beside it); "{name}" stands for
  // another setting, named as the caller names it, and "{=name}" for one of
  // the engine's defaults (kDefaultTokensBatchSize ...: setting_help).
  std::string_view help;
  // The CLI flag when it is not "--" + name with '-' for '_'; cli_negates:
  // the flag sets the switch to false ("--no-text" for keep_text).
  std::string_view cli_flag = {};
  bool cli_negates = false;
  std::string_view cli_help = {};  // the CLI flag's help where it is not `help`
  // What a value looks like, where more than its type says ("a number in
  // [0, 1]"): parse_setting_text's error.
  std::string_view expected = {};
  // The value in `options` as text ("512", "auto", "true"; "" when unset):
  // with RunOptions{}, the default that --help and help() show.
  std::string (*get)(const RunOptions& options);
  // The value in the job identity when it is not get()'s (null: get).
  std::string (*identity)(const RunOptions& options) = nullptr;
  // Stores `value` (already of the setting's type: apply_setting converts)
  // into `options`; kInvalidArgument naming it as `label` for a value that
  // cannot be stored (not one of the choices).
  Status (*set)(RunOptions& options, const SettingValue& value, std::string_view label);
  // kInvalidArgument when the value in `options` is out of range or not one
  // of the choices, the setting named as `label` (setting_label).
  Status (*check)(const RunOptions& options, std::string_view label);
};

// Whether a front door that takes the settings up to `widest`, of `task`
// (unset: of both), takes `setting`.
bool takes_setting(SettingScope widest, const Setting& setting, std::optional<Task> task = std::nullopt);

// Every setting, in the order the CLI's --help lists them.
std::span<const Setting> run_settings();

// How a front door names a setting's type: the CLI's --help ("INT"),
// Python's errors ("an int") and the CLI's ("a whole number").
struct SettingTypeNames {
  const char* cli;
  const char* python;
  const char* words;
};
const SettingTypeNames& setting_type_names(SettingType type);

// The setting called `name` (a Python keyword), or null.
const Setting* find_setting(std::string_view name);

// How a front door spells a setting: by its name (the ModelOptions /
// RunOptions member and the Python keyword: "max_length") or by its
// `infercost` flag ("--max-length", "--no-text").
enum class Spelling { kName, kFlag };
std::string setting_label(const Setting& setting, Spelling spelling);
std::string setting_label(std::string_view name, Spelling spelling);
// The setting's help, other settings named as `spelling` names them.
std::string setting_help(const Setting& setting, Spelling spelling);
// "--precision fp32" or "precision='fp32'": how a user of that door writes it.
std::string setting_example(std::string_view name, std::string_view value, Spelling spelling);

// The engine does not know who called it: its errors name a setting as
// setting_ref(name) ("{max_length}") and show a value as setting_ref(name,
// value) ("{precision=fp32}"), and each front door (the CLI, the Python
// module, the C++ API) spells them its way with spell_settings before it
// shows the message: "--max-length" / "max_length", "--precision fp32" /
// "precision='fp32'". A "{...}" that names no setting is left as it is.
std::string setting_ref(std::string_view name);
std::string setting_ref(std::string_view name, std::string_view value);
std::string spell_settings(std::string_view text, Spelling spelling);
Status spell_settings(const Status& status, Spelling spelling);

// A setting's value from a CLI flag's text: kInvalidArgument naming the flag
// when it is not of the setting's type ("--threads 'x': expected a whole number").
Result<SettingValue> parse_setting_text(const Setting& setting, const std::string& text);

// Stores `value` into `options`: kInvalidArgument naming the setting as
// `spelling` does for a value of the wrong type or not one of its choices.
// Ranges are checked after, all at once, by check_settings (some depend on
// others: a precision on the device).
Status apply_setting(RunOptions& options, const Setting& setting, const SettingValue& value,
                     Spelling spelling);

// Every check of the settings up to `widest` in `options`, in table order:
// the first failure (settings named by setting_ref); then kInvalidArgument for a
// setting of the other task than options.task set to other than its default
// (--threshold on `infercost embed`). ModelOptions: kModel.
Status check_settings(const ModelOptions& options);
Status check_settings(const RunOptions& options, SettingScope widest = SettingScope::kRun);

// The settings of options.task that change what the output holds, with
// their values, in table order, keyed by their CLI flags: a checkpoint's job identity
// (run/job.cc adds what the output plan decides).
std::vector<std::pair<std::string, std::string>> output_settings(const RunOptions& options);

}  // namespace infercost::engine
