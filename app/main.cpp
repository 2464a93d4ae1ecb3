// ddlsim: the command-line interface. Wiring only: one Command per subcommand (app/command.hpp)
// adds its options; the one the command line names runs.
//
// Exit codes: 0 success, 2 bad input (nothing written), 1 internal error, 130 and 143 on
// SIGINT and SIGTERM (engine/run_control.hpp).
// SimGrid's own --cfg=... and --log=... flags pass through to the engine.
#include "app/calibrate_command.hpp"
#include "app/collectives_command.hpp"
#include "app/command.hpp"
#include "app/list_command.hpp"
#include "app/run_command.hpp"
#include "app/scenario_commands.hpp"
#include "app/schedule_command.hpp"
#include "engine/run_control.hpp"
#include "models/error.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

constexpr int EXIT_BAD_INPUT = 2;
constexpr int EXIT_INTERNAL = 1;

int run_cli(int argc, char** argv) {
  // Split SimGrid's flags from ours.
  ddlsim::sim::Invocation invocation;
  std::vector<char*> ours;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && (a.rfind("--cfg=", 0) == 0 || a.rfind("--log=", 0) == 0)) invocation.engine_args.push_back(a);
    else ours.push_back(argv[i]);
  }
  invocation.argv.assign(ours.begin(), ours.end());

  CLI::App app{"ddlsim: discrete-event simulator of distributed deep-learning training"};
  app.set_version_flag("--version", std::string("ddlsim ") + DDLSIM_VERSION);
  app.require_subcommand(1);
  app.footer("SimGrid flags (--cfg=name:value, --log=category.thres:level) are passed to the engine.\n"
             "Exit codes: 0 success, 2 bad input, 1 internal error, 130 on SIGINT, 143 on SIGTERM.");

  // One of each, in the order `ddlsim --help` lists them.
  std::vector<std::unique_ptr<ddlsim::sim::Command>> commands;
  commands.push_back(std::make_unique<ddlsim::sim::RunCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::ValidateCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::ListCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::PlatformCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::CollectivesCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::ScheduleCommand>(app));
  commands.push_back(std::make_unique<ddlsim::sim::CalibrateCommand>(app));

  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: CLI11 prints them
    // Any other option error is bad input: one line, like every other (docs/reliability.md).
    std::string where = "ddlsim";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    const ddlsim::ConfigError error(where, std::string(e.what()) + " (`" + where + " --help` lists the options)");
    std::cerr << "ddlsim: error: " << error.what() << "\n";
    return EXIT_BAD_INPUT;
  }
  for (const auto& command : commands)
    if (command->parsed()) return command->run(invocation);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT and SIGTERM exit at once with 128 + the signal; `run` stops cleanly instead.
  ddlsim::sim::install_stop_handlers(ddlsim::sim::StopMode::EXIT);
  try {
    const int code = run_cli(argc, argv);
    if (ddlsim::sim::static_cleanup_skipped()) {  // a run stopped within an iteration (engine/run_control.hpp)
      std::fflush(nullptr);
      std::_Exit(code);
    }
    return code;
  } catch (const ddlsim::ConfigError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return EXIT_BAD_INPUT;
  } catch (const std::exception& e) {
    std::cerr << "ddlsim: internal error: " << e.what() << "\n";
    return EXIT_INTERNAL;
  }
}
