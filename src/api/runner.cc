#include "infercost/runner.h"

#include "api/spelled.h"
#include "run/runner.h"

namespace infercost {

Result<RunMetrics> run_files(const RunOptions& options) {
  return api::spelled(run::run_files(options));
}

}  // namespace infercost
