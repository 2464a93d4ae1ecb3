// Topologies, all builders at once, and the graph helpers of platforms/topology.cpp, checked on
// graph facts without an engine: counts, degrees, connectivity, diameters, routes, costs and error
// messages; and attach_servers: parameter servers added to a workers-only topology (as `ddlsim
// collectives` does) leave the workers' graph exactly as built and hang off the node worker 0 hangs
// off, one dedicated link each. Each builder's own tests: tests/platforms/builders/<name>_test.cpp.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("topology: every builder is registered") {
  for (const char* name : {"star", "ring", "full", "fat_tree", "torus", "dragonfly", "hierarchical", "custom"})
    CHECK_MESSAGE(TopologyRegistry::instance().contains(name), name);
  CHECK_THROWS_WITH_AS(
      TopologyRegistry::instance().create("mesh", json::object(), "/platform/topology", "/platform/params", "topology"),
      "/platform/topology: unknown topology \"mesh\"; valid names are: custom, dragonfly, fat_tree, "
      "full, hierarchical, ring, star, torus",
      ConfigError);
}

TEST_CASE("topology: builders keep the contract for every size") {
  for (const char* name : {"star", "ring", "full", "fat_tree", "torus", "dragonfly", "hierarchical"})
    for (int workers = 1; workers <= 20; ++workers)
      for (int servers = 0; servers <= 2; ++servers) {
        CAPTURE(name);
        CAPTURE(workers);
        CAPTURE(servers);
        Topology t = build(name, json::object(), workers, servers);
        CHECK(t.kind == name);
        check_contract(t, workers, servers);
      }
}

TEST_CASE("topology: to_string and describe_hosts") {
  CHECK(to_string(NodeKind::WORKER) == "worker");
  CHECK(to_string(NodeKind::SERVER) == "server");
  CHECK(to_string(NodeKind::SWITCH) == "switch");
  CHECK(describe_hosts(request(1)) == "1 host (1 worker)");
  CHECK(describe_hosts(request(16, 1)) == "17 hosts (16 workers + 1 parameter server)");
  CHECK(describe_hosts(request(2, 2)) == "4 hosts (2 workers + 2 parameter servers)");
  CHECK(host_count(request(3, 2)) == 5);
}

TEST_CASE("graph helpers on a hand-built graph") {
  Topology t;
  t.kind = "test";
  add_hosts(t, request(2, 1));
  Vertex sw = add_node(t, "sw", NodeKind::SWITCH);
  add_link(t, t.workers[0], sw, LINK);
  add_link(t, t.workers[1], sw, LinkSpec{2e9, 1e-6}, "fast");
  CHECK_THROWS_AS(add_link(t, sw, t.workers[0], LINK), std::logic_error);
  CHECK_THROWS_AS(add_link(t, sw, sw, LINK), std::logic_error);
  CHECK(t.graph[boost::edge(t.workers[0], sw, t.graph).first].name == "worker-0<->sw");
  CHECK(t.graph[boost::edge(t.workers[1], sw, t.graph).first].name == "fast");

  CHECK_FALSE(is_connected(t.graph));
  CHECK(host_diameter_hops(t) == -1);
  CHECK(hop_distances(t.graph, t.workers[0]) == std::vector<int>{0, 2, -1, 1});
  CHECK(shortest_path(t.graph, t.workers[0], t.servers[0]).empty());
  CHECK(path_cost(t.graph, t.workers[0], t.servers[0]).hops == -1);
  CHECK_THROWS_WITH_AS(check_connected(t, "/platform"),
                       "/platform: topology is disconnected: host \"worker-0\" cannot reach host \"ps-0\"",
                       ConfigError);
  add_link(t, t.servers[0], t.workers[1], LINK);
  CHECK(is_connected(t.graph));
  CHECK(host_diameter_hops(t) == 3);
  PathCost cost = path_cost(t.graph, t.workers[0], t.servers[0]);
  CHECK(cost.hops == 3);
  CHECK(cost.latency_s == doctest::Approx(5e-6));
  CHECK(cost.bottleneck_Bps == doctest::Approx(1.25e9));
}

TEST_CASE("write_dot") {
  Topology t = build("star", json::object(), 2, 1);
  std::ostringstream out;
  write_dot(t, out);
  const std::string dot = out.str();
  CHECK(dot.rfind("graph \"star\" {\n", 0) == 0);
  CHECK(dot.find("  \"worker-0\" [shape=box];\n") != std::string::npos);
  CHECK(dot.find("  \"ps-0\" [shape=diamond];\n") != std::string::npos);
  CHECK(dot.find("  \"switch-0\" [shape=circle];\n") != std::string::npos);
  CHECK(dot.find("  \"worker-1\" -- \"switch-0\" [label=\"10 Gbps, 2 us\"];\n") != std::string::npos);
  CHECK(dot.find("  \"ps-0\" -- \"switch-0\" [label=\"10 Gbps, 2 us\"];\n") != std::string::npos);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
}

