#include "analysis/summary.hpp"

#include "analysis/events.hpp"
#include "analysis/scaling.hpp"

#include "models/compressor.hpp"
#include "models/logical_graph.hpp"
#include "models/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace ddlsim::analysis {
namespace {

Summary::Distribution distribution(const sim::Histogram& values) {
  Summary::Distribution d;
  d.count = static_cast<std::size_t>(values.total);
  if (values.total == 0) return d;
  double sum = 0;
  for (const auto& [v, n] : values.counts) {
    sum += static_cast<double>(v) * static_cast<double>(n);
    d.histogram[v] = static_cast<std::size_t>(n);
  }
  d.mean = sum / static_cast<double>(values.total);
  d.p95 = values.quantile(0.95);
  d.max = static_cast<double>(d.histogram.rbegin()->first);
  return d;
}

}  // namespace

Summary summarize(const sim::Scenario& scenario, const sim::SimulationResult& result) {
  Summary s;
  s.workers = scenario.platform.workers;
  const auto& totals = result.totals;
  s.iterations = totals.iterations;
  double count = 0, total = 0, compute = 0, exposed = 0, busy = 0, wait = 0, held = 0;
  double bytes = result.bytes_sent_by_servers;
  double messages = static_cast<double>(result.messages_sent_by_servers);
  // Samples one worker processes per iteration (crossbow: k learners x batch; SyncModel::worker_workload).
  const double batch = static_cast<double>(scenario.workload.worker.samples);
  double per_worker_rate = 0;  // sum over workers of iterations per second
  // A rate over zero time (a workload without compute or communication) has no value: NaN, "null" in JSON.
  constexpr double UNDEFINED = std::numeric_limits<double>::quiet_NaN();
  for (const auto& w : totals.workers) {
    count += static_cast<double>(w.iterations);
    total += w.duration_s;
    compute += w.compute_s;
    exposed += w.exposed_comm_s;
    busy += w.comm_busy_s;
    wait += w.straggler_wait_s;
    held += w.staleness_wait_s;
    per_worker_rate += w.duration_s > 0 ? static_cast<double>(w.iterations) / w.duration_s : UNDEFINED;
  }
  for (const auto& w : result.workers) {
    bytes += w.bytes_sent;
    messages += static_cast<double>(w.messages_sent);
  }
  s.worker_iteration_time_s = count > 0 ? total / count : 0;
  if (scenario.training.sync_model->traits().synchronous && totals.iterations > 0) {
    // A synchronous model advances by global steps: iteration k is done when its last worker is.
    s.iteration_time_s = (totals.global_end_s - totals.global_start_s) / totals.iterations;
    s.iteration_time_median_s = totals.global_steps.quantile(0.5);
    s.iteration_time_p95_s = totals.global_steps.quantile(0.95);
  } else {
    s.iteration_time_s = s.worker_iteration_time_s;
    s.iteration_time_median_s = totals.durations.quantile(0.5);
    s.iteration_time_p95_s = totals.durations.quantile(0.95);
  }
  s.compute_time_s = count > 0 ? compute / count : 0;
  s.exposed_comm_time_s = count > 0 ? exposed / count : 0;
  s.comm_time_s = count > 0 ? busy / count : 0;
  s.overlap_fraction = busy > 0 ? std::clamp(1.0 - exposed / busy, 0.0, 1.0) : 0.0;
  s.straggler_wait_s = count > 0 ? wait / count : 0;
  s.staleness_wait_s = count > 0 ? held / count : 0;
  if (scenario.training.sync_model->traits().synchronous) {
    s.updates_per_s = s.iteration_time_s > 0 ? 1.0 / s.iteration_time_s : UNDEFINED;
    s.throughput_samples_per_s = s.updates_per_s * s.workers * batch;
  } else {
    s.updates_per_s = per_worker_rate;
    s.throughput_samples_per_s = per_worker_rate * batch;
  }
  // Against what the same workers would do alone (analysis/scaling.hpp, docs/outputs.md):
  // efficiency = throughput / sum of their throughputs alone; speedup = workers x efficiency.
  const auto baseline = scaling_baseline(scenario);
  s.single_worker_iteration_time_s = baseline.single_worker_iteration_s;
  s.workers_alone_throughput = baseline.workers_alone_throughput > 0 ? baseline.workers_alone_throughput : UNDEFINED;
  s.scaling_efficiency = s.throughput_samples_per_s / s.workers_alone_throughput;
  s.speedup = s.workers * s.scaling_efficiency;
  // A stopped run also counts the traffic of the iterations it was in when it stopped.
  s.comm_bytes_per_iteration = s.iterations > 0 ? bytes / s.iterations : 0;
  s.messages_per_iteration = s.iterations > 0 ? messages / s.iterations : 0;
  s.makespan_s = result.makespan_s;
  s.staleness = distribution(result.staleness);
  s.neighbour_staleness = distribution(result.neighbour_staleness);
  if (scenario.training.graph) {
    const auto gap = models::spectral_gap(*scenario.training.graph, scenario.workload.iterations);
    s.spectral_gap = gap.value;
    s.spectral_gap_basis = gap.basis;
  }
  return s;
}

}  // namespace ddlsim::analysis
