// Routes without an engine (platforms/routing.*): every routing gives a
// fewest-hop path between the right hosts on every topology; ECMP is a
// deterministic function of the seed and spreads a fat tree's pairs over its
// whole core; D-mod-k makes shift and XOR permutations non-blocking on a full
// fat tree; shortest reproduces SimGrid's Dijkstra tie-breaking, which funnels
// a fat tree's cross-pod traffic through one core switch. (tests/engine/routing_test.cpp
// checks that the emitted SimGrid platforms follow these same routes.)
#include "platforms/routing.hpp"

#include "models/error.hpp"

#include <doctest/doctest.h>
#include <map>
#include <set>
#include <stdexcept>

using namespace ddlsim;
using namespace ddlsim::platforms;

namespace {

const LinkSpec LINK{1.25e9, 2e-6};
constexpr std::uint64_t SEED = 1;
const Routing ALL[] = {Routing::SHORTEST, Routing::ECMP, Routing::DMODK};

Topology build(const std::string& name, const json& params, int workers, int servers = 0) {
  auto builder =
      TopologyRegistry::instance().create(name, params, "/platform/topology", "/platform/params", "topology");
  BuildRequest r;
  r.workers = workers;
  r.parameter_servers = servers;
  r.link = LINK;
  return builder->build(r);
}

std::vector<Vertex> hosts(const Topology& t) {
  std::vector<Vertex> out = t.workers;
  out.insert(out.end(), t.servers.begin(), t.servers.end());
  return out;
}

std::vector<std::pair<Vertex, Vertex>> edge_list(const Graph& g) {
  std::vector<std::pair<Vertex, Vertex>> out;
  for (auto e : boost::make_iterator_range(boost::edges(g))) out.emplace_back(boost::source(e, g), boost::target(e, g));
  return out;
}

/// Every route of `table` is a chain of real links from src to dst, as short as a BFS says.
void check_routes(const Topology& t, const RouteTable& table) {
  const auto h = hosts(t);
  const auto links = edge_list(t.graph);
  REQUIRE(table.hosts() == static_cast<int>(h.size()));
  REQUIRE(table.links() == links.size());
  for (int s = 0; s < table.hosts(); ++s) {
    const auto dist = hop_distances(t.graph, h[s]);
    for (int d = 0; d < table.hosts(); ++d) {
      CAPTURE(s);
      CAPTURE(d);
      const auto route = table.route(s, d);
      REQUIRE(route.size() == static_cast<std::size_t>(dist[h[d]]));
      Vertex at = h[s];
      for (const Hop& hop : route) {
        REQUIRE(hop.edge < links.size());
        CHECK(hop.from == at);
        const auto [a, b] = links[hop.edge];
        CHECK(std::minmax(a, b) == std::minmax(hop.from, hop.to));
        CHECK(hop.forward == (hop.from == a));
        at = hop.to;
      }
      CHECK(at == h[d]);
    }
  }
}

/// For each directed link (edge index, forward), how many of the (src, dst) flows cross it.
std::map<std::pair<std::size_t, bool>, int> link_loads(const RouteTable& table,
                                                       const std::vector<std::pair<int, int>>& flows) {
  std::map<std::pair<std::size_t, bool>, int> load;
  for (auto [s, d] : flows)
    for (const Hop& hop : table.route(s, d)) ++load[{hop.edge, hop.forward}];
  return load;
}

int max_load(const std::map<std::pair<std::size_t, bool>, int>& load) {
  int m = 0;
  for (const auto& [link, n] : load) m = std::max(m, n);
  return m;
}

/// The core switches crossed by any route among every ordered host pair.
std::set<std::string> cores_used(const Topology& t, const RouteTable& table) {
  std::set<std::string> used;
  for (int s = 0; s < table.hosts(); ++s)
    for (int d = 0; d < table.hosts(); ++d)
      for (const Hop& hop : table.route(s, d))
        if (t.graph[hop.to].name.rfind("core-", 0) == 0) used.insert(t.graph[hop.to].name);
  return used;
}

}  // namespace

