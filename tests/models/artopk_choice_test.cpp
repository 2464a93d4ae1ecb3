// AR-Topk (seed 002, Tyagi & Swany 2023): the two collectives' closed forms and
// the seed's inequalities choosing between AR-Topk over a ring, over a tree and
// the all-gather of every worker's top-k. Every expectation is derived here from
// the seed's formulas (M_c = one worker's top-k values in bytes; indices cost
// M_c too; the all-gather moves values + indices, 2 M_c per worker), with
// L = ceil(log2 N) computed by a loop of its own (models/artopk_choice.cpp). The schedules of the
// two collectives are tested beside them: tests/models/collectives/artopk_{ring,tree}_test.cpp.
#include "models/artopk_choice.hpp"
#include "models/collective.hpp"
#include "models/error.hpp"

#include <doctest/doctest.h>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

std::unique_ptr<Collective> make(const std::string& name, const json& params = json::object()) {
  return CollectiveRegistry::instance().create(name, params, "/collective/name", "/collective/params", "collective");
}

/// ceil(log2 n), by doubling.
double ceil_log2_of(int n) {
  double l = 0;
  for (long p = 1; p < n; p *= 2) ++l;
  return l;
}

// The seed's closed forms, written out again.
double t_ring(int n, double a, double b, double mc) {
  const double l = ceil_log2_of(n);
  return a * (2.0 * (n - 1) + l) + mc * b * (2.0 * (n - 1) / n + l);
}
double t_tree(int n, double a, double b, double mc) { return 3 * a * ceil_log2_of(n) + 3 * mc * b * ceil_log2_of(n); }
double t_allgather(int n, double a, double b, double mc) { return a * ceil_log2_of(n) + 2.0 * (n - 1) * mc * b; }

/// The fastest of the three by the collectives' own closed forms (the all-gather is
/// bruck_allgather of the 2 N M_c bytes that every worker's values and indices make up).
std::string fastest_by_closed_forms(int n, double a, double b, double mc) {
  const AlphaBeta ab{a, b};
  const CollectiveGroup g{n, 0};
  const double ring = make("artopk_ring")->analytic_time_s(g, mc, ab);
  const double tree = make("artopk_tree")->analytic_time_s(g, mc, ab);
  const double ag = make("bruck_allgather")->analytic_time_s(g, 2.0 * n * mc, ab);
  if (ring < tree && ring < ag) return "artopk_ring";
  if (tree < ag && tree <= ring) return "artopk_tree";
  return "allgather";
}

const std::vector<int> SIZES{2, 3, 4, 5, 7, 8, 16, 33, 64, 100, 1000, 1024};

}  // namespace

TEST_CASE("artopk: closed forms of the seed, L = ceil(log2 N)") {
  const double a = 1e-6, b = 1e-9, mc = 1e6;  // 1 us, 1 GB/s, 1 MB of top-k values
  const AlphaBeta ab{a, b};
  // Hand values: N = 8 (L = 3): ring 17 a + 4.75 M b, tree 9 (a + M b);
  // N = 5 (L = 3, not a power of two): ring 11 a + 4.6 M b, tree 9 (a + M b).
  const auto at = [&](const char* name, int n) { return make(name)->analytic_time_s(CollectiveGroup{n, 0}, mc, ab); };
  CHECK(at("artopk_ring", 8) == doctest::Approx(17e-6 + 4.75e-3).epsilon(1e-12));
  CHECK(at("artopk_tree", 8) == doctest::Approx(9 * (1e-6 + 1e-3)).epsilon(1e-12));
  CHECK(at("artopk_ring", 5) == doctest::Approx(11e-6 + 4.6e-3).epsilon(1e-12));
  CHECK(at("artopk_tree", 5) == doctest::Approx(9 * (1e-6 + 1e-3)).epsilon(1e-12));
  CHECK(make("artopk_ring")->analytic_time_s(CollectiveGroup{1, 0}, mc, ab) == 0.0);
  CHECK(make("artopk_tree")->analytic_time_s(CollectiveGroup{1, 0}, mc, ab) == 0.0);
  for (int n : SIZES) {
    CAPTURE(n);
    const CollectiveGroup g{n, 0};
    CHECK(artopk_log2(n) == ceil_log2_of(n));
    CHECK(make("artopk_ring")->analytic_time_s(g, mc, ab) == doctest::Approx(t_ring(n, a, b, mc)).epsilon(1e-12));
    CHECK(make("artopk_tree")->analytic_time_s(g, mc, ab) == doctest::Approx(t_tree(n, a, b, mc)).epsilon(1e-12));
    // The all-gather of values + indices, 2 M_c per worker, through Bruck's algorithm.
    CHECK(make("bruck_allgather")->analytic_time_s(g, 2.0 * n * mc, ab) ==
          doctest::Approx(t_allgather(n, a, b, mc)).epsilon(1e-12));
    const ArtopkCosts costs = artopk_costs(n, a, b, mc);
    CHECK(costs.artopk_ring_s == doctest::Approx(t_ring(n, a, b, mc)).epsilon(1e-12));
    CHECK(costs.artopk_tree_s == doctest::Approx(t_tree(n, a, b, mc)).epsilon(1e-12));
    CHECK(costs.allgather_s == doctest::Approx(t_allgather(n, a, b, mc)).epsilon(1e-12));
  }
  // The root does not change the cost; a root outside the group is refused.
  CHECK(make("artopk_ring", json{{"root", 3}})->analytic_time_s(CollectiveGroup{8, 0}, mc, ab) ==
        make("artopk_ring")->analytic_time_s(CollectiveGroup{8, 0}, mc, ab));
  CHECK_THROWS_WITH_AS((void)make("artopk_tree", json{{"root", 8}})->analytic_time_s(CollectiveGroup{8, 0}, mc, ab),
                       "artopk_tree: root 8 is not a worker rank (the group has 8 workers)", std::invalid_argument);
}

