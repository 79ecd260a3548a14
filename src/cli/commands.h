// Each subcommand registers itself on the root app; main() dispatches.
// A command's callback throws CliExit to set the process exit status:
// 0 ok, 2 bad usage, 3 bad data, 4 device error, 1 anything else.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "infercost/core/status.h"

namespace infercost::cli {

struct CliExit {
  int code;
};

// Prints "infercost: error: <status>" on stderr and throws CliExit with the
// exit code for the status (see above).
[[noreturn]] void fail(const Status& status);
int exit_code_for(const Status& status);

// A subcommand and the flags its options fill (kept alive by its callback).
template <typename Flags>
struct Command {
  CLI::App* cmd;
  std::shared_ptr<Flags> flags;
};

// Adds the subcommand `name` to `app`; when it is chosen, `execute` runs on
// its flags: add_command<RunFlags>(app, "run", "Classify ...", execute).
template <typename Flags, typename Execute>
Command<Flags> add_command_running(CLI::App& app, const std::string& name, const std::string& description,
                                   Execute execute) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->callback([flags, execute] { execute(*flags); });
  return {cmd, flags};
}
template <typename Flags>
Command<Flags> add_command(CLI::App& app, const std::string& name, const std::string& description,
                           void (*execute)(Flags&)) {
  return add_command_running<Flags>(app, name, description, execute);
}
template <typename Flags>
Command<Flags> add_command(CLI::App& app, const std::string& name, const std::string& description,
                           void (*execute)(const Flags&)) {
  return add_command_running<Flags>(app, name, description, execute);
}

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
void register_precision_check(CLI::App& app);

}  // namespace infercost::cli