TEST_CASE("routing: names, parsing and defaults") {
  CHECK(routing_names() == std::vector<std::string>{"shortest", "ecmp", "dmodk"});
  for (Routing r : ALL) CHECK(parse_routing(to_string(r)) == r);
  CHECK_THROWS_AS(parse_routing("random"), std::invalid_argument);
  CHECK(default_routing("fat_tree") == Routing::ECMP);
  for (const char* other : {"star", "ring", "full", "torus", "dragonfly", "hierarchical", "custom"})
    CHECK(default_routing(other) == Routing::SHORTEST);
}

TEST_CASE("routing: every routing gives fewest-hop routes on every topology") {
  const std::vector<std::tuple<std::string, json, int, int>> cases{
      {"star", json::object(), 5, 1},
      {"ring", json::object(), 8, 0},  // even: two ways to the opposite host
      {"ring", json::object(), 7, 2},
      {"full", json::object(), 6, 0},
      {"fat_tree", json{{"k", 4}}, 16, 0},
      {"fat_tree", json::object(), 15, 2},  // k = 6, partly filled
      {"fat_tree", json{{"k", 2}}, 2, 0},
      {"torus", json{{"dims", {4, 4}}}, 16, 0},
      {"torus", json{{"dims", {2, 3, 2}}}, 11, 1},
      {"dragonfly", json::object(), 16, 0},
      {"hierarchical", json{{"gpus_per_node", 4}}, 10, 1},
  };
  for (const auto& [name, params, workers, servers] : cases)
    for (Routing r : ALL) {
      CAPTURE(name);
      CAPTURE(workers);
      CAPTURE(to_string(r));
      const Topology t = build(name, params, workers, servers);
      check_routes(t, RouteTable(t, r, SEED));
    }
}

TEST_CASE("routing: one host, bad slots, src == dst") {
  const Topology one = build("star", json::object(), 1);
  RouteTable table(one, Routing::ECMP, SEED);
  CHECK(table.route(0, 0).empty());
  CHECK_THROWS_AS((void)table.route(0, 1), std::out_of_range);
  CHECK_THROWS_AS((void)table.route(-1, 0), std::out_of_range);
  const Topology t = build("fat_tree", json{{"k", 4}}, 16);
  CHECK(route(t, Routing::DMODK, SEED, 3, 3).empty());
  CHECK(route(t, Routing::DMODK, SEED, 3, 12).size() == 6);
}

TEST_CASE("routing: shortest funnels a fat tree's cross-pod traffic through core-0") {
  // SimGrid's Dijkstra zone breaks ties by the order in which nodes first appear
  // in the edge list. The fat-tree builder adds pod by pod: host links, then
  // edge-to-aggregation links (so agg-p-0 appears before agg-p-1), then
  // aggregation-to-core links (pod 0 lists core-0 first). Every cross-pod pair
  // therefore climbs through agg-*-0 to core-0, and a pod's k^2/4 hosts share the
  // one uplink agg-p-0 -> core-0 in a shift-by-N/2 permutation.
  const int k = 4, n = k * k * k / 4;
  const Topology t = build("fat_tree", json{{"k", k}}, n);
  RouteTable table(t, Routing::SHORTEST, SEED);
  CHECK(cores_used(t, table) == std::set<std::string>{"core-0"});
  const auto r = table.route(0, n - 1);
  REQUIRE(r.size() == 6);
  CHECK(t.graph[r[1].to].name == "agg-0-0");
  CHECK(t.graph[r[2].to].name == "core-0");
  std::vector<std::pair<int, int>> shift;
  for (int s = 0; s < n; ++s) shift.emplace_back(s, (s + n / 2) % n);
  CHECK(max_load(link_loads(table, shift)) == k * k / 4);
  // The seed plays no part.
  RouteTable other(t, Routing::SHORTEST, SEED + 1);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      const auto a = table.route(s, d), b = other.route(s, d);
      CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end(),
                       [](const Hop& x, const Hop& y) { return x.edge == y.edge && x.forward == y.forward; }));
    }
}

