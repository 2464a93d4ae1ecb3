#include "app/estimate_options.hpp"

#include "models/units.hpp"
#include "app/run_command.hpp"

#include <fmt/format.h>

namespace ddlsim::sim {

void EstimateOptions::add_to(CLI::App* command, const std::string& what) {
  command->add_flag("--estimate", estimate_,
                    "print the work estimate as JSON (and whether it would be refused) instead of running");
  command->add_option("--max-time", max_time_,
                      fmt::format("refuse {} estimated to take longer than this wall time (default 3600s)", what));
  command->add_option("--max-memory", max_memory_,
                      fmt::format("refuse {} estimated to need more memory than this (default: what the machine has "
                                  "available): 8GiB, 500MB, ...",
                                  what));
  command->add_flag("--force", force_, "run even when the work estimate exceeds the memory available or --max-time");
}

MachineLimits limits_with_options(const std::string& output_dir, const std::string& max_time,
                                  const std::string& max_memory) {
  MachineLimits limits = machine_limits(output_dir);
  if (!max_time.empty()) {
    limits.wall_s = units::cli_time_s(max_time, "--max-time");
    limits.wall_given = true;
  }
  if (!max_memory.empty()) {
    limits.memory_bytes = units::cli_bytes(max_memory, "--max-memory");
    limits.memory_given = true;
  }
  return limits;
}

MachineLimits EstimateOptions::limits() const {
  MachineLimits limits = limits_with_options(".", max_time_, max_memory_);
  limits.disk_bytes = -1;  // these commands write no files
  return limits;
}

void EstimateOptions::apply(const WorkEstimate& estimate) const {
  const MachineLimits l = limits();
  if (estimate_) {
    fmt::print("{}\n", estimate_json(estimate, l).dump(2));
    throw EstimateOnly{};
  }
  if (!force_) check_work(estimate, l);
}

}  // namespace ddlsim::sim
