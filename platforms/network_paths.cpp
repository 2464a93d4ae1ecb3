#include "platforms/network_paths.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>

namespace ddlsim::platforms {
namespace {

struct RouteState {
  struct Arc {
    std::size_t to;
    int link;  // directed link id from this vertex to `to`
  };
  std::vector<std::vector<Arc>> adjacency;  // per vertex, by increasing neighbour index
  std::vector<std::size_t> host;            // vertex of each rank
  std::vector<std::vector<int>> distance;   // per rank: hop distances to its vertex (empty until needed)

  const std::vector<int>& distances_to(int rank) {
    auto& d = distance[static_cast<std::size_t>(rank)];
    if (!d.empty()) return d;
    d.assign(adjacency.size(), -1);
    std::deque<std::size_t> queue{host[static_cast<std::size_t>(rank)]};
    d[queue.front()] = 0;
    while (!queue.empty()) {
      const std::size_t v = queue.front();
      queue.pop_front();
      for (const auto& arc : adjacency[v])
        if (d[arc.to] < 0) {
          d[arc.to] = d[v] + 1;
          queue.push_back(arc.to);
        }
    }
    return d;
  }

  std::vector<int> route(int a, int b) {
    const auto& d = distances_to(b);
    std::size_t v = host[static_cast<std::size_t>(a)];
    if (d[v] < 0) throw std::logic_error("shortest_path_routes: the platform is disconnected");
    std::vector<int> links;
    links.reserve(static_cast<std::size_t>(d[v]));
    while (d[v] > 0) {
      // Adjacency is sorted by neighbour index: the first arc one hop closer is the lowest-index one.
      for (const auto& arc : adjacency[v])
        if (d[arc.to] == d[v] - 1) {
          links.push_back(arc.link);
          v = arc.to;
          break;
        }
    }
    return links;
  }
};

}  // namespace

models::NetworkPaths shortest_path_routes(const Topology& topo) {
  const Graph& g = topo.graph;
  auto state = std::make_shared<RouteState>();
  state->adjacency.resize(boost::num_vertices(g));
  models::NetworkPaths paths;
  int e = 0;
  for (auto edge : boost::make_iterator_range(boost::edges(g))) {
    const auto s = boost::source(edge, g), t = boost::target(edge, g);
    state->adjacency[s].push_back(RouteState::Arc{t, 2 * e});
    state->adjacency[t].push_back(RouteState::Arc{s, 2 * e + 1});
    for (int direction = 0; direction < 2; ++direction) {
      paths.bandwidth_Bps.push_back(g[edge].bandwidth_Bps);
      paths.latency_s.push_back(g[edge].latency_s);
    }
    ++e;
  }
  for (auto& arcs : state->adjacency)
    std::sort(arcs.begin(), arcs.end(), [](const RouteState::Arc& x, const RouteState::Arc& y) { return x.to < y.to; });
  for (auto v : topo.workers) state->host.push_back(v);
  for (auto v : topo.servers) state->host.push_back(v);
  state->distance.resize(state->host.size());
  paths.ranks = static_cast<int>(state->host.size());
  paths.route = [state](int a, int b) { return state->route(a, b); };
  return paths;
}

models::NetworkPaths routed_paths(const Topology& topo, Routing routing, std::uint64_t seed) {
  models::NetworkPaths paths;
  for (auto edge : boost::make_iterator_range(boost::edges(topo.graph)))
    for (int direction = 0; direction < 2; ++direction) {  // link id 2e: source -> target, 2e + 1 back
      paths.bandwidth_Bps.push_back(topo.graph[edge].bandwidth_Bps);
      paths.latency_s.push_back(topo.graph[edge].latency_s);
    }
  auto table = std::make_shared<const RouteTable>(topo, routing, seed);
  paths.ranks = table->hosts();
  paths.route = [table](int a, int b) {
    std::vector<int> ids;
    for (const Hop& hop : table->route(a, b)) ids.push_back(static_cast<int>(2 * hop.edge + (hop.forward ? 0 : 1)));
    return ids;
  };
  return paths;
}

bool is_uniform_star(const Topology& topo) {
  const Graph& g = topo.graph;
  if (!is_single_switch_star(g)) return false;
  const EdgeProps* first = nullptr;
  for (auto edge : boost::make_iterator_range(boost::edges(g))) {
    const EdgeProps& p = g[edge];
    if (first == nullptr) first = &p;
    if (p.bandwidth_Bps != first->bandwidth_Bps || p.latency_s != first->latency_s) return false;
  }
  return true;
}

}  // namespace ddlsim::platforms
