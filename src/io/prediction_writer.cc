#include "io/prediction_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/file.h"
#include "core/json_text.h"
#include "file_names.h"
#include "parquet/metadata.h"
#include "parquet/reader.h"
#include "parquet_prediction_writer.h"

namespace infercost::io {

namespace {

// Output goes to an AtomicOutputFile, or to stdout for "-" (not atomic: a
// pipe cannot be taken back).
class Sink {
 public:
  static Result<Sink> open(const std::string& path, const ResumableOutput* resumable) {
    Sink sink;
    if (resumable) {
      if (path == "-") return invalid_argument("standard output cannot be resumed; name an output file");
      INFERCOST_ASSIGN_OR_RETURN(
          sink.file_, AtomicOutputFile::open_resumable(path, resumable->partial,
                                                       resumable->from ? resumable->from->bytes : 0));
      sink.to_file_ = true;
      sink.resumable_ = true;
      return sink;
    }
    if (path == "-") return sink;
    INFERCOST_ASSIGN_OR_RETURN(sink.file_, AtomicOutputFile::create(path));
    sink.to_file_ = true;
    return sink;
  }
  bool resumable() const { return resumable_; }
  Status sync() { return file_.sync(); }
  uint64_t bytes() const { return file_.bytes_written(); }
  void discard() { file_.discard(); }
  Status write(std::string_view bytes) {
    if (to_file_) return file_.write(bytes);
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
      return io_error("stdout: write failed");
    return Status();
  }
  Status close() {
    if (to_file_) return file_.commit();
    if (std::fflush(stdout) != 0) return io_error("stdout: write failed");
    return Status();
  }

 private:
  AtomicOutputFile file_;
  bool to_file_ = false;
  bool resumable_ = false;
};

class DelimitedWriter final : public PredictionWriter {
 public:
  // `rows`: rows already in a resumed output (its header too).
  DelimitedWriter(Sink sink, OutputFormat format, PredictionColumns columns, int64_t rows)
      : sink_(std::move(sink)), format_(format), columns_(std::move(columns)), rows_(rows) {
    for (const std::string& label : columns_.labels) names_.push_back(label_column_name(label));
    width_ = columns_.dimensions > 0 ? static_cast<size_t>(columns_.dimensions) : names_.size();
    const bool resumed = rows > 0 || sink_.bytes() > 0;
    if (format_ == OutputFormat::kCsv && !resumed) {
      if (columns_.keep_text) buffer_ += "text,";
      for (const std::string& name : names_) {
        append_csv_field(buffer_, name);
        buffer_ += ',';
      }
      buffer_ += columns_.label_set ? "label,labels\n" : "label\n";
    }
  }

  Status write(const std::vector<std::string>& texts, const std::vector<uint8_t>& is_null,
               const std::vector<float>& probabilities) override {
    const size_t n_labels = width_;
    if (probabilities.size() != texts.size() * n_labels) {
      return internal_error("prediction writer: the values do not match rows x values per row");
    }
    if (!is_null.empty() && is_null.size() != texts.size()) {
      return internal_error("prediction writer: is_null does not match the rows");
    }
    for (size_t r = 0; r < texts.size(); ++r) {
      const bool null_row = !is_null.empty() && is_null[r] != 0;
      if (columns_.dimensions > 0) {
        append_jsonl_vector(texts[r], null_row, probabilities.data() + r * n_labels);
      } else if (format_ == OutputFormat::kJsonl) {
        append_jsonl_row(texts[r], null_row, probabilities.data() + r * n_labels);
      } else {
        append_csv_row(texts[r], null_row, probabilities.data() + r * n_labels);
      }
      if (buffer_.size() >= kFlushBytes) INFERCOST_RETURN_IF_ERROR(flush());
    }
    rows_ += static_cast<int64_t>(texts.size());
    return Status();
  }

  Status close() override {
    INFERCOST_RETURN_IF_ERROR(flush());
    return sink_.close();
  }

  Result<OutputCheckpoint> checkpoint() override {
    if (!sink_.resumable())
      return internal_error("prediction writer: checkpoint() of an output that cannot resume");
    INFERCOST_RETURN_IF_ERROR(flush());
    Status synced = sink_.sync();
    if (!synced.ok()) return failed_ = synced;
    OutputCheckpoint c;
    c.bytes = sink_.bytes();
    c.rows = rows_;
    return c;
  }