TEST_CASE("artopk: the seed's inequalities are the closed forms' comparisons") {
  for (int n : SIZES) {
    CAPTURE(n);
    const double l = ceil_log2_of(n), nn = n;
    const ArtopkCoefficients c = artopk_coefficients(n);
    // The seed's right-hand sides, as printed (log N = L).
    if (nn - 1 - l > 0) CHECK(c.ring_over_tree == doctest::Approx((l - (nn - 1) / nn) / (nn - 1 - l)).epsilon(1e-12));
    else CHECK(c.ring_over_tree == std::numeric_limits<double>::infinity());
    CHECK(c.ring_over_allgather == doctest::Approx(1 - 1 / nn - l / (2 * (nn - 1))).epsilon(1e-12));
    CHECK(c.tree_over_allgather == doctest::Approx((nn - 1) / l - 1.5).epsilon(1e-12));
    // Derived: at M_c = (alpha/beta) / c the two closed forms tie.
    const double a = 10e-6, b = 8e-10, ratio = a / b;
    if (std::isfinite(c.ring_over_tree))
      CHECK(t_ring(n, a, b, ratio / c.ring_over_tree) ==
            doctest::Approx(t_tree(n, a, b, ratio / c.ring_over_tree)).epsilon(1e-12));
    if (c.ring_over_allgather > 0)
      CHECK(t_ring(n, a, b, ratio / c.ring_over_allgather) ==
            doctest::Approx(t_allgather(n, a, b, ratio / c.ring_over_allgather)).epsilon(1e-12));
    if (c.tree_over_allgather > 0)
      CHECK(t_tree(n, a, b, ratio / c.tree_over_allgather) ==
            doctest::Approx(t_allgather(n, a, b, ratio / c.tree_over_allgather)).epsilon(1e-12));
    // The pick is the smallest closed form, for M_c from 1 B to 1 GB.
    for (double mc = 1; mc < 1e9; mc *= 3.7) {
      CAPTURE(mc);
      CHECK(to_string(choose_artopk(n, a, b, mc).fastest) == fastest_by_closed_forms(n, a, b, mc));
    }
  }
  // N = 8 (L = 3) by hand: 2.125 / 4, 1 - 1/8 - 3/14, 7/3 - 3/2.
  const ArtopkCoefficients c8 = artopk_coefficients(8);
  CHECK(c8.ring_over_tree == doctest::Approx(0.53125));
  CHECK(c8.ring_over_allgather == doctest::Approx(0.875 - 3.0 / 14));
  CHECK(c8.tree_over_allgather == doctest::Approx(7.0 / 3 - 1.5));
  // The tree never beats the all-gather for N <= 4; the ring never beats it at N = 2.
  CHECK(artopk_coefficients(4).tree_over_allgather == doctest::Approx(0.0));
  CHECK(artopk_coefficients(2).ring_over_allgather == doctest::Approx(0.0));
  CHECK(choose_artopk(2, 1e-6, 1e-9, 1e9).fastest == ArtopkCollective::ALLGATHER);
  CHECK_THROWS_AS(artopk_coefficients(1), std::invalid_argument);
  // The tree wins somewhere iff its all-gather coefficient exceeds the ring's over it:
  // never for N <= 7 nor N = 9 (L jumps to 4), for N = 8 and every N >= 10 here.
  for (int n = 2; n <= 40; ++n) {
    CAPTURE(n);
    const ArtopkCoefficients c = artopk_coefficients(n);
    bool tree_wins_somewhere = false;
    for (double mc = 1; mc < 1e9; mc *= 1.01)
      tree_wins_somewhere =
          tree_wins_somewhere || choose_artopk(n, 1e-5, 1e-9, mc).fastest == ArtopkCollective::ARTOPK_TREE;
    CHECK(tree_wins_somewhere == (c.tree_over_allgather > c.ring_over_tree));
    CHECK(tree_wins_somewhere == (n == 8 || n >= 10));
  }
}

