// ddlsim: one simulation run on SimGrid (one engine per process).
//
// Builds the engine with the scenario's network model, emits the platform,
// starts one actor per worker running the sync model's worker loop against
// SimRuntime (sim/simulation.cpp), and collects per-worker records.
#pragma once

#include "sim/scenario.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct IterationRecord {
  double start_s = 0;
  double end_s = 0;
  double compute_s = 0;        // time in compute()
  double communication_s = 0;  // time blocked in collectives (exposed communication)
};

struct WorkerRecord {
  std::vector<IterationRecord> iterations;
  double bytes_sent = 0;
  std::int64_t messages_sent = 0;
};

struct SimulationResult {
  std::vector<WorkerRecord> workers;
  double bytes_sent_by_servers = 0;
  std::int64_t messages_sent_by_servers = 0;
  double makespan_s = 0;
  double alpha_s = 0;           // the alpha the analytic mode used
  double beta_s_per_byte = 0;   // the beta the analytic mode used
};

/// Runs the scenario. `engine_args` are SimGrid flags (--cfg=..., --log=...).
/// Throws std::runtime_error on a simulated deadlock.
SimulationResult simulate(const Scenario& scenario, const std::vector<std::string>& engine_args);

/// The alpha (worst host-to-host path latency from worker 0) and beta (inverse
/// of the slowest link's bandwidth) used by analytic fidelity.
models::AlphaBeta analytic_alpha_beta(const platforms::Topology& topology);

}  // namespace ddlsim::sim
