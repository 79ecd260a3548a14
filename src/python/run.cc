// infercost.run(): the CLI's file-to-file job in process, over
// run::run_files, its settings the keyword arguments of the settings table.
#include "python/run.h"

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <exception>

#include "backend/backend.h"
#include "core/file.h"
#include "engine/settings.h"
#include "io/whole_file.h"
#include "python/py_support.h"
#include "run/runner.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

// `value` as the engine's setting value; a TypeError naming `fn` and the
// keyword when its Python type is not the setting's.
engine::SettingValue setting_value(const char* fn, const engine::Setting& s, nb::handle value) {
  using T = engine::SettingType;
  const bool is_bool = nb::isinstance<nb::bool_>(value);
  if ((s.type == T::kSwitch || s.type == T::kOptionalSwitch) && is_bool) return nb::cast<bool>(value);
  if ((s.type == T::kText || s.type == T::kOptionalText || s.type == T::kWholeOrAuto) &&
      nb::isinstance<nb::str>(value)) {
    return nb::cast<std::string>(value);
  }
  const bool takes_int = s.type == T::kWhole || s.type == T::kWholeOrAuto || s.type == T::kNumber ||
                         s.type == T::kOptionalNumber;
  if (takes_int && !is_bool && nb::isinstance<nb::int_>(value)) {
    try {
      return nb::cast<int64_t>(value);
    } catch (const nb::cast_error&) {
      raise_status(invalid_argument(
          fmt::format("{}: {} {}: out of range", fn, s.name, nb::cast<std::string>(nb::str(value)))));
    }
  }
  if ((s.type == T::kNumber || s.type == T::kOptionalNumber) && nb::isinstance<nb::float_>(value)) {
    return nb::cast<double>(value);
  }
  if (s.type == T::kTextList && (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value))) {
    std::vector<std::string> items;
    for (nb::handle item : value) {
      if (!nb::isinstance<nb::str>(item)) break;
      items.push_back(nb::cast<std::string>(item));
    }
    if (items.size() == nb::len(value)) return items;
  }
  throw nb::type_error(fmt::format("{}: {} must be {}, not {}", fn, s.name,
                                   engine::setting_type_names(s.type).python, Py_TYPE(value.ptr())->tp_name)
                           .c_str());
}

// The setting's default as Python shows it (help(infercost.run)).
nb::object python_default(const engine::Setting& s) {
  const std::string text = s.get(RunOptions{});
  switch (s.type) {
    case engine::SettingType::kText: return nb::str(text.c_str());
    case engine::SettingType::kWhole: return nb::int_(std::stoll(text));
    case engine::SettingType::kNumber: return nb::float_(std::stod(text));
    case engine::SettingType::kSwitch: return nb::bool_(text == "true");
    case engine::SettingType::kWholeOrAuto:
      return text == "auto" ? nb::object(nb::str("auto")) : nb::object(nb::int_(std::stoll(text)));
    case engine::SettingType::kOptionalNumber:
    case engine::SettingType::kOptionalSwitch:
    case engine::SettingType::kOptionalText: return nb::none();
    case engine::SettingType::kTextList: return nb::tuple();
  }
  return nb::none();
}

}  // namespace

void apply_settings(const char* fn, nb::dict flags, engine::SettingScope widest, RunOptions& options) {
  for (auto [key, value] : flags) {
    const std::string name = nb::cast<std::string>(key);
    const engine::Setting* s = engine::find_setting(name);
    if (s == nullptr || !engine::takes_setting(widest, *s)) {
      throw nb::type_error(fmt::format("{} got an unexpected keyword argument '{}'", fn, name).c_str());
    }
    if (value.is_none()) continue;  // the default
    Status applied =
        engine::apply_setting(options, *s, setting_value(fn, *s, value), engine::Spelling::kName);
    if (!applied.ok()) raise_status(applied);
  }
}

nb::list settings() {
  nb::list out;
  for (const engine::Setting& s : engine::run_settings()) {
    nb::dict d;
    d["name"] = std::string(s.name);
    d["flag"] = engine::setting_label(s, engine::Spelling::kFlag);
    d["scope"] = engine::takes_setting(engine::SettingScope::kPrice, s) ? "model" : "run";
    d["task"] = s.task ? nb::object(nb::str(task_name(*s.task))) : nb::none();
    d["default"] = python_default(s);
    d["help"] = engine::setting_help(s, engine::Spelling::kName);
    d["changes_output"] = s.changes_output;
    out.append(d);
  }
  return out;
}

namespace {

// run_files with the GIL released; Ctrl-C (a Python signal handler
// that raises) sets RunOptions::stop, and the run stops at its next durable
// step: its exception is raised once the run has ended.
Result<RunMetrics> run_releasing_gil(RunOptions options) {
  std::atomic<int> stop{0};
  options.stop = &stop;
  Result<RunMetrics> result = internal_error("the run did not end");
  run_watching_signals(stop, [&] {
    try {
      result = run::run_files(options);
    } catch (const std::exception& e) {
      result = internal_error(std::string("the run threw: ") + e.what());
    }
  });
  return result;
}

}  // namespace

std::string run(std::vector<std::string> inputs, std::string model_dir, std::string output, nb::dict flags,
                std::optional<std::string> metrics_path) {
  RunOptions options;
  options.inputs = std::move(inputs);
  options.model_dir = std::move(model_dir);
  options.output = std::move(output);
  apply_settings("run()", flags, engine::SettingScope::kRun, options);
  if (metrics_path) options.metrics_path = *metrics_path;
  Result<RunMetrics> metrics = run_releasing_gil(options);
  if (!metrics.ok()) raise_status(metrics.status());
  return metrics->to_json();
}

}  // namespace infercost::python
