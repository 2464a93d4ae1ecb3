// ddlsim: `ddlsim run SCENARIO`: checks the output directory, estimates the work (refusing what
// cannot finish, unless --force), simulates with progress on stderr, streams the per-iteration
// outputs, and puts every file in place at the end. SIGINT and SIGTERM stop it cleanly after
// the current iteration (engine/run_control.hpp): the outputs of the completed iterations are
// written, summary.json marked incomplete, and the exit code is 128 + the signal.
#pragma once

#include "app/command.hpp"

#include "scenario/work_estimate.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim {

class RunCommand final : public Command {
 public:
  /// Adds the subcommand and its options to `app`.
  explicit RunCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  /// Runs it with SimGrid's flags `engine_args`; returns the exit code. Throws ConfigError on bad input.
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  CLI::App* command_ = nullptr;
  CLI::Option* progress_option_ = nullptr;
  CLI::Option* out_option_ = nullptr;
  std::string scenario_file_, out_dir_, progress_ = "auto", max_time_, max_memory_;
  std::vector<std::string> overrides_;
  bool quiet_ = false;
  bool force_ = false;
  bool estimate_ = false;
  bool every_worker_ = false;
};

/// --estimate: every term of `estimate`, the limits, and the refusal check_work would make (or null).
nlohmann::json estimate_json(const WorkEstimate& estimate, const MachineLimits& limits);

/// Refuses an --out (or --dot) given as an empty string, saying what happens `without` it: it
/// would be taken silently as not given otherwise.
void check_out_option(const CLI::Option* option, const std::string& value, const std::string& without);

}  // namespace ddlsim::sim
