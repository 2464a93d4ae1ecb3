// star: platforms/builders/star.cpp. Every host on one switch "switch-0", one link each.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("star") {
  Topology t = build("star", json::object(), 5, 2);
  check_contract(t, 5, 2);
  CHECK(switches(t) == 1);
  CHECK(edges(t) == 7);
  CHECK(degree(t, "switch-0") == 7);
  CHECK(degree(t, "worker-3") == 1);
  CHECK(host_diameter_hops(t) == 2);
  CHECK(path_names(t, "worker-0", "ps-1") == std::vector<std::string>{"worker-0", "switch-0", "ps-1"});
  PathCost cost = path_cost(t.graph, vertex(t, "worker-0"), vertex(t, "ps-1"));
  CHECK(cost.hops == 2);
  CHECK(cost.latency_s == doctest::Approx(4e-6));
  CHECK(cost.bottleneck_Bps == doctest::Approx(1.25e9));
  CHECK(host_diameter_hops(build("star", json::object(), 1)) == 0);
}

TEST_CASE("star: takes no params") {
  CHECK_THROWS_WITH_AS(build("star", json{{"switches", 2}}, 4),
                       "/platform/params/switches: unknown key \"switches\"; valid keys are: (none)", ConfigError);
}
