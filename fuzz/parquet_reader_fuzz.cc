// libFuzzer entry: the input is a whole Parquet file. Opens it from memory,
// describes it and reads every flat column to the end (bounded), rendering
// each value as JSON; any outcome but a crash, a sanitizer report, a hang or
// a giant allocation is fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "parquet/reader.h"

namespace {

// A forged row count can ask for billions of rows from a few bytes; reading
// them is correct but useless for fuzzing.
constexpr int64_t kMaxRowsPerColumn = 200'000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace infercost::parquet;
  auto file =
      ParquetFile::open_memory("fuzz.parquet", std::string(reinterpret_cast<const char*>(data), size));
  if (!file.ok()) return 0;
  std::string text = describe_file(**file);
  for (const ColumnDescriptor& column : (*file)->columns()) {
    (void)(*file)->find_flat_column(column.path);
    if (!column.flat) continue;
    auto reader = ColumnReader::open(*file, column.leaf_index);
    if (!reader.ok()) continue;
    ColumnValues values;
    for (;;) {
      values.clear();
      auto n = (*reader)->next(1000, values);
      if (!n.ok() || *n == 0) break;
      text.clear();
      for (size_t i = 0; i < values.size(); ++i) append_value_json(column, values, i, text);
      if ((*reader)->rows_read() >= kMaxRowsPerColumn) break;
    }
  }
  return 0;
}
