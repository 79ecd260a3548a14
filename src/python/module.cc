// infercost._native: the engine's C++ API as Python functions. The package
// (python/infercost/__init__.py) is the public face; this module only
// converts: every function calls the engine and nothing is done twice.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/head.h"
#include "engine/model_info.h"
#include "infercost/version.h"
#include "io/prediction_writer.h"
#include "model/describe.h"
#include "model/model_dir.h"
#include "python/model.h"
#include "python/py_support.h"
#include "python/run.h"
#include "text/tokenizer.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

// What `infercost model info --json` prints (engine::model_info_json, no
// tensor read): the package parses it into infercost.model_info()'s dict.
std::string model_info_json(const std::string& dir) {
  Result<model::ModelDescription> described = internal_error("not described");
  {
    nb::gil_scoped_release release;
    described = model::describe_model_dir(dir);
  }
  if (!described.ok()) raise_status(described.status());
  return engine::model_info_json(*described);
}

// A model directory's tokenizer (`model`) or the one at `path`, as `infercost
// tokenize` opens them.
Result<std::shared_ptr<const text::Tokenizer>> open_tokenizer(const std::optional<std::string>& model,
                                                              const std::optional<std::string>& path,
                                                              int max_length, bool add_special_tokens) {
  if (model) {
    model::LoadOptions options;
    options.load_weights = false;
    options.max_length = max_length;
    options.add_special_tokens = add_special_tokens;
    INFERCOST_ASSIGN_OR_RETURN(model::LoadedModel loaded, model::load_model_dir(*model, options));
    return loaded.tokenizer;
  }
  text::TokenizerSettings settings;
  settings.max_length = max_length;
  settings.add_special_tokens = add_special_tokens;
  INFERCOST_ASSIGN_OR_RETURN(text::LoadedTokenizer loaded, text::load_tokenizer(*path, settings));
  return loaded.tokenizer;
}

// The ids of every text by the tokenizer of a model directory (`model`) or
// of a tokenizer file or folder (`tokenizer`), as `infercost tokenize` gives
// them; None for a null text.
nb::list tokenize(nb::handle texts, std::optional<std::string> model, std::optional<std::string> tokenizer,
                  int max_length, bool add_special_tokens) {
  if (model.has_value() == tokenizer.has_value()) {
    throw nb::type_error("tokenize(): give exactly one of model= (a model directory) or tokenizer= (a path)");
  }
  if (max_length < 0) raise_status(invalid_argument("max_length must be >= 0 (0: the model's limit)"));
  TextColumn column = read_texts(texts);
  std::vector<std::vector<int32_t>> ids(column.size());
  Status failed;
  {
    nb::gil_scoped_release release;
    Result<std::shared_ptr<const text::Tokenizer>> tok =
        open_tokenizer(model, tokenizer, max_length, add_special_tokens);
    if (!tok.ok()) failed = tok.status();
    for (size_t i = 0; failed.ok() && i < column.size(); ++i) {
      if (column.is_null[i]) continue;
      Result<size_t> n = (*tok)->encode_append(column.texts[i], ids[i]);
      if (!n.ok()) failed = n.status().with_context("text " + std::to_string(i + 1));
    }
  }
  if (!failed.ok()) raise_status(failed);
  nb::list out;
  for (size_t i = 0; i < column.size(); ++i) {
    if (column.is_null[i]) {
      out.append(nb::none());
    } else {
      out.append(nb::cast(ids[i]));
    }
  }
  return out;
}

// For the tests of read_texts: the texts as str (None where null), the
// address each view points at (0 where null), and the Arrow arrays read.
nb::tuple read_texts_for_tests(nb::handle texts) {
  TextColumn column = read_texts(texts);
  nb::list values, addresses;
  for (size_t i = 0; i < column.size(); ++i) {
    const std::string_view t = column.texts[i];
    if (column.is_null[i]) {
      values.append(nb::none());
      addresses.append(0);
      continue;
    }
    PyObject* s = PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()), "strict");
    if (s == nullptr) throw nb::python_error();
    values.append(nb::steal(s));
    addresses.append(reinterpret_cast<uintptr_t>(t.data()));
  }
  return nb::make_tuple(values, addresses, column.chunks);
}

}  // namespace

}  // namespace infercost::python

NB_MODULE(_native, m) {
  namespace py = infercost::python;
  m.doc() = "infercost's engine (C++), bound with nanobind; use the infercost package, not this module.";
  m.attr("__version__") = infercost::kVersion;
  py::register_errors(m);
  m.def("settings", &py::settings, "The engine's run settings: name, scope, default, help, changes_output.");
  m.def("run", &py::run, nb::arg("inputs"), nb::arg("model_dir"), nb::arg("output"), nb::arg("flags"),
        nb::arg("metrics") = nb::none(),
        "The CLI's file-to-file job in process; returns the metrics JSON (see infercost.run).");
  m.def(
      "_synthetic_notice",
      [](std::string name) {
        infercost::model::ModelConfig config;
        config.name = std::move(name);
        config.synthetic = true;
        return infercost::model::synthetic_model_notice(config);
      },
      nb::arg("name"), "What run() warns of a synthetic model (the CLI's note).");
  m.def("model_info_json", &py::model_info_json, nb::arg("model_dir"),
        "What `infercost model info --json` prints (see infercost.model_info).");
  m.def("tokenize", &py::tokenize, nb::arg("texts"), nb::arg("model") = nb::none(),
        nb::arg("tokenizer") = nb::none(), nb::arg("max_length") = 0, nb::arg("add_special_tokens") = true,
        "Token ids of each text (see infercost.tokenize).");
  py::bind_model(m);
  m.def("_read_texts", &py::read_texts_for_tests, nb::arg("texts"),
        "Tests: (texts, view addresses, Arrow arrays read) as the engine reads `texts`, without a copy.");
}