TEST_CASE("rank neighbourhood for topology-aware collectives") {
  auto build = [](const std::string& name, int workers, const ddlsim::json& params) {
    ddlsim::platforms::BuildRequest req;
    req.workers = workers;
    req.link = ddlsim::platforms::LinkSpec{1e9, 1e-6};
    return ddlsim::platforms::TopologyRegistry::instance()
        .create(name, params, "/platform/topology", "/platform/params", "topology")
        ->build(req);
  };
  // A star: one switch reaches everybody, the relation is complete -> empty.
  CHECK(ddlsim::platforms::rank_neighbours(build("star", 8, ddlsim::json::object())).empty());
  // A 4x4 torus: four direct neighbours each, (x +- 1, y +- 1) with wrap-around.
  const auto torus = ddlsim::platforms::rank_neighbours(build("torus", 16, ddlsim::json{{"dims", {4, 4}}}));
  REQUIRE(torus.size() == 16);
  for (const auto& nb : torus) CHECK(nb.size() == 4);
  CHECK(torus[0] == std::vector<int>{1, 3, 4, 12});
  // A ring of 6: two neighbours each.
  const auto ring = ddlsim::platforms::rank_neighbours(build("ring", 6, ddlsim::json::object()));
  REQUIRE(ring.size() == 6);
  CHECK(ring[0] == std::vector<int>{1, 5});
  // A k=4 fat tree: only the two hosts under one edge switch are one switch apart;
  // that relation is disconnected -> empty (collectives use the complete graph).
  CHECK(ddlsim::platforms::rank_neighbours(build("fat_tree", 16, ddlsim::json{{"k", 4}})).empty());
}

// ---- attach_servers

namespace {

const LinkSpec SERVER_LINK{5e9, 2e-6};  // 40 Gbps

struct EdgeView {
  std::string a, b, name;
  double bandwidth, latency;
  bool operator==(const EdgeView&) const = default;
};

std::vector<EdgeView> edges_of(const Topology& t) {
  std::vector<EdgeView> out;
  for (auto e : boost::make_iterator_range(boost::edges(t.graph)))
    out.push_back(EdgeView{t.graph[boost::source(e, t.graph)].name, t.graph[boost::target(e, t.graph)].name,
                           t.graph[e].name, t.graph[e].bandwidth_Bps, t.graph[e].latency_s});
  return out;
}

/// Attaches `servers` and checks: the first edges are the workers' graph unchanged, then one link per
/// server to `expected_at`; returns nothing, CHECKs everything.
void check_attach(const std::string& topology, const json& params, int workers, int servers,
                  const std::string& expected_at) {
  CAPTURE(topology);
  CAPTURE(servers);
  Topology t = build(topology, params, workers);
  const auto before = edges_of(t);
  const auto vertices_before = boost::num_vertices(t.graph);
  const Vertex at = attach_servers(t, servers, SERVER_LINK);
  CHECK(t.graph[at].name == expected_at);
  REQUIRE(t.servers.size() == static_cast<std::size_t>(servers));
  CHECK(t.workers.size() == static_cast<std::size_t>(workers));
  CHECK(boost::num_vertices(t.graph) == vertices_before + static_cast<std::size_t>(servers));
  const auto after = edges_of(t);
  REQUIRE(after.size() == before.size() + static_cast<std::size_t>(servers));
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(after[i] == before[i]);
  for (int s = 0; s < servers; ++s) {
    const Vertex v = t.servers[static_cast<std::size_t>(s)];
    CHECK(t.graph[v].name == "ps-" + std::to_string(s));
    CHECK(t.graph[v].kind == NodeKind::SERVER);
    CHECK(t.graph[v].index == s);
    CHECK(boost::degree(v, t.graph) == 1u);
    const auto e = boost::edge(v, at, t.graph);
    REQUIRE(e.second);
    CHECK(t.graph[e.first].bandwidth_Bps == SERVER_LINK.bandwidth_Bps);
    CHECK(t.graph[e.first].latency_s == SERVER_LINK.latency_s);
  }
  CHECK(is_connected(t.graph));
}

}  // namespace

TEST_CASE("attach_servers: switch-based topologies hang servers off worker 0's switch") {
  check_attach("star", json::object(), 16, 1, "switch-0");
  check_attach("star", json::object(), 4, 3, "switch-0");
  check_attach("hierarchical", json{{"gpus_per_node", 4}}, 8, 2, "node-0");
  // k = 4 fat tree with exactly 16 workers: full, and the servers do not need a host port.
  check_attach("fat_tree", json{{"k", 4}}, 16, 2, "edge-0-0");
}

TEST_CASE("attach_servers: direct-connect topologies hang servers off worker 0 itself, dims stay as built") {
  // 16 workers: the default torus is 4 x 4 (degree 4, host diameter 4), not 1 x 17.
  Topology t = build("torus", json::object(), 16);
  CHECK(host_diameter_hops(t) == 4);
  check_attach("torus", json::object(), 16, 1, "worker-0");
  attach_servers(t, 1, SERVER_LINK);
  CHECK(boost::degree(t.workers[0], t.graph) == 5u);
  for (std::size_t r = 1; r < t.workers.size(); ++r) CHECK(boost::degree(t.workers[r], t.graph) == 4u);
  check_attach("ring", json::object(), 5, 2, "worker-0");
  check_attach("full", json::object(), 4, 1, "worker-0");
}

TEST_CASE("attach_servers: refuses a topology that already has servers") {
  Topology t = build("star", json::object(), 4);
  attach_servers(t, 1, LINK);
  CHECK_THROWS_AS(attach_servers(t, 1, LINK), std::logic_error);
}