TEST_CASE("routing: ecmp is deterministic for a seed and spreads over the whole core") {
  const int k = 4, n = k * k * k / 4;
  const Topology t = build("fat_tree", json{{"k", k}}, n);
  RouteTable a(t, Routing::ECMP, SEED), b(t, Routing::ECMP, SEED), c(t, Routing::ECMP, SEED + 1);
  auto same = [](const std::vector<Hop>& x, const std::vector<Hop>& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [](const Hop& p, const Hop& q) { return p.edge == q.edge && p.forward == q.forward; });
  };
  int differ = 0;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      CHECK(same(a.route(s, d), b.route(s, d)));
      CHECK(same(a.route(s, d), a.route(s, d)));  // a cached table answers the same
      differ += same(a.route(s, d), c.route(s, d)) ? 0 : 1;
    }
  CHECK(differ > 0);  // another seed, another hash
  // Every core switch, and both directions of every switch-to-switch link, carry some pair.
  std::set<std::string> all_cores;
  for (int i = 0; i < k * k / 4; ++i) all_cores.insert("core-" + std::to_string(i));
  CHECK(cores_used(t, a) == all_cores);
  std::vector<std::pair<int, int>> every;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) every.emplace_back(s, d);
  const auto load = link_loads(a, every);
  CHECK(load.size() == 2 * boost::num_edges(t.graph));
}

TEST_CASE("routing: dmodk climbs by the destination's digits and makes permutations non-blocking") {
  for (int k : {4, 6}) {
    CAPTURE(k);
    const int half = k / 2, n = k * k * k / 4;
    const Topology t = build("fat_tree", json{{"k", k}}, n);
    RouteTable table(t, Routing::DMODK, SEED);
    // The rule of routing.hpp: to host d, up through agg d mod k/2 and core
    // (d mod k/2) * k/2 + floor(d / (k/2)) mod k/2.
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d) {
        if (s / (half * half) == d / (half * half)) continue;  // same pod: no core hop
        const auto r = table.route(s, d);
        REQUIRE(r.size() == 6);
        CHECK(t.graph[r[1].to].name == fmt::format("agg-{}-{}", s / (half * half), d % half));
        CHECK(t.graph[r[2].to].name == fmt::format("core-{}", (d % half) * half + (d / half) % half));
      }
    // Every shift permutation s -> s + c mod N: at most one flow per directed link.
    for (int c = 1; c < n; ++c) {
      CAPTURE(c);
      std::vector<std::pair<int, int>> shift;
      for (int s = 0; s < n; ++s) shift.emplace_back(s, (s + c) % n);
      CHECK(max_load(link_loads(table, shift)) == 1);
    }
    // Each host's uplinks: the hosts of one edge switch leave on different aggregation switches.
    for (int e = 0; e < n / half; ++e) {
      std::set<std::string> aggs;
      for (int s = e * half; s < (e + 1) * half; ++s)
        aggs.insert(t.graph[table.route(s, (s + n / 2) % n)[1].to].name);
      CHECK(aggs.size() == static_cast<std::size_t>(half));
    }
  }
  // XOR permutations (recursive halving / doubling partners) on k = 4.
  const Topology t = build("fat_tree", json{{"k", 4}}, 16);
  RouteTable table(t, Routing::DMODK, SEED);
  for (int mask : {1, 2, 4, 8}) {
    CAPTURE(mask);
    std::vector<std::pair<int, int>> xors;
    for (int s = 0; s < 16; ++s) xors.emplace_back(s, s ^ mask);
    CHECK(max_load(link_loads(table, xors)) == 1);
  }
}

TEST_CASE("routing: ties on an even ring") {
  // Host s of an 8-host ring reaches host s + 4 both ways round, 4 hops each;
  // the only choice is the first hop. D-mod-k takes candidate d mod 2 of s's two
  // neighbours sorted by index; ECMP's choice depends on the seed, so over a few
  // seeds pair (0, 4) goes both ways.
  const int n = 8;
  const Topology ring = build("ring", json::object(), n);
  RouteTable dmodk(ring, Routing::DMODK, SEED);
  for (int s = 0; s < n; ++s) {
    const int d = (s + n / 2) % n;
    const auto r = dmodk.route(s, d);
    REQUIRE(r.size() == 4);
    const Vertex lo = std::min((s + 1) % n, (s + n - 1) % n), hi = std::max((s + 1) % n, (s + n - 1) % n);
    CHECK(r.front().to == (d % 2 == 0 ? lo : hi));
  }
  std::set<Vertex> ecmp_first;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) ecmp_first.insert(RouteTable(ring, Routing::ECMP, seed).route(0, 4).front().to);
  CHECK(ecmp_first == std::set<Vertex>{1, 7});
}
