// ddlsim: which engine runs a scenario, and which workers it simulates (scenario/run_plan.hpp).
#include "scenario/run_plan.hpp"

#include "models/collective.hpp"
#include "models/sync_model.hpp"

#include <algorithm>
#include <map>

namespace ddlsim::sim::detail {

std::string fiber_lane_exclusion(const Scenario& scenario) {
  const auto& training = scenario.training;
  const auto& sync = *training.sync_model;
  if (scenario.network.fidelity != Fidelity::ANALYTIC) return "not analytic fidelity";
  if (sync.traits().uses_servers || scenario.platform.parameter_servers > 0) return "parameter servers";
  if (training.graph) return "a logical graph (point-to-point flows)";
  if (sync.traits().uses_subgroup_collectives) return "subgroup all-reduces (flows)";
  if (!sync.traits().uses_collective) return "no gradient all-reduce";
  if (training.collective_algorithm->uses_servers()) return "a collective with servers";
  if (training.adaptive.enabled) return "adaptive compression";
  return {};
}

std::string replication_exclusion(const Scenario& scenario) {
  if (auto why = fiber_lane_exclusion(scenario); !why.empty()) return why;
  if (!scenario.training.sync_model->traits().rank_symmetric) return "the sync model's workers act by rank";
  const auto& st = scenario.training.stragglers;
  if (st.distribution != NoiseDistribution::NONE && st.sigma > 0) return "compute-time noise";
  return {};
}

WorkerPartition partition_workers(int workers, const std::vector<double>& speeds, int shown) {
  WorkerPartition p;
  const auto n = static_cast<std::size_t>(workers);
  std::vector<bool> runs(n, false);
  std::vector<int> representative(n, 0);  // per rank: the lowest rank of its speed
  std::map<double, int> first;            // speed -> the lowest rank that has it
  for (int r = 0; r < workers; ++r) {
    const double speed = speeds.empty() ? 1.0 : speeds[static_cast<std::size_t>(r)];
    const auto [at, fresh] = first.emplace(speed, r);
    representative[static_cast<std::size_t>(r)] = at->second;
    if (fresh || r < shown) runs[static_cast<std::size_t>(r)] = true;
  }
  std::vector<int> slot_of_rank(n, -1);
  for (int r = 0; r < workers; ++r)
    if (runs[static_cast<std::size_t>(r)]) {
      slot_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(p.simulated.size());
      p.simulated.push_back(r);
    }
  p.slot_of.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    p.slot_of[r] = runs[r] ? slot_of_rank[r] : slot_of_rank[static_cast<std::size_t>(representative[r])];
  return p;
}

std::optional<WorkerPartition> worker_partition(const Scenario& scenario) {
  if (!replication_exclusion(scenario).empty()) return std::nullopt;
  const int workers = scenario.platform.workers;
  const int shown = scenario.output.timeline ? std::min(scenario.output.timeline_workers, workers) : 0;
  auto p = partition_workers(workers, scenario.training.stragglers.speed_factors, shown);
  if (static_cast<int>(p.simulated.size()) == workers) return std::nullopt;
  return p;
}

}  // namespace ddlsim::sim::detail
