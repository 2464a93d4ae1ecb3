// platform.routing end to end.
//
// 1. The SimGrid platform follows platforms::RouteTable: for every host pair,
//    Host::route_to lists exactly the table's links, in order and direction
//    (the Dijkstra zone for shortest, where the table reproduces SimGrid's
//    tie-breaking, and the emitter's own zone for ecmp and dmodk).
// 2. On a k = 4 fat tree with every link at the same bandwidth (1:1, 16 hosts)
//    D-mod-k makes permutation traffic run at full bandwidth: Rabenseifner's
//    halving-doubling (an XOR permutation per step) costs exactly the sum of
//    its steps' path latencies plus M beta (N-1)/N per phase, and the direct
//    all-reduce (two all-to-alls) runs at its NICs' speed; shortest, which
//    funnels cross-pod traffic through one core switch, is slower by what its
//    link loads predict.
// 3. The field: default, summary, bad values.
#include "platforms/routing.hpp"
#include "engine/s4u_emitter.hpp"
#include "engine/engine.hpp"
#include "engine/schedule_executor.hpp"
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::platforms;
using ddlsim::test::TempDir;

namespace {

constexpr std::uint64_t SEED = 1;

Topology build(const std::string& name, const json& params, int workers, int servers = 0,
               LinkSpec link = LinkSpec{25e9 / 8, 1e-6}) {
  auto builder = TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology");
  BuildRequest r;
  r.workers = workers;
  r.parameter_servers = servers;
  r.link = link;
  return builder->build(r);
}

/// Emits `name` with `routing` in a fresh engine and compares every host pair's SimGrid route with the table's.
void check_emitted_routes(const std::string& name, const json& params, int workers, int servers, Routing routing) {
  const Topology t = build(name, params, workers, servers);
  sim::EngineSession session({}, sim::NetworkSpec{});
  const auto platform = emit_platform(t, sim::byte_scale(), {}, routing, SEED);
  const RouteTable table(t, routing, SEED);
  std::vector<const EdgeProps*> edge;
  for (auto e : boost::make_iterator_range(boost::edges(t.graph))) edge.push_back(&t.graph[e]);
  const int n = static_cast<int>(platform.hosts.size());
  REQUIRE(n == table.hosts());
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      CAPTURE(s);
      CAPTURE(d);
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      platform.hosts[static_cast<std::size_t>(s)]->route_to(platform.hosts[static_cast<std::size_t>(d)], links, &latency);
      std::vector<std::string> got, want;
      for (const auto* l : links) got.push_back(l->get_name());
      double want_latency = 0;
      for (const Hop& hop : table.route(s, d)) {
        want.push_back(edge[hop.edge]->name + (hop.forward ? "_UP" : "_DOWN"));
        want_latency += edge[hop.edge]->latency_s;
      }
      CHECK(got == want);
      CHECK(latency == doctest::Approx(want_latency).epsilon(1e-12));
    }
}

using Row = ddlsim::test::CollectiveRow;

std::map<std::string, Row> run_csv(const std::string& args) {
  // --call-cost 0: routes and contention are compared with pure alpha-beta forms.
  return ddlsim::test::collectives_csv("--call-cost 0 " + args);
}

// The k = 4, 1:1 fat tree of the end-to-end tests.
constexpr int K = 4, N = K * K * K / 4;
const double M = 100.0 * 1024 * 1024;  // bytes per rank
const double BW = 25e9 / 8, LAT = 1e-6, BETA = 1 / BW;
const std::string FAT_TREE = fmt::format("-n {} -m 100MiB -b 25Gbps -l 1us -t fat_tree --topology-params '{{\"k\":{}}}' "
                                         "--servers 0 --algorithms halving_doubling,direct",
                                         N, K);

/// The flows' common bottleneck load when every flow's most loaded link
/// carries the same number L of flows (then max-min gives each exactly B / L
/// and they all finish together); 0 when the flows are not that uniform.
int uniform_bottleneck(const RouteTable& table, const std::vector<std::pair<int, int>>& flows) {
  std::map<std::pair<std::size_t, bool>, int> load;
  for (auto [s, d] : flows)
    for (const Hop& hop : table.route(s, d)) ++load[{hop.edge, hop.forward}];
  int common = -1;
  for (auto [s, d] : flows) {
    int worst = 0;
    for (const Hop& hop : table.route(s, d)) worst = std::max(worst, load[{hop.edge, hop.forward}]);
    if (common >= 0 && worst != common) return 0;
    common = worst;
  }
  return common;
}

