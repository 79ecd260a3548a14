#include "cli/setting_flags.h"

#include <algorithm>

#include "cli/commands.h"

namespace infercost::cli {

void SettingFlags::add(CLI::App* cmd, std::initializer_list<std::string_view> names,
                       std::optional<Task> task) {
  for (const engine::Setting& setting : engine::run_settings()) {
    if (names.size() > 0 && std::find(names.begin(), names.end(), setting.name) == names.end()) continue;
    if (!engine::takes_setting(engine::SettingScope::kRun, setting, task)) continue;
    Flag& f = flags_.emplace_back();
    f.setting = &setting;
    const std::string flag = engine::setting_label(setting, engine::Spelling::kFlag);
    const std::string help = engine::setting_help(setting, engine::Spelling::kFlag);
    if (setting.type == engine::SettingType::kSwitch) {
      f.option = cmd->add_flag(flag, f.given, help);
      continue;
    }
    if (setting.type == engine::SettingType::kOptionalSwitch) {
      // --name sets it true, --no-name false; neither leaves it to the model.
      f.option = cmd->add_flag(flag, f.given, help);
      f.negation = cmd->add_flag("--no-" + flag.substr(2), f.negated, "The opposite of " + flag);
      continue;
    }
    if (setting.type == engine::SettingType::kTextList) {
      f.option = cmd->add_option(flag, f.texts, help)->allow_extra_args(false);  // later words stay inputs
    } else {
      f.option = cmd->add_option(flag, f.text, help);
    }
    f.option->type_name(engine::setting_type_names(setting.type).cli);
    const std::string fallback = setting.get(RunOptions{});
    if (!fallback.empty()) f.option->default_str(fallback);
  }
}

void SettingFlags::apply(RunOptions& options) const {
  for (const Flag& f : flags_) {
    if (f.option->count() == 0 && (f.negation == nullptr || f.negation->count() == 0)) continue;
    if (f.negation != nullptr && f.option->count() > 0 && f.negation->count() > 0) {
      fail(invalid_argument(
          fmt::format("give {} or {}, not both", f.option->get_name(), f.negation->get_name())));
    }
    engine::SettingValue value = !f.setting->cli_negates && f.option->count() > 0;
    if (f.setting->type == engine::SettingType::kTextList) {
      value = f.texts;
    } else if (f.setting->type != engine::SettingType::kSwitch &&
               f.setting->type != engine::SettingType::kOptionalSwitch) {
      Result<engine::SettingValue> parsed = engine::parse_setting_text(*f.setting, f.text);
      if (!parsed.ok()) fail(parsed.status());
      value = std::move(*parsed);
    }
    if (Status s = engine::apply_setting(options, *f.setting, value, engine::Spelling::kFlag); !s.ok())
      fail(s);
  }
}

}  // namespace infercost::cli
