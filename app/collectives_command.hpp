// ddlsim: `ddlsim collectives`, the command-line face of engine/collective_compare.hpp: every
// collective algorithm's closed form and, at flow fidelity, its simulated time for one N, M,
// bandwidth, latency and topology. Its options are checked as a scenario's values are (the
// loader's ranges and names), the SimGrid actors it needs are counted before anything is built,
// and the work is estimated (app/compare_estimate.hpp) and refused past the limits of `ddlsim run`
// (--max-time, --max-memory, --force, --estimate; docs/reliability.md, "Work estimate").
#pragma once

#include "app/command.hpp"

#include "app/estimate_options.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::sim {

class CollectivesCommand final : public Command {
 public:
  /// Adds the subcommand and its options to `app`.
  explicit CollectivesCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  /// Runs it with SimGrid's flags `engine_args`; returns the exit code. Throws ConfigError on bad input.
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  CLI::App* command_ = nullptr;
  CLI::Option *packet_opt_ = nullptr, *warmup_opt_ = nullptr, *servers_opt_ = nullptr, *server_bw_opt_ = nullptr, *latency_factor_opt_ = nullptr,
              *bandwidth_factor_opt_ = nullptr, *call_cost_opt_ = nullptr, *routing_opt_ = nullptr,
              *software_opt_ = nullptr;
  std::int64_t workers_ = 8, servers_ = 0, seed_ = 1, warmup_ = 0;
  double latency_factor_ = 1.0, bandwidth_factor_ = 1.0;
  std::string bytes_ = "100MiB", bandwidth_ = "25Gbps", latency_ = "1us", topology_ = "star", fidelity_ = "flow", packet_ = "{}",
              granularity_ = "stepwise", solver_ = "auto", model_ = "ideal", topology_params_ = "{}", params_ = "{}", server_bandwidth_,
              routing_, call_cost_ = "10us", software_;
  std::vector<std::string> algorithms_;
  bool csv_ = false;
  EstimateOptions limits_;
};

}  // namespace ddlsim::sim
