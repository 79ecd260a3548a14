// The flags of a run's settings (engine/settings.h), made from the engine's
// one table: `infercost run` takes them all, `infercost plan` those of the
// run it predicts. Their help, defaults and checks are the table's.
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/settings.h"
#include "infercost/options.h"

namespace infercost::cli {

class SettingFlags {
 public:
  // Adds to `cmd` the flags of the settings named in `names` (every setting
  // when empty) that `task` takes (unset: both tasks'), in the table's order.
  void add(CLI::App* cmd, std::initializer_list<std::string_view> names = {},
           std::optional<Task> task = std::nullopt);

  // The flags given, applied to `options` (named as the CLI names them):
  // fail() (a usage error, exit 2) on a value of the wrong type or not one of
  // a setting's choices. Ranges and the settings' agreement are checked once,
  // where the command resolves them (run_files, Encoder::open, or
  // the command's own check_settings before anything is read).
  void apply(RunOptions& options) const;

 private:
  struct Flag {
    const engine::Setting* setting = nullptr;
    CLI::Option* option = nullptr;
    std::string text;                 // a flag with a value
    std::vector<std::string> texts;   // a flag given once per item
    bool given = false;               // a switch
    CLI::Option* negation = nullptr;  // kOptionalSwitch: its --no- flag
    bool negated = false;
  };
  std::deque<Flag> flags_;  // stable addresses for CLI11
};

}  // namespace infercost::cli
