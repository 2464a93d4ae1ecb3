// ddlsim: links.csv at analytic fidelity -- the bytes each analytic collective puts on each link.
//
// At analytic fidelity a collective costs its closed form and moves no flow, so nothing on the
// links counts it. Each call's schedule (the rank phases the flow lane would run, rotated to its
// root) is routed on the platform as the emitted one routes it (platforms::routed_paths) and every
// send adds its wire bytes to each link direction it crosses. Routing every transfer costs a BFS
// per destination and a pass over the ranks per call, so groups above MAX_RANKS are not counted:
// links.csv is then left out, and a note says why.
#pragma once

#include "models/collective.hpp"
#include "models/network_cost.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim {

class AnalyticLinks {
 public:
  static constexpr int MAX_RANKS = 4096;
  AnalyticLinks(const platforms::Topology& topo, platforms::Routing routing, std::uint64_t seed, double efficiency);
  /// False when the group is too large to count (nothing is counted then).
  [[nodiscard]] static bool countable(const models::CollectiveGroup& group) { return group.size() <= MAX_RANKS; }
  /// One call of `algorithm` among `group`, `bytes` per rank, rank `root` playing the schedule's rank 0.
  void add(const models::Collective& algorithm, const models::CollectiveGroup& group, double bytes, int root);
  /// Bytes per directed link: 2e from edge e's source to its target, 2e + 1 back.
  [[nodiscard]] const std::vector<double>& bytes() const { return bytes_; }

 private:
  const std::vector<int>& route(int a, int b);
  models::NetworkPaths paths_;
  double efficiency_ = 1;
  std::vector<double> bytes_;
  std::unordered_map<std::int64_t, std::vector<int>> routes_;
  /// Per (algorithm, bytes, root): the links and bytes of one call (at most MEMO calls kept).
  std::map<std::tuple<const models::Collective*, double, int>, std::vector<std::pair<int, double>>> memo_;
  static constexpr std::size_t MEMO = 64;
};

}  // namespace ddlsim::sim
