// dragonfly: platforms/builders/dragonfly.cpp. Groups of routers, all-to-all inside a group, global links joining groups pairwise.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("dragonfly: defaults") {
  Topology t = build("dragonfly", json::object(), 16);  // a = 4, p = 2 -> 2 groups
  check_contract(t, 16, 0);
  CHECK(switches(t) == 8);
  CHECK(edges(t) == 16 + 2 * 6 + 1);
  CHECK(host_diameter_hops(t) == 5);
  CHECK(degree(t, "router-0-0") == 2 + 3 + 1);
  CHECK(degree(t, "router-0-1") == 2 + 3);
  CHECK(boost::edge(vertex(t, "router-0-0"), vertex(t, "router-1-0"), t.graph).second);
  CHECK(path_names(t, "worker-0", "worker-15") ==
        std::vector<std::string>{"worker-0", "router-0-0", "router-1-0", "router-1-3", "worker-15"});
  Topology one = build("dragonfly", json::object(), 3, 1);
  check_contract(one, 3, 1);
  CHECK(switches(one) == 4);
  CHECK(edges(one) == 4 + 6);
}

TEST_CASE("dragonfly: maximal size uses every global port once") {
  json params{{"groups", 9},
              {"routers_per_group", 4},
              {"hosts_per_router", 1},
              {"global_links_per_router", 2},
              {"global_bandwidth", "40Gbps"},
              {"global_latency", "5us"}};
  Topology t = build("dragonfly", params, 36);
  check_contract(t, 36, 0);
  CHECK(switches(t) == 36);
  CHECK(edges(t) == 36 + 9 * 6 + 9 * 8 / 2);
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v)
    if (t.graph[v].kind == NodeKind::SWITCH) CHECK(boost::degree(v, t.graph) == 1 + 3 + 2);
  CHECK(host_diameter_hops(t) == 5);
  // Groups 0 and 1: port 0 of group 0 (router 0) to port 7 of group 1 (router 3).
  Edge global = boost::edge(vertex(t, "router-0-0"), vertex(t, "router-1-3"), t.graph).first;
  CHECK(t.graph[global].bandwidth_Bps == doctest::Approx(5e9));
  CHECK(t.graph[global].latency_s == doctest::Approx(5e-6));
  PathCost cost = path_cost(t.graph, vertex(t, "worker-0"), vertex(t, "worker-4"));
  CHECK(cost.hops == 4);
  CHECK(cost.latency_s == doctest::Approx(2e-6 + 2e-6 + 5e-6 + 2e-6));
  CHECK(cost.bottleneck_Bps == doctest::Approx(1.25e9));
}

TEST_CASE("dragonfly: errors") {
  CHECK_THROWS_WITH_AS(build("dragonfly", json{{"groups", 10}}, 4),
                       "/platform/params/groups: at most routers_per_group * global_links_per_router + 1 = 9 groups "
                       "can be joined pairwise, got 10",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("dragonfly", json::object(), 73),
                       "/platform/workers: a dragonfly with 4 routers per group, 2 hosts per router and 2 global links "
                       "per router holds at most 9 groups (72 hosts), but the platform has 73 hosts (73 workers)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("dragonfly", json{{"groups", 2}}, 16, 1),
                       "/platform/workers: a dragonfly of 2 groups of 4 routers with 2 hosts each holds at most 16 "
                       "hosts, but the platform has 17 hosts (16 workers + 1 parameter server)",
                       ConfigError);
}
