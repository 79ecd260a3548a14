// infercost.Model over engine::Encoder, and its result's Arrow export
// (the C data interface, written from the specification: a struct array of
// the output columns, in a stream of one batch).
#include "python/model.h"

#include <fmt/format.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "engine/encoder_metrics.h"
#include "engine/run_cost.h"
#include "infercost/metrics.h"
#include "io/prediction_writer.h"
#include "python/py_support.h"
#include "python/run.h"
#include "run/runner.h"

namespace nb = nanobind;

namespace infercost::python {

namespace {

// Arrow's validity bitmap of rows whose null flags are `is_null`: bit i of
// byte i / 8 set where row i is valid.
std::vector<uint8_t> validity_bitmap(const std::vector<uint8_t>& is_null) {
  std::vector<uint8_t> validity((is_null.size() + 7) / 8, 0);
  for (size_t i = 0; i < is_null.size(); ++i) {
    if (!is_null[i]) validity[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  return validity;
}

}  // namespace

std::shared_ptr<const ClassificationColumns> make_result_columns(Classification result,
                                                                 const engine::Encoder& classifier) {
  auto c = std::make_shared<ClassificationColumns>();
  const size_t rows = result.rows();
  const size_t labels = static_cast<size_t>(result.labels);
  const std::vector<std::string>& label_names = classifier.config().labels;
  c->row_count = static_cast<int64_t>(rows);
  c->has_label_set = classifier.label_set();
  c->names = io::prediction_column_names(label_names, c->has_label_set);
  c->values.assign(labels, std::vector<float>(rows, 0.0f));
  for (size_t i = 0; i < rows; ++i) {
    if (result.is_null[i]) ++c->null_count;
    for (size_t k = 0; k < labels; ++k) c->values[k][i] = result.scores[i * labels + k];
  }
  if (c->null_count > 0) c->validity = validity_bitmap(result.is_null);
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

std::shared_ptr<const EmbeddingColumns> make_embedding_columns(Embeddings result) {
  auto c = std::make_shared<EmbeddingColumns>();
  const size_t rows = result.rows();
  for (size_t i = 0; i < rows; ++i) c->null_count += result.is_null[i] ? 1 : 0;
  if (c->null_count > 0) c->validity = validity_bitmap(result.is_null);
  c->embeddings = std::move(result);
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

// The release callback of an exported ArrowSchema or ArrowArray: releases
// and frees its children, frees its private Data, and marks it released.
template <typename Exported, typename Data>
void release_exported(Exported* exported) {
  if (exported == nullptr || exported->release == nullptr) return;
  auto* data = static_cast<Data*>(exported->private_data);
  for (Exported* child : data->children) {
    if (child->release != nullptr) child->release(child);
    delete child;
  }
  delete data;
  exported->release = nullptr;
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
  out->release = release_exported<ArrowSchema, SchemaData>;
  out->private_data = data;
}

struct ArrayData {
  std::shared_ptr<const ArrowExportable> columns;
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
};

void fill_array(ArrowArray* out, const std::shared_ptr<const ArrowExportable>& columns, int64_t length,
                int64_t null_count, std::vector<const void*> buffers, std::vector<ArrowArray*> children) {
  auto* data = new ArrayData{columns, std::move(buffers), std::move(children)};
  out->length = length;
  out->null_count = null_count;
  out->offset = 0;
  out->n_buffers = static_cast<int64_t>(data->buffers.size());
  out->n_children = static_cast<int64_t>(data->children.size());
  out->buffers = data->buffers.data();
  out->children = data->children.empty() ? nullptr : data->children.data();
  out->dictionary = nullptr;
  out->release = release_exported<ArrowArray, ArrayData>;
  out->private_data = data;
}

// An empty column still has its (non-null) data buffers: Arrow wants one
// even for 0 rows.
const char kNoChars = 0;
alignas(8) const float kNoValues[1] = {0.0f};

}  // namespace

// The struct schema of the columns: float32 per label, utf8 label(s).
void ClassificationColumns::export_schema(ArrowSchema* out) const {
  std::vector<ArrowSchema*> children;
  for (size_t k = 0; k < names.size(); ++k) {
    auto* child = new ArrowSchema();
    fill_schema(child, k < values.size() ? "f" : "u", names[k], ARROW_FLAG_NULLABLE, {});
    children.push_back(child);
  }
  fill_schema(out, "+s", "", 0, std::move(children));
}

void ClassificationColumns::export_array(const std::shared_ptr<const ArrowExportable>& self,
                                         ArrowArray* out) const {
  const void* valid = validity.empty() ? nullptr : validity.data();
  std::vector<ArrowArray*> children;
  for (const std::vector<float>& v : values) {
    auto* child = new ArrowArray();
    fill_array(child, self, row_count, null_count, {valid, v.empty() ? kNoValues : v.data()}, {});
    children.push_back(child);
  }
  auto* label = new ArrowArray();
  fill_array(label, self, row_count, null_count,
             {valid, label_offsets.data(), label_chars.empty() ? &kNoChars : label_chars.data()}, {});
  children.push_back(label);
  if (has_label_set) {
    auto* set = new ArrowArray();
    fill_array(
        set, self, row_count, null_count,
        {valid, label_set_offsets.data(), label_set_chars.empty() ? &kNoChars : label_set_chars.data()}, {});
    children.push_back(set);
  }
  // The struct itself has no nulls: a null row is null in every column.
  fill_array(out, self, row_count, 0, {nullptr}, std::move(children));
}

// A struct of one column: embedding, fixed_size_list<element: float>[dimensions].
void EmbeddingColumns::export_schema(ArrowSchema* out) const {
  auto* element = new ArrowSchema();
  fill_schema(element, "f", "element", 0, {});
  auto* vector = new ArrowSchema();
  fill_schema(vector, fmt::format("+w:{}", embeddings.dimensions), io::kEmbeddingColumn, ARROW_FLAG_NULLABLE,
              {element});
  fill_schema(out, "+s", "", 0, {vector});
}

void EmbeddingColumns::export_array(const std::shared_ptr<const ArrowExportable>& self,
                                    ArrowArray* out) const {
  const int64_t n = rows();
  const std::vector<float>& v = embeddings.vectors;
  auto* element = new ArrowArray();
  fill_array(element, self, n * embeddings.dimensions, 0, {nullptr, v.empty() ? kNoValues : v.data()}, {});
  auto* vector = new ArrowArray();
  fill_array(vector, self, n, null_count, {validity.empty() ? nullptr : validity.data()}, {element});
  fill_array(out, self, n, 0, {nullptr}, {vector});
}

namespace {

// A stream of one batch: the struct array, then the end.
struct StreamData {
  std::shared_ptr<const ArrowExportable> columns;
  bool done = false;
};

int stream_get_schema(ArrowArrayStream* stream, ArrowSchema* out) {
  static_cast<StreamData*>(stream->private_data)->columns->export_schema(out);
  return 0;
}

int stream_get_next(ArrowArrayStream* stream, ArrowArray* out) {
  auto* data = static_cast<StreamData*>(stream->private_data);
  if (data->done) {
    std::memset(out, 0, sizeof(*out));  // release == nullptr: the end of the stream
    return 0;
  }
  data->columns->export_array(data->columns, out);
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

nb::object arrow_schema_capsule(const ArrowExportable& columns) {
  auto* schema = new ArrowSchema();
  columns.export_schema(schema);
  return nb::capsule(schema, "arrow_schema", delete_schema_capsule);
}

nb::tuple arrow_array_capsules(const std::shared_ptr<const ArrowExportable>& columns) {
  nb::object schema = arrow_schema_capsule(*columns);
  auto* array = new ArrowArray();
  columns->export_array(columns, array);
  return nb::make_tuple(schema, nb::capsule(array, "arrow_array", delete_array_capsule));
}

nb::object arrow_stream_capsule(const std::shared_ptr<const ArrowExportable>& columns) {
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

// What Model.embed returns (infercost.Embeddings in the package).
struct PyEmbeddings {
  std::shared_ptr<const EmbeddingColumns> columns;
};

// The task of Model(model_dir, task=..., **flags): as asked; else embed when
// an embedding setting is given, else the directory's (default_task).
Task model_task(const std::string& dir, const std::optional<std::string>& task, nb::dict flags) {
  if (task) {
    if (*task == "classify") return Task::kClassify;
    if (*task == "embed") return Task::kEmbed;
    raise_status(invalid_argument(fmt::format("Model(): task '{}': expected 'classify' or 'embed'", *task)));
  }
  for (auto [key, value] : flags) {
    const engine::Setting* s = engine::find_setting(nb::cast<std::string>(key));
    if (s == nullptr || s->task != Task::kEmbed || value.is_none()) continue;
    // A text setting's default ("" for pooling) is not asking for anything.
    if (nb::isinstance<nb::str>(value) && nb::cast<std::string>(value) == s->get(RunOptions{}) &&
        s->type == engine::SettingType::kText) {
      continue;
    }
    return Task::kEmbed;
  }
  nb::gil_scoped_release release;
  return engine::default_task(dir);
}

class Model {
 public:
  Model(std::string model_dir, nb::dict flags, std::optional<std::string> task) : dir_(std::move(model_dir)) {
    options_.task = model_task(dir_, task, flags);
    // The classifier's settings (those of its task) and the pricing of its calls (kPrice).
    apply_settings("Model()", flags, engine::SettingScope::kPrice, options_);
    // Checked once here, then resolved and opened without checking again.
    if (Status checked = engine::check_settings(options_, engine::SettingScope::kPrice); !checked.ok())
      raise_status(checked);
    Result<RunCost> cost = engine::resolve_run_cost(options_);
    if (!cost.ok()) raise_status(cost.status());
    cost_ = std::move(*cost);
    Result<std::unique_ptr<engine::Encoder>> opened = internal_error("not opened");
    {
      nb::gil_scoped_release release;
      Result<engine::ResolvedSettings> settings = engine::resolve_settings(options_);
      if (settings.ok()) {
        opened = engine::Encoder::open(dir_, options_, *settings);
      } else {
        opened = settings.status();
      }
    }
    if (!opened.ok()) raise_status(opened.status());
    classifier_ = std::shared_ptr<engine::Encoder>(std::move(*opened));
  }

  PyClassification classify(nb::handle texts) {
    std::shared_ptr<const ClassificationColumns> columns;
    call(texts, [&](engine::Encoder& c, const TextColumn& column, const std::atomic<int>& stop) -> Status {
      Result<Classification> out = c.classify(column.texts, column.is_null, &stop);
      if (out.ok()) columns = make_result_columns(std::move(*out), c);
      return out.status();
    });
    return PyClassification{std::move(columns)};
  }

  PyEmbeddings embed(nb::handle texts) {
    std::shared_ptr<const EmbeddingColumns> columns;
    call(texts, [&](engine::Encoder& c, const TextColumn& column, const std::atomic<int>& stop) -> Status {
      Result<Embeddings> out = c.embed(column.texts, column.is_null, &stop);
      if (out.ok()) columns = make_embedding_columns(std::move(*out));
      return out.status();
    });
    return PyEmbeddings{std::move(columns)};
  }

  const std::string& last_metrics() const { return last_metrics_; }
  std::string task() const { return task_name(options_.task); }
  const std::string& dir() const { return dir_; }

  // What info adds to model_info(): how this Model runs.
  nb::dict runtime() {
    std::shared_ptr<engine::Encoder> c = open_classifier();
    nb::dict d;
    d["device"] = options_.device;
    d["devices"] = c->devices();
    d["precision"] = c->precision();
    d["threads"] = c->threads();
    d["tokenizer_threads"] = c->tokenizer_threads();
    d["max_length"] = c->max_length();
    d["batching"] = engine::batching_name(c->policy().batching);
    d["batch_size"] = c->policy().batch_size;
    d["max_batch_tokens"] = c->policy().max_batch_tokens;
    d["workers"] = c->workers();
    d["task"] = task_name(c->task());
    d["head_function"] = engine::head_function_name(c->head_function());
    d["labels_column"] = c->label_set();
    d["threshold"] = c->threshold();
    if (const std::optional<engine::EmbeddingSettings>& e = c->embedding()) {
      nb::dict emb;
      emb["pooling"] = model::pooling_name(e->pooling);
      emb["normalize"] = e->normalize;
      emb["prefix"] = e->prefix;
      emb["dimensions"] = e->dimensions;
      emb["source"] = e->source;
      d["embedding_run"] = emb;
    }
    return d;
  }

  // One classify() or embed() call: `body` runs without the GIL, its metrics
  // kept as the last call's; its error raised.
  template <typename Body>
  void call(nb::handle texts, Body&& body) {
    std::shared_ptr<engine::Encoder> c = open_classifier();
    TextColumn column = read_texts(texts);
    Status status = internal_error("not run");
    std::string metrics;
    // Ctrl-C stops the call after the batches under way.
    std::atomic<int> stop{0};
    run_watching_signals(stop, [&] {
      // One call at a time per Model, so that its metrics are its own.
      std::lock_guard<std::mutex> lock(call_mu_);
      try {
        Result<RunMetrics> measured =
            engine::measure_call(*c, options_, cost_, [&] { return body(*c, column, stop); });
        status = measured.status();
        if (measured.ok()) metrics = measured->to_json();
      } catch (const std::exception& e) {
        status = internal_error(std::string("the call threw: ") + e.what());
      }
    });
    if (!status.ok()) raise_status(status);
    last_metrics_ = std::move(metrics);
  }

  void close() {
    std::shared_ptr<engine::Encoder> c;
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
  std::shared_ptr<engine::Encoder> open_classifier() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!classifier_) raise_status(invalid_argument("Model(" + dir_ + ") is closed"));
    return classifier_;
  }

  std::string dir_;
  RunOptions options_;  // the classifier's settings (kModel) and the pricing (kPrice)
  RunCost cost_;        // resolved once: the price of an hour
  std::mutex mu_;       // classifier_
  std::mutex call_mu_;  // one classify() or embed() at a time
  std::shared_ptr<engine::Encoder> classifier_;
  std::string last_metrics_;  // the GIL guards it
};

}  // namespace

namespace {

// The methods a result class shares: its length and its Arrow side (the
// PyCapsule interface), under the class's Python `name` in errors.
template <typename Result>
nb::class_<Result>& bind_arrow_result(nb::class_<Result>& cls, const char* name) {
  // A method of requested_schema (which must be None: only the columns' own
  // schema is exported) that exports the columns with `exporter`.
  auto export_with = [name](auto exporter) {
    return [name, exporter](const Result& r, nb::handle requested_schema) {
      if (!requested_schema.is_none()) {
        throw nb::type_error(
            fmt::format("{}: only its own schema can be exported (requested_schema=None)", name).c_str());
      }
      return exporter(r.columns);
    };
  };
  return cls.def("__len__", [](const Result& r) { return r.columns->rows(); })
      .def("__arrow_c_stream__", export_with(arrow_stream_capsule), nb::arg("requested_schema") = nb::none())
      .def("__arrow_c_array__", export_with(arrow_array_capsules), nb::arg("requested_schema") = nb::none())
      .def("__arrow_c_schema__", [](const Result& r) { return arrow_schema_capsule(*r.columns); });
}

// The engine's outputs a result holds.
const Classification& outputs_of(const PyClassification& r) {
  return r.columns->classification;
}
const Embeddings& outputs_of(const PyEmbeddings& r) {
  return r.columns->embeddings;
}

// A read-only property `name` of a result: a NumPy view, without a copy, of
// one of its outputs' columns, [rows], or [rows, o.*width] where a `width`
// member names the values per row; the view keeps the result alive.
template <typename Result, typename Outputs, typename T, typename... Width>
void def_view(nb::class_<Result>& cls, const char* name, std::vector<T> Outputs::*values, Width... width) {
  static_assert(sizeof...(Width) <= 1 && (std::is_same_v<Width, int Outputs::*> && ...));
  cls.def_prop_ro(
      name,
      [values, width...](const Result& r) {
        const Outputs& o = outputs_of(r);
        return nb::ndarray<nb::numpy, const T, nb::ndim<1 + sizeof...(Width)>>(
            (o.*values).data(), {o.rows(), static_cast<size_t>(o.*width)...});
      },
      nb::rv_policy::reference_internal);
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<PyClassification> classification(
      m, "Classification",
      "What Model.classify returns: the output columns of `infercost run`, exported through the "
      "Arrow C data interface (see infercost.Classification).");
  bind_arrow_result(classification, "Classification")
      .def_prop_ro("column_names", [](const PyClassification& r) { return r.columns->names; })
      .def_prop_ro("label_names", [](const PyClassification& r) {
        std::vector<std::string> names(
            r.columns->names.begin(),
            r.columns->names.begin() + static_cast<ptrdiff_t>(r.columns->values.size()));
        return names;
      });
  def_view(classification, "scores", &Classification::scores, &Classification::labels);
  def_view(classification, "label_index", &Classification::label);
  def_view(classification, "is_null", &Classification::is_null);

  nb::class_<PyEmbeddings> embeddings(
      m, "Embeddings",
      "What Model.embed returns: one vector per text, as `infercost embed` writes them, exported through the "
      "Arrow C data interface (see infercost.Embeddings).");
  bind_arrow_result(embeddings, "Embeddings").def_prop_ro("dimensions", [](const PyEmbeddings& r) {
    return r.columns->embeddings.dimensions;
  });
  def_view(embeddings, "vectors", &Embeddings::vectors, &Embeddings::dimensions);
  def_view(embeddings, "is_null", &Embeddings::is_null);

  nb::class_<Model>(m, "Model", "A model loaded once on its devices (see infercost.Model).")
      .def(nb::init<std::string, nb::dict, std::optional<std::string>>(), nb::arg("model_dir"),
           nb::arg("flags"), nb::arg("task") = nb::none())
      .def("classify", &Model::classify, nb::arg("texts"),
           "The output columns of every text, in input order (see infercost.Model.classify).")
      .def("embed", &Model::embed, nb::arg("texts"),
           "The vector of every text, in input order (see infercost.Model.embed).")
      .def_prop_ro("task", [](Model& self) { return self.task(); })
      .def_prop_ro("last_metrics_json", &Model::last_metrics)
      .def_prop_ro("dir", &Model::dir)
      .def("runtime", &Model::runtime)
      .def("close", &Model::close)
      .def_prop_ro("closed", &Model::closed);
}

}  // namespace infercost::python
