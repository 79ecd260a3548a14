// Each command adds its options to the subcommand main.cc makes for it; main() dispatches.
// A command's callback throws CliExit to set the process exit status:
// 0 ok, 2 bad usage, 3 bad data, 4 device error, 1 anything else.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "infercost/status.h"

namespace infercost::cli {

struct CliExit {
  int code;
};

// Prints "infercost: error: <status>" on stderr and throws CliExit with the
// exit code for the status (see above).
[[noreturn]] void fail(const Status& status);
int exit_code_for(const Status& status);

// Makes the flags of command `cmd`, kept alive by its callback: when the
// command is chosen, `execute` runs on them. A command's define_* function
// starts so: auto flags = bind_flags<RunFlags>(*cmd, execute_run).
template <typename Flags, typename Execute>
std::shared_ptr<Flags> bind_flags(CLI::App& cmd, Execute execute) {
  auto flags = std::make_shared<Flags>();
  cmd.callback([flags, execute] { execute(*flags); });
  return flags;
}

// Each command's options, added to the subcommand main.cc made for it
// (main.cc's table names the commands and says what each does).
void define_run(CLI::App* cmd);
void define_embed(CLI::App* cmd);
void define_tokenize(CLI::App* cmd);
void define_model(CLI::App* cmd);
void define_datagen(CLI::App* cmd);
void define_demo(CLI::App* cmd);
void define_cat(CLI::App* cmd);
void define_inspect(CLI::App* cmd);
void define_prices(CLI::App* cmd);
void define_bench(CLI::App* cmd);
void define_report(CLI::App* cmd);
void define_plan(CLI::App* cmd);
void define_devices(CLI::App* cmd);
void define_precision_check(CLI::App* cmd);

}  // namespace infercost::cli
