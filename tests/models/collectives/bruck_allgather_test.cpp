// bruck_allgather: models/collectives/bruck_allgather.cpp. Bruck's all-gather of M output bytes: step d = 1, 2, 4, ... moves
// min(d, N-d) blocks of M/N to rank r-d, from rank r+d: ceil(log2 N) a + (N-1)/N M b.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("bruck_allgather: closed form by hand") {
  const double mb = HAND_MB;
  // N = 5: distances 1, 2, 4 move 1, 2, 1 blocks: 3 a + 4/5 M b.
  CHECK(hand_time("bruck_allgather", 5) == doctest::Approx(3e-6 + 0.8 * mb).epsilon(1e-12));
  CHECK(hand_time("bruck_allgather", 8) == doctest::Approx(3e-6 + 0.875 * mb).epsilon(1e-12));
  CHECK(hand_time("bruck_allgather", 1) == 0.0);
}

TEST_CASE("bruck_allgather: at N = 6 rank 1 sends to 1 - d and receives from 1 + d") {
  const auto steps = make("bruck_allgather")->rank_schedule(1, CollectiveGroup{6, 0}, 600);
  REQUIRE(steps.size() == 3u);
  const std::vector<int> to{0, 5, 3}, from{2, 3, 5};
  const std::vector<double> bytes{100, 200, 200};  // min(d, 6 - d) blocks of 100
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(steps[k].ops.size() == 2u);
    for (const auto& op : steps[k].ops) {
      CHECK(op.peer == (op.kind == RankOp::Kind::SEND ? to[k] : from[k]));
      CHECK(op.bytes == bytes[k]);
    }
  }
  CHECK(make("bruck_allgather")->operation() == "allgather");
}

TEST_CASE("bruck_allgather: irregular sizes match and equal their closed forms") {
  check_all_sizes("bruck_allgather", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
}
