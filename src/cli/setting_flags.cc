#include "cli/setting_flags.h"

#include <algorithm>

#include "cli/commands.h"

namespace infercost::cli {

void SettingFlags::add(CLI::App* cmd, std::initializer_list<std::string_view> names,
                       std::optional<Task> task) {
  for (const pipeline::Setting& setting : pipeline::run_settings()) {
    if (names.size() > 0 && std::find(names.begin(), names.end(), setting.name) == names.end()) continue;
    if (!pipeline::takes_setting(pipeline::SettingScope::kRun, setting, task)) continue;
    Flag& f = flags_.emplace_back();
    f.setting = &setting;
    const std::string flag = pipeline::setting_label(setting, pipeline::Spelling::kFlag);
    const std::string help = pipeline::setting_help(setting, pipeline::Spelling::kFlag);
    if (setting.type == pipeline::SettingType::kSwitch) {
      f.option = cmd->add_flag(flag, f.given, help);
      continue;
    }
    if (setting.type == pipeline::SettingType::kOptionalSwitch) {
      // --name sets it true, --no-name false; neither leaves it to the model.
      f.option = cmd->add_flag(flag, f.given, help);
      f.negation = cmd->add_flag("--no-" + flag.substr(2), f.negated, "The opposite of " + flag);
      continue;
    }
    if (setting.type == pipeline::SettingType::kTextList) {
      f.option = cmd->add_option(flag, f.texts, help)->allow_extra_args(false);  // later words stay inputs
    } else {
      f.option = cmd->add_option(flag, f.text, help);
    }
    f.option->type_name(pipeline::setting_type_names(setting.type).cli);
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
    pipeline::SettingValue value = !f.setting->cli_negates && f.option->count() > 0;
    if (f.setting->type == pipeline::SettingType::kTextList) {
      value = f.texts;
    } else if (f.setting->type != pipeline::SettingType::kSwitch &&
               f.setting->type != pipeline::SettingType::kOptionalSwitch) {
      Result<pipeline::SettingValue> parsed = pipeline::parse_setting_text(*f.setting, f.text);
      if (!parsed.ok()) fail(parsed.status());
      value = std::move(*parsed);
    }
    if (Status s = pipeline::apply_setting(options, *f.setting, value, pipeline::Spelling::kFlag); !s.ok())
      fail(s);
  }
}

}  // namespace infercost::cli
