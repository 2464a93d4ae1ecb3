// artopk_ring: models/collectives/artopk_ring.cpp. AR-Topk over a ring: binomial broadcast of the root's indices
// (L = ceil(log2 N) rounds), then ring all-reduce of the values (closed forms: tests/models/artopk_test.cpp).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("artopk_ring: the schedule broadcasts from the root, then all-reduces around the ring") {
  const CollectiveGroup g{8, 0};
  const double mc = 1000;
  // Root 3 starts by sending the indices (binomial: to 4, then 5, then 7 = 3 + 1, 2, 4 mod 8);
  // rank 0 is virtual rank 5 = 4 + 1, whose parent is virtual rank 1, i.e. rank 4.
  const auto root = make("artopk_ring", json{{"root", 3}})->rank_schedule(3, g, mc);
  REQUIRE(root.size() == 3u + 14u);  // L sends, then 2(N-1) ring steps
  CHECK(root[0].ops[0].kind == RankOp::Kind::SEND);
  CHECK(root[0].ops[0].peer == 4);
  CHECK(root[2].ops[0].peer == 7);
  CHECK(root[3].ops.size() == 2u);
  CHECK(root[3].ops[0].bytes == doctest::Approx(mc / 8));
  const auto zero = make("artopk_ring", json{{"root", 3}})->rank_schedule(0, g, mc);
  CHECK(zero[0].ops[0].kind == RankOp::Kind::RECV);
  CHECK(zero[0].ops[0].peer == 4);
}

TEST_CASE("artopk_ring: roots and irregular sizes match and equal their closed forms") {
  check_all_sizes("artopk_ring", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
  check_all_sizes("artopk_ring", json{{"root", 1}}, {2, 3, 5, 6, 7, 12});
}

TEST_CASE("artopk_ring: a root outside the group or the params' range is refused") {
  CHECK_THROWS_WITH_AS((void)make("artopk_ring", json{{"root", 8}})->rank_schedule(0, CollectiveGroup{8, 0}, 1),
                       "artopk_ring: root 8 is not a worker rank (the group has 8 workers)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(make("artopk_ring", json{{"root", -1}}),
                       "/training/collective/params/root: expected an integer in [0, 1073741824], got -1", ConfigError);
}
