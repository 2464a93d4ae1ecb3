// attach_servers: parameter servers added to a workers-only topology (as
// `ddlsim collectives` does) leave the workers' graph exactly as built and hang
// off the node worker 0 hangs off, one dedicated link each.
#include "platforms/topology.hpp"

#include <doctest/doctest.h>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::platforms;

namespace {

const LinkSpec LINK{1.25e9, 2e-6};       // 10 Gbps, 2 us
const LinkSpec SERVER_LINK{5e9, 2e-6};   // 40 Gbps

Topology build(const std::string& name, const json& params, int workers) {
  auto builder =
      TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology");
  BuildRequest r;
  r.workers = workers;
  r.link = LINK;
  return builder->build(r);
}

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
