// ddlsim: the work-estimate options of the commands other than `run` (collectives, schedule):
// --estimate, --max-time, --max-memory and --force, as `ddlsim run` has them (app/run_command.hpp;
// docs/reliability.md, "Work estimate").
#pragma once

#include "scenario/work_estimate.hpp"

#include <CLI/CLI.hpp>
#include <string>

namespace ddlsim::sim {

/// Thrown by EstimateOptions::apply under --estimate, once the estimate is printed: the command
/// ends there with exit code 0.
struct EstimateOnly {};

class EstimateOptions {
 public:
  /// Adds the four options to `command`; `what` names what is estimated ("comparisons").
  void add_to(CLI::App* command, const std::string& what);
  /// The machine's memory (or --max-memory) and one hour (or --max-time); these commands write no
  /// files, so no disk limit.
  [[nodiscard]] MachineLimits limits() const;
  /// --estimate: prints the estimate as JSON and throws EstimateOnly; else, unless --force, throws
  /// check_work's ConfigError past the limits.
  void apply(const WorkEstimate& estimate) const;

 private:
  std::string max_time_, max_memory_;
  bool estimate_ = false, force_ = false;
};

}  // namespace ddlsim::sim
