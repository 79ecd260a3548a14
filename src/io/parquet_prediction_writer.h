// The Parquet PredictionWriter (create_prediction_writer dispatches here):
// columns text (STRING, optional, unless dropped), one FLOAT per label
// (optional: null for null rows), label (STRING, dictionary-encoded) and,
// multi-label, labels (STRING).
#pragma once

#include <memory>
#include <string>

#include "io/prediction_writer.h"

namespace infercost::io {

Result<std::unique_ptr<PredictionWriter>> create_parquet_prediction_writer(const std::string& path,
                                                                           const PredictionColumns& columns,
                                                                           const ResumableOutput* resumable);

}  // namespace infercost::io
