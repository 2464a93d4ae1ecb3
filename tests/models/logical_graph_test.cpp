// Logical graphs of decentralised training (models/logical_graph.cpp): the peers of every kind,
// the mixing rows, and the gaps that follow from them (the spectral gap's own cases are in
// spectral_gap_test.cpp, reading the spec in logical_graph_spec_test.cpp).
//
// Expected gaps come from closed forms derived here, not from runs: ring, exponential and
// one-peer exponential graphs have circulant mixing matrices, whose eigenvalues are
// sum_o c_o exp(-2 pi i o k / N) over the offsets o with weight c_o; the torus's W is
// (I + A_ring(rows) (+) A_ring(cols)) / 5, with eigenvalues (1 + 2 cos(2 pi a / rows) + 2 cos(2 pi b / cols)) / 5.
#include "models/error.hpp"
#include "models/logical_graph.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <doctest/doctest.h>
#include <numbers>
#include <set>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

const std::string PARAMS = "/training/sync/params";

std::shared_ptr<const LogicalGraph> make(const std::string& kind, int n, int rows = 0, std::uint64_t seed = 7) {
  GraphSpec spec;
  spec.kind = kind;
  spec.rows = rows;
  spec.path = PARAMS;
  return build_logical_graph(spec, n, seed);
}

std::shared_ptr<const LogicalGraph> custom(int n, std::vector<std::pair<int, int>> edges) {
  GraphSpec spec;
  spec.kind = "custom";
  spec.edges = std::move(edges);
  spec.path = PARAMS;
  return build_logical_graph(spec, n, 0);
}

/// 1 - max_{k=1..N-1} |sum_o weight_o exp(-2 pi i o k / N)|: the gap of a circulant W.
double circulant_gap(int n, const std::vector<std::pair<int, double>>& offsets) {
  double second = 0;
  for (int k = 1; k < n; ++k) {
    std::complex<double> lambda = 0;
    for (const auto& [o, weight] : offsets) lambda += weight * std::polar(1.0, -2 * std::numbers::pi * o * k / n);
    second = std::max(second, std::abs(lambda));
  }
  return 1 - second;
}

/// out/in peers sorted, never the rank itself, and j in out(i) iff i in in(j); unique but on a ring
/// or torus, whose directions keep one message each (two to the same worker on a ring of 2).
void check_consistent(const LogicalGraph& g, int round) {
  const bool directions = g.kind() == "ring" || g.kind() == "torus2d";
  const int n = g.workers();
  std::vector<std::set<int>> in(static_cast<std::size_t>(n)), out_inverse(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (const auto& peers : {g.out_peers(i, round), g.in_peers(i, round)}) {
      CHECK(std::is_sorted(peers.begin(), peers.end()));
      if (!directions) CHECK(std::adjacent_find(peers.begin(), peers.end()) == peers.end());
      CHECK(std::find(peers.begin(), peers.end(), i) == peers.end());
      for (int p : peers) CHECK((p >= 0 && p < n));
    }
    for (int j : g.out_peers(i, round)) out_inverse[static_cast<std::size_t>(j)].insert(i);
    const auto peers = g.in_peers(i, round);
    in[static_cast<std::size_t>(i)] = std::set<int>(peers.begin(), peers.end());
    const auto row = g.mixing_row(i, round);
    CHECK(row.size() == peers.size() + 1);
    double sum = 0;
    for (const auto& [j, w] : row) {
      sum += w;
      CHECK(w == doctest::Approx(1.0 / static_cast<double>(peers.size() + 1)));
    }
    CHECK(sum == doctest::Approx(1.0));
    CHECK(std::is_sorted(row.begin(), row.end()));
    CHECK(std::count_if(row.begin(), row.end(), [i](const auto& e) { return e.first == i; }) == 1);
  }
  CHECK(in == out_inverse);
}

}  // namespace

