// multitree: models/collectives/multitree.cpp. K spanning trees with M/K each, single-ported ticks.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("multitree: closed form by hand") {
  CHECK(hand_time("multitree", 8, json{{"trees", 1}}) == doctest::Approx(6 * (1e-6 + HAND_MB)).epsilon(1e-12));
}

TEST_CASE("multitree: trees variants match and equal their closed forms") {
  for (int k : {1, 2, 3, 8}) check_all_sizes("multitree", json{{"trees", k}});
  check_all_sizes("multitree", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
}

TEST_CASE("multitree: topology-aware trees adopt only neighbours and keep the closed form") {
  for (int n : {3, 7, 16}) {
    // A ring neighbourhood: rank r touches r-1 and r+1 only.
    auto ring = std::make_shared<std::vector<std::vector<int>>>(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      auto& nb = (*ring)[static_cast<std::size_t>(r)];
      nb = {(r + n - 1) % n, (r + 1) % n};
      std::sort(nb.begin(), nb.end());
      nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    }
    const CollectiveGroup g(n, 0, ring);
    auto mt = make("multitree");
    for (int r = 0; r < n; ++r)
      for (const auto& step : mt->rank_schedule(r, g, 1e6))
        for (const auto& op : step.ops) {
          const auto& nb = (*ring)[static_cast<std::size_t>(r)];
          CHECK(std::find(nb.begin(), nb.end(), op.peer) != nb.end());
        }
    // Still single-ported per tick, so the reference-platform closed form holds.
    check_collective("multitree on a ring neighbourhood", *mt, g);
    // A path forces deeper trees than the complete graph: never fewer ticks.
    CHECK(mt->analytic_time_s(g, 1e6, AlphaBeta{1e-6, 1e-9}) >=
          mt->analytic_time_s(CollectiveGroup(n), 1e6, AlphaBeta{1e-6, 1e-9}));
  }
}

TEST_CASE("multitree: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("multitree", json{{"trees", 0}}),
                       "/training/collective/params/trees: expected an integer in [1, 65536], got 0", ConfigError);
}
