#include "parquet_prediction_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "parquet/compression.h"
#include "parquet/writer.h"

namespace infercost::io {
namespace {

class ParquetPredictionWriter final : public PredictionWriter {
 public:
  ParquetPredictionWriter(std::string path, std::unique_ptr<parquet::ParquetWriter> writer,
                          PredictionColumns columns, bool resumable)
      : path_(std::move(path)),
        writer_(std::move(writer)),
        columns_(std::move(columns)),
        resumable_(resumable) {}

  Status write(const std::vector<std::string>& texts, const std::vector<uint8_t>& is_null,
               const std::vector<float>& probabilities) override {
    const size_t n_labels =
        columns_.dimensions > 0 ? static_cast<size_t>(columns_.dimensions) : columns_.labels.size();
    if (probabilities.size() != texts.size() * n_labels) {
      return internal_error(path_ + ": prediction writer: the values do not match rows x values per row");
    }
    if (!is_null.empty() && is_null.size() != texts.size()) {
      return internal_error(path_ + ": prediction writer: is_null does not match the rows");
    }
    if (columns_.dimensions > 0) return write_vectors(texts, is_null, probabilities);
    const int first_prob = columns_.keep_text ? 1 : 0;
    const int label_col = first_prob + static_cast<int>(n_labels);
    const int last_col = columns_.label_set ? label_col + 1 : label_col;
    for (size_t r = 0; r < texts.size(); ++r) {
      const bool null_row = !is_null.empty() && is_null[r] != 0;
      if (null_row) {
        for (int c = 0; c <= last_col; ++c) writer_->append_null(c);
      } else {
        if (columns_.keep_text) writer_->append_string(0, texts[r]);
        const float* p = probabilities.data() + r * n_labels;
        for (size_t l = 0; l < n_labels; ++l) writer_->append_double(first_prob + static_cast<int>(l), p[l]);
        writer_->append_string(label_col, columns_.labels[winning_label(p, n_labels)]);
        if (columns_.label_set)
          writer_->append_string(label_col + 1, label_set(columns_.labels, p, columns_.threshold));
      }
      INFERCOST_RETURN_IF_ERROR(writer_->end_row());
    }
    return Status();
  }

  Status close() override { return writer_->close(); }

  // Embeddings: the text (where kept) and the vector of each row.
  Status write_vectors(const std::vector<std::string>& texts, const std::vector<uint8_t>& is_null,
                       const std::vector<float>& vectors) {
    const size_t dims = static_cast<size_t>(columns_.dimensions);
    const int vector_col = columns_.keep_text ? 1 : 0;
    for (size_t r = 0; r < texts.size(); ++r) {
      const bool null_row = !is_null.empty() && is_null[r] != 0;
      if (columns_.keep_text) {
        if (null_row) {
          writer_->append_null(0);
        } else {
          writer_->append_string(0, texts[r]);
        }
      }
      if (null_row) {
        writer_->append_null(vector_col);
      } else {
        writer_->append_floats(vector_col, std::span<const float>(vectors.data() + r * dims, dims));
      }
      INFERCOST_RETURN_IF_ERROR(writer_->end_row());
    }
    return Status();
  }

  Result<OutputCheckpoint> checkpoint() override {
    if (!resumable_) return internal_error(path_ + ": checkpoint() of an output that cannot resume");
    INFERCOST_ASSIGN_OR_RETURN(parquet::WriterCheckpoint c, writer_->checkpoint());
    OutputCheckpoint out;
    out.bytes = c.bytes;
    out.rows = c.rows;
    out.parquet_footer = std::move(c.footer);
    return out;
  }

  void discard() override { writer_->discard(); }

 private:
  std::string path_;
  std::unique_ptr<parquet::ParquetWriter> writer_;
  PredictionColumns columns_;
  bool resumable_ = false;
};

}  // namespace

Result<std::unique_ptr<PredictionWriter>> create_parquet_prediction_writer(const std::string& path,
                                                                           const PredictionColumns& columns,
                                                                           const ResumableOutput* resumable) {
  if (columns.labels.empty() && columns.dimensions <= 0) {
    return invalid_argument(path + ": prediction writer: the model has no labels");
  }
  Result<parquet::Codec> codec = parquet::codec_from_name(columns.compression);
  if (!codec.ok()) return codec.status().with_context(path);
  std::vector<parquet::ColumnSpec> schema;
  if (columns.keep_text) schema.push_back({"text", parquet::ColumnSpec::Kind::kString, true});
  if (columns.dimensions > 0) {
    parquet::ColumnSpec vector{kEmbeddingColumn, parquet::ColumnSpec::Kind::kFloat, true};
    vector.list_size = columns.dimensions;
    schema.push_back(std::move(vector));
  }
  std::vector<std::string> names = columns.dimensions > 0
                                       ? std::vector<std::string>()
                                       : prediction_column_names(columns.labels, columns.label_set);
  for (size_t i = 0; i < names.size(); ++i) {
    const bool value = i < columns.labels.size();  // a label's value, or the label / labels string
    schema.push_back({std::move(names[i]),
                      value ? parquet::ColumnSpec::Kind::kFloat : parquet::ColumnSpec::Kind::kString, true});
  }
  parquet::WriterOptions options;
  options.codec = *codec;
  // ParquetWriter::create names the path in its errors (duplicate column
  // names from labels that collide once lowercased, or the OS refusing).
  std::unique_ptr<parquet::ParquetWriter> writer;
  if (resumable) {
    parquet::WriterCheckpoint from;
    if (resumable->from) {
      from.bytes = resumable->from->bytes;
      from.rows = resumable->from->rows;
      from.footer = resumable->from->parquet_footer;
    }
    INFERCOST_ASSIGN_OR_RETURN(
        writer, parquet::ParquetWriter::create_resumable(path, resumable->partial, std::move(schema), options,
                                                         resumable->from ? &from : nullptr));
  } else {
    INFERCOST_ASSIGN_OR_RETURN(writer, parquet::ParquetWriter::create(path, std::move(schema), options));
  }
  return std::unique_ptr<PredictionWriter>(
      new ParquetPredictionWriter(path, std::move(writer), columns, resumable != nullptr));
}

}  // namespace infercost::io
