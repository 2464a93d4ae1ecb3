// hierarchical: platforms/builders/hierarchical.cpp. Nodes of G workers on an intra-node switch, node switches joined through a core switch.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("hierarchical") {
  Topology t = build("hierarchical", json::object(), 20, 2);  // nodes of 8, 8 and 4 GPUs
  check_contract(t, 20, 2);
  CHECK(switches(t) == 4);
  CHECK(edges(t) == 20 + 3 + 2);
  CHECK(degree(t, "core-0") == 3 + 2);
  CHECK(degree(t, "node-0") == 8 + 1);
  CHECK(degree(t, "node-2") == 4 + 1);
  CHECK(host_diameter_hops(t) == 4);
  CHECK(path_names(t, "worker-7", "worker-8") ==
        std::vector<std::string>{"worker-7", "node-0", "core-0", "node-1", "worker-8"});
  CHECK(path_names(t, "worker-19", "ps-1") == std::vector<std::string>{"worker-19", "node-2", "core-0", "ps-1"});

  PathCost inside = path_cost(t.graph, vertex(t, "worker-0"), vertex(t, "worker-7"));
  CHECK(inside.hops == 2);
  CHECK(inside.latency_s == doctest::Approx(2e-6));  // 2 x 1 us NVLink
  CHECK(inside.bottleneck_Bps == doctest::Approx(300e9));
  PathCost across = path_cost(t.graph, vertex(t, "worker-0"), vertex(t, "worker-8"));
  CHECK(across.hops == 4);
  CHECK(across.latency_s == doctest::Approx(1e-6 + 2e-6 + 2e-6 + 1e-6));
  CHECK(across.bottleneck_Bps == doctest::Approx(1.25e9));

  Topology one_node = build("hierarchical", json{{"gpus_per_node", 4}}, 4);
  CHECK(host_diameter_hops(one_node) == 2);
  CHECK(switches(one_node) == 2);

  Topology custom_link = build(
      "hierarchical", json{{"gpus_per_node", 2}, {"intra_link", {{"bandwidth", "100GBps"}, {"latency", "500ns"}}}}, 4);
  CHECK(switches(custom_link) == 3);
  Edge intra = boost::edge(vertex(custom_link, "worker-3"), vertex(custom_link, "node-1"), custom_link.graph).first;
  CHECK(custom_link.graph[intra].bandwidth_Bps == doctest::Approx(100e9));
  CHECK(custom_link.graph[intra].latency_s == doctest::Approx(5e-7));

  CHECK_THROWS_WITH_AS(build("hierarchical", json{{"intra_link", {{"bw", "1GBps"}}}}, 4),
                       "/platform/params/intra_link/bw: unknown key \"bw\"; valid keys are: bandwidth, latency",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("hierarchical", json{{"gpus_per_node", 0}}, 4),
                       "/platform/params/gpus_per_node: expected an integer in [1, 1024], got 0", ConfigError);
}