TEST_CASE("logical graph: in and out peers are consistent for every kind and size") {
  for (const std::string kind : {"ring", "torus2d", "exponential", "one_peer_exponential", "random_matching"}) {
    for (int n : {1, 2, 3, 4, 6, 8, 9, 12, 16, 17}) {
      if (kind == "torus2d" && (n < 4 || n == 17)) continue;  // no grid with rows, cols >= 2
      CAPTURE(kind);
      CAPTURE(n);
      auto g = make(kind, n);
      CHECK(g->workers() == n);
      CHECK(g->kind() == kind);
      CHECK(g->time_varying() == (kind == "one_peer_exponential" || kind == "random_matching"));
      for (int round : {0, 1, 2, 3, 4, 5, 17}) check_consistent(*g, round);
    }
  }
  check_consistent(*custom(6, {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {5, 0}}), 0);
}

TEST_CASE("logical graph: ring peers and the spectral gap with weights 1/3") {
  CHECK(make("ring", 5)->out_peers(0, 0) == std::vector<int>{1, 4});
  CHECK(make("ring", 5)->in_peers(3, 9) == std::vector<int>{2, 4});
  // A ring of 2: left and right are the same worker, sent to twice (D-PSGD's and EventGraD's codes),
  // and its mixing row weighs it 2/3; with distinct_neighbours, once.
  CHECK(make("ring", 2)->out_peers(1, 0) == std::vector<int>{0, 0});
  CHECK(make("ring", 2)->in_peers(0, 0) == std::vector<int>{1, 1});
  {
    GraphSpec distinct;
    distinct.distinct_neighbours = true;
    CHECK(build_logical_graph(distinct, 2, 1)->out_peers(1, 0) == std::vector<int>{0});
    CHECK(build_logical_graph(distinct, 3, 1)->out_peers(1, 0) == std::vector<int>{0, 2});
    CHECK(make("ring", 3)->out_peers(1, 0) == std::vector<int>{0, 2});
    // W = [[1/3, 2/3], [2/3, 1/3]]: eigenvalues 1 and -1/3, gap 2/3; distinct: [[1/2, 1/2], ...], gap 1.
    CHECK(*spectral_gap(*make("ring", 2), 1).value == doctest::Approx(2.0 / 3).epsilon(1e-12));
    CHECK(*spectral_gap(*build_logical_graph(distinct, 2, 1), 1).value == doctest::Approx(1.0).epsilon(1e-12));
  }
  CHECK(make("ring", 1)->out_peers(0, 0).empty());
  for (int n : {3, 4, 5, 8, 9, 16, 17, 100}) {
    CAPTURE(n);
    double second = 0;
    for (int k = 1; k < n; ++k)
      second = std::max(second, std::abs(1.0 / 3 + 2.0 / 3 * std::cos(2 * std::numbers::pi * k / n)));
    const SpectralGap gap = spectral_gap(*make("ring", n), 1);
    REQUIRE(gap.value.has_value());
    CHECK(std::abs(*gap.value - (1 - second)) < 1e-9);
    CHECK(gap.basis.find("symmetric") != std::string::npos);
  }
}

TEST_CASE("logical graph: exponential on 16 workers has 4 peers each way and a circulant gap") {
  auto g = make("exponential", 16);
  for (int i = 0; i < 16; ++i) {
    CHECK(g->out_peers(i, 0).size() == 4);
    CHECK(g->in_peers(i, 0).size() == 4);
    for (int j : g->out_peers(i, 0)) {
      const auto in = g->in_peers(j, 0);
      CHECK(std::find(in.begin(), in.end(), i) != in.end());
    }
  }
  CHECK(g->out_peers(14, 0) == std::vector<int>{0, 2, 6, 15});  // 14 + 1, 2, 4, 8 mod 16
  CHECK(g->out_peers(3, 0) == std::vector<int>{4, 5, 7, 11});
  CHECK(g->in_peers(3, 0) == std::vector<int>{1, 2, 11, 15});
  const double expected = circulant_gap(16, {{0, 0.2}, {1, 0.2}, {2, 0.2}, {4, 0.2}, {8, 0.2}});
  const SpectralGap gap = spectral_gap(*g, 1);
  REQUIRE(gap.value.has_value());
  CHECK(std::abs(*gap.value - expected) < 1e-9);
  // Ying et al. 2021: on N a power of 2, the gap of the exponential graph is 2 / (1 + log2 N).
  for (int log2n : {2, 4, 6, 8}) {
    const SpectralGap g2 = spectral_gap(*make("exponential", 1 << log2n), 1);
    REQUIRE(g2.value.has_value());
    CHECK(std::abs(*g2.value - 2.0 / (1 + log2n)) < 1e-9);
  }
  // Not a power of 2: offsets 1, 2, 4, 8 on 12 ranks.
  const SpectralGap g12 = spectral_gap(*make("exponential", 12), 1);
  REQUIRE(g12.value.has_value());
  CHECK(std::abs(*g12.value - circulant_gap(12, {{0, 0.2}, {1, 0.2}, {2, 0.2}, {4, 0.2}, {8, 0.2}})) < 1e-9);
}

