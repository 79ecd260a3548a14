// Prediction outputs: one row per classified input row, in input order, with
// the text (unless dropped), one probability column per label (named from
// id2label, lowercased) and the winning label.
//
// Files are written to a temporary and renamed by close(); a writer destroyed
// without close() leaves nothing behind. "-" writes JSON lines to stdout.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/core/status.h"

namespace infercost::io {

enum class OutputFormat { kJsonl, kCsv };

// From --output-format or the path's extension (.jsonl/.json/.ndjson, .csv).
Result<OutputFormat> output_format_for(const std::string& path, const std::string& format_flag);

struct PredictionColumns {
  bool keep_text = true;
  std::vector<std::string> labels;  // as in id2label; column names are lowercased
};

class PredictionWriter {
 public:
  virtual ~PredictionWriter() = default;
  // probabilities: [texts.size(), labels.size()] row-major.
  virtual Status write(const std::vector<std::string>& texts, const std::vector<float>& probabilities) = 0;
  virtual Status close() = 0;
};

Result<std::unique_ptr<PredictionWriter>> create_prediction_writer(const std::string& path,
                                                                   OutputFormat format,
                                                                   const PredictionColumns& columns);

// RFC 4180 field: quoted when it holds a comma, quote, CR or LF.
void append_csv_field(std::string& out, std::string_view text);

}  // namespace infercost::io