/// Halving-doubling on N = 16 (a power of two): steps k = 0..3 then 3..0,
/// rank r exchanging M / 2^(k+1) bytes with r ^ 2^k. All pairs of a step have
/// the same hop count h_k; with uniform bottleneck loads L_k every step ends
/// at once, so T = 2 sum_k (h_k l + L_k M / 2^(k+1) beta). Returns -1 when the
/// loads are not uniform (no exact prediction).
double predicted_halving_doubling(const Topology& t, Routing routing) {
  const RouteTable table(t, routing, SEED);
  double total = 0;
  for (int k = 0; (1 << k) < N; ++k) {
    std::vector<std::pair<int, int>> flows;
    for (int r = 0; r < N; ++r) flows.emplace_back(r, r ^ (1 << k));
    const int hops = hop_distances(t.graph, t.workers[0])[t.workers[1 << k]];
    const int bottleneck = uniform_bottleneck(table, flows);
    if (bottleneck == 0) return -1;
    total += 2 * (hops * LAT + bottleneck * M / (2 << k) * BETA);
  }
  return total;
}

/// Runs `ddlsim run` on a 16-worker fat-tree scenario and returns summary.json.
nlohmann::json run_fat_tree(const nlohmann::json& platform_extra, const std::string& collective) {
  TempDir tmp;
  nlohmann::json doc = nlohmann::json::parse(R"({
    "name": "routing",
    "platform": {"topology": "fat_tree", "workers": 16, "link": {"bandwidth": "25Gbps", "latency": "1us"},
                 "params": {"k": 4}},
    "workload": {"synthetic": {"layers": 1, "grad_bytes": "16MB"}, "iterations": 2},
    "training": {"sync": {"name": "bsp"}}
  })");
  doc["training"]["collective"]["name"] = collective;
  doc["platform"].update(platform_extra);
  const std::string file = tmp.write("scenario.json", doc.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file("out")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
}

}  // namespace

TEST_CASE("emitted routes: shortest on a fat tree is SimGrid's Dijkstra") {
  check_emitted_routes("fat_tree", json{{"k", 4}}, 16, 0, Routing::SHORTEST);
}
// One platform per engine, one engine per process: one test case per platform.
TEST_CASE("emitted routes: shortest on a torus with a server") {
  check_emitted_routes("torus", json{{"dims", {4, 4}}}, 15, 1, Routing::SHORTEST);
}
TEST_CASE("emitted routes: shortest on a dragonfly") {
  check_emitted_routes("dragonfly", json::object(), 16, 0, Routing::SHORTEST);
}
TEST_CASE("emitted routes: shortest on an even ring with a server") {
  check_emitted_routes("ring", json::object(), 9, 1, Routing::SHORTEST);
}
TEST_CASE("emitted routes: ecmp on a fat tree") { check_emitted_routes("fat_tree", json{{"k", 4}}, 16, 0, Routing::ECMP); }
TEST_CASE("emitted routes: dmodk on a partly filled fat tree with servers") {
  check_emitted_routes("fat_tree", json::object(), 20, 2, Routing::DMODK);
}
TEST_CASE("emitted routes: ecmp on a torus") {
  check_emitted_routes("torus", json{{"dims", {4, 4}}}, 16, 0, Routing::ECMP);
}
TEST_CASE("emitted routes: a one-switch star is a StarZone whatever the routing") {
  check_emitted_routes("star", json::object(), 6, 1, Routing::DMODK);
}

TEST_CASE("1:1 fat tree: D-mod-k runs halving-doubling's permutations at full bandwidth, shortest does not") {
  const Topology t = build("fat_tree", json{{"k", K}}, N);
  const auto dmodk = run_csv(FAT_TREE + " --routing dmodk");
  const auto shortest = run_csv(FAT_TREE + " --routing shortest");
  const auto ecmp = run_csv(FAT_TREE + " --routing ecmp");

  // D-mod-k: one flow per directed link in every step, so T = 2 sum_k (h_k l + M / 2^(k+1) beta)
  // = 2 (2 + 4 + 6 + 6) l + 2 (N-1)/N M beta: the closed form with each step's own path latency
  // instead of the worst one.
  const double exact = 2 * (2 + 4 + 6 + 6) * LAT + 2.0 * (N - 1) / N * M * BETA;
  CHECK(predicted_halving_doubling(t, Routing::DMODK) == doctest::Approx(exact).epsilon(1e-12));
  CHECK(dmodk.at("halving_doubling").simulated_s == doctest::Approx(exact).epsilon(1e-6));
  CHECK(dmodk.at("halving_doubling").analytic_s - exact == doctest::Approx(2 * (4 * 6 - 18) * LAT).epsilon(1e-3));

  // Shortest: its loads are uniform too (a pod's four hosts share agg-p-0 -> core-0
  // in the two cross-pod steps, an edge switch's two hosts share its uplink in the
  // cross-edge step), so the same formula predicts it; the routes are those
  // SimGrid's Dijkstra zone takes (checked above).
  const double predicted_shortest = predicted_halving_doubling(t, Routing::SHORTEST);
  REQUIRE(predicted_shortest > 0);
  CHECK(shortest.at("halving_doubling").simulated_s == doctest::Approx(predicted_shortest).epsilon(1e-6));
  CHECK(predicted_shortest > 1.8 * exact);

  // ECMP: no step can beat its uncontended time, so D-mod-k's is a lower bound.
  CHECK(ecmp.at("halving_doubling").simulated_s >= exact * (1 - 1e-9));
}

