// ddlsim: graph helpers shared by every topology builder.
//
// Construction (add_node, add_link, add_hosts), graph facts answered without an
// engine (connectivity, BFS hop counts, host diameter, deterministic shortest
// paths and their cost) and a Graphviz rendering. All searches are plain BFS
// over the adjacency lists: every link counts as one hop.
#include "platforms/topology.hpp"

#include "models/units.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <ostream>
#include <stdexcept>

namespace ddlsim::platforms {
namespace {

std::string plural(int n, const char* singular, const char* plural_form) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural_form);
}

bool is_host(const NodeProps& node) { return node.kind != NodeKind::SWITCH; }

/// "host" for workers and servers, "switch" otherwise (used in messages).
const char* role_word(const NodeProps& node) { return is_host(node) ? "host" : "switch"; }

/// DOT double-quoted identifier.
std::string dot_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::WORKER:
      return "worker";
    case NodeKind::SERVER:
      return "server";
    case NodeKind::SWITCH:
      return "switch";
  }
  return "unknown";
}

Vertex add_node(Topology& topo, std::string name, NodeKind kind, int index) {
  return boost::add_vertex(NodeProps{std::move(name), kind, index}, topo.graph);
}

Edge add_link(Topology& topo, Vertex a, Vertex b, const LinkSpec& link, std::string name) {
  // Builders guarantee simple graphs; a violation is a programming error.
  if (a == b) throw std::logic_error(fmt::format("add_link: self-loop on \"{}\"", topo.graph[a].name));
  if (boost::edge(a, b, topo.graph).second)
    throw std::logic_error(
        fmt::format("add_link: parallel link \"{}\" <-> \"{}\"", topo.graph[a].name, topo.graph[b].name));
  if (name.empty()) name = topo.graph[a].name + "<->" + topo.graph[b].name;
  return boost::add_edge(a, b, EdgeProps{std::move(name), link.bandwidth_Bps, link.latency_s}, topo.graph).first;
}

void check_link_count(std::int64_t links, const std::string& path, const std::string& what) {
  if (links > MAX_PLATFORM_LINKS)
    throw ConfigError(path, fmt::format("{} has {} links, above the limit of {} links on a platform", what, links,
                                        MAX_PLATFORM_LINKS));
}

std::vector<Vertex> add_hosts(Topology& topo, const BuildRequest& request) {
  std::vector<Vertex> slots;
  slots.reserve(static_cast<std::size_t>(std::max(0, host_count(request))));
  for (int r = 0; r < request.workers; ++r) {
    topo.workers.push_back(add_node(topo, fmt::format("worker-{}", r), NodeKind::WORKER, r));
    slots.push_back(topo.workers.back());
  }
  for (int i = 0; i < request.parameter_servers; ++i) {
    topo.servers.push_back(add_node(topo, fmt::format("ps-{}", i), NodeKind::SERVER, i));
    slots.push_back(topo.servers.back());
  }
  return slots;
}

Vertex attach_servers(Topology& topo, int servers, const LinkSpec& link) {
  if (topo.workers.empty()) throw std::logic_error("attach_servers: the topology has no worker");
  if (!topo.servers.empty()) throw std::logic_error("attach_servers: the topology already has parameter servers");
  const Vertex worker0 = topo.workers.front();
  Vertex at = worker0;
  for (auto v : boost::make_iterator_range(boost::adjacent_vertices(worker0, topo.graph)))
    if (topo.graph[v].kind == NodeKind::SWITCH && (at == worker0 || v < at)) at = v;
  for (int i = 0; i < servers; ++i) {
    topo.servers.push_back(add_node(topo, fmt::format("ps-{}", i), NodeKind::SERVER, i));
    add_link(topo, topo.servers.back(), at, link);
  }
  return at;
}

bool is_single_switch_star(const Graph& g) {
  int switches = 0;
  Vertex center = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind == NodeKind::SWITCH) {
      ++switches;
      center = v;
    }
  return switches == 1 && boost::num_edges(g) + 1 == boost::num_vertices(g) &&
         boost::out_degree(center, g) == boost::num_edges(g);
}

int host_count(const BuildRequest& request) { return request.workers + request.parameter_servers; }

std::string describe_hosts(const BuildRequest& request) {
  std::string parts = plural(request.workers, "worker", "workers");
  if (request.parameter_servers > 0)
    parts += " + " + plural(request.parameter_servers, "parameter server", "parameter servers");
  return fmt::format("{} ({})", plural(host_count(request), "host", "hosts"), parts);
}

// ---- graph facts ----

std::vector<int> hop_distances(const Graph& g, Vertex source) {
  std::vector<int> dist(boost::num_vertices(g), -1);
  std::deque<Vertex> queue{source};
  dist[source] = 0;
  while (!queue.empty()) {
    Vertex v = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::adjacent_vertices(v, g); it != end; ++it) {
      if (dist[*it] >= 0) continue;
      dist[*it] = dist[v] + 1;
      queue.push_back(*it);
    }
  }
  return dist;
}

bool is_connected(const Graph& g) {
  if (boost::num_vertices(g) == 0) return true;
  auto dist = hop_distances(g, 0);
  return std::none_of(dist.begin(), dist.end(), [](int d) { return d < 0; });
}

