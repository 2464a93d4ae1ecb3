#include "engine/analytic_links.hpp"

#include "platforms/network_paths.hpp"

#include <boost/graph/graph_traits.hpp>

namespace ddlsim::sim {

AnalyticLinks::AnalyticLinks(const platforms::Topology& topo, platforms::Routing routing, std::uint64_t seed,
                             double efficiency)
    : paths_(platforms::routed_paths(topo, routing, seed)),
      efficiency_(efficiency),
      bytes_(2 * boost::num_edges(topo.graph), 0.0) {}

const std::vector<int>& AnalyticLinks::route(int a, int b) {
  const auto key = static_cast<std::int64_t>(a) * (MAX_RANKS + 1) + b;
  auto it = routes_.find(key);
  if (it == routes_.end()) it = routes_.emplace(key, paths_.route(a, b)).first;
  return it->second;
}

void AnalyticLinks::add(const models::Collective& algorithm, const models::CollectiveGroup& group, double bytes,
                        int root) {
  const auto key = std::make_tuple(&algorithm, bytes, root);
  auto memo = memo_.find(key);
  if (memo == memo_.end()) {
    std::map<int, double> per_link;
    const int w = group.workers;
    // Schedule rank me runs on rank (me + root) mod W (servers stay), as the flow lane rotates it.
    auto actual = [&](int me) { return me < w ? (me + root) % w : me; };
    for (int me = 0; me < group.size(); ++me)
      for (const auto& step : algorithm.rank_phases(me, group, bytes))
        for (const auto& op : step.ops)
          if (op.kind == models::RankOp::Kind::SEND)
            for (const int link : route(actual(me), actual(op.peer))) per_link[link] += op.bytes / efficiency_;
    std::vector<std::pair<int, double>> flat(per_link.begin(), per_link.end());
    if (memo_.size() >= MEMO) {
      for (const auto& [link, b] : flat) bytes_[static_cast<std::size_t>(link)] += b;
      return;
    }
    memo = memo_.emplace(key, std::move(flat)).first;
  }
  for (const auto& [link, b] : memo->second) bytes_[static_cast<std::size_t>(link)] += b;
}

}  // namespace ddlsim::sim
