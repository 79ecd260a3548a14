#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "infercost/core/file.h"
#include "infercost/core/version.h"

namespace infercost::cli {

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kUnsupported: return 2;  // also a model or precision this build does not run
    case StatusCode::kCorruption: return 3;
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnavailable:
    case StatusCode::kNonFinite: return 4;
    default: return 1;
  }
}

void fail(const Status& status) {
  std::fprintf(stderr, "infercost: error: %s\n", status.to_string().c_str());
  throw CliExit{exit_code_for(status)};
}

}  // namespace infercost::cli

int main(int argc, char** argv) {
  using namespace infercost::cli;
  CLI::App app{"infercost: batch inference and cost-to-solution benchmarks for transformer text classifiers"};
  infercost::install_temporary_cleanup_on_signals();
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("infercost ") + infercost::kVersion);
  register_run(app);
  register_tokenize(app);
  register_model(app);
  register_datagen(app);
  register_demo(app);
  register_cat(app);
  register_inspect(app);
  register_prices(app);
  register_bench(app);
  register_report(app);
  register_plan(app);
  register_devices(app);
  register_precision_check(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CliExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infercost: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
