// Routes for the contention estimate (platforms/network_paths.*) and the estimate
// on a k = 4 fat tree, derived here from the flows each directed link carries.
#include "platforms/network_paths.hpp"

#include "models/collective.hpp"
#include "models/network_cost.hpp"

#include <doctest/doctest.h>
#include <memory>
#include <set>

using namespace ddlsim;
using namespace ddlsim::platforms;

namespace {

Topology build(const std::string& name, const json& params, int workers, int servers = 0,
               LinkSpec link = LinkSpec{1.25e9, 1e-6}) {
  BuildRequest r;
  r.workers = workers;
  r.parameter_servers = servers;
  r.link = link;
  return TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology")->build(r);
}

std::unique_ptr<models::Collective> make(const std::string& name) {
  return models::CollectiveRegistry::instance().create(name, json::object(), "/training/collective/name",
                                                       "/training/collective/params", "collective");
}

/// Vertex names along a route of directed link ids, starting at host `from`.
std::vector<std::string> walk(const Topology& t, Vertex from, const std::vector<int>& links) {
  std::vector<Edge> edges;
  for (auto e : boost::make_iterator_range(boost::edges(t.graph))) edges.push_back(e);
  std::vector<std::string> out{t.graph[from].name};
  Vertex v = from;
  for (int id : links) {
    const Edge e = edges[static_cast<std::size_t>(id / 2)];
    const Vertex tail = id % 2 == 0 ? boost::source(e, t.graph) : boost::target(e, t.graph);
    const Vertex head = id % 2 == 0 ? boost::target(e, t.graph) : boost::source(e, t.graph);
    REQUIRE(tail == v);
    v = head;
    out.push_back(t.graph[v].name);
  }
  return out;
}

}  // namespace

TEST_CASE("shortest_path_routes follows shortest_path, link by directed link") {
  for (const auto& [name, params, workers, servers] :
       std::vector<std::tuple<std::string, json, int, int>>{{"fat_tree", json{{"k", 4}}, 16, 0},
                                                            {"torus", json{{"dims", {3, 4}}}, 11, 1},
                                                            {"hierarchical", json{{"gpus_per_node", 4}}, 10, 2},
                                                            {"star", json::object(), 5, 1}}) {
    CAPTURE(name);
    const Topology t = build(name, params, workers, servers);
    const auto paths = shortest_path_routes(t);
    CHECK(paths.ranks == workers + servers);
    CHECK(paths.bandwidth_Bps.size() == 2 * boost::num_edges(t.graph));
    CHECK(paths.latency_s.size() == 2 * boost::num_edges(t.graph));
    std::vector<Vertex> hosts = t.workers;
    hosts.insert(hosts.end(), t.servers.begin(), t.servers.end());
    for (int a = 0; a < paths.ranks; ++a)
      for (int b = 0; b < paths.ranks; ++b) {
        if (a == b) continue;
        std::vector<std::string> expected;
        for (Vertex v : shortest_path(t.graph, hosts[static_cast<std::size_t>(a)], hosts[static_cast<std::size_t>(b)]))
          expected.push_back(t.graph[v].name);
        CHECK(walk(t, hosts[static_cast<std::size_t>(a)], paths.route(a, b)) == expected);
      }
  }
}

TEST_CASE("is_uniform_star: the reference platform only") {
  CHECK(is_uniform_star(build("star", json::object(), 8)));
  CHECK(is_uniform_star(build("star", json::object(), 8, 2)));
  CHECK_FALSE(is_uniform_star(build("fat_tree", json{{"k", 4}}, 16)));
  CHECK_FALSE(is_uniform_star(build("hierarchical", json{{"gpus_per_node", 4}}, 8)));
  CHECK_FALSE(is_uniform_star(build("ring", json::object(), 8)));
  Topology uneven = build("star", json::object(), 4);
  auto e = *boost::edges(uneven.graph).first;
  uneven.graph[e].bandwidth_Bps /= 2;
  CHECK_FALSE(is_uniform_star(uneven));
}