TEST_CASE("1:1 fat tree: the direct all-reduce runs at NIC speed with D-mod-k") {
  // Each step is an all-to-all of M/N-byte flows. With D-mod-k a host's own
  // link carries its N-1 flows in each direction and no switch-to-switch link
  // more (checked on the table below), so the NICs are the bottleneck; a NIC
  // starts sending when its first flow (to the host on the same edge switch,
  // 2 hops) has paid its latency and stays busy until its N-1 flows are out:
  // a step costs 2 l + (N-1) (M/N) beta, under the closed form alpha + (N-1) (M/N) beta
  // whose alpha is the worst path latency (6 l).
  const Topology t = build("fat_tree", json{{"k", K}}, N);
  const RouteTable table(t, Routing::DMODK, SEED);
  std::map<std::pair<std::size_t, bool>, int> load;
  for (int s = 0; s < N; ++s)
    for (int d = 0; d < N; ++d)
      if (s != d)
        for (const Hop& hop : table.route(s, d)) ++load[{hop.edge, hop.forward}];
  std::size_t i = 0;
  for (auto e : boost::make_iterator_range(boost::edges(t.graph))) {
    const bool host_link = t.graph[boost::source(e, t.graph)].kind != NodeKind::SWITCH;
    for (bool forward : {true, false}) {
      CAPTURE(t.graph[e].name);
      if (host_link) CHECK(load[{i, forward}] == N - 1);
      else CHECK(load[{i, forward}] <= N - 1);
    }
    ++i;
  }
  const double nic_bound = 2 * (2 * LAT + (N - 1.0) / N * M * BETA);
  const auto dmodk = run_csv(FAT_TREE + " --routing dmodk");
  const auto shortest = run_csv(FAT_TREE + " --routing shortest");
  const auto ecmp = run_csv(FAT_TREE + " --routing ecmp");
  CHECK(dmodk.at("direct").simulated_s == doctest::Approx(nic_bound).epsilon(1e-6));
  CHECK(dmodk.at("direct").simulated_s <= dmodk.at("direct").analytic_s);
  // No routing beats the NICs; ECMP's hash collisions cost less than shortest's single core switch.
  CHECK(ecmp.at("direct").simulated_s >= nic_bound * (1 - 1e-9));
  CHECK(shortest.at("direct").simulated_s > 3 * dmodk.at("direct").simulated_s);
  CHECK(ecmp.at("direct").simulated_s < shortest.at("direct").simulated_s);
}

TEST_CASE("platform.routing: default, summary and the collectives header") {
  // The default on a fat tree is ecmp, elsewhere shortest; summary.json says which ran.
  CHECK(run_fat_tree(json::object(), "ring")["routing"] == "ecmp");
  const auto shortest = run_fat_tree(json{{"routing", "shortest"}}, "direct");
  const auto dmodk = run_fat_tree(json{{"routing", "dmodk"}}, "direct");
  CHECK(shortest["routing"] == "shortest");
  CHECK(dmodk["routing"] == "dmodk");
  CHECK(dmodk["comm_time_per_iteration_s"].get<double>() < shortest["comm_time_per_iteration_s"].get<double>());
  auto platform = ddlsim::test::ddlsim(fmt::format("platform {}/scenarios/fat_tree_k4.json", DDLSIM_SOURCE_DIR));
  CHECK(platform.exit_code == 0);
  CHECK(platform.out.find("\nrouting ecmp\n") != std::string::npos);
  auto header = ddlsim::test::ddlsim("collectives -n 4 -m 1MiB --servers 0 --algorithms ring");
  CHECK(header.out.find("4 workers, 1.049 MB per rank, star topology (shortest routing)") == 0);
}

TEST_CASE("platform.routing: bad values list the valid ones") {
  TempDir tmp;
  nlohmann::json doc = nlohmann::json::parse(R"({
    "platform": {"topology": "fat_tree", "workers": 4, "routing": "adaptive"},
    "workload": {"synthetic": {"layers": 1}, "iterations": 1}
  })");
  const std::string file = tmp.write("scenario.json", doc.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {}", file, tmp.file("out")));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ddlsim: error: /platform/routing: unknown value \"adaptive\"; valid values are: shortest, ecmp, dmodk\n");
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
  doc["platform"]["routing"] = 7;
  tmp.write("scenario.json", doc.dump());
  r = ddlsim::test::ddlsim(fmt::format("run {} --out {}", file, tmp.file("out")));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /platform/routing: expected a string, got the number 7\n");
  r = ddlsim::test::ddlsim("collectives -n 4 --servers 0 --routing ecnp");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: --routing: unknown value \"ecnp\"; valid values are: shortest, ecmp, dmodk\n");
}
