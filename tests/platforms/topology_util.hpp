// Test helper: building topologies as a scenario would (10 Gbps, 2 us links, the scenario's JSON
// paths) and checking them on graph facts: counts, degrees, names, paths, and the contract every
// builder keeps. Used by tests/platforms/topology_test.cpp and tests/platforms/builders/.
#pragma once

#include "models/error.hpp"
#include "platforms/topology.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <set>
#include <string>
#include <vector>

namespace ddlsim::test {

using namespace ddlsim::platforms;

inline const LinkSpec LINK{1.25e9, 2e-6};  // 10 Gbps, 2 us

inline BuildRequest request(int workers, int servers = 0) {
  BuildRequest r;
  r.workers = workers;
  r.parameter_servers = servers;
  r.link = LINK;
  return r;
}

inline Topology build(const std::string& name, const json& params, int workers, int servers = 0) {
  auto builder =
      TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology");
  return builder->build(request(workers, servers));
}

inline int count_kind(const Topology& t, NodeKind kind) {
  int n = 0;
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v) n += t.graph[v].kind == kind ? 1 : 0;
  return n;
}
inline int switches(const Topology& t) { return count_kind(t, NodeKind::SWITCH); }
inline int edges(const Topology& t) { return static_cast<int>(boost::num_edges(t.graph)); }

inline Vertex vertex(const Topology& t, const std::string& name) {
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v)
    if (t.graph[v].name == name) return v;
  FAIL("no vertex " << name);
  return 0;
}
inline int degree(const Topology& t, const std::string& name) {
  return static_cast<int>(boost::degree(vertex(t, name), t.graph));
}

inline std::vector<std::string> path_names(const Topology& t, const std::string& a, const std::string& b) {
  std::vector<std::string> out;
  for (Vertex v : shortest_path(t.graph, vertex(t, a), vertex(t, b))) out.push_back(t.graph[v].name);
  return out;
}

/// The contract every builder keeps (`custom` keeps the user's host names).
inline void check_contract(const Topology& t, int workers, int servers) {
  const Graph& g = t.graph;
  REQUIRE(t.workers.size() == static_cast<std::size_t>(workers));
  REQUIRE(t.servers.size() == static_cast<std::size_t>(servers));
  CHECK(count_kind(t, NodeKind::WORKER) == workers);
  CHECK(count_kind(t, NodeKind::SERVER) == servers);
  for (int r = 0; r < workers; ++r) {
    CHECK(g[t.workers[r]].kind == NodeKind::WORKER);
    CHECK(g[t.workers[r]].index == r);
    if (t.kind != "custom") CHECK(g[t.workers[r]].name == "worker-" + std::to_string(r));
  }
  for (int s = 0; s < servers; ++s) {
    CHECK(g[t.servers[s]].kind == NodeKind::SERVER);
    CHECK(g[t.servers[s]].index == s);
    if (t.kind != "custom") CHECK(g[t.servers[s]].name == "ps-" + std::to_string(s));
  }
  std::set<std::string> names;
  for (Vertex v = 0; v < boost::num_vertices(g); ++v) CHECK(names.insert(g[v].name).second);
  std::set<std::string> link_names;
  std::set<std::pair<Vertex, Vertex>> pairs;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    Vertex a = boost::source(*it, g), b = boost::target(*it, g);
    CHECK(a != b);
    CHECK(pairs.insert(std::minmax(a, b)).second);
    CHECK(link_names.insert(g[*it].name).second);
    CHECK(g[*it].bandwidth_Bps > 0);
    CHECK(g[*it].latency_s >= 0);
  }
  CHECK(is_connected(g));
  CHECK_NOTHROW(check_connected(t, "/platform/params"));
}


}  // namespace ddlsim::test
