#include <cstdio>
#include <filesystem>

#include "core/file.h"
#include "core/json_text.h"
#include "corpus/tweets.h"
#include "parquet/compression.h"
#include "parquet/writer.h"

namespace infercost::corpus {

namespace {

int files_for(DatasetShape shape) {
  switch (shape) {
    case DatasetShape::kJson3: return 3;
    case DatasetShape::kParquet10: return 10;
    default: return 1;
  }
}

bool is_parquet(DatasetShape shape) {
  return shape == DatasetShape::kParquet || shape == DatasetShape::kParquet10;
}

std::string part_name(int index, DatasetShape shape) {
  char name[32];
  std::snprintf(name, sizeof name, "part-%05d.%s", index, is_parquet(shape) ? "parquet" : "json");
  return name;
}

// Rows [first, first + count) of the sequence into one file.
class PartWriter {
 public:
  virtual ~PartWriter() = default;
  virtual Status add(int64_t id, const std::string& text) = 0;
  virtual Result<int64_t> finish() = 0;  // bytes written
};

class JsonlPart : public PartWriter {
 public:
  static Result<std::unique_ptr<PartWriter>> create(const std::string& path) {
    INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile file, AtomicOutputFile::create(path));
    auto part = std::make_unique<JsonlPart>();
    part->file_ = std::move(file);
    part->buffer_.reserve(kFlushBytes + 64 * 1024);
    return std::unique_ptr<PartWriter>(std::move(part));
  }
  Status add(int64_t id, const std::string& text) override {
    buffer_ += "{\"id\": ";
    buffer_ += std::to_string(id);
    buffer_ += ", \"full_text\": ";
    append_json_string(buffer_, text);
    buffer_ += "}\n";
    if (buffer_.size() >= kFlushBytes) return flush();
    return Status::ok_status();
  }
  Result<int64_t> finish() override {
    INFERCOST_RETURN_IF_ERROR(flush());
    INFERCOST_RETURN_IF_ERROR(file_.commit());
    return bytes_;
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  Status flush() {
    bytes_ += static_cast<int64_t>(buffer_.size());
    Status s = file_.write(buffer_);
    buffer_.clear();
    return s;
  }
  AtomicOutputFile file_;
  std::string buffer_;
  int64_t bytes_ = 0;
};

class ParquetPart : public PartWriter {
 public:
  static Result<std::unique_ptr<PartWriter>> create(const std::string& path, const DatasetOptions& options) {
    parquet::WriterOptions writer_options;
    INFERCOST_ASSIGN_OR_RETURN(writer_options.codec, parquet::codec_from_name(options.compression));
    writer_options.row_group_rows = options.row_group_rows;
    writer_options.key_value_metadata.emplace_back("infercost.datagen.seed", std::to_string(options.seed));
    std::vector<parquet::ColumnSpec> schema = {
        {"id", parquet::ColumnSpec::Kind::kInt64, false},
        {"full_text", parquet::ColumnSpec::Kind::kString, false},
    };
    INFERCOST_ASSIGN_OR_RETURN(auto writer, parquet::ParquetWriter::create(path, schema, writer_options));
    auto part = std::make_unique<ParquetPart>();
    part->writer_ = std::move(writer);
    part->path_ = path;
    return std::unique_ptr<PartWriter>(std::move(part));
  }
  Status add(int64_t id, const std::string& text) override {
    writer_->append_int64(0, id);
    writer_->append_string(1, text);
    return writer_->end_row();
  }
  Result<int64_t> finish() override {
    INFERCOST_RETURN_IF_ERROR(writer_->close());
    std::error_code ec;
    const auto size = std::filesystem::file_size(path_, ec);
    return ec ? int64_t{0} : static_cast<int64_t>(size);
  }

 private:
  std::unique_ptr<parquet::ParquetWriter> writer_;
  std::string path_;
};

}  // namespace

Result<DatasetShape> dataset_shape_from_name(std::string_view name) {
  if (name == "jsonl") return DatasetShape::kJsonl;
  if (name == "json-3") return DatasetShape::kJson3;
  if (name == "parquet") return DatasetShape::kParquet;
  if (name == "parquet-10") return DatasetShape::kParquet10;
  return invalid_argument("unknown shape '" + std::string(name) +
                          "' (choose jsonl, json-3, parquet or parquet-10)");
}

Result<DatasetSummary> write_tweets_dataset(const std::string& out, const DatasetOptions& options,
                                            const TweetsProgressFn& on_progress,
                                            int64_t progress_every_rows) {
  if (options.rows < 0)
    return invalid_argument(out + ": row count must be >= 0, got " + std::to_string(options.rows));
  if (progress_every_rows < 1) {
    return invalid_argument("progress interval must be >= 1 row, got " + std::to_string(progress_every_rows));
  }
  const int files = files_for(options.shape);
  std::vector<std::string> paths;
  if (files == 1) {
    paths.push_back(out);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) return io_error(out + ": cannot create the folder: " + ec.message());
    for (int f = 0; f < files; ++f)
      paths.push_back((std::filesystem::path(out) / part_name(f, options.shape)).string());
  }
  DatasetSummary summary;
  auto remove_done = [&summary] {
    for (const std::string& path : summary.files) std::remove(path.c_str());
  };
  const bool matched = !options.lengths.empty();
  TweetGenerator generator =
      matched ? TweetGenerator(options.seed, options.lengths) : TweetGenerator(options.seed);
  int64_t id = 0;
  int64_t bytes_before = 0;
  for (int f = 0; f < files; ++f) {
    // Rows split as evenly as possible: the first (rows % files) parts get one more.
    const int64_t count = options.rows / files + (f < options.rows % files ? 1 : 0);
    Result<std::unique_ptr<PartWriter>> part =
        is_parquet(options.shape) ? ParquetPart::create(paths[f], options) : JsonlPart::create(paths[f]);
    if (!part.ok()) {
      remove_done();
      return part.status();
    }
    Status status;
    for (int64_t i = 0; i < count && status.ok(); ++i, ++id) {
      const std::string text = generator.next();
      if (matched) summary.lengths_written.add(count_words(text));
      status = (*part)->add(id, text);
      if (on_progress && (id + 1) % progress_every_rows == 0) on_progress(id + 1, bytes_before);
    }
    Result<int64_t> bytes = status.ok() ? (*part)->finish() : Result<int64_t>(status);
    if (!bytes.ok()) {
      part->reset();
      remove_done();
      return bytes.status().with_context(paths[f]);
    }
    bytes_before += *bytes;
    summary.files.push_back(paths[f]);
  }
  summary.rows = id;
  summary.bytes = bytes_before;
  return summary;
}

}  // namespace infercost::corpus
