// JSON lines input: one JSON object per line, the text in one field (a JSON
// null there is a null row). The file is memory-mapped and read line by line,
// so memory does not grow with the file. Blank lines are ignored. Not
// thread-safe. open_row_source() with InputFormat::kJsonl returns one.
#pragma once

#include <memory>
#include <string>

#include "infercost/core/status.h"
#include "infercost/io/row_source.h"
#include "infercost/io/rows.h"

namespace infercost::io {

class JsonlReader : public RowSource {
 public:
  // Errors: kNotFound / kIOError naming the path; kNotFound naming the first
  // object's keys when it lacks the column.
  static Result<std::unique_ptr<JsonlReader>> open(const std::string& path, const SourceOptions& options);
  static Result<std::unique_ptr<JsonlReader>> open(const std::string& path, const std::string& column,
                                                   OnBadRow on_bad_row);
};

}  // namespace infercost::io
