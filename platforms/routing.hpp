// ddlsim: host-to-host routes over a topology graph, without an engine.
//
// Every routing sends each (source host, destination host) pair along one
// fewest-hop path (every link counts as one hop); they differ in which one
// when several tie ("equal-cost" paths, as between the core switches of a fat
// tree). A route is chosen hop by hop: at vertex v, the candidates are v's
// neighbours one hop closer to the destination.
//
//   SHORTEST  SimGrid's Dijkstra zone (what the emitter installs for it): the
//             route src -> dst is the predecessor chain of a Dijkstra search
//             from src whose queue breaks ties by the zone's node order, the
//             order in which vertices first appear in the graph's edge list
//             (source, then target, edge by edge). So walking back from dst,
//             each step takes the earliest such neighbour one hop closer to src.
//             One path per pair, and many pairs share it: a fat tree's core
//             is barely used.
//   ECMP      equal-cost multi-path as a switch's flow hash: at every vertex
//             with m > 1 candidates (sorted by vertex index), take candidate
//             hash(seed, src, dst, v) mod m. A "flow" is a host pair, so all
//             traffic from src to dst follows one path (per-flow ECMP never
//             reorders a flow), and the seed is the scenario's. Hashing the
//             vertex too is the per-switch hash seed real fabrics use against
//             polarisation (with one hash for every switch, a fat tree's edge
//             and aggregation layers would make the same choice and use only
//             half of the core).
//   DMODK     destination-mod-k (D-mod-k): no hash; the choices spell out the
//             destination slot in mixed radix. At the i-th vertex of the route
//             with m_i > 1 candidates (sorted by vertex index), take candidate
//                 floor(dst / (m_1 * ... * m_{i-1})) mod m_i.
//             On our k-ary fat tree (platforms/builders/fat_tree.cpp) the
//             choices are the upward hops: host slot d sits on port d mod k/2
//             of edge switch floor(d / (k/2)) mod k/2 of its pod, an edge
//             switch's candidates are its pod's aggregation switches j = 0..k/2-1
//             and aggregation switch j's are core switches j*k/2 + c. So the
//             route to d climbs through aggregation switch d mod k/2 and core
//             switch (d mod k/2) * k/2 + floor(d / (k/2)) mod k/2: every host of
//             a pod has its own core switch, every downward link carries the
//             traffic of exactly one destination, and the hosts on one edge
//             switch (consecutive slots) leave it on different uplinks. On a
//             full tree every shift permutation s -> s + c mod N and every XOR
//             permutation s -> s ^ 2^j then puts at most one flow on every
//             directed link (tests/platforms/routing_test.cpp checks k = 4, 6).
//             Sources: E. Zahavi, "D-Mod-K Routing Providing Non-Blocking
//             Traffic for Shift Permutations on Real Life Fat Trees", CCIT
//             Report 776, Technion, 2010; C. Gomez et al., "Deterministic versus
//             Adaptive Routing in Fat-Trees", IPDPS 2007 (CAC workshop). On other
//             graphs the same rule is a deterministic, destination-driven
//             spreading of ties.
//
// A RouteTable keeps, per destination, the BFS hop counts to it, built on
// first use (memory: V ints per destination used; a host on a single link
// shares its neighbour's table, so a fat tree needs one per edge switch) and
// walks next hops: O(hops * degree) per route. It is safe to share between
// threads. Hops name links by their index in boost::edges(graph) order, the
// order of EmittedPlatform::links.
#pragma once

#include "platforms/topology.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ddlsim::platforms {

enum class Routing { SHORTEST, ECMP, DMODK };

std::string to_string(Routing routing);
/// Every routing name: shortest, ecmp, dmodk.
const std::vector<std::string>& routing_names();
/// The routing named `name` (one of routing_names()); throws std::invalid_argument otherwise.
Routing parse_routing(const std::string& name);
/// The routing a platform gets when none is given: ECMP on a fat tree (a Clos
/// fabric hashes flows over its core; one shortest path per pair would make it
/// blocking), SHORTEST on every other topology (what ddlsim has always used
/// there; spreading over a torus's or dragonfly's ties is opt-in).
Routing default_routing(const std::string& topology_kind);

/// One link of a route, crossed from `from` to `to`.
struct Hop {
  std::size_t edge = 0;  // index of the link in boost::edges(graph) order
  Vertex from = 0;
  Vertex to = 0;
  bool forward = true;   // from is the link's boost::source: the link's UP half in SimGrid (EmittedPlatform::up)
};

class RouteTable {
 public:
  /// Throws std::invalid_argument when the topology has no host.
  RouteTable(const Topology& topology, Routing routing, std::uint64_t seed);
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  [[nodiscard]] Routing routing() const { return routing_; }
  /// Host slots: workers by rank, then servers by index.
  [[nodiscard]] int hosts() const { return static_cast<int>(host_vertex_.size()); }
  [[nodiscard]] std::size_t links() const { return edge_source_.size(); }

  /// The route from host slot `src` to host slot `dst` into `out` (cleared
  /// first); empty when src == dst. Throws std::out_of_range on a bad slot and
  /// std::invalid_argument when dst is unreachable.
  void route(int src, int dst, std::vector<Hop>& out) const;
  [[nodiscard]] std::vector<Hop> route(int src, int dst) const;

 private:
  struct Arc {
    Vertex to;
    std::uint32_t edge;
    bool forward;
  };
  const std::vector<int>& distances_to(Vertex anchor) const;
  /// Appends the hops from `start` to host slot `target`; `choose(v, m)` picks one of m > 1 candidates.
  template <class Choose>
  void walk(Vertex start, int target, Choose&& choose, std::vector<Hop>& out) const;

  Routing routing_;
  std::uint64_t seed_;
  std::vector<std::size_t> offsets_;  // CSR: arcs of v are arcs_[offsets_[v] .. offsets_[v+1])
  std::vector<Arc> arcs_;             // sorted by vertex index, or by Dijkstra node order for SHORTEST
  std::vector<Vertex> edge_source_;   // per link: its boost::source
  std::vector<Vertex> host_vertex_;   // per slot
  std::vector<Vertex> anchor_;        // per slot: the host, or its only neighbour when it has one link
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<const std::vector<int>>> distances_;  // per anchor vertex, built on demand
};

/// One route, without keeping a table (builds one: O(V + E)).
[[nodiscard]] std::vector<Hop> route(const Topology& topology, Routing routing, std::uint64_t seed, int src, int dst);

}  // namespace ddlsim::platforms
