// auto: models/collectives/auto.cpp. The cheapest candidate by the closed forms on the reference star
// (no NetworkCost on the group); the crossovers of the header comment.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("auto: picks the smallest closed form") {
  const AlphaBeta ab{2e-6, 1 / 3.125e9};
  auto all = make("auto");
  // On the ideal star direct wins every N >= 3, recursive doubling N = 2.
  CHECK(models::resolved_name(*all, CollectiveGroup{2, 0}, 1e6, ab) == "recursive_doubling");
  CHECK(models::resolved_name(*all, CollectiveGroup{3, 0}, 1e6, ab) == "direct");
  CHECK(models::resolved_name(*all, CollectiveGroup{64, 0}, 1024, ab) == "direct");
  CHECK(models::resolved_name(*all, CollectiveGroup{64, 0}, 1e9, AlphaBeta{1e-3, 1e-12}) == "direct");
  for (int n : SIZES)
    for (double bytes : BYTES) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& name : CollectiveRegistry::instance().names()) {
        auto c = make(name);
        if (name == "auto" || c->operation() != "allreduce" || c->uses_servers()) continue;
        best = std::min(best, c->analytic_time_s(CollectiveGroup{n, 0}, bytes, ab));
      }
      CHECK(all->analytic_time_s(CollectiveGroup{n, 0}, bytes, ab) == best);
    }
  // Restricted: recursive doubling below the RD / halving-doubling crossover
  // M* = a log2N / (b (log2N - 2(N-1)/N)), halving-doubling above it.
  auto mpi = make("auto", json{{"candidates", json::array({"ring", "recursive_doubling", "halving_doubling"})}});
  const double crossover = ab.alpha_s * 6 / (ab.beta_s_per_byte * (6 - 2.0 * 63 / 64));
  CHECK(crossover == doctest::Approx(9302.3).epsilon(1e-4));
  CHECK(models::resolved_name(*mpi, CollectiveGroup{64, 0}, crossover * 0.99, ab) == "recursive_doubling");
  CHECK(models::resolved_name(*mpi, CollectiveGroup{64, 0}, crossover * 1.01, ab) == "halving_doubling");
  // The ring never beats halving-doubling at a power of two, but does at N = 3 for large M.
  CHECK(models::resolved_name(*mpi, CollectiveGroup{3, 0}, 1e8, ab) == "ring");
  // The schedule follows the pick; resolve() returns the picked algorithm.
  const CollectiveGroup g{64, 0};
  CHECK(&models::resolve(*mpi, g, 1024, ab) != mpi.get());
  CHECK(models::resolve(*mpi, g, 1024, ab).analytic_time_s(g, 1024, ab) == mpi->analytic_time_s(g, 1024, ab));
  CHECK(mpi->rank_schedule(5, g, 1024).size() == 6u);    // recursive doubling: log2 64 steps
  CHECK(mpi->rank_schedule(5, g, 1e8).size() == 12u);    // halving-doubling: 2 log2 64 steps
  CHECK(models::resolved_name(*make("ring"), g, 1024, ab).empty());
}

TEST_CASE("auto: restricted candidates match and equal their closed forms") {
  check_all_sizes("auto", json{{"candidates", json::array({"ring", "tree", "recursive_doubling", "halving_doubling"})}});
}

TEST_CASE("auto: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("auto", json{{"candidates", json::array({"ring", "ps"})}}),
                       "/training/collective/params/candidates/1: unknown all-reduce algorithm \"ps\"; valid names are: "
                       "direct, double_binary_tree, halving_doubling, hierarchical, master_worker, multitree, "
                       "recursive_doubling, ring, torus2d, tree",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("auto", json{{"candidates", json::array()}}),
                       "/training/collective/params/candidates: expected a non-empty array of algorithm names, got an "
                       "array",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("auto", json{{"latency", "2 parsecs"}}),
                       "/training/collective/params/latency: unknown time unit \"parsecs\" in \"2 parsecs\"; expected "
                       "one of ns, us, ms, s",
                       ConfigError);
}
