#include "scenario/collective_group.hpp"

#include "models/network_cost.hpp"
#include "platforms/network_paths.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace ddlsim::sim {

models::CollectiveGroup make_collective_group(const platforms::Topology& topo, bool pipelined,
                                              platforms::Routing routing, std::uint64_t seed,
                                              std::shared_ptr<const models::SoftwareCost> software) {
  models::CollectiveGroup group{static_cast<int>(topo.workers.size()), static_cast<int>(topo.servers.size()), nullptr};
  if (auto nb = platforms::rank_neighbours(topo); !nb.empty())
    group.neighbours = std::make_shared<const std::vector<std::vector<int>>>(std::move(nb));
  group.ranks_per_node = topo.gpus_per_node;
  if (!platforms::is_uniform_star(topo))
    group.network_cost = std::make_shared<const models::ContentionCost>(
        platforms::routed_paths(topo, routing, seed), models::ContentionLimits{},
        pipelined ? models::ScheduleForm::PIPELINED : models::ScheduleForm::STEPWISE, std::move(software));
  return group;
}

std::optional<models::LinkClass> intra_node_link_class(const platforms::Topology& topo) {
  if (topo.gpus_per_node <= 0) return std::nullopt;
  const auto& g = topo.graph;
  double worst_latency = 0, slowest = std::numeric_limits<double>::infinity();
  for (auto v : topo.workers)
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      worst_latency = std::max(worst_latency, g[e].latency_s);
      slowest = std::min(slowest, g[e].bandwidth_Bps);
    }
  return models::LinkClass{2 * worst_latency, std::isfinite(slowest) ? 1.0 / slowest : 0.0};
}

std::vector<CollectiveChoiceRecord> collective_choices(const models::Collective& collective,
                                                       const models::CollectiveGroup& group,
                                                       const models::AlphaBeta& ab,
                                                       const std::vector<models::Bucket>& buckets) {
  std::vector<double> sizes;
  for (const auto& b : buckets) sizes.push_back(b.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<CollectiveChoiceRecord> out;
  for (double bytes : sizes)
    if (auto c = models::choice(collective, group, bytes, ab))
      out.push_back(CollectiveChoiceRecord{bytes, c->algorithm, c->estimated_s, c->basis});
  return out;
}

}  // namespace ddlsim::sim
