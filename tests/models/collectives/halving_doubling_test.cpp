// halving_doubling: models/collectives/halving_doubling.cpp. Rabenseifner: 2 L a + 2(p-1)/p M b + 2 [r > 0](a + M b).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("halving_doubling: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("halving_doubling", 8) == doctest::Approx(6e-6 + 1.75 * mb).epsilon(1e-12));
  CHECK(hand_time("halving_doubling", 6) == doctest::Approx(4e-6 + 1.5 * mb + 2 * (1e-6 + mb)).epsilon(1e-12));
}

TEST_CASE("halving_doubling: irregular sizes match and equal their closed forms") {
  check_all_sizes("halving_doubling", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
}
