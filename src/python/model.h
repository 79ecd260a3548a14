// infercost.Model: a model loaded once on its devices (pipeline::Classifier),
// classifying texts in memory; and what classify() returns, a table of the
// CLI's output columns exported through the Arrow C data interface (no
// libarrow: pyarrow, polars, duckdb... import it with zero copy).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <vector>

#include "infercost/pipeline/classifier.h"

namespace infercost::python {

// The columns of one classify() call, as `infercost run` writes them: one
// float32 column per label (named from id2label, lowercased), `label` (the
// winning label, as in id2label) and, for multi-label outputs, `labels` (the
// labels at or above the threshold, joined by ","); every column null where
// the row is null. Held column by column, so that an Arrow export points into
// it; immutable once made.
struct ClassificationColumns {
  int64_t rows = 0;
  int64_t null_count = 0;
  std::vector<std::string> names;          // the columns, in order
  std::vector<std::vector<float>> values;  // per label: rows values
  std::vector<uint8_t> validity;           // Arrow bitmap, 1 = valid; empty when no row is null
  std::vector<int32_t> label_offsets;      // rows + 1
  std::string label_chars;
  bool has_label_set = false;
  std::vector<int32_t> label_set_offsets;  // rows + 1 when has_label_set
  std::string label_set_chars;
  pipeline::Classification classification;  // the engine's result (scores row-major, label index)
};

// Makes the columns of `result` for a classifier's labels and label set.
std::shared_ptr<const ClassificationColumns> make_result_columns(pipeline::Classification result,
                                                                 const pipeline::Classifier& classifier);

// The Python result object's Arrow side: a stream of one record batch (a
// struct array of the columns), its schema, or the array and schema.
nanobind::object arrow_stream_capsule(const std::shared_ptr<const ClassificationColumns>& columns);
nanobind::object arrow_schema_capsule(const ClassificationColumns& columns);
nanobind::tuple arrow_array_capsules(const std::shared_ptr<const ClassificationColumns>& columns);

// Registers _native.Model and _native.Classification on the module.
void bind_model(nanobind::module_& m);

}  // namespace infercost::python
