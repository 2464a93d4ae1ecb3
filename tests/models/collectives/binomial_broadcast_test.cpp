// binomial_broadcast: models/collectives/binomial_broadcast.cpp. ceil(log2 N)(a + M b); round k: virtual rank v < 2^k sends to v + 2^k.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("binomial_broadcast: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("binomial_broadcast", 7) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
  CHECK(hand_time("binomial_broadcast", 8) == doctest::Approx(3 * (1e-6 + mb)).epsilon(1e-12));
}

TEST_CASE("binomial_broadcast: at N = 8 rank 0 sends M to 1, 2, 4 and rank 5 receives it from 1") {
  const auto b = make("binomial_broadcast");
  const auto root = b->rank_schedule(0, CollectiveGroup{8, 0}, 300);
  REQUIRE(root.size() == 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    REQUIRE(root[k].ops.size() == 1u);
    CHECK(root[k].ops[0].kind == RankOp::Kind::SEND);
    CHECK(root[k].ops[0].peer == 1 << k);
    CHECK(root[k].ops[0].bytes == 300);
  }
  std::vector<RankOp> five;
  for (const auto& step : b->rank_schedule(5, CollectiveGroup{8, 0}, 300))
    five.insert(five.end(), step.ops.begin(), step.ops.end());
  REQUIRE(five.size() == 1u);  // a leaf of the last round
  CHECK(five[0].kind == RankOp::Kind::RECV);
  CHECK(five[0].peer == 1);
  CHECK(b->operation() == "broadcast");
}

TEST_CASE("binomial_broadcast: irregular sizes match and equal their closed forms") {
  check_all_sizes("binomial_broadcast", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
}
