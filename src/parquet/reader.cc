#include "parquet/reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace infercost::parquet {
namespace {

constexpr char kEncryptedMagic[4] = {'P', 'A', 'R', 'E'};
// A schema deeper than this is refused rather than recursed into.
constexpr int kMaxSchemaDepth = 64;

class ParquetFileImpl : public ParquetFile {
 public:
  ParquetFileImpl(std::string path, int fd, std::string bytes, uint64_t size)
      : path_(std::move(path)), fd_(fd), bytes_(std::move(bytes)), size_(size) {}
  ~ParquetFileImpl() override {
    if (fd_ >= 0) ::close(fd_);
  }

  const std::string& path() const override { return path_; }
  uint64_t file_size() const override { return size_; }
  const FileMetaData& metadata() const override { return metadata_; }
  const std::vector<ColumnDescriptor>& columns() const override { return columns_; }

  Result<const ColumnDescriptor*> find_flat_column(std::string_view name) const override {
    for (const ColumnDescriptor& column : columns_) {
      if (column.path != name) continue;
      if (!column.flat) {
        return unsupported(fmt::format("{}: column '{}' is nested or repeated; only flat columns can be read",
                                       path_, column.path));
      }
      return &column;
    }
    // A group name (e.g. "a" of "a.b") names a nested column too.
    for (const ColumnDescriptor& column : columns_) {
      if (column.path.size() > name.size() && column.path.compare(0, name.size(), name) == 0 &&
          column.path[name.size()] == '.') {
        return unsupported(fmt::format("{}: column '{}' is nested ({}); only flat columns can be read", path_,
                                       name, column.path));
      }
    }
    std::string names;
    for (const ColumnDescriptor& column : columns_) {
      if (!names.empty()) names += ", ";
      names += column.path;
    }
    return not_found(fmt::format("{}: no column '{}'; the file has: {}", path_, name, names));
  }

