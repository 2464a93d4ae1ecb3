// ddlsim: what the same workers would do alone -- the baselines of speedup and scaling
// efficiency (docs/outputs.md, "Speedup and scaling efficiency") -- and the compute-side
// settings summary.json records with them.
#pragma once

#include "scenario/scenario.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace ddlsim::analysis {

/// The mean of the per-iteration compute noise multiplier (training.stragglers.distribution):
/// 1 without noise and for lognormal (exp(sigma z - sigma^2/2)); Phi(1/sigma) + sigma phi(1/sigma)
/// for normal (max(0, 1 + sigma z), the mean of a normal clamped at 0); 1 + sigma for exponential.
double noise_mean(const sim::StragglerSpec& stragglers);

struct ScalingBaseline {
  /// One worker of speed factor 1 alone, without communication (WorkerWorkload::single_worker_iteration_s,
  /// compute_scale applied): summary.json's single_worker_iteration_time_s.
  double single_worker_iteration_s = 0;
  /// Sum over workers i of samples / (f_i x noise_mean x single_worker_iteration_s): what the
  /// workers would process per second, each alone (f_i: its static speed factor).
  double workers_alone_throughput = 0;
};

/// The baselines of `scenario`; workers_alone_throughput is 0 when the single-worker iteration takes no time.
ScalingBaseline scaling_baseline(const sim::Scenario& scenario);

/// The compute-side settings for summary.json: compute_scale, unattributed and framework overhead
/// per iteration, bucket copy bandwidth and time (docs/outputs.md).
nlohmann::json compute_json(const sim::Scenario& scenario);

/// One line for the printed table naming the compute-side settings that differ from their defaults
/// ("compute_scale 2, unattributed 1 ms, ..."); empty when none does.
std::string compute_line(const sim::Scenario& scenario);

}  // namespace ddlsim::analysis
