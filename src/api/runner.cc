#include "infercost/runner.h"

#include "api/spelled.h"
#include "pipeline/runner.h"

namespace infercost {

Result<RunMetrics> run_files(const RunOptions& options) {
  return api::spelled(pipeline::run_files(options));
}

}  // namespace infercost
