// ddlsim: the topology graph and the builder interface.
//
// A topology is an undirected Boost.Graph whose vertices are workers,
// parameter servers and switches, and whose edges are full-duplex links with a
// bandwidth (bytes/s) and a latency (s) per direction. Builders are registered
// by name (Registry<TopologyBuilder>, one file each in platforms/builders/) and
// build a graph for a given number of workers and parameter servers. The first
// `workers` host slots a builder creates are workers 0..N-1 in rank order; the
// next `parameter_servers` slots are servers 0..S-1.
//
// Routes are shortest paths in hops; which one when several tie is the
// scenario's routing (platforms/routing.hpp). The graph-level helpers below
// answer graph questions without an engine, so tests can check counts,
// degrees, connectivity and diameters.
#pragma once

#include "models/registry.hpp"

// GCC's -Wuninitialized reports a false positive inside Boost.Graph (named_graph.hpp's optional
// vertex lookup) when building with -fsanitize (DDLSIM_SANITIZE): silenced for Boost's lines only.
// GCC attributes the warning to the header's line, so our own code keeps every warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/graph/adjacency_list.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ddlsim::platforms {

enum class NodeKind { WORKER, SERVER, SWITCH };
std::string to_string(NodeKind kind);

struct NodeProps {
  std::string name;  // unique; workers "worker-<rank>", servers "ps-<i>", switches builder-specific
  NodeKind kind = NodeKind::SWITCH;
  int index = -1;    // rank for workers, server index for servers, -1 for switches
};

struct EdgeProps {
  std::string name;           // unique link name, e.g. "worker-3<->switch-0"
  double bandwidth_Bps = 0;   // per direction
  double latency_s = 0;       // per direction
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeProps, EdgeProps>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

struct LinkSpec {
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

struct BuildRequest {
  int workers = 1;
  int parameter_servers = 0;
  LinkSpec link;                      // the default link (platform.link)
  std::string workers_path = "/platform/workers";
  std::string params_path = "/platform/params";
};

struct Topology {
  std::string kind;                   // builder name
  Graph graph;
  std::vector<Vertex> workers;        // by rank
  std::vector<Vertex> servers;        // by server index
  /// Multi-GPU nodes (the "hierarchical" builder): workers per node, rank r on node r / G,
  /// each on its node switch by an intra-node link. 0 for every other topology.
  int gpus_per_node = 0;
};

class TopologyBuilder {
 public:
  virtual ~TopologyBuilder() = default;
  /// Builds the graph; throws ConfigError (path in request) when the request is impossible.
  [[nodiscard]] virtual Topology build(const BuildRequest& request) const = 0;
};

using TopologyRegistry = Registry<TopologyBuilder>;

/// Helpers for builders: add a host/switch vertex and a link.
Vertex add_node(Topology& topo, std::string name, NodeKind kind, int index = -1);
Edge add_link(Topology& topo, Vertex a, Vertex b, const LinkSpec& link, std::string name = {});
/// Adds worker and server vertices (in that order) for request; returns them all in slot order.
std::vector<Vertex> add_hosts(Topology& topo, const BuildRequest& request);
/// Attaches `servers` parameter-server hosts ("ps-0", ...) to a topology that
/// has none, without reshaping it: each server gets one dedicated link `link`
/// to the node worker 0 hangs off, i.e. worker 0's first switch neighbour (the
/// star's switch, a fat tree's edge switch, a hierarchical node switch, a
/// dragonfly router), or worker 0 itself when it has no switch neighbour
/// (direct-connect graphs: torus, ring, full). Returns that node. Used by
/// `ddlsim collectives`, whose topology is built for the workers only.
Vertex attach_servers(Topology& topo, int servers, const LinkSpec& link);
/// workers + parameter_servers.
[[nodiscard]] int host_count(const BuildRequest& request);
/// True when the graph is one switch with every host attached to it and nothing else.
[[nodiscard]] bool is_single_switch_star(const Graph& g);
/// "17 hosts (16 workers + 1 parameter server)", for error messages.
[[nodiscard]] std::string describe_hosts(const BuildRequest& request);

/// The most links a platform may have (docs/reliability.md, "Ranges"): 2^22, above any machine built
/// (a full k=128 fat tree has 1.57 million; the engine needs about 3 KB per link), far below what a few
/// parameters can ask for (a full mesh of 3,000 hosts, 4.5 million; a k=256 fat tree, 8.4 million).
inline constexpr std::int64_t MAX_PLATFORM_LINKS = std::int64_t{1} << 22;
/// Refuses, before building, a topology of `links` links above MAX_PLATFORM_LINKS: a ConfigError at
/// `path`, "<what> has N links, above the limit of 4194304 links on a platform".
void check_link_count(std::int64_t links, const std::string& path, const std::string& what);

// ---- graph facts (no engine) ----
[[nodiscard]] bool is_connected(const Graph& g);
/// Hop counts from `source` to every vertex (-1 when unreachable).
[[nodiscard]] std::vector<int> hop_distances(const Graph& g, Vertex source);
/// Largest hop distance between two host vertices (workers and servers); -1 if disconnected.
[[nodiscard]] int host_diameter_hops(const Topology& topo);
/// The shortest path (fewest hops) from a to b as a vertex list, ties broken by lowest vertex index.
[[nodiscard]] std::vector<Vertex> shortest_path(const Graph& g, Vertex a, Vertex b);
/// Sum of edge latencies and minimum edge bandwidth along shortest_path(a, b).
struct PathCost {
  int hops = 0;
  double latency_s = 0;
  double bottleneck_Bps = 0;
};
[[nodiscard]] PathCost path_cost(const Graph& g, Vertex a, Vertex b);

/// The physical neighbourhood of the worker ranks: for each rank, the other
/// ranks joined to it by a direct link or through one switch, sorted. Empty
/// when that relation is complete (a switch reaches every worker, as in a
/// star) or disconnected (workers only meet across several switches, as in a
/// multi-level fat tree): topology-aware collectives then use the complete graph.
[[nodiscard]] std::vector<std::vector<int>> rank_neighbours(const Topology& topo);

/// Throws ConfigError(path, ...) naming an unreachable host if the graph is not connected.
void check_connected(const Topology& topo, const std::string& path);

/// Graphviz (DOT) rendering: workers as boxes, servers as diamonds, switches as circles.
void write_dot(const Topology& topo, std::ostream& out);

}  // namespace ddlsim::platforms
