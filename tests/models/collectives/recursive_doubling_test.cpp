// recursive_doubling: models/collectives/recursive_doubling.cpp. Closed form (floor(log2 N) + 2 [N not a power of 2])(a + M b)
// and the exchange partners r XOR 2^k.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("recursive_doubling: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("recursive_doubling", 8) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
  CHECK(hand_time("recursive_doubling", 7) == doctest::Approx(4 * (1e-6 + mb)).epsilon(1e-12));  // 2 + pre/post
}

TEST_CASE("recursive_doubling: at N = 8 rank 5 exchanges all M with 4, 7 and 1") {
  const auto steps = make("recursive_doubling")->rank_schedule(5, CollectiveGroup{8, 0}, 1000);
  REQUIRE(steps.size() == 3u);
  const std::vector<int> partners{5 ^ 1, 5 ^ 2, 5 ^ 4};
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(steps[k].ops.size() == 2u);
    for (const auto& op : steps[k].ops) {
      CHECK(op.peer == partners[k]);
      CHECK(op.bytes == 1000);
    }
  }
}

TEST_CASE("recursive_doubling: irregular sizes match and equal their closed forms") {
  check_all_sizes("recursive_doubling", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
}
