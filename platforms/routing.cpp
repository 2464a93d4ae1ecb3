// ddlsim: host-to-host routes (shortest, ECMP, D-mod-k); see routing.hpp for the rules.
#include "platforms/routing.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace ddlsim::platforms {
namespace {

/// splitmix64's finaliser (Steele, Lea & Flood, OOPSLA 2014): a bijective 64-bit mix.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The flow hash of (src, dst) at vertex v.
std::uint64_t flow_hash(std::uint64_t seed, int src, int dst, Vertex v) {
  std::uint64_t h = mix(seed);
  h = mix(h ^ static_cast<std::uint64_t>(src));
  h = mix(h ^ static_cast<std::uint64_t>(dst));
  return mix(h ^ static_cast<std::uint64_t>(v));
}

}  // namespace

std::string to_string(Routing routing) {
  switch (routing) {
    case Routing::SHORTEST: return "shortest";
    case Routing::ECMP: return "ecmp";
    case Routing::DMODK: return "dmodk";
  }
  return "?";
}

const std::vector<std::string>& routing_names() {
  static const std::vector<std::string> names{"shortest", "ecmp", "dmodk"};
  return names;
}

Routing parse_routing(const std::string& name) {
  for (Routing r : {Routing::SHORTEST, Routing::ECMP, Routing::DMODK})
    if (to_string(r) == name) return r;
  throw std::invalid_argument(fmt::format("unknown routing \"{}\"", name));
}

Routing default_routing(const std::string& topology_kind) {
  return topology_kind == "fat_tree" ? Routing::ECMP : Routing::SHORTEST;
}

RouteTable::RouteTable(const Topology& topology, Routing routing, std::uint64_t seed) : routing_(routing), seed_(seed) {
  const Graph& g = topology.graph;
  const std::size_t n = boost::num_vertices(g);
  host_vertex_ = topology.workers;
  host_vertex_.insert(host_vertex_.end(), topology.servers.begin(), topology.servers.end());
  if (host_vertex_.empty()) throw std::invalid_argument("RouteTable: the topology has no host");

  // Link indices (boost::edges order) and, for SHORTEST, the Dijkstra zone's node order.
  std::unordered_map<const EdgeProps*, std::uint32_t> index_of;
  std::vector<std::size_t> order(n, std::numeric_limits<std::size_t>::max());
  std::size_t next = 0;
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    index_of.emplace(&g[e], static_cast<std::uint32_t>(edge_source_.size()));
    edge_source_.push_back(boost::source(e, g));
    for (Vertex x : {boost::source(e, g), boost::target(e, g)})
      if (order[x] == std::numeric_limits<std::size_t>::max()) order[x] = next++;
  }
  for (auto& o : order)
    if (o == std::numeric_limits<std::size_t>::max()) o = next++;

  offsets_.assign(n + 1, 0);
  arcs_.reserve(2 * boost::num_edges(g));
  for (Vertex v = 0; v < n; ++v) {
    offsets_[v] = arcs_.size();
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const std::uint32_t i = index_of.at(&g[e]);
      arcs_.push_back(Arc{boost::target(e, g), i, edge_source_[i] == v});
    }
    auto by = [&](const Arc& a, const Arc& b) {
      return routing_ == Routing::SHORTEST ? order[a.to] < order[b.to] : a.to < b.to;
    };
    std::sort(arcs_.begin() + static_cast<std::ptrdiff_t>(offsets_[v]), arcs_.end(), by);
  }
  offsets_[n] = arcs_.size();

  // A host on one link is reached only through its neighbour: share that neighbour's distances.
  for (Vertex h : host_vertex_) anchor_.push_back(offsets_[h + 1] - offsets_[h] == 1 ? arcs_[offsets_[h]].to : h);
  distances_.resize(n);
}

const std::vector<int>& RouteTable::distances_to(Vertex anchor) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = distances_[anchor];
  if (!slot) {
    std::vector<int> dist(offsets_.size() - 1, -1);
    std::vector<Vertex> queue{anchor};
    dist[anchor] = 0;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Vertex v = queue[i];
      for (std::size_t a = offsets_[v]; a < offsets_[v + 1]; ++a)
        if (dist[arcs_[a].to] < 0) {
          dist[arcs_[a].to] = dist[v] + 1;
          queue.push_back(arcs_[a].to);
        }
    }
    slot = std::make_unique<const std::vector<int>>(std::move(dist));
  }
  return *slot;
}

// Walks from `start` to host slot `target`: at each vertex the candidates are
// the arcs to a neighbour one hop closer (in arcs_ order) and `choose` picks
// one. Distances are to the target's anchor; from the anchor (when it is not
// the target itself) the last hop is the target's only link.
template <class Choose>
void RouteTable::walk(Vertex start, int target, Choose&& choose, std::vector<Hop>& out) const {
  const Vertex goal = host_vertex_[static_cast<std::size_t>(target)];
  const Vertex anchor = anchor_[static_cast<std::size_t>(target)];
  const std::vector<int>& dist = distances_to(anchor);
  if (dist[start] < 0)
    throw std::invalid_argument(fmt::format("RouteTable: no route from vertex {} to host slot {}", start, target));
  std::vector<const Arc*> candidates;
  for (Vertex v = start; v != goal;) {
    candidates.clear();
    for (std::size_t a = offsets_[v]; a < offsets_[v + 1]; ++a) {
      const Arc& arc = arcs_[a];
      if (v == anchor ? arc.to == goal : dist[arc.to] == dist[v] - 1) candidates.push_back(&arc);
    }
    const Arc& arc = *candidates[candidates.size() == 1 ? 0 : choose(v, candidates.size())];
    out.push_back(Hop{arc.edge, v, arc.to, arc.forward});
    v = arc.to;
  }
}

void RouteTable::route(int src, int dst, std::vector<Hop>& out) const {
  out.clear();
  if (src < 0 || src >= hosts() || dst < 0 || dst >= hosts())
    throw std::out_of_range(fmt::format("RouteTable: host slot {} or {} outside [0, {})", src, dst, hosts()));
  if (src == dst) return;
  const Vertex from = host_vertex_[static_cast<std::size_t>(src)];
  const Vertex to = host_vertex_[static_cast<std::size_t>(dst)];
  switch (routing_) {
    case Routing::SHORTEST: {
      // Dijkstra from src: each vertex's predecessor is its first neighbour (zone order) one hop closer
      // to src; the route is that chain from dst, reversed.
      walk(to, src, [](Vertex, std::size_t) { return std::size_t{0}; }, out);
      std::reverse(out.begin(), out.end());
      for (Hop& h : out) {
        std::swap(h.from, h.to);
        h.forward = !h.forward;
      }
      return;
    }
    case Routing::ECMP:
      walk(from, dst, [&](Vertex v, std::size_t m) { return flow_hash(seed_, src, dst, v) % m; }, out);
      return;
    case Routing::DMODK: {
      const auto d = static_cast<std::uint64_t>(dst);
      std::uint64_t radix = 1;  // product of the choice counts so far (stops growing once it exceeds d)
      walk(from, dst,
           [&](Vertex, std::size_t m) {
             const std::size_t pick = (d / radix) % m;
             if (radix <= d) radix *= m;
             return pick;
           },
           out);
      return;
    }
  }
}

std::vector<Hop> RouteTable::route(int src, int dst) const {
  std::vector<Hop> out;
  route(src, dst, out);
  return out;
}

std::vector<Hop> route(const Topology& topology, Routing routing, std::uint64_t seed, int src, int dst) {
  return RouteTable(topology, routing, seed).route(src, dst);
}

}  // namespace ddlsim::platforms