TEST_CASE("artopk: the choice on both sides of each crossover, in M_c and in alpha") {
  const double b = 8e-10;  // 10 Gbps
  const auto pick = [](int n, double a, double beta, double mc) { return choose_artopk(n, a, beta, mc).fastest; };
  // In M_c, alpha = 10 us (alpha/beta = 12500 B). N = 8: all-gather below the tree/all-gather
  // crossover r / (7/3 - 3/2) = 15000 B, the tree up to the ring/tree crossover r / 0.53125
  // = 23529 B, the ring above (the ring/all-gather crossover falls inside the tree's range).
  {
    const double a = 10e-6, r = a / b;
    const double tree_ag = r / (7.0 / 3 - 1.5), ring_tree = r / ((3 - 7.0 / 8) / (7 - 3));
    CHECK(tree_ag == doctest::Approx(15000));
    CHECK(ring_tree == doctest::Approx(23529.41).epsilon(1e-6));
    const ArtopkChoice at = choose_artopk(8, a, b, 20000);
    CHECK(at.tree_allgather_mc_bytes == doctest::Approx(tree_ag).epsilon(1e-12));
    CHECK(at.ring_tree_mc_bytes == doctest::Approx(ring_tree).epsilon(1e-12));
    CHECK(at.ring_allgather_mc_bytes == doctest::Approx(r / (0.875 - 3.0 / 14)).epsilon(1e-12));
    CHECK(pick(8, a, b, 0.99 * tree_ag) == ArtopkCollective::ALLGATHER);
    CHECK(pick(8, a, b, 1.01 * tree_ag) == ArtopkCollective::ARTOPK_TREE);
    CHECK(pick(8, a, b, 0.99 * ring_tree) == ArtopkCollective::ARTOPK_TREE);
    CHECK(pick(8, a, b, 1.01 * ring_tree) == ArtopkCollective::ARTOPK_RING);
  }
  // N = 4: the tree never beats the all-gather, so the ring/all-gather crossover
  // r / (1 - 1/4 - 2/6) = 2.4 r decides.
  {
    const double a = 4e-6, r = a / b, ring_ag = r / (1 - 0.25 - 2.0 / 6);
    CHECK(ring_ag == doctest::Approx(2.4 * r));
    CHECK(pick(4, a, b, 0.99 * ring_ag) == ArtopkCollective::ALLGATHER);
    CHECK(pick(4, a, b, 1.01 * ring_ag) == ArtopkCollective::ARTOPK_RING);
    CHECK_FALSE(choose_artopk(4, a, b, 0.99 * ring_ag).ring_beats_allgather);
    CHECK(choose_artopk(4, a, b, 1.01 * ring_ag).ring_beats_allgather);
  }
  // In alpha, M_c = 100 kB, N = 64 (L = 6): the ring below alpha* = c M_c beta with
  // c = (6 - 63/64) / (63 - 6), the tree above it, until the all-gather takes over at
  // alpha = (63/6 - 3/2) M_c beta; N = 1024 (L = 10) likewise.
  for (int n : {64, 1024}) {
    CAPTURE(n);
    const double mc = 1e5, l = ceil_log2_of(n), nn = n;
    const double ring_tree = (l - (nn - 1) / nn) / (nn - 1 - l) * mc * b;
    const double tree_ag = ((nn - 1) / l - 1.5) * mc * b;
    CHECK(pick(n, 0.99 * ring_tree, b, mc) == ArtopkCollective::ARTOPK_RING);
    CHECK(pick(n, 1.01 * ring_tree, b, mc) == ArtopkCollective::ARTOPK_TREE);
    CHECK(pick(n, 0.99 * tree_ag, b, mc) == ArtopkCollective::ARTOPK_TREE);
    CHECK(pick(n, 1.01 * tree_ag, b, mc) == ArtopkCollective::ALLGATHER);
    CHECK(choose_artopk(n, 0.99 * ring_tree, b, mc).ring_beats_tree);
    CHECK_FALSE(choose_artopk(n, 1.01 * ring_tree, b, mc).ring_beats_tree);
  }
}

TEST_CASE("artopk: never an all-reduce of dense gradients, so auto leaves it out") {
  CHECK_THROWS_WITH_AS(make("auto", json{{"candidates", json::array({"artopk_ring"})}}),
                       doctest::Contains("unknown all-reduce algorithm \"artopk_ring\""), ConfigError);
  auto all = make("auto");
  for (int n : {2, 8, 64})
    for (double m : {1e3, 1e6, 1e9}) {
      const std::string pick = models::resolved_name(*all, CollectiveGroup{n, 0}, m, AlphaBeta{1e-5, 1e-10});
      CHECK(pick.rfind("artopk", 0) == std::string::npos);
    }
}
