// ddlsim: a platform's links and routes between ranks, for the contention-aware
// schedule cost (models/network_cost.hpp). Plain C++, no engine.
#pragma once

#include "models/network_cost.hpp"
#include "platforms/routing.hpp"
#include "platforms/topology.hpp"

namespace ddlsim::platforms {

/// Directed links and routes between the ranks (workers 0..W-1, then servers) of `topo`.
/// Link ids: the e-th edge of boost::edges(graph) is 2e from its source to its target and
/// 2e+1 back. Routes: fewest hops, ties to the lowest vertex index -- shortest_path's rule,
/// and the paths of the emitted platform's Dijkstra zone on the tested fat trees -- from one
/// BFS per destination, computed when first asked. The route callable owns a copy of the
/// adjacency, so it outlives `topo`; it is not safe to call from two threads at once
/// (ContentionCost serialises its calls).
[[nodiscard]] models::NetworkPaths shortest_path_routes(const Topology& topo);

/// The same links, with the routes the emitted platform uses for `routing` (platforms::RouteTable:
/// SimGrid's Dijkstra ties for shortest, the seeded hash for ecmp, D-mod-k), so the contention
/// estimate prices the paths the simulation runs. The callable owns its table.
[[nodiscard]] models::NetworkPaths routed_paths(const Topology& topo, Routing routing, std::uint64_t seed);

/// True for the reference platform of the closed forms: one switch with every host on it,
/// nothing else, all links of one bandwidth and one latency.
[[nodiscard]] bool is_uniform_star(const Topology& topo);

}  // namespace ddlsim::platforms