int host_diameter_hops(const Topology& topo) {
  std::vector<Vertex> hosts = topo.workers;
  hosts.insert(hosts.end(), topo.servers.begin(), topo.servers.end());
  int diameter = 0;
  for (Vertex h : hosts) {
    auto dist = hop_distances(topo.graph, h);
    for (Vertex other : hosts) {
      if (dist[other] < 0) return -1;
      diameter = std::max(diameter, dist[other]);
    }
  }
  return diameter;
}

// BFS from b gives every vertex its distance to b; walking from a, each step
// takes the lowest-index neighbour one hop closer. The result is the
// lexicographically smallest shortest path. Empty when b is unreachable.
std::vector<Vertex> shortest_path(const Graph& g, Vertex a, Vertex b) {
  auto to_b = hop_distances(g, b);
  if (to_b[a] < 0) return {};
  std::vector<Vertex> path{a};
  Vertex v = a;
  while (v != b) {
    Vertex next = std::numeric_limits<Vertex>::max();
    for (auto [it, end] = boost::adjacent_vertices(v, g); it != end; ++it)
      if (to_b[*it] == to_b[v] - 1) next = std::min(next, *it);
    path.push_back(next);
    v = next;
  }
  return path;
}

// a == b: 0 hops, 0 s, infinite bottleneck (no link limits the transfer).
// Unreachable b: hops = -1, latency 0, bottleneck 0.
PathCost path_cost(const Graph& g, Vertex a, Vertex b) {
  auto path = shortest_path(g, a, b);
  if (path.empty()) return PathCost{-1, 0, 0};
  PathCost cost{0, 0, std::numeric_limits<double>::infinity()};
  for (std::size_t i = 1; i < path.size(); ++i) {
    const EdgeProps& e = g[boost::edge(path[i - 1], path[i], g).first];
    cost.hops += 1;
    cost.latency_s += e.latency_s;
    cost.bottleneck_Bps = std::min(cost.bottleneck_Bps, e.bandwidth_Bps);
  }
  return cost;
}

// Searches from the first host (workers then servers; vertex 0 if there are
// none) and names the first unreached host in slot order, or else the first
// unreached switch.
void check_connected(const Topology& topo, const std::string& path) {
  const Graph& g = topo.graph;
  if (boost::num_vertices(g) == 0) return;
  std::vector<Vertex> hosts = topo.workers;
  hosts.insert(hosts.end(), topo.servers.begin(), topo.servers.end());
  Vertex source = hosts.empty() ? Vertex{0} : hosts.front();
  auto dist = hop_distances(g, source);
  auto fail = [&](Vertex unreached) {
    throw ConfigError(path,
                      fmt::format("topology is disconnected: {} \"{}\" cannot reach {} \"{}\"", role_word(g[source]),
                                  excerpt(g[source].name), role_word(g[unreached]), excerpt(g[unreached].name)));
  };
  for (Vertex h : hosts)
    if (dist[h] < 0) fail(h);
  for (Vertex v = 0; v < boost::num_vertices(g); ++v)
    if (dist[v] < 0) fail(v);
}

void write_dot(const Topology& topo, std::ostream& out) {
  const Graph& g = topo.graph;
  out << "graph " << dot_quote(topo.kind.empty() ? "topology" : topo.kind) << " {\n";
  for (Vertex v = 0; v < boost::num_vertices(g); ++v) {
    const char* shape = g[v].kind == NodeKind::WORKER ? "box" : g[v].kind == NodeKind::SERVER ? "diamond" : "circle";
    out << "  " << dot_quote(g[v].name) << " [shape=" << shape << "];\n";
  }
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const EdgeProps& e = g[*it];
    std::string label = units::format_bandwidth(e.bandwidth_Bps) + ", " + units::format_time(e.latency_s);
    out << "  " << dot_quote(g[boost::source(*it, g)].name) << " -- " << dot_quote(g[boost::target(*it, g)].name)
        << " [label=" << dot_quote(label) << "];\n";
  }
  out << "}\n";
}

std::vector<std::vector<int>> rank_neighbours(const Topology& topo) {
  const Graph& g = topo.graph;
  const auto n = topo.workers.size();
  auto worker_rank = [&g](Vertex v) { return g[v].kind == NodeKind::WORKER ? g[v].index : -1; };
  // A switch adjacent to every worker makes the relation complete: skip the O(N^2) lists.
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].kind != NodeKind::SWITCH) continue;
    std::size_t workers = 0;
    for (auto w : boost::make_iterator_range(boost::adjacent_vertices(v, g)))
      if (worker_rank(w) >= 0) ++workers;
    if (workers == n) return {};
  }
  std::vector<std::vector<int>> out(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<int>& nb = out[r];
    for (auto a : boost::make_iterator_range(boost::adjacent_vertices(topo.workers[r], g))) {
      if (worker_rank(a) >= 0) nb.push_back(worker_rank(a));
      if (g[a].kind == NodeKind::SWITCH)
        for (auto b : boost::make_iterator_range(boost::adjacent_vertices(a, g)))
          if (worker_rank(b) >= 0 && static_cast<std::size_t>(worker_rank(b)) != r) nb.push_back(worker_rank(b));
    }
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
  }
  // Connected? (BFS over the relation)
  std::vector<char> seen(n, 0);
  std::vector<int> queue{0};
  seen[0] = 1;
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (int v : out[static_cast<std::size_t>(queue[i])])
      if (!seen[static_cast<std::size_t>(v)]) {
        seen[static_cast<std::size_t>(v)] = 1;
        queue.push_back(v);
      }
  if (queue.size() != n) return {};
  return out;
}

}  // namespace ddlsim::platforms