TEST_CASE("contention estimate on a k = 4 fat tree: ring and direct from per-link flow counts and auto picks ring") {
  // 16 hosts, 2 per edge switch, 4 per pod; every link B = 10 Gbps, latency l = 1 us.
  // Routes: fewest hops, ties to the lowest vertex index. Vertices are hosts, then
  // core-0..3, then per pod edge-p-0, edge-p-1, agg-p-0, agg-p-1: so every route
  // leaving an edge switch climbs to agg-p-0, and every route leaving a pod goes
  // through core-0 (the lowest core above agg-p-0).
  const double bw = 1.25e9, l = 1e-6, m = 100.0 * 1024 * 1024;
  const int n = 16;
  const Topology t = build("fat_tree", json{{"k", 4}}, n, 0, LinkSpec{bw, l});
  auto cost = std::make_shared<const models::ContentionCost>(shortest_path_routes(t));
  const models::CollectiveGroup plain(n, 0);

  // Ring r -> r+1: even r stays under its edge switch (2 links), r = 4p+1 crosses to the
  // pod's other edge switch through agg-p-0 (4 links), r = 4p+3 leaves the pod through
  // agg-p-0, core-0, agg-(p+1)-0 (6 links). No directed link carries two of these flows
  // (pod p's exit uses agg-p-0 -> core-0, its entry core-0 -> agg-p-0 -> edge-p-0, its
  // inner crossing edge-p-0 -> agg-p-0 -> edge-p-1), so each of the 2(N-1) steps is gated
  // by a 6-link crossing: 6 l + (M/N)/B.
  const double ring = 2.0 * (n - 1) * (6 * l + m / n / bw);
  CHECK(*cost->evaluate(*make("ring"), plain, m) == doctest::Approx(ring).epsilon(1e-12));

  // Direct: each of its two rounds sends M/N from every host to each of the 15 others.
  // agg-p-0 -> core-0 carries every flow leaving pod p: 4 hosts x 12 = 48 (as does
  // core-0 -> agg-q-0 into pod q); edge uplinks carry 2 x 14 = 28; host uplinks 15. An
  // inter-pod transfer: 6 l + 48 (M/N)/B, and every rank has one, so each round ends there.
  const double direct = 2 * (6 * l + 48 * (m / n) / bw);
  CHECK(*cost->evaluate(*make("direct"), plain, m) == doctest::Approx(direct).epsilon(1e-12));
  CHECK(direct > 3 * ring);
  // The flow simulation agrees (tests/engine/collective_identity_test.cpp checks the ring;
  // `ddlsim collectives -n 16 -m 100MiB -b 10Gbps -l 1us -t fat_tree` simulates direct at
  // 0.503328 s = 12 l + 6 M / B).

  // auto, with the cost: not direct for large buckets; it picks the cheapest estimate,
  // the ring here. Without it, the closed forms pick direct.
  models::CollectiveGroup group(n, 0);
  group.network_cost = cost;
  const models::AlphaBeta ab{6 * l, 1 / bw};
  auto all = make("auto");
  const auto choice = models::choice(*all, group, m, ab);
  REQUIRE(choice.has_value());
  CHECK(choice->algorithm == "ring");
  CHECK(choice->basis == "contention estimate");
  CHECK(choice->estimated_s == doctest::Approx(ring).epsilon(1e-12));
  CHECK(models::resolved_name(*all, plain, m, ab) == "direct");
  // Small messages are latency-bound: the ring's 30 steps of 6 l lose to direct's 2.
  CHECK(models::resolved_name(*all, group, 1024, ab) != "ring");
  CHECK(*cost->evaluate(*make("direct"), plain, 1024) < *cost->evaluate(*make("ring"), plain, 1024));
}

TEST_CASE("hierarchical topology exposes gpus_per_node and others 0") {
  CHECK(build("hierarchical", json{{"gpus_per_node", 4}}, 10).gpus_per_node == 4);
  CHECK(build("hierarchical", json::object(), 10).gpus_per_node == 8);
  for (const char* name : {"star", "ring", "full"}) CHECK(build(name, json::object(), 6).gpus_per_node == 0);
  CHECK(build("fat_tree", json{{"k", 4}}, 16).gpus_per_node == 0);
}
