// tree: models/collectives/tree.cpp. Hand values from the header comment's closed form.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("tree: closed form by hand") {
  const double mb = HAND_MB;
  // Perfect tree, N = 7: 2 D (a + 2 M b), D = 2; with 4 segments 2 (D + 3)(a + 2 M b / 4).
  CHECK(hand_time("tree", 7) == doctest::Approx(4e-6 + 8 * mb).epsilon(1e-12));
  CHECK(hand_time("tree", 7, json{{"segments", 4}}) == doctest::Approx(10 * (1e-6 + 0.5 * mb)).epsilon(1e-12));
  // N = 4: 0 -> {1, 2}, 1 -> {3}. Reduce: rank 1 done at c, rank 2 (leaf) at 0, root at
  // max(0 + tau, c + c) = 2c; broadcast: tau (root to 1, 2) + c (1 to 3). T = 3c + tau = 4a + 5 M b.
  CHECK(hand_time("tree", 4) == doctest::Approx(4e-6 + 5 * mb).epsilon(1e-12));
  CHECK(hand_time("tree", 2, json{{"segments", 3}}) == doctest::Approx(6e-6 + 2 * mb).epsilon(1e-12));
  for (int n : SIZES) CHECK(hand_time("tree", n) >= 0.0);
}

TEST_CASE("tree: segments variants match and equal their closed forms") {
  const std::vector<int> irregular{2, 3, 5, 6, 7, 12, 19, 27, 33};
  for (int s : {2, 3, 5}) {
    check_all_sizes("tree", json{{"segments", s}});
    check_all_sizes("tree", json{{"segments", s}}, irregular);
  }
}

TEST_CASE("tree: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(models::CollectiveRegistry::instance().create("tree", json{{"segmets", 2}},
                                                                     "/training/collective/name",
                                                                     "/training/collective/params", "collective"),
                       "/training/collective/params/segmets: unknown key \"segmets\"; valid keys are: segments",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make("tree", json{{"segments", 0}}),
                       "/training/collective/params/segments: expected an integer in [1, 1048576], got 0", ConfigError);
}
