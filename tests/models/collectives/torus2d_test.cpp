// torus2d: models/collectives/torus2d.cpp. Row reduce-scatter, column all-reduce, row all-gather (R rows, C = N/R).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("torus2d: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("torus2d", 16) == doctest::Approx(6 * (1e-6 + mb / 4) + 6 * (1e-6 + mb / 16)).epsilon(1e-12));
  CHECK(hand_time("torus2d", 7) == doctest::Approx(hand_time("ring", 7)).epsilon(1e-12));
}

TEST_CASE("torus2d: rows variants match and equal their closed forms") {
  check_all_sizes("torus2d", json{{"rows", 2}}, {2, 4, 8, 16, 64});
  check_all_sizes("torus2d", json{{"rows", 8}}, {8, 16, 64});
  check_all_sizes("torus2d", json::object(), {6, 12, 27});
}

TEST_CASE("torus2d: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("torus2d", json{{"row", 2}}),
                       "/training/collective/params/row: unknown key \"row\"; valid keys are: rows", ConfigError);
  // Group-dependent problems surface when the collective is used.
  CHECK_THROWS_WITH_AS((void)make("torus2d", json{{"rows", 3}})->analytic_time_s(CollectiveGroup{8, 0}, 1, AlphaBeta{1, 1}),
                       "torus2d: rows = 3 does not divide the group size 8", std::invalid_argument);
}