  void discard() override { sink_.discard(); }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void append_jsonl_text(const std::string& text, bool null_row) {
    buffer_ += '{';
    if (!columns_.keep_text) return;
    buffer_ += "\"text\":";
    if (null_row) {
      buffer_ += "null";
    } else {
      append_json_string(buffer_, text);
    }
    buffer_ += ',';
  }

  void append_jsonl_vector(const std::string& text, bool null_row, const float* v) {
    append_jsonl_text(text, null_row);
    append_json_string(buffer_, kEmbeddingColumn);
    buffer_ += ':';
    if (null_row) {
      buffer_ += "null}\n";
      return;
    }
    buffer_ += '[';
    for (size_t i = 0; i < width_; ++i)
      fmt::format_to(std::back_inserter(buffer_), "{}{}", i ? "," : "", v[i]);
    buffer_ += "]}\n";
  }

  void append_jsonl_row(const std::string& text, bool null_row, const float* p) {
    append_jsonl_text(text, null_row);
    for (size_t l = 0; l < names_.size(); ++l) {
      append_json_string(buffer_, names_[l]);
      if (null_row) {
        buffer_ += ":null,";
      } else {
        fmt::format_to(std::back_inserter(buffer_), ":{},", p[l]);
      }
    }
    buffer_ += "\"label\":";
    if (null_row) {
      buffer_ += "null";
    } else {
      append_json_string(buffer_, columns_.labels[winning_label(p, names_.size())]);
    }
    if (columns_.label_set) {
      buffer_ += ",\"labels\":";
      if (null_row) {
        buffer_ += "null";
      } else {
        append_json_string(buffer_, label_set(columns_.labels, p, columns_.threshold));
      }
    }
    buffer_ += "}\n";
  }

  // Null is an empty unquoted field; an empty string is written "" so that
  // readers which tell the two apart (ours, pyarrow) keep the difference.
  void append_csv_row(const std::string& text, bool null_row, const float* p) {
    if (columns_.keep_text) {
      if (null_row) {
        // nothing: an empty unquoted field
      } else if (text.empty()) {
        buffer_ += "\"\"";
      } else {
        append_csv_field(buffer_, text);
      }
      buffer_ += ',';
    }
    for (size_t l = 0; l < names_.size(); ++l) {
      if (!null_row) fmt::format_to(std::back_inserter(buffer_), "{}", p[l]);
      buffer_ += ',';
    }
    if (!null_row) append_csv_field(buffer_, columns_.labels[winning_label(p, names_.size())]);
    if (columns_.label_set) {
      // Like the text: null is an empty field, no label at all is "".
      buffer_ += ',';
      if (!null_row) {
        const std::string set = label_set(columns_.labels, p, columns_.threshold);
        if (set.empty()) {
          buffer_ += "\"\"";
        } else {
          append_csv_field(buffer_, set);
        }
      }
    }
    buffer_ += '\n';
  }

  // After a failed write the output no longer holds what rows_ counts:
  // every later write, close and checkpoint fails the same way.
  Status flush() {
    if (!failed_.ok()) return failed_;
    Status s = sink_.write(buffer_);
    buffer_.clear();
    if (!s.ok()) failed_ = s;
    return s;
  }

