// ddlsim: `ddlsim calibrate MEASUREMENTS`, the command-line face of analysis/calibration.hpp:
// reads measured collective timings (the project's CSV or nccl-tests output), fits the network
// and software parameters, prints the fit and its errors, and with --out writes the snippet a
// scenario loads as "network": {"calibration": FILE} (docs/validation.md, "Calibration").
#pragma once

#include "app/command.hpp"

#include "analysis/calibration.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ddlsim::sim {

class CalibrateCommand final : public Command {
 public:
  /// Adds the subcommand and its options to `app`.
  explicit CalibrateCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  /// Runs it; `argv` (the whole command line) is recorded in the snippet. Throws ConfigError on bad input.
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  /// Refuses an --out that cannot take the snippet (empty, a directory, the measurements file, not a
  /// regular file, in a folder that cannot be written), before anything is read or fitted.
  void check_out() const;

  CLI::App* command_ = nullptr;
  CLI::Option* out_option_ = nullptr;
  std::string file_, op_, software_, bandwidth_, latency_, out_;
  std::vector<std::string> fit_, holdout_, select_, library_;
  bool rows_ = false;
  int folds_ = 5;
  bool force_ = false;
};

}  // namespace ddlsim::sim
