// The native side of infercost.run() (python/infercost/__init__.py).
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/settings.h"
#include "infercost/options.h"

namespace infercost::python {

// Classifies `inputs` with the model at `model_dir` into `output` as
// `infercost run` does, `flags` being its settings by their Python names
// (run()'s keyword arguments; None keeps the default). Returns the metrics
// JSON (RunMetrics::to_json), also written to `metrics_path` when given.
// Releases the GIL while it runs; a Python signal handler that raises
// (Ctrl-C) stops the run at its next durable step, and its exception is
// raised. Engine errors are raised as raise_status() maps them; a wrong
// keyword or type is a TypeError.
std::string run(std::vector<std::string> inputs, std::string model_dir, std::string output,
                nanobind::dict flags, std::optional<std::string> metrics_path);

// The keyword arguments in `flags` applied to `options` through the engine's
// settings table (engine/settings.h): a TypeError naming `fn` ("run()",
// "Model()") for an unknown keyword (one past `widest`: Model() takes up to
// kPrice) or a wrong type, the engine's error (a ValueError naming the
// keyword) for a value not one of a setting's choices. The ranges and the
// other task's settings are checked once, by what resolves them
// (run_files; Model() checks and resolves before it opens).
void apply_settings(const char* fn, nanobind::dict flags, engine::SettingScope widest, RunOptions& options);

// The settings table for the package (infercost._native.settings()): one
// dict per setting, in the CLI's order: name, scope ("model": Model(), spark
// and run() take it, pricing included; "run": run() only), task ("classify"
// or "embed": that task's only; None: both), default (as a Python value; None where the engine decides),
// help, changes_output.
nanobind::list settings();

}  // namespace infercost::python
