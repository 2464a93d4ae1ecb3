// ddlsim: metrics from a simulation's records, and the files that hold them.
//
// Every output file and field is documented in docs/outputs.md (units in names).
#pragma once

#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace ddlsim::analysis {

struct Summary {
  int workers = 0;
  int iterations = 0;
  double iteration_time_s = 0;  // mean over workers and iterations
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
  double speedup = 0;
  double scaling_efficiency = 0;
  double comm_bytes_per_iteration = 0;  // bytes sent by all ranks per iteration
  double messages_per_iteration = 0;
  double makespan_s = 0;
  std::size_t staleness_count = 0;
  double staleness_mean = 0;
  double staleness_p95 = 0;
  double staleness_max = 0;
};

Summary summarize(const sim::Scenario& scenario, const sim::SimulationResult& result);
nlohmann::json to_json(const sim::Scenario& scenario, const sim::SimulationResult& result, const Summary& summary);

/// Writes summary.json, iterations.csv, links.csv and (if enabled) timeline.json
/// into `dir`: each file is written under a temporary name and renamed.
void write_outputs(const std::string& dir, const sim::Scenario& scenario, const sim::SimulationResult& result,
                   const Summary& summary);

/// The short table printed by `ddlsim run`.
std::string format_table(const sim::Scenario& scenario, const sim::SimulationResult& result, const Summary& summary);

}  // namespace ddlsim::analysis
