// Each subcommand registers itself on the root app; main() dispatches.
// A command's callback throws CliExit to set the process exit status:
// 0 ok, 2 bad usage, 3 bad data, 4 device error, 1 anything else.
#pragma once

#include <CLI/CLI.hpp>

#include "infercost/core/status.h"

namespace infercost::cli {

struct CliExit {
  int code;
};

// Prints "infercost: error: <status>" on stderr and throws CliExit with the
// exit code for the status (see above).
[[noreturn]] void fail(const Status& status);
int exit_code_for(const Status& status);

void register_run(CLI::App& app);
void register_tokenize(CLI::App& app);
void register_model(CLI::App& app);
void register_datagen(CLI::App& app);
void register_demo(CLI::App& app);
void register_cat(CLI::App& app);
void register_inspect(CLI::App& app);
void register_prices(CLI::App& app);
void register_bench(CLI::App& app);
void register_report(CLI::App& app);
void register_plan(CLI::App& app);
void register_devices(CLI::App& app);

}  // namespace infercost::cli
