// custom: platforms/builders/custom.cpp. The user's nodes and edges, names kept; counts checked against the platform; connected.
#include "tests/platforms/topology_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::platforms;
using namespace ddlsim::test;

namespace {
json custom_nodes(std::initializer_list<std::pair<const char*, const char*>> nodes) {
  json out = json::array();
  for (auto [name, kind] : nodes) out.push_back({{"name", name}, {"kind", kind}});
  return out;
}
json edge_to(const char* a, const char* b) { return json{{"a", a}, {"b", b}}; }
}  // namespace

TEST_CASE("custom: a small graph") {
  json params{
      {"nodes", custom_nodes({{"sw", "switch"}, {"gpu-a", "worker"}, {"param", "server"}, {"gpu-b", "worker"}})},
      {"edges",
       {edge_to("gpu-a", "sw"), edge_to("sw", "gpu-b"),
        json{{"a", "param"}, {"b", "sw"}, {"bandwidth", "100Gbps"}, {"latency", "10us"}}}}};
  Topology t = build("custom", params, 2, 1);
  check_contract(t, 2, 1);
  CHECK(switches(t) == 1);
  CHECK(edges(t) == 3);
  CHECK(degree(t, "sw") == 3);
  CHECK(host_diameter_hops(t) == 2);
  // Nodes keep the user's names; workers are ranked in the order they are listed.
  CHECK(t.graph[t.workers[0]].name == "gpu-a");
  CHECK(t.graph[t.workers[1]].name == "gpu-b");
  CHECK(t.graph[t.servers[0]].name == "param");
  CHECK(boost::edge(vertex(t, "gpu-a"), vertex(t, "sw"), t.graph).second);
  Edge e = boost::edge(vertex(t, "param"), vertex(t, "sw"), t.graph).first;
  CHECK(t.graph[e].name == "param<->sw");
  CHECK(t.graph[e].bandwidth_Bps == doctest::Approx(12.5e9));
  PathCost cost = path_cost(t.graph, vertex(t, "gpu-b"), vertex(t, "param"));
  CHECK(cost.latency_s == doctest::Approx(12e-6));
  CHECK(cost.bottleneck_Bps == doctest::Approx(1.25e9));
}

TEST_CASE("custom: errors") {
  json three = custom_nodes({{"a", "worker"}, {"b", "worker"}, {"c", "worker"}});
  CHECK_THROWS_WITH_AS(
      build("custom",
            json{{"nodes", three},
                 {"edges", {edge_to("a", "b"), edge_to("b", "c"), edge_to("a", "c"), edge_to("a", "x")}}},
            3),
      "/platform/params/edges/3/b: unknown node \"x\"", ConfigError);
  CHECK_THROWS_WITH_AS(
      build("custom", json{{"nodes", custom_nodes({{"a", "worker"}, {"b", "worker"}, {"a", "switch"}})}}, 2),
      "/platform/params/nodes/2/name: duplicate node name \"a\"", ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", three}, {"edges", {edge_to("a", "b"), edge_to("c", "c")}}}, 3),
                       "/platform/params/edges/1: self-loop: node \"c\" is linked to itself", ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", three}, {"edges", {edge_to("a", "b"), edge_to("b", "a")}}}, 3),
                       "/platform/params/edges/1: duplicate edge between \"b\" and \"a\" (also at "
                       "/platform/params/edges/0)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", three}, {"edges", {edge_to("a", "b")}}}, 3),
                       "/platform/params/edges: topology is disconnected: host \"a\" cannot reach host \"c\"",
                       ConfigError);
  json with_switch = custom_nodes({{"a", "worker"}, {"b", "worker"}, {"s", "switch"}});
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", with_switch}, {"edges", {edge_to("a", "b")}}}, 2),
                       "/platform/params/edges: topology is disconnected: host \"a\" cannot reach switch \"s\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", three}, {"edges", {edge_to("a", "b"), edge_to("b", "c")}}}, 4),
                       "/platform/params/nodes: the nodes list has 3 worker nodes, but platform.workers is 4",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", three}, {"edges", {edge_to("a", "b"), edge_to("b", "c")}}}, 3, 1),
                       "/platform/params/nodes: the nodes list has 0 server nodes, but platform.parameter_servers is 1",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json{{"nodes", custom_nodes({{"a", "gpu"}})}}, 1),
                       "/platform/params/nodes/0/kind: unknown value \"gpu\"; valid values are: worker, server, switch",
                       ConfigError);
  CHECK_THROWS_WITH_AS(build("custom", json::object(), 1), "/platform/params/nodes: missing required key", ConfigError);
  CHECK_THROWS_WITH_AS(
      build("custom", json{{"nodes", custom_nodes({{"a", "worker"}})}, {"edges", {edge_to("a", "a")}}}, 1),
      "/platform/params/edges/0: self-loop: node \"a\" is linked to itself", ConfigError);
}
