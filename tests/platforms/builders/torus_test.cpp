// torus: platforms/builders/torus.cpp. A 2-D or 3-D wrap-around torus of hosts.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

TEST_CASE("torus: 4 x 4") {
  Topology t = build("torus", json{{"dims", {4, 4}}}, 16);
  check_contract(t, 16, 0);
  CHECK(switches(t) == 0);
  CHECK(edges(t) == 32);
  for (Vertex v = 0; v < 16; ++v) CHECK(boost::degree(v, t.graph) == 4);
  CHECK(host_diameter_hops(t) == 4);
  // (x, y) = (s mod 4, s / 4); wrap-around links in both dimensions.
  CHECK(boost::edge(vertex(t, "worker-0"), vertex(t, "worker-3"), t.graph).second);
  CHECK(boost::edge(vertex(t, "worker-0"), vertex(t, "worker-12"), t.graph).second);
  CHECK(path_names(t, "worker-0", "worker-10") ==
        std::vector<std::string>{"worker-0", "worker-1", "worker-2", "worker-6", "worker-10"});
  CHECK(path_cost(t.graph, 0, 10).latency_s == doctest::Approx(8e-6));
  // Default dims: 4 x 4 for 16 hosts.
  CHECK(edges(build("torus", json::object(), 16)) == 32);
}

TEST_CASE("torus: 3-D, sizes 1 and 2, default factorisation") {
  Topology t = build("torus", json{{"dims", {2, 3, 4}}}, 22, 2);
  check_contract(t, 22, 2);
  CHECK(edges(t) == 12 + 24 + 24);
  for (Vertex v = 0; v < 24; ++v) CHECK(boost::degree(v, t.graph) == 5);
  CHECK(host_diameter_hops(t) == 1 + 1 + 2);

  Topology line = build("torus", json{{"dims", {1, 5}}}, 5);
  CHECK(edges(line) == 5);
  CHECK(host_diameter_hops(line) == 2);

  Topology pair = build("torus", json{{"dims", {2, 2}}}, 4);
  CHECK(edges(pair) == 4);
  check_contract(pair, 4, 0);

  Topology twelve = build("torus", json::object(), 12);  // 3 x 4
  CHECK(edges(twelve) == 24);
  CHECK(host_diameter_hops(twelve) == 1 + 2);
  CHECK(edges(build("torus", json::object(), 7)) == 7);  // prime: 1 x 7, a ring
  CHECK(edges(build("torus", json::object(), 1)) == 0);
}

TEST_CASE("torus: errors") {
  CHECK_THROWS_WITH_AS(build("torus", json{{"dims", {3, 5}}}, 16),
                       "/platform/params/dims: the product of dims [3, 5] is 15, but the platform has 16 hosts "
                       "(16 workers)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("torus", json{{"dims", {2, 2, 2}}}, 7, 2),
                       "/platform/params/dims: the product of dims [2, 2, 2] is 8, but the platform has 9 hosts "
                       "(7 workers + 2 parameter servers)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(
      build("torus", json{{"dims", {16}}}, 16),
      "/platform/params/dims: expected an array of 2 or 3 positive integers, got an array of 1 element", ConfigError);
  CHECK_THROWS_WITH_AS(build("torus", json{{"dims", "4x4"}}, 16),
                       "/platform/params/dims: expected an array of 2 or 3 positive integers, got the string \"4x4\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("torus", json{{"dims", {4, 0}}}, 16),
                       "/platform/params/dims/1: expected an integer in [1, 1048576], got 0", ConfigError);
}
