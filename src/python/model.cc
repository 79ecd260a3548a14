// infercost.Model over pipeline::Classifier, and its result's Arrow export
// (the C data interface, written from the specification: a struct array of
// the output columns, in a stream of one batch).
#include "python/model.h"

#include <fmt/format.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include "infercost/pipeline/metrics.h"
#include "infercost/pipeline/runner.h"
#include "io/prediction_writer.h"
#include "pipeline/classifier_metrics.h"
#include "pipeline/classifier_workers.h"
#include "pipeline/run_cost.h"
#include "python/py_support.h"
#include "python/run.h"

namespace nb = nanobind;

namespace infercost::python {

std::shared_ptr<const ClassificationColumns> make_result_columns(pipeline::Classification result,
                                                                 const pipeline::Classifier& classifier) {
  auto c = std::make_shared<ClassificationColumns>();
  const size_t rows = result.rows();
  const size_t labels = static_cast<size_t>(result.labels);
  const std::vector<std::string>& label_names = classifier.config().labels;
  c->rows = static_cast<int64_t>(rows);
  c->has_label_set = classifier.label_set();
  c->names = io::prediction_column_names(label_names, c->has_label_set);
  c->values.assign(labels, std::vector<float>(rows, 0.0f));
  for (size_t i = 0; i < rows; ++i) {
    if (result.is_null[i]) ++c->null_count;
    for (size_t k = 0; k < labels; ++k) c->values[k][i] = result.scores[i * labels + k];
  }
  if (c->null_count > 0) {
    c->validity.assign((rows + 7) / 8, 0);
    for (size_t i = 0; i < rows; ++i) {
      if (!result.is_null[i]) c->validity[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
  }
  c->label_offsets.reserve(rows + 1);
  c->label_offsets.push_back(0);
  if (c->has_label_set) c->label_set_offsets.push_back(0);
  const float threshold = static_cast<float>(classifier.threshold());
  for (size_t i = 0; i < rows; ++i) {
    if (!result.is_null[i]) {
      c->label_chars += label_names[static_cast<size_t>(result.label[i])];
      if (c->has_label_set) {
        c->label_set_chars += io::label_set(label_names, result.scores.data() + i * labels, threshold);
      }
    }
    c->label_offsets.push_back(static_cast<int32_t>(c->label_chars.size()));
    if (c->has_label_set) c->label_set_offsets.push_back(static_cast<int32_t>(c->label_set_chars.size()));
  }
  c->classification = std::move(result);
  return c;
}

namespace {

// ---- Arrow export. Every exported struct owns a shared reference to the
// columns (its private_data), so the buffers live until the consumer
// releases the last of them, whatever happens to the Python result object.

struct SchemaData {
  std::string format, name;
  std::vector<ArrowSchema*> children;
};

void release_schema(ArrowSchema* schema) {
  if (schema == nullptr || schema->release == nullptr) return;
  auto* data = static_cast<SchemaData*>(schema->private_data);
  for (ArrowSchema* child : data->children) {
    if (child->release != nullptr) child->release(child);
    delete child;
  }
  delete data;
  schema->release = nullptr;
}

void fill_schema(ArrowSchema* out, std::string format, std::string name, int64_t flags,
                 std::vector<ArrowSchema*> children) {
  auto* data = new SchemaData{std::move(format), std::move(name), std::move(children)};
  out->format = data->format.c_str();
  out->name = data->name.c_str();
  out->metadata = nullptr;
  out->flags = flags;
  out->n_children = static_cast<int64_t>(data->children.size());
  out->children = data->children.empty() ? nullptr : data->children.data();
  out->dictionary = nullptr;
  out->release = release_schema;
  out->private_data = data;
}

// The struct schema of the columns: float32 per label, utf8 label(s).
void export_schema(const ClassificationColumns& c, ArrowSchema* out) {
  std::vector<ArrowSchema*> children;
  for (size_t k = 0; k < c.names.size(); ++k) {
    auto* child = new ArrowSchema();
    fill_schema(child, k < c.values.size() ? "f" : "u", c.names[k], ARROW_FLAG_NULLABLE, {});
    children.push_back(child);
  }
  fill_schema(out, "+s", "", 0, std::move(children));
}

struct ArrayData {
  std::shared_ptr<const ClassificationColumns> columns;
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
};

void release_array(ArrowArray* array) {
  if (array == nullptr || array->release == nullptr) return;
  auto* data = static_cast<ArrayData*>(array->private_data);
  for (ArrowArray* child : data->children) {
    if (child->release != nullptr) child->release(child);
    delete child;
  }
  delete data;
  array->release = nullptr;
}

void fill_array(ArrowArray* out, const std::shared_ptr<const ClassificationColumns>& columns,
                int64_t null_count, std::vector<const void*> buffers, std::vector<ArrowArray*> children) {
  auto* data = new ArrayData{columns, std::move(buffers), std::move(children)};
  out->length = columns->rows;
  out->null_count = null_count;
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(data->buffers.size());
  out->n_children = static_cast<int64_t>(data->children.size());
  out->buffers = data->buffers.data();
  out->children = data->children.empty() ? nullptr : data->children.data();
  out->dictionary = nullptr;
  out->release = release_array;
  out->private_data = data;
}

void export_array(const std::shared_ptr<const ClassificationColumns>& c, ArrowArray* out) {
  const void* validity = c->validity.empty() ? nullptr : c->validity.data();
  // An empty string column still has its offsets and (non-null) data buffers.
  // (Arrow wants a data buffer even for 0 rows.)
  static const char kNoChars = 0;
  alignas(8) static const float kNoValues[1] = {0.0f};
  std::vector<ArrowArray*> children;
  for (const std::vector<float>& v : c->values) {
    auto* child = new ArrowArray();
    fill_array(child, c, c->null_count, {validity, v.empty() ? kNoValues : v.data()}, {});
    children.push_back(child);
  }
  auto* label = new ArrowArray();
  fill_array(label, c, c->null_count,
             {validity, c->label_offsets.data(), c->label_chars.empty() ? &kNoChars : c->label_chars.data()},
             {});
  children.push_back(label);
  if (c->has_label_set) {
    auto* set = new ArrowArray();
    fill_array(set, c, c->null_count,
               {validity, c->label_set_offsets.data(),
                c->label_set_chars.empty() ? &kNoChars : c->label_set_chars.data()},
               {});
    children.push_back(set);
  }
  // The struct itself has no nulls: a null row is null in every column.
  fill_array(out, c, 0, {nullptr}, std::move(children));
}

// A stream of one batch: the struct array, then the end.
struct StreamData {
  std::shared_ptr<const ClassificationColumns> columns;
  bool done = false;
};

int stream_get_schema(ArrowArrayStream* stream, ArrowSchema* out) {
  export_schema(*static_cast<StreamData*>(stream->private_data)->columns, out);
  return 0;
}

int stream_get_next(ArrowArrayStream* stream, ArrowArray* out) {
  auto* data = static_cast<StreamData*>(stream->private_data);
  if (data->done) {
    std::memset(out, 0, sizeof(*out));  // release == nullptr: the end of the stream
    return 0;
  }
  export_array(data->columns, out);
  data->done = true;
  return 0;
}

const char* stream_get_last_error(ArrowArrayStream*) {
  return nullptr;
}

void release_stream(ArrowArrayStream* stream) {
  if (stream == nullptr || stream->release == nullptr) return;
  delete static_cast<StreamData*>(stream->private_data);
  stream->release = nullptr;
}

// PyCapsule destructors: a capsule the consumer never imported still owns
// its struct (release set), one it imported has release cleared.
void delete_schema_capsule(void* p) noexcept {
  auto* s = static_cast<ArrowSchema*>(p);
  if (s->release != nullptr) s->release(s);
  delete s;
}
void delete_array_capsule(void* p) noexcept {
  auto* a = static_cast<ArrowArray*>(p);
  if (a->release != nullptr) a->release(a);
  delete a;
}
void delete_stream_capsule(void* p) noexcept {
  auto* s = static_cast<ArrowArrayStream*>(p);
  if (s->release != nullptr) s->release(s);
  delete s;
}

}  // namespace

nb::object arrow_schema_capsule(const ClassificationColumns& columns) {
  auto* schema = new ArrowSchema();
  export_schema(columns, schema);
  return nb::capsule(schema, "arrow_schema", delete_schema_capsule);
}

nb::tuple arrow_array_capsules(const std::shared_ptr<const ClassificationColumns>& columns) {
  nb::object schema = arrow_schema_capsule(*columns);
  auto* array = new ArrowArray();
  export_array(columns, array);
  return nb::make_tuple(schema, nb::capsule(array, "arrow_array", delete_array_capsule));
}

nb::object arrow_stream_capsule(const std::shared_ptr<const ClassificationColumns>& columns) {
  auto* stream = new ArrowArrayStream();
  stream->get_schema = stream_get_schema;
  stream->get_next = stream_get_next;
  stream->get_last_error = stream_get_last_error;
  stream->release = release_stream;
  stream->private_data = new StreamData{columns};
  return nb::capsule(stream, "arrow_array_stream", delete_stream_capsule);
}

namespace {

// What Model.classify returns (infercost.Classification in the package).
struct PyClassification {
  std::shared_ptr<const ClassificationColumns> columns;
};

class Model {
 public:
  Model(std::string model_dir, nb::dict flags) : dir_(std::move(model_dir)) {
    // The classifier's settings and the pricing of its calls (kPrice).
    apply_settings("Model()", flags, pipeline::SettingScope::kPrice, options_);
    Result<pipeline::RunCost> cost = pipeline::resolve_run_cost(options_);
    if (!cost.ok()) raise_status(cost.status());
    cost_ = std::move(*cost);
    Result<std::unique_ptr<pipeline::Classifier>> opened = internal_error("not opened");
    {
      nb::gil_scoped_release release;
      opened = pipeline::Classifier::open(dir_, options_);
    }
    if (!opened.ok()) raise_status(opened.status());
    classifier_ = std::shared_ptr<pipeline::Classifier>(std::move(*opened));
  }

  PyClassification classify(nb::handle texts) {
    std::shared_ptr<pipeline::Classifier> c = open_classifier();
    TextColumn column = read_texts(texts);
    Result<pipeline::Classification> out = internal_error("not classified");
    std::shared_ptr<const ClassificationColumns> columns;
    std::string metrics;
    // Without the GIL; Ctrl-C stops the call after the batches under way.
    std::atomic<int> stop{0};
    run_watching_signals(stop, [&] {
      // One call at a time per Model, so that its metrics are its own.
      std::lock_guard<std::mutex> lock(call_mu_);
      const pipeline::ClassifierStats before = c->stats();
      const auto start = std::chrono::steady_clock::now();
      try {
        // The GPUs sampled as a run samples them (nothing on the CPU).
        backend::RunGpuSampling gpu_sampling(options_.device, options_.nvml_library,
                                             options_.gpu_sample_seconds);
        gpu_sampling.start();
        out = c->classify(column.texts, column.is_null, &stop);
        backend::GpuSampling sampled = gpu_sampling.finish();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (out.ok()) {
          pipeline::RunMetrics m = pipeline::classify_call_metrics(*c, options_, before, c->stats(), wall);
          pipeline::add_gpu_metrics(m, std::move(sampled));
          pipeline::estimate_run_cost(options_, m, m.cost = cost_);  // priced as a run of these rows
          metrics = m.to_json();
          columns = make_result_columns(std::move(*out), *c);
        }
      } catch (const std::exception& e) {
        out = internal_error(std::string("classify threw: ") + e.what());
      }
    });
    if (!out.ok()) raise_status(out.status());
    last_metrics_ = std::move(metrics);
    return PyClassification{std::move(columns)};
  }

  const std::string& last_metrics() const { return last_metrics_; }
  const std::string& dir() const { return dir_; }

  // What info adds to model_info(): how this Model runs.
  nb::dict runtime() {
    std::shared_ptr<pipeline::Classifier> c = open_classifier();
    nb::dict d;
    d["device"] = options_.device;
    d["devices"] = c->devices();
    d["precision"] = c->precision();
    d["threads"] = c->threads();
    d["tokenizer_threads"] = c->tokenizer_threads();
    d["max_length"] = c->max_length();
    d["batching"] = pipeline::batching_name(c->policy().batching);
    d["batch_size"] = c->policy().batch_size;
    d["max_batch_tokens"] = c->policy().max_batch_tokens;
    d["workers"] = pipeline::ClassifierWorkers(*c).workers();
    d["head_function"] = pipeline::head_function_name(c->head_function());
    d["labels_column"] = c->label_set();
    d["threshold"] = c->threshold();
    return d;
  }

  void close() {
    std::shared_ptr<pipeline::Classifier> c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      c = std::move(classifier_);
    }
    nb::gil_scoped_release release;  // a call under way on another thread finishes first
    std::lock_guard<std::mutex> lock(call_mu_);
    c.reset();
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return classifier_ == nullptr;
  }

 private:
  std::shared_ptr<pipeline::Classifier> open_classifier() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!classifier_) raise_status(invalid_argument("Model(" + dir_ + ") is closed"));
    return classifier_;
  }

  std::string dir_;
  pipeline::RunOptions options_;  // the classifier's settings (kModel) and the pricing (kPrice)
  pipeline::RunCost cost_;        // resolved once: the price of an hour
  std::mutex mu_;                 // classifier_
  std::mutex call_mu_;            // one classify() at a time
  std::shared_ptr<pipeline::Classifier> classifier_;
  std::string last_metrics_;  // the GIL guards it
};

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<PyClassification>(
      m, "Classification",
      "What Model.classify returns: the output columns of `infercost run`, exported through the "
      "Arrow C data interface (see infercost.Classification).")
      .def("__len__", [](const PyClassification& r) { return r.columns->rows; })
      .def_prop_ro("column_names", [](const PyClassification& r) { return r.columns->names; })
      .def_prop_ro("label_names",
                   [](const PyClassification& r) {
                     std::vector<std::string> names(
                         r.columns->names.begin(),
                         r.columns->names.begin() + static_cast<ptrdiff_t>(r.columns->values.size()));
                     return names;
                   })
      .def_prop_ro(
          "scores",
          [](const PyClassification& r) {
            const pipeline::Classification& c = r.columns->classification;
            return nb::ndarray<nb::numpy, const float, nb::ndim<2>>(
                c.scores.data(), {c.rows(), static_cast<size_t>(c.labels)});
          },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "label_index",
          [](const PyClassification& r) {
            const pipeline::Classification& c = r.columns->classification;
            return nb::ndarray<nb::numpy, const int32_t, nb::ndim<1>>(c.label.data(), {c.rows()});
          },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "is_null",
          [](const PyClassification& r) {
            const pipeline::Classification& c = r.columns->classification;
            return nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>>(c.is_null.data(), {c.rows()});
          },
          nb::rv_policy::reference_internal)
      .def(
          "__arrow_c_stream__",
          [](const PyClassification& r, nb::handle requested_schema) {
            if (!requested_schema.is_none()) {
              throw nb::type_error(
                  "Classification: only its own schema can be exported (requested_schema=None)");
            }
            return arrow_stream_capsule(r.columns);
          },
          nb::arg("requested_schema") = nb::none())
      .def(
          "__arrow_c_array__",
          [](const PyClassification& r, nb::handle requested_schema) {
            if (!requested_schema.is_none()) {
              throw nb::type_error(
                  "Classification: only its own schema can be exported (requested_schema=None)");
            }
            return arrow_array_capsules(r.columns);
          },
          nb::arg("requested_schema") = nb::none())
      .def("__arrow_c_schema__", [](const PyClassification& r) { return arrow_schema_capsule(*r.columns); });

  nb::class_<Model>(m, "Model", "A model loaded once on its devices (see infercost.Model).")
      .def(nb::init<std::string, nb::dict>(), nb::arg("model_dir"), nb::arg("flags"))
      .def("classify", &Model::classify, nb::arg("texts"),
           "The output columns of every text, in input order (see infercost.Model.classify).")
      .def_prop_ro("last_metrics_json", &Model::last_metrics)
      .def_prop_ro("dir", &Model::dir)
      .def("runtime", &Model::runtime)
      .def("close", &Model::close)
      .def_prop_ro("closed", &Model::closed);
}

}  // namespace infercost::python
