// ring: platforms/builders/ring.cpp. Hosts in a ring, each linked to its two neighbours.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("ring") {
  CHECK(edges(build("ring", json::object(), 1)) == 0);
  CHECK(edges(build("ring", json::object(), 2)) == 1);
  CHECK(edges(build("ring", json::object(), 3)) == 3);
  for (int h = 2; h <= 9; ++h) CHECK(host_diameter_hops(build("ring", json::object(), h)) == h / 2);
  Topology t = build("ring", json::object(), 5, 1);
  check_contract(t, 5, 1);
  CHECK(switches(t) == 0);
  CHECK(edges(t) == 6);
  for (Vertex v = 0; v < 6; ++v) CHECK(boost::degree(v, t.graph) == 2);
  CHECK(degree(t, "ps-0") == 2);
  CHECK(boost::edge(vertex(t, "ps-0"), vertex(t, "worker-0"), t.graph).second);  // wrap-around
  CHECK(host_diameter_hops(t) == 3);

  // Two shortest paths from 0 to 3 on a 6-ring; the lower-index one wins, every time.
  Topology six = build("ring", json::object(), 6);
  auto expected = std::vector<std::string>{"worker-0", "worker-1", "worker-2", "worker-3"};
  CHECK(path_names(six, "worker-0", "worker-3") == expected);
  CHECK(path_names(six, "worker-0", "worker-3") == expected);
  CHECK(path_names(six, "worker-3", "worker-0") ==
        std::vector<std::string>{"worker-3", "worker-2", "worker-1", "worker-0"});
  CHECK(path_names(six, "worker-0", "worker-5") == std::vector<std::string>{"worker-0", "worker-5"});
  CHECK(path_names(six, "worker-4", "worker-4") == std::vector<std::string>{"worker-4"});
  PathCost self = path_cost(six.graph, 4, 4);
  CHECK(self.hops == 0);
  CHECK(self.latency_s == 0);
  PathCost across = path_cost(six.graph, 0, 3);
  CHECK(across.hops == 3);
  CHECK(across.latency_s == doctest::Approx(6e-6));
}

TEST_CASE("ring: takes no params") {
  CHECK_THROWS_WITH_AS(build("ring", json{{"dims", {4}}}, 4),
                       "/platform/params/dims: unknown key \"dims\"; valid keys are: (none)", ConfigError);
}
