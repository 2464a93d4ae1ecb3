// full: platforms/builders/full.cpp. Every pair of hosts linked directly.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("full") {
  for (int h = 1; h <= 8; ++h) CHECK(edges(build("full", json::object(), h)) == h * (h - 1) / 2);
  Topology t = build("full", json::object(), 5, 1);
  check_contract(t, 5, 1);
  CHECK(switches(t) == 0);
  CHECK(edges(t) == 15);
  for (Vertex v = 0; v < 6; ++v) CHECK(boost::degree(v, t.graph) == 5);
  CHECK(host_diameter_hops(t) == 1);
  CHECK(path_names(t, "worker-4", "ps-0") == std::vector<std::string>{"worker-4", "ps-0"});
}

TEST_CASE("full: takes no params") {
  CHECK_THROWS_WITH_AS(build("full", json{{"k", 4}}, 4), "/platform/params/k: unknown key \"k\"; valid keys are: (none)",
                       ConfigError);
}