  Status read_at(uint64_t offset, size_t size, uint8_t* out) const override {
    if (offset > size_ || size > size_ - offset) {
      return corruption(
          fmt::format("{}: read of {} bytes at offset {} runs past the end of the file ({} bytes)", path_,
                      size, offset, size_));
    }
    if (fd_ < 0) {
      if (size > 0) std::memcpy(out, bytes_.data() + offset, size);
      return Status();
    }
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return io_error(fmt::format("{}: read at offset {}: {}", path_, offset + done, std::strerror(errno)));
      }
      if (n == 0) {
        return corruption(fmt::format("{}: short read at offset {}: the file shrank while being read", path_,
                                      offset + done));
      }
      done += static_cast<size_t>(n);
    }
    return Status();
  }

  Status load() {
    if (size_ < 12) {
      return corruption(fmt::format(
          "{}: {} bytes is too small for a Parquet file (no \"PAR1\" header and footer)", path_, size_));
    }
    uint8_t head[4], tail[8];
    INFERCOST_RETURN_IF_ERROR(read_at(0, 4, head));
    INFERCOST_RETURN_IF_ERROR(read_at(size_ - 8, 8, tail));
    if (std::memcmp(tail + 4, kEncryptedMagic, 4) == 0) {
      return unsupported(fmt::format("{}: encrypted Parquet files are not supported", path_));
    }
    if (std::memcmp(head, kParquetMagic, 4) != 0 && std::memcmp(head, kEncryptedMagic, 4) != 0) {
      return corruption(fmt::format("{}: offset 0: not a Parquet file (no \"PAR1\" magic)", path_));
    }
    if (std::memcmp(tail + 4, kParquetMagic, 4) != 0) {
      return corruption(
          fmt::format("{}: offset {}: no \"PAR1\" magic at the end (truncated file?)", path_, size_ - 4));
    }
    uint32_t footer_len = static_cast<uint32_t>(tail[0]) | static_cast<uint32_t>(tail[1]) << 8 |
                          static_cast<uint32_t>(tail[2]) << 16 | static_cast<uint32_t>(tail[3]) << 24;
    if (footer_len == 0 || footer_len > size_ - 12) {
      return corruption(fmt::format("{}: offset {}: footer length {} does not fit in the file ({} bytes)",
                                    path_, size_ - 8, footer_len, size_));
    }
    footer_offset_ = size_ - 8 - footer_len;
    std::string footer(footer_len, '\0');
    INFERCOST_RETURN_IF_ERROR(read_at(footer_offset_, footer_len, reinterpret_cast<uint8_t*>(footer.data())));
    auto parsed = parse_file_metadata(reinterpret_cast<const uint8_t*>(footer.data()), footer.size());
    if (!parsed.ok()) {
      return parsed.status().with_context(fmt::format("{}: offset {}", path_, footer_offset_));
    }
    metadata_ = std::move(parsed).value();
    if (metadata_.has_encryption_algorithm) {
      return unsupported(fmt::format("{}: encrypted Parquet files are not supported", path_));
    }
    INFERCOST_RETURN_IF_ERROR(build_columns());
    return check_row_groups();
  }

 private:
  Status schema_error(const std::string& what) const {
    return corruption(fmt::format("{}: footer: schema: {}", path_, what));
  }

  // Walks schema[*index] and its subtree (depth-first, num_children).
  Status walk(size_t* index, int depth, const std::string& prefix, int16_t def, int16_t rep) {
    if (depth > kMaxSchemaDepth) return schema_error("nesting deeper than 64 levels");
    if (*index >= metadata_.schema.size()) return schema_error("num_children runs past the schema's end");
    const size_t self = (*index)++;
    const SchemaElement& element = metadata_.schema[self];
    std::string path = prefix.empty() ? element.name : prefix + "." + element.name;
    Repetition repetition = element.repetition.value_or(Repetition::kRequired);
    if (repetition == Repetition::kOptional) ++def;
    if (repetition == Repetition::kRepeated) {
      ++def;
      ++rep;
    }
    if (element.num_children < 0) {
      return schema_error(fmt::format("element '{}' has {} children", path, element.num_children));
    }
    if (element.num_children == 0 && element.type.has_value()) {
      ColumnDescriptor column;
      column.path = std::move(path);
      column.leaf_index = static_cast<int>(columns_.size());
      column.element = &element;
      column.max_definition_level = def;
      column.max_repetition_level = rep;
      column.flat = depth == 1 && repetition != Repetition::kRepeated;
      columns_.push_back(std::move(column));
      return Status();
    }
    if (element.num_children == 0) {
      return schema_error(fmt::format("element '{}' has neither a type nor children", path));
    }
    if (static_cast<size_t>(element.num_children) > metadata_.schema.size() - *index) {
      return schema_error(fmt::format("element '{}' claims {} children, more than the schema holds", path,
                                      element.num_children));
    }
    for (int32_t i = 0; i < element.num_children; ++i) {
      INFERCOST_RETURN_IF_ERROR(walk(index, depth + 1, path, def, rep));
    }
    return Status();
  }

  Status build_columns() {
    const auto& schema = metadata_.schema;
    if (schema.empty()) return schema_error("empty schema");
    const SchemaElement& root = schema[0];
    if (root.num_children < 0 || static_cast<size_t>(root.num_children) > schema.size() - 1) {
      return schema_error(fmt::format("root claims {} children, the schema holds {} elements",
                                      root.num_children, schema.size()));
    }
    size_t index = 1;
    for (int32_t i = 0; i < root.num_children; ++i) {
      INFERCOST_RETURN_IF_ERROR(walk(&index, 1, "", 0, 0));
    }
    if (index != schema.size()) {
      return schema_error(fmt::format("{} elements are not reachable from the root", schema.size() - index));
    }
    return Status();
  }

  Status check_row_groups() {
    if (metadata_.num_rows < 0) return corruption(fmt::format("{}: footer: num_rows is negative", path_));
    for (size_t g = 0; g < metadata_.row_groups.size(); ++g) {
      const RowGroup& group = metadata_.row_groups[g];
      if (group.num_rows < 0) {
        return corruption(fmt::format("{}: row group {}: num_rows {} is negative", path_, g, group.num_rows));
      }
      if (group.columns.size() != columns_.size()) {
        return corruption(
            fmt::format("{}: row group {}: {} column chunks, but the schema has {} leaf columns", path_, g,
                        group.columns.size(), columns_.size()));
      }
      for (size_t c = 0; c < group.columns.size(); ++c) {
        const ColumnChunk& chunk = group.columns[c];
        if (!chunk.file_path.empty() || !chunk.meta_data.has_value()) continue;  // refused when read
        const ColumnMetaData& meta = *chunk.meta_data;
        auto where = [&] { return fmt::format("{}: row group {}, column '{}'", path_, g, columns_[c].path); };
        if (meta.total_compressed_size < 0 || meta.data_page_offset < 4 || meta.num_values < 0) {
          return corruption(
              fmt::format("{}: bad column chunk metadata (data_page_offset {}, total_compressed_size "
                          "{}, num_values {})",
                          where(), meta.data_page_offset, meta.total_compressed_size, meta.num_values));
        }
        uint64_t start = static_cast<uint64_t>(meta.data_page_offset);
        if (meta.dictionary_page_offset.has_value() && *meta.dictionary_page_offset > 0 &&
            *meta.dictionary_page_offset < meta.data_page_offset) {
          start = static_cast<uint64_t>(*meta.dictionary_page_offset);
          if (start < 4)
            return corruption(
                fmt::format("{}: dictionary_page_offset {} is inside the header", where(), start));
        }
        uint64_t size = static_cast<uint64_t>(meta.total_compressed_size);
        if (start > footer_offset_ || size > footer_offset_ - start) {
          return corruption(
              fmt::format("{}: column chunk at offset {} with {} bytes runs past the data (footer at "
                          "offset {})",
                          where(), start, size, footer_offset_));
        }
      }
    }
    return Status();
  }

  std::string path_;
  int fd_ = -1;
  std::string bytes_;
  uint64_t size_ = 0;
  uint64_t footer_offset_ = 0;
  FileMetaData metadata_;
  std::vector<ColumnDescriptor> columns_;
};

}  // namespace

Result<std::shared_ptr<ParquetFile>> ParquetFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = fmt::format("{}: {}", path, std::strerror(err));
    return err == ENOENT ? not_found(message) : io_error(message);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return io_error(fmt::format("{}: {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error(fmt::format("{}: not a regular file", path));
  }
  auto file = std::make_shared<ParquetFileImpl>(path, fd, std::string(), static_cast<uint64_t>(st.st_size));
  INFERCOST_RETURN_IF_ERROR(file->load());
  return std::shared_ptr<ParquetFile>(std::move(file));
}

Result<std::shared_ptr<ParquetFile>> ParquetFile::open_memory(std::string name, std::string bytes) {
  uint64_t size = bytes.size();
  auto file = std::make_shared<ParquetFileImpl>(std::move(name), -1, std::move(bytes), size);
  INFERCOST_RETURN_IF_ERROR(file->load());
  return std::shared_ptr<ParquetFile>(std::move(file));
}

}  // namespace infercost::parquet
