// double_binary_tree: models/collectives/double_binary_tree.cpp. Tick counts S(N, 1) as listed in the header comment.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("double_binary_tree: closed form by hand") {
  const double mb = HAND_MB;
  // Port-scheduled trees: ticks x (a + message b).
  CHECK(hand_time("double_binary_tree", 7) == doctest::Approx(8 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(hand_time("double_binary_tree", 16) == doctest::Approx(12 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(hand_time("double_binary_tree", 64) == doctest::Approx(20 * (1e-6 + mb / 2)).epsilon(1e-12));
}

TEST_CASE("double_binary_tree: segments variants match and equal their closed forms") {
  const std::vector<int> irregular{2, 3, 5, 6, 7, 12, 19, 27, 33};
  for (int s : {2, 4}) check_all_sizes("double_binary_tree", json{{"segments", s}});
  check_all_sizes("double_binary_tree", json::object(), irregular);
}

TEST_CASE("double_binary_tree: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("double_binary_tree", json{{"segment", 2}}),
                       "/training/collective/params/segment: unknown key \"segment\"; valid keys are: segments",
                       ConfigError);
}