TEST_CASE("logical graph: one-peer exponential on 8 workers cycles rank + 2^(t mod 3)") {
  auto g = make("one_peer_exponential", 8);
  CHECK(g->period() == 3);
  for (int t = 0; t < 9; ++t)
    for (int i = 0; i < 8; ++i) {
      CHECK(g->out_peers(i, t) == std::vector<int>{(i + (1 << (t % 3))) % 8});
      CHECK(g->in_peers(i, t) == std::vector<int>{(i + 8 - (1 << (t % 3))) % 8});
    }
  // Mean over the period: 1/2 on itself, 1/6 on each of rank - 1, rank - 2, rank - 4.
  const double expected = circulant_gap(8, {{0, 0.5}, {1, 1.0 / 6}, {2, 1.0 / 6}, {4, 1.0 / 6}});
  for (int rounds : {1, 3, 100}) {  // the period, whatever the rounds asked
    const SpectralGap gap = spectral_gap(*g, rounds);
    REQUIRE(gap.value.has_value());
    CHECK(std::abs(*gap.value - expected) < 1e-9);
    CHECK(gap.basis.find("period") != std::string::npos);
  }
  CHECK(make("one_peer_exponential", 1)->out_peers(0, 5).empty());
}

TEST_CASE("logical graph: random matching is a seeded matching per round") {
  for (int n : {2, 9, 10, 33}) {
    CAPTURE(n);
    auto g = make("random_matching", n, 0, 42);
    auto same = make("random_matching", n, 0, 42);
    auto other_seed = make("random_matching", n, 0, 43);
    bool differs_across_rounds = false, differs_across_seeds = false;
    std::vector<std::vector<int>> round0;
    for (int i = 0; i < n; ++i) round0.push_back(g->out_peers(i, 0));
    for (int t = 0; t < 20; ++t) {
      int idle = 0;
      for (int i = 0; i < n; ++i) {
        const auto peers = g->out_peers(i, t);
        CHECK(peers == g->in_peers(i, t));
        CHECK(peers.size() <= 1);
        if (peers.empty()) {
          ++idle;
          continue;
        }
        CHECK(g->out_peers(peers[0], t) == std::vector<int>{i});
        CHECK(same->out_peers(i, t) == peers);
        differs_across_rounds = differs_across_rounds || peers != round0[static_cast<std::size_t>(i)];
        differs_across_seeds = differs_across_seeds || other_seed->out_peers(i, t) != peers;
      }
      CHECK(idle == n % 2);
    }
    if (n > 2) {
      CHECK(differs_across_rounds);
      CHECK(differs_across_seeds);
    }
  }
}

TEST_CASE("logical graph: random matching answers rounds asked out of order") {
  const int n = 12;
  auto fresh = make("random_matching", n, 0, 5);
  std::vector<std::vector<int>> expected;
  for (int t = 0; t < 40; ++t) {
    auto once = make("random_matching", n, 0, 5);  // nothing cached
    std::vector<int> partners;
    for (int i = 0; i < n; ++i) partners.push_back(once->out_peers(i, t).at(0));
    expected.push_back(partners);
  }
  // Interleaved rounds, more distinct rounds than the cache holds, then back to early ones.
  const int order[] = {5, 0, 39, 5, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0, 30, 5, 39};
  for (int t : order)
    for (int i = n - 1; i >= 0; --i) CHECK(fresh->out_peers(i, t).at(0) == expected[t][i]);
  for (int i = 0; i < n; ++i)
    for (int t = 39; t >= 0; --t) CHECK(fresh->in_peers(i, t).at(0) == expected[t][i]);
}

