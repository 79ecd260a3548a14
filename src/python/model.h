// infercost.Model: a model loaded once on its devices (engine::Encoder),
// classifying or embedding texts in memory; and what classify() and embed()
// return, a table of the CLI's output columns exported through the Arrow C
// data interface (no libarrow: pyarrow, polars, duckdb... import it with
// zero copy).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/encoder.h"

struct ArrowSchema;
struct ArrowArray;

namespace infercost::python {

// A result exported as Arrow: a struct array of its columns, in a stream of
// one batch. Immutable once made; every exported struct holds a shared
// reference to it, so its buffers live until the consumer releases them.
struct ArrowExportable {
  virtual ~ArrowExportable() = default;
  virtual int64_t rows() const = 0;
  virtual void export_schema(ArrowSchema* out) const = 0;
  // `self` is this object, shared.
  virtual void export_array(const std::shared_ptr<const ArrowExportable>& self, ArrowArray* out) const = 0;
};

// The columns of one classify() call, as `infercost run` writes them: one
// float32 column per label (named from id2label, lowercased), `label` (the
// winning label, as in id2label) and, for multi-label outputs, `labels` (the
// labels at or above the threshold, joined by ","); every column null where
// the row is null. Held column by column, so that an Arrow export points into
// it; immutable once made.
struct ClassificationColumns final : ArrowExportable {
  int64_t rows() const override { return row_count; }
  void export_schema(ArrowSchema* out) const override;
  void export_array(const std::shared_ptr<const ArrowExportable>& self, ArrowArray* out) const override;

  int64_t row_count = 0;
  int64_t null_count = 0;
  std::vector<std::string> names;          // the columns, in order
  std::vector<std::vector<float>> values;  // per label: rows values
  std::vector<uint8_t> validity;           // Arrow bitmap, 1 = valid; empty when no row is null
  std::vector<int32_t> label_offsets;      // rows + 1
  std::string label_chars;
  bool has_label_set = false;
  std::vector<int32_t> label_set_offsets;  // rows + 1 when has_label_set
  std::string label_set_chars;
  Classification classification;  // the engine's result (scores row-major, label index)
};

// Makes the columns of `result` for a classifier's labels and label set.
std::shared_ptr<const ClassificationColumns> make_result_columns(Classification result,
                                                                 const engine::Encoder& classifier);

// The one column of an embed() call, as `infercost embed` writes it:
// `embedding`, a fixed-size list of `dimensions` float32 per row (Arrow's
// fixed_size_list<element: float not null>[dimensions]), null where the row
// is null (its values zeros).
struct EmbeddingColumns final : ArrowExportable {
  int64_t rows() const override { return static_cast<int64_t>(embeddings.rows()); }
  void export_schema(ArrowSchema* out) const override;
  void export_array(const std::shared_ptr<const ArrowExportable>& self, ArrowArray* out) const override;

  Embeddings embeddings;
  int64_t null_count = 0;
  std::vector<uint8_t> validity;  // Arrow bitmap, 1 = valid; empty when no row is null
};

std::shared_ptr<const EmbeddingColumns> make_embedding_columns(Embeddings result);

// The Python result object's Arrow side: a stream of one record batch (a
// struct array of the columns), its schema, or the array and schema.
nanobind::object arrow_stream_capsule(const std::shared_ptr<const ArrowExportable>& columns);
nanobind::object arrow_schema_capsule(const ArrowExportable& columns);
nanobind::tuple arrow_array_capsules(const std::shared_ptr<const ArrowExportable>& columns);

// Registers _native.Model, _native.Classification and _native.Embeddings on the module.
void bind_model(nanobind::module_& m);

}  // namespace infercost::python
