// Topology builders and graph helpers, checked on graph facts without an engine:
// counts, degrees, connectivity, diameters, routes, costs and error messages.
#include "platforms/topology.hpp"

#include "models/error.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace ddlsim;
using namespace ddlsim::platforms;

namespace {

const LinkSpec LINK{1.25e9, 2e-6};  // 10 Gbps, 2 us

BuildRequest request(int workers, int servers = 0) {
  BuildRequest r;
  r.workers = workers;
  r.parameter_servers = servers;
  r.link = LINK;
  return r;
}

Topology build(const std::string& name, const json& params, int workers, int servers = 0) {
  auto builder =
      TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology");
  return builder->build(request(workers, servers));
}

int count_kind(const Topology& t, NodeKind kind) {
  int n = 0;
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v) n += t.graph[v].kind == kind ? 1 : 0;
  return n;
}
int switches(const Topology& t) { return count_kind(t, NodeKind::SWITCH); }
int edges(const Topology& t) { return static_cast<int>(boost::num_edges(t.graph)); }

Vertex vertex(const Topology& t, const std::string& name) {
  for (Vertex v = 0; v < boost::num_vertices(t.graph); ++v)
    if (t.graph[v].name == name) return v;
  FAIL("no vertex " << name);
  return 0;
}
int degree(const Topology& t, const std::string& name) {
  return static_cast<int>(boost::degree(vertex(t, name), t.graph));
}

std::vector<std::string> path_names(const Topology& t, const std::string& a, const std::string& b) {
  std::vector<std::string> out;
  for (Vertex v : shortest_path(t.graph, vertex(t, a), vertex(t, b))) out.push_back(t.graph[v].name);
  return out;
}

/// The contract every builder keeps (`custom` keeps the user's host names).
void check_contract(const Topology& t, int workers, int servers) {
  const Graph& g = t.graph;
  REQUIRE(t.workers.size() == static_cast<std::size_t>(workers));
  REQUIRE(t.servers.size() == static_cast<std::size_t>(servers));
  CHECK(count_kind(t, NodeKind::WORKER) == workers);
  CHECK(count_kind(t, NodeKind::SERVER) == servers);
  for (int r = 0; r < workers; ++r) {
    CHECK(g[t.workers[r]].kind == NodeKind::WORKER);
    CHECK(g[t.workers[r]].index == r);
    if (t.kind != "custom") CHECK(g[t.workers[r]].name == "worker-" + std::to_string(r));
  }
  for (int s = 0; s < servers; ++s) {
    CHECK(g[t.servers[s]].kind == NodeKind::SERVER);
    CHECK(g[t.servers[s]].index == s);
    if (t.kind != "custom") CHECK(g[t.servers[s]].name == "ps-" + std::to_string(s));
  }
  std::set<std::string> names;
  for (Vertex v = 0; v < boost::num_vertices(g); ++v) CHECK(names.insert(g[v].name).second);
  std::set<std::string> link_names;
  std::set<std::pair<Vertex, Vertex>> pairs;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    Vertex a = boost::source(*it, g), b = boost::target(*it, g);
    CHECK(a != b);
    CHECK(pairs.insert(std::minmax(a, b)).second);
    CHECK(link_names.insert(g[*it].name).second);
    CHECK(g[*it].bandwidth_Bps > 0);
    CHECK(g[*it].latency_s >= 0);
  }
  CHECK(is_connected(g));
  CHECK_NOTHROW(check_connected(t, "/platform/params"));
}

}  // namespace

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