TEST_CASE("logical graph: torus2d neighbours and refusals") {
  auto g = make("torus2d", 16, 4);
  CHECK(g->rows() == 4);
  CHECK(g->cols() == 4);
  for (int i = 0; i < 16; ++i) CHECK(g->out_peers(i, 0).size() == 4);
  CHECK(g->out_peers(0, 0) == std::vector<int>{1, 3, 4, 12});
  CHECK(g->out_peers(5, 0) == std::vector<int>{1, 4, 6, 9});
  auto flat = make("torus2d", 6, 2);  // 2 x 3: up and down are the same rank, one message each
  for (int i = 0; i < 6; ++i) CHECK(flat->out_peers(i, 0).size() == 4);
  CHECK(flat->out_peers(0, 0) == std::vector<int>{1, 2, 3, 3});
  CHECK(flat->out_peers(4, 0) == std::vector<int>{1, 1, 3, 5});
  // rows = 0: the most square grid with rows <= cols.
  CHECK(make("torus2d", 12)->rows() == 3);
  CHECK(make("torus2d", 16)->rows() == 4);
  CHECK(make("torus2d", 8)->rows() == 2);
  CHECK(make("torus2d", 8)->cols() == 4);
  CHECK(make("torus2d", 4)->rows() == 2);

  CHECK_THROWS_WITH_AS(make("torus2d", 7), "/training/sync/params/graph: torus2d needs the 7 workers as a rows x cols "
                                           "grid with rows >= 2 and cols >= 2, and 7 is prime; use ring",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("torus2d", 1), "/training/sync/params/graph: torus2d needs the 1 workers as a rows x cols "
                                           "grid with rows >= 2 and cols >= 2, and 1 has no such factorisation; use ring",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("torus2d", 8, 3),
                       "/training/sync/params/rows: rows 3 does not divide the 8 workers; valid rows for 8 workers "
                       "are: 2, 4 (or 0 for the most square grid)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("torus2d", 8, 1),
                       "/training/sync/params/rows: rows 1 is below 2; valid rows for 8 workers are: 2, 4 (or 0 for "
                       "the most square grid)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("torus2d", 8, 8),
                       "/training/sync/params/rows: rows 8 leaves fewer than 2 columns; valid rows for 8 workers are: "
                       "2, 4 (or 0 for the most square grid)",
                       ConfigError);
}

TEST_CASE("logical graph: custom edges and their errors") {
  auto g = custom(5, {{0, 1}, {3, 1}, {4, 2}});
  CHECK(g->out_peers(1, 0) == std::vector<int>{0, 3});
  CHECK(g->in_peers(1, 3) == std::vector<int>{0, 3});
  CHECK(g->out_peers(2, 0) == std::vector<int>{4});
  CHECK_FALSE(g->time_varying());
  CHECK_THROWS_WITH_AS(custom(5, {{0, 1}, {1, 2}, {2, 5}}),
                       "/training/sync/params/edges/2/1: rank 5 is out of range; valid ranks are 0 to 4 (5 workers)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(custom(5, {{7, 1}}),
                       "/training/sync/params/edges/0/0: rank 7 is out of range; valid ranks are 0 to 4 (5 workers)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(custom(5, {{0, 1}, {3, 3}}),
                       "/training/sync/params/edges/1: self-loop [3, 3]; an edge joins two different ranks", ConfigError);
  CHECK_THROWS_WITH_AS(custom(5, {{0, 1}, {1, 2}, {1, 0}}),
                       "/training/sync/params/edges/2: duplicate edge [1, 0]: the same undirected edge as edges/0",
                       ConfigError);
}

