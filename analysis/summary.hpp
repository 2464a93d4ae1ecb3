// ddlsim: metrics from a simulation's records, and the files that hold them.
//
// Every output file and field is documented in docs/outputs.md (units in names).
#pragma once

#include "scenario/scenario.hpp"
#include "engine/simulation.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddlsim::analysis {

struct Summary {
  int workers = 0;
  int iterations = 0;           // completed by every worker (fewer than the scenario's in a stopped run)
  /// Synchronous models: the mean global step (the time between consecutive updates of the model,
  /// IterationTotals::global_steps); others: the mean over workers and iterations.
  double iteration_time_s = 0;
  double worker_iteration_time_s = 0;  // the mean over workers and iterations (every model)
  double iteration_time_median_s = 0;
  double iteration_time_p95_s = 0;
  double compute_time_s = 0;       // mean per iteration
  double exposed_comm_time_s = 0;  // mean per iteration
  double comm_time_s = 0;          // mean communication-stream busy time per iteration
  double overlap_fraction = 0;     // 1 - exposed / comm (0 without communication)
  double straggler_wait_s = 0;     // mean per iteration
  double throughput_samples_per_s = 0;
  double updates_per_s = 0;
  double single_worker_iteration_time_s = 0;
  double speedup = 0;                   // workers x scaling_efficiency
  double scaling_efficiency = 0;        // throughput / workers_alone_throughput
  double workers_alone_throughput = 0;  // samples/s: sum over workers of each one's throughput alone
  double comm_bytes_per_iteration = 0;  // bytes sent by all ranks per iteration
  double messages_per_iteration = 0;
  double makespan_s = 0;
  double staleness_wait_s = 0;     // mean per iteration: pulls held by a staleness bound (ssp)
  struct Distribution {            // of non-negative integers (staleness)
    std::size_t count = 0;
    double mean = 0, p95 = 0, max = 0;
    std::map<std::int64_t, std::size_t> histogram;  // value -> occurrences
  };
  Distribution staleness;           // applied gradients, in updates (asp, ssp)
  Distribution neighbour_staleness; // averaged neighbour models, in iterations (asynchronous gossip)
  std::optional<double> spectral_gap;  // 1 - |lambda_2| of the logical graph's (mean) mixing matrix
  std::string spectral_gap_basis;
};

Summary summarize(const sim::Scenario& scenario, const sim::SimulationResult& result);
nlohmann::json to_json(const sim::Scenario& scenario, const sim::SimulationResult& result, const Summary& summary);

/// The short table printed by `ddlsim run`.
std::string format_table(const sim::Scenario& scenario, const sim::SimulationResult& result, const Summary& summary);

}  // namespace ddlsim::analysis
