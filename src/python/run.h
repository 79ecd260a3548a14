// The native side of infercost.run() (python/infercost/__init__.py).
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "infercost/pipeline/classifier.h"

namespace infercost::python {

// Classifies `inputs` with the model at `model_dir` into `output` as
// `infercost run` does, `flags` being its options by their Python names
// (run()'s keyword arguments; None keeps the default). Returns the metrics
// JSON (RunMetrics::to_json), also written to flags["metrics"] when given.
// Releases the GIL while it runs; a Python signal handler that raises
// (Ctrl-C) stops the run at its next durable step, and its exception is
// raised. Engine errors are raised as raise_status() maps them; a wrong
// flag name or type is a TypeError.
std::string run(std::vector<std::string> inputs, std::string model_dir, std::string output,
                nanobind::dict flags);

// Sets the ClassifierOptions field of keyword argument `name` (the model,
// device and batching flags that run() and Model() share) from `value`;
// false when `name` is not one of them. A wrong type is a TypeError, a bad
// value a ValueError, both naming `fn` ("run()", "Model()") and the flag.
bool apply_classifier_flag(const char* fn, const std::string& name, nanobind::handle value,
                           pipeline::ClassifierOptions& options);

}  // namespace infercost::python
