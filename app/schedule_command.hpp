// ddlsim: `ddlsim schedule`, every rank's point-to-point steps of one collective call as JSON.
//
// The schedule is the one the simulator executes (Collective::rank_schedule at stepwise
// granularity, rank_phases at pipelined), so a program outside the simulator can run exactly
// the same transfers on a real network (tools/measure_collectives.py; docs/validation.md).
#pragma once

#include "app/command.hpp"
#include "app/estimate_options.hpp"
#include "models/json_reader.hpp"
#include "scenario/work_estimate.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

namespace ddlsim::sim {

struct ScheduleRequest {
  std::string algorithm;
  int workers = 2;
  std::optional<int> servers;   // unset: 1 for a parameter-server algorithm, else 0
  double bytes = 0;             // M, as the algorithm counts it (all-reduce: the vector size)
  json params = json::object(); // the algorithm's params object
  bool pipelined = false;
  /// A network for meta-algorithms ("auto") to pick by, and for the closed form in the output;
  /// both or neither.
  std::optional<double> bandwidth_Bps;
  std::optional<double> latency_s;
  /// Called with the work estimate (app/compare_estimate.hpp) before the document is built; may
  /// refuse by throwing (EstimateOptions::apply).
  std::function<void(const WorkEstimate&)> before_build;
};

/// The schedule document (docs/validation.md, "Schedules"):
///   {"algorithm", "runs" (the algorithm that runs: itself, or a meta-algorithm's pick),
///    "operation", "workers", "servers", "bytes", "granularity", "params",
///    "ranks": [rank][step][op] with op = {"kind": "send"|"recv", "peer", "bytes"},
///    "latency_steps": [rank][step] (algorithm steps a pipelined entry stands for),
///    "analytic_time_s" (only with a network)}.
/// Ranks 0..workers-1 are the workers, then the servers. Throws ConfigError naming the option
/// on bad input (an unknown algorithm, bad params, servers given to an algorithm without them,
/// workers or servers beyond the scenario's 1,000,000).
json schedule_document(const ScheduleRequest& request);

/// `ddlsim schedule`: its options, then schedule_document printed as JSON.
class ScheduleCommand final : public Command {
 public:
  explicit ScheduleCommand(CLI::App& app);
  [[nodiscard]] bool parsed() const override { return command_->parsed(); }
  [[nodiscard]] int run(const Invocation& invocation) const override;

 private:
  CLI::App* command_ = nullptr;
  CLI::Option* servers_option_ = nullptr;
  ScheduleRequest request_;
  std::string bytes_, params_ = "{}", granularity_ = "stepwise", bandwidth_, latency_;
  int servers_ = 0;
  EstimateOptions limits_;
};

}  // namespace ddlsim::sim
