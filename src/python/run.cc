// infercost.run(): the CLI's file-to-file job in process, over
// pipeline::run_classification, its flags named as `infercost run`'s.
#include "python/run.h"

#include <fmt/format.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <exception>

#include "infercost/backend/backend.h"
#include "infercost/core/file.h"
#include "infercost/pipeline/runner.h"
#include "io/whole_file.h"
#include "python/py_support.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

template <typename T>
T flag_value(const char* fn, const std::string& name, nb::handle value, const char* expected) {
  try {
    return nb::cast<T>(value);
  } catch (const nb::cast_error&) {
    throw nb::type_error(
        fmt::format("{}: {} must be {}, not {}", fn, name, expected, Py_TYPE(value.ptr())->tp_name).c_str());
  }
}

// A batch_size / max_batch_tokens value: an int, or "auto" (returns true).
bool size_or_auto(const char* fn, const std::string& name, nb::handle value, int& size) {
  if (nb::isinstance<nb::str>(value)) {
    if (nb::cast<std::string>(value) != "auto") {
      throw nb::value_error(fmt::format("{}: {} must be a whole number or 'auto', not '{}'", fn, name,
                                        nb::cast<std::string>(value))
                                .c_str());
    }
    return true;
  }
  size = flag_value<int>(fn, name, value, "an int or 'auto'");
  return false;
}

}  // namespace

bool apply_classifier_flag(const char* fn, const std::string& name, nb::handle value,
                           pipeline::ClassifierOptions& o) {
  auto text = [&] { return flag_value<std::string>(fn, name, value, "a str"); };
  auto whole = [&] { return flag_value<int>(fn, name, value, "an int"); };
  if (name == "device") {
    o.device = text();
  } else if (name == "streams_per_device") {
    o.streams_per_device = whole();
  } else if (name == "batching") {
    Result<pipeline::Batching> b = pipeline::parse_batching(text());
    if (!b.ok()) raise_status(b.status().with_context("batching"));
    o.batching = *b;
  } else if (name == "batch_size") {
    o.batch_size_auto = size_or_auto(fn, name, value, o.batch_size);
  } else if (name == "max_batch_tokens") {
    o.max_batch_tokens_auto = size_or_auto(fn, name, value, o.max_batch_tokens);
  } else if (name == "precision") {
    o.precision = text();
  } else if (name == "threads") {
    o.threads = whole();
  } else if (name == "tokenizer_threads") {
    o.tokenizer_threads = whole();
  } else if (name == "max_length") {
    o.max_length = whole();
  } else if (name == "function") {
    o.function = text();
  } else if (name == "threshold") {
    o.threshold = flag_value<double>(fn, name, value, "a number");
  } else if (name == "on_error") {
    const std::string policy = text();
    if (policy != "fail" && policy != "skip") {
      raise_status(invalid_argument("on_error must be 'fail' or 'skip', not '" + policy + "'"));
    }
    o.on_bad_row = policy == "skip" ? io::OnBadRow::kSkip : io::OnBadRow::kFail;
  } else {
    return false;
  }
  return true;
}

namespace {

// RunOptions from the keyword arguments; what is not given keeps the
// engine's default (RunOptions' own).
struct RunRequest {
  pipeline::RunOptions options;
  std::string metrics_path;
};

RunRequest request_from(std::vector<std::string> inputs, std::string model_dir, std::string output,
                        nb::dict flags) {
  RunRequest r;
  pipeline::RunOptions& o = r.options;
  o.inputs = std::move(inputs);
  o.model_dir = std::move(model_dir);
  o.output = std::move(output);
  for (auto [key, value] : flags) {
    const std::string name = nb::cast<std::string>(key);
    if (value.is_none()) continue;  // the default
    if (apply_classifier_flag("run()", name, value, o)) continue;
    auto text = [&] { return flag_value<std::string>("run()", name, value, "a str"); };
    auto whole = [&] { return flag_value<int>("run()", name, value, "an int"); };
    auto yes_no = [&] { return flag_value<bool>("run()", name, value, "a bool"); };
    auto number = [&] { return flag_value<double>("run()", name, value, "a number"); };
    if (name == "input_format") {
      o.input_format = text();
    } else if (name == "column") {
      o.column = text();
    } else if (name == "output_format") {
      o.output_format = text();
    } else if (name == "compression") {
      o.compression = text();
    } else if (name == "window_rows") {
      o.window_rows = whole();
    } else if (name == "keep_text") {
      o.keep_text = yes_no();
    } else if (name == "resume") {
      o.resume = yes_no();
    } else if (name == "force") {
      o.force = yes_no();
    } else if (name == "checkpoint_seconds") {
      o.checkpoint_seconds = number();
    } else if (name == "metrics") {
      r.metrics_path = text();
    } else {
      throw nb::type_error(fmt::format("run() got an unexpected keyword argument '{}'", name).c_str());
    }
  }
  return r;
}

// run_classification with the GIL released; Ctrl-C (a Python signal handler
// that raises) sets RunOptions::stop, and the run stops at its next durable
// step: its exception is raised once the run has ended.
Result<pipeline::RunMetrics> run_releasing_gil(pipeline::RunOptions options) {
  std::atomic<int> stop{0};
  options.stop = &stop;
  Result<pipeline::RunMetrics> result = internal_error("the run did not end");
  run_watching_signals(stop, [&] {
    try {
      result = pipeline::run_classification(options);
    } catch (const std::exception& e) {
      result = internal_error(std::string("the run threw: ") + e.what());
    }
  });
  return result;
}

}  // namespace

std::string run(std::vector<std::string> inputs, std::string model_dir, std::string output, nb::dict flags) {
  RunRequest request = request_from(std::move(inputs), std::move(model_dir), std::move(output), flags);
  Result<pipeline::RunMetrics> metrics = run_releasing_gil(request.options);
  if (!metrics.ok()) raise_status(metrics.status());
  std::string json = metrics->to_json();
  if (!request.metrics_path.empty()) {
    if (Status s = io::write_whole_file(request.metrics_path, json); !s.ok()) raise_status(s);
  }
  return json;
}

}  // namespace infercost::python
