// fat_tree: platforms/builders/fat_tree.cpp. A k-ary fat tree (k^3/4 host slots, filled pod by pod).
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("fat_tree: k = 4 full") {
  Topology t = build("fat_tree", json{{"k", 4}}, 16);
  check_contract(t, 16, 0);
  CHECK(switches(t) == 20);
  CHECK(edges(t) == 48);
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v)
    CHECK(boost::degree(v, t.graph) == (t.graph[v].kind == NodeKind::SWITCH ? 4U : 1U));
  CHECK(host_diameter_hops(t) == 6);
  // Host slots fill pod 0 edge 0 first, k/2 = 2 hosts per edge switch.
  CHECK(path_names(t, "worker-0", "worker-1") == std::vector<std::string>{"worker-0", "edge-0-0", "worker-1"});
  CHECK(path_names(t, "worker-0", "worker-2") ==
        std::vector<std::string>{"worker-0", "edge-0-0", "agg-0-0", "edge-0-1", "worker-2"});
  auto across =
      std::vector<std::string>{"worker-0", "edge-0-0", "agg-0-0", "core-0", "agg-3-0", "edge-3-1", "worker-15"};
  CHECK(path_names(t, "worker-0", "worker-15") == across);
  CHECK(path_names(t, "worker-0", "worker-15") == across);
  PathCost cost = path_cost(t.graph, vertex(t, "worker-0"), vertex(t, "worker-15"));
  CHECK(cost.hops == 6);
  CHECK(cost.latency_s == doctest::Approx(12e-6));
  CHECK(cost.bottleneck_Bps == doctest::Approx(1.25e9));
}

TEST_CASE("fat_tree: default k, partial fill, k = 2") {
  Topology t = build("fat_tree", json::object(), 16, 1);  // 17 hosts -> k = 6 (54 slots)
  check_contract(t, 16, 1);
  CHECK(switches(t) == 9 + 6 * 6);
  CHECK(edges(t) == 17 + 54 + 54);
  CHECK(degree(t, "edge-5-2") == 3);  // unused host ports stay empty
  CHECK(degree(t, "edge-0-0") == 6);
  CHECK(build("fat_tree", json::object(), 16).graph[16].name == "core-0");  // 16 hosts still fit k = 4
  CHECK(switches(build("fat_tree", json::object(), 16)) == 20);

  Topology two = build("fat_tree", json::object(), 2);
  check_contract(two, 2, 0);
  CHECK(switches(two) == 5);
  CHECK(edges(two) == 6);
  CHECK(host_diameter_hops(two) == 6);
}

TEST_CASE("fat_tree: oversubscription divides switch-to-switch bandwidth") {
  Topology t = build("fat_tree", json{{"k", 4}, {"oversubscription", 4}}, 16);
  const Graph& g = t.graph;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    bool host_link =
        g[boost::source(*it, g)].kind != NodeKind::SWITCH || g[boost::target(*it, g)].kind != NodeKind::SWITCH;
    CHECK(g[*it].bandwidth_Bps == doctest::Approx(host_link ? 1.25e9 : 1.25e9 / 4));
    CHECK(g[*it].latency_s == doctest::Approx(2e-6));
  }
  CHECK(path_cost(g, vertex(t, "worker-0"), vertex(t, "worker-1")).bottleneck_Bps == doctest::Approx(1.25e9));
  CHECK(path_cost(g, vertex(t, "worker-0"), vertex(t, "worker-15")).bottleneck_Bps == doctest::Approx(3.125e8));
}

TEST_CASE("fat_tree: errors") {
  CHECK_THROWS_WITH_AS(build("fat_tree", json{{"k", 4}}, 16, 1),
                       "/platform/workers: a k=4 fat tree holds at most 16 hosts, but the platform has 17 hosts "
                       "(16 workers + 1 parameter server)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("fat_tree", json{{"k", 5}}, 4), "/platform/params/k: k must be even, got 5", ConfigError);
  CHECK_THROWS_WITH_AS(build("fat_tree", json{{"k", 0}}, 4),
                       "/platform/params/k: expected an integer in [2, 256], got 0", ConfigError);
  CHECK_THROWS_WITH_AS(build("fat_tree", json{{"oversubscription", 0.5}}, 4),
                       "/platform/params/oversubscription: expected a number in [1, 1000000], got 0.5", ConfigError);
  CHECK_THROWS_WITH_AS(build("fat_tree", json{{"K", 4}}, 4),
                       "/platform/params/K: unknown key \"K\"; valid keys are: k, oversubscription", ConfigError);
}
