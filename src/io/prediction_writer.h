// Prediction outputs: one row per classified input row, in input order, with
// the text (unless dropped), one column per label (named from id2label,
// lowercased) holding the head function's value (a probability, or the logit
// under --function none), the winning label (the first largest value) and,
// for multi-label outputs, `labels`: every label at or above the threshold.
// Embeddings (PredictionColumns::dimensions): the text and `embedding`, the
// row's vector: in Parquet a fixed-size list of float32 (pyarrow reads
// fixed_size_list<float>[dimensions], DuckDB and Spark a float array), in
// JSON lines an array of numbers (each the shortest text that reads back as
// the same float32); null for a null row. CSV cannot hold them (refused).
//
// Files are written to a temporary and renamed by close(); a writer destroyed
// without close() leaves nothing behind. "-" writes JSON lines to stdout.
//
// CSV (RFC 4180, LF line ends, UTF-8 without BOM): a null row is all empty
// unquoted fields; an empty text is written "" (quoted); probabilities are
// the shortest text that reads back as the same float32. pandas reads it back
// with the same texts, probabilities and labels given
//   pd.read_csv(path, keep_default_na=False, dtype={"text": str, "label": str},
//               na_values={"label": [""], <each probability column>: [""]})
// (keep_default_na=False keeps texts such as "NA" or "null"; dtype keeps
// texts such as "123"), except that pandas cannot tell "" from an empty
// field: a null row's text reads as "" (its probabilities and label as NaN).
// pyarrow.csv.read_csv with ParseOptions(newlines_in_values=True) and
// ConvertOptions(null_values=[""], quoted_strings_can_be_null=False) keeps
// null and "" apart. JSON lines: pd.read_json(path, lines=True, dtype=False).
// A multi-label `labels` column is written as the text is (null: an empty
// field; no label: ""), so it reads back as the text does (dtype str).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

namespace infercost::io {

enum class OutputFormat { kJsonl, kCsv, kParquet };

// From --output-format (jsonl|csv|parquet) or the path's extension
// (.jsonl/.json/.ndjson, .csv, .parquet/.parq/.pq).
Result<OutputFormat> output_format_for(const std::string& path, const std::string& format_flag);

struct PredictionColumns {
  bool keep_text = true;
  std::vector<std::string> labels;     // as in id2label; column names are lowercased
  std::string compression = "snappy";  // Parquet only: a codec_from_name() name
  // Multi-label outputs: a `labels` column after `label` (label_set()), a
  // string in every format, null for a null row.
  bool label_set = false;
  float threshold = 0.5f;
  // Embeddings: > 0 writes `embedding`, a vector of this many float32 per
  // row, instead of the label columns (labels then empty).
  int dimensions = 0;
};

// The column an embedding output holds its vectors in.
inline constexpr const char* kEmbeddingColumn = "embedding";

// A label's output column name: the label lowercased (ASCII letters; other
// bytes kept as they are).
std::string label_column_name(std::string_view label);

// The output's column names after `text`, as every writer and the Python
// package name them: label_column_name() of each label, then "label", then
// "labels" when `label_set`.
std::vector<std::string> prediction_column_names(const std::vector<std::string>& labels, bool label_set);

// kInvalidArgument when two of the output's columns would share a name:
// two labels alike but for case ("Positive", "positive"), or a label named
// as one of the other columns (text, label, and labels when `label_set`),
// whatever the output format and whether or not the text is kept. The message
// names the labels and where they come from (config.json's id2label).
Status check_label_columns(const std::vector<std::string>& labels, bool label_set);

// The index of the winning label of one row's `labels` values: the first
// maximum. Every writer's `label` column and Encoder::classify's labels.
size_t winning_label(const float* values, size_t labels);

// The labels (as in id2label) whose value is at or above `threshold`, in
// label order, joined by ","; "" when none is. Compared as float32, the
// values the output holds, so a value written "0.7" is at a threshold 0.7.
std::string label_set(const std::vector<std::string>& labels, const float* values, float threshold);

// Where a resumable output stands (PredictionWriter::checkpoint()): its
// durable bytes and rows and, for Parquet, the footer of its row groups.
struct OutputCheckpoint {
  uint64_t bytes = 0;
  int64_t rows = 0;
  std::string parquet_footer;  // Parquet only (parquet::WriterCheckpoint::footer)
};

// A resumable output: written to `partial` and renamed to its path by
// close(); `from` null starts it, otherwise it continues from that
// checkpoint (the partial cut back to it).
struct ResumableOutput {
  std::string partial;
  const OutputCheckpoint* from = nullptr;
};

// The rows an output this writer wrote holds in its first `bytes` bytes
// (the whole file when `bytes` is UINT64_MAX): JSON lines count their lines
// (and must end at a line's end), CSV its records after the header, Parquet
// the rows of `parquet_footer` (a checkpoint's FileMetaData) or, when it is
// empty, of the file's own footer. kCorruption naming the file when the
// bytes cannot be such an output; kNotFound when it is missing.
Result<int64_t> rows_in_output(const std::string& path, OutputFormat format, uint64_t bytes,
                               std::string_view parquet_footer = {});

class PredictionWriter {
 public:
  virtual ~PredictionWriter() = default;
  // probabilities: [texts.size(), labels.size()] row-major (embeddings:
  // [texts.size(), dimensions], the vectors). A row with
  // is_null[i] set is written with null text, null probabilities and a null
  // label (its probabilities are ignored). is_null may be empty (no nulls).
  virtual Status write(const std::vector<std::string>& texts, const std::vector<uint8_t>& is_null,
                       const std::vector<float>& probabilities) = 0;
  virtual Status close() = 0;
  // Makes every row written so far durable (Parquet: ends the row group) and
  // says where the output stands. Resumable outputs only (kInternal else).
  virtual Result<OutputCheckpoint> checkpoint() = 0;
  // Closes without finishing: the partial of a resumable output is removed.
  // (Destroying a writer without close() keeps a resumable output's partial
  // and removes any other temporary.)
  virtual void discard() = 0;
};

// `resumable` null: written to a temporary that nothing outlives but the
// finished file (or to stdout for "-").
Result<std::unique_ptr<PredictionWriter>> create_prediction_writer(
    const std::string& path, OutputFormat format, const PredictionColumns& columns,
    const ResumableOutput* resumable = nullptr);

// RFC 4180 field: quoted when it holds a comma, quote, CR or LF.
void append_csv_field(std::string& out, std::string_view text);

}  // namespace infercost::io