  Sink sink_;
  OutputFormat format_;
  PredictionColumns columns_;
  std::vector<std::string> names_;
  size_t width_ = 0;  // values per row: the labels, or the vector's dimensions
  std::string buffer_;
  int64_t rows_ = 0;
  Status failed_;
};

}  // namespace

Result<OutputFormat> output_format_for(const std::string& path, const std::string& format_flag) {
  std::string f = lowercase_ascii(format_flag);
  if (f == "jsonl" || f == "json" || f == "ndjson") return OutputFormat::kJsonl;
  if (f == "csv") return OutputFormat::kCsv;
  if (f == "parquet") return OutputFormat::kParquet;
  if (!f.empty())
    return invalid_argument("unknown output format '" + format_flag + "' (expected jsonl, csv or parquet)");
  if (path == "-") return OutputFormat::kJsonl;
  std::string p = lowercase_ascii(path);
  if (p.ends_with(".jsonl") || p.ends_with(".json") || p.ends_with(".ndjson")) return OutputFormat::kJsonl;
  if (p.ends_with(".csv")) return OutputFormat::kCsv;
  if (p.ends_with(".parquet") || p.ends_with(".parq") || p.ends_with(".pq")) return OutputFormat::kParquet;
  return invalid_argument(path +
                          ": cannot tell the output format from the extension; use .jsonl, .json, .ndjson, "
                          ".csv, .parquet, .parq or .pq, or --output-format jsonl, csv or parquet");
}

Result<std::unique_ptr<PredictionWriter>> create_prediction_writer(const std::string& path,
                                                                   OutputFormat format,
                                                                   const PredictionColumns& columns,
                                                                   const ResumableOutput* resumable) {
  if (columns.labels.empty() && columns.dimensions <= 0) {
    return invalid_argument("prediction writer: the model has no labels");
  }
  if (columns.dimensions > 0 && format == OutputFormat::kCsv) {
    return invalid_argument(path +
                            ": CSV cannot hold a vector per row; write embeddings to Parquet or JSON lines");
  }
  if (format == OutputFormat::kParquet) {
    if (path == "-") return invalid_argument("Parquet output cannot go to stdout; name a file");
    return create_parquet_prediction_writer(path, columns, resumable);
  }
  INFERCOST_ASSIGN_OR_RETURN(Sink sink, Sink::open(path, resumable));
  const int64_t rows = resumable && resumable->from ? resumable->from->rows : 0;
  return std::unique_ptr<PredictionWriter>(new DelimitedWriter(std::move(sink), format, columns, rows));
}

std::string label_column_name(std::string_view label) {
  return lowercase_ascii(std::string(label));
}

std::vector<std::string> prediction_column_names(const std::vector<std::string>& labels, bool label_set) {
  std::vector<std::string> names;
  names.reserve(labels.size() + 2);
  for (const std::string& label : labels) names.push_back(label_column_name(label));
  names.emplace_back("label");
  if (label_set) names.emplace_back("labels");
  return names;
}

Status check_label_columns(const std::vector<std::string>& labels, bool label_set) {
  std::vector<std::string> reserved = {"text", "label"};
  if (label_set) reserved.emplace_back("labels");
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string column = label_column_name(labels[i]);
    for (const std::string& name : reserved) {
      if (column == name) {
        return invalid_argument(fmt::format(
            "label {} '{}' (config.json's id2label) would be written as column '{}', which the output holds "
            "already ({}); rename the label in id2label",
            i, labels[i], column, name == "text" ? "the input text" : "the winning label"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (label_column_name(labels[j]) == column) {
        return invalid_argument(
            fmt::format("labels {} '{}' and {} '{}' (config.json's id2label) would both be written as column "
                        "'{}' (columns "
                        "are the labels lowercased); rename one of them in id2label",
                        j, labels[j], i, labels[i], column));
      }
    }
  }
  return Status();
}

size_t winning_label(const float* values, size_t labels) {
  return static_cast<size_t>(std::max_element(values, values + labels) - values);
}

std::string label_set(const std::vector<std::string>& labels, const float* values, float threshold) {
  std::string out;
  for (size_t l = 0; l < labels.size(); ++l) {
    if (!(values[l] >= threshold)) continue;
    if (!out.empty()) out += ',';
    out += labels[l];
  }
  return out;
}

void append_csv_field(std::string& out, std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(text);
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

Result<int64_t> rows_in_output(const std::string& path, OutputFormat format, uint64_t bytes,
                               std::string_view parquet_footer) {
  if (format == OutputFormat::kParquet) {
    if (parquet_footer.empty()) {
      INFERCOST_ASSIGN_OR_RETURN(std::shared_ptr<parquet::ParquetFile> file,
                                 parquet::ParquetFile::open(path));
      return file->metadata().num_rows;
    }
    Result<parquet::FileMetaData> md = parquet::parse_file_metadata(
        reinterpret_cast<const uint8_t*>(parquet_footer.data()), parquet_footer.size());
    if (!md.ok()) return corruption(path + ": its footer does not parse: " + md.status().message());
    return md->num_rows;
  }
  INFERCOST_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  if (bytes != UINT64_MAX && bytes > file.size()) {
    return corruption(fmt::format("{}: holds {} bytes, fewer than {}", path, file.size(), bytes));
  }
  const std::string_view text = file.view().substr(0, bytes == UINT64_MAX ? file.size() : bytes);
  if (text.empty()) return int64_t{0};
  if (text.back() != '\n') {
    return corruption(fmt::format("{}: byte {}: the output does not end at a row's end", path, text.size()));
  }
  int64_t lines = 0;
  if (format == OutputFormat::kJsonl) {
    lines = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
    return lines;
  }
  bool quoted = false;  // CSV: a quoted field may hold line ends; "" inside it toggles twice
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) ++lines;
  }
  if (quoted) return corruption(path + ": the output ends inside a quoted field");
  return lines - 1;  // the header
}

}  // namespace infercost::io
