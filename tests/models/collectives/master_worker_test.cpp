// master_worker: models/collectives/master_worker.cpp. 2 a + 2(N-1) M b: gather all of M to rank 0, send it back.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("master_worker: closed form by hand") {
  CHECK(hand_time("master_worker", 4) == doctest::Approx(2e-6 + 6 * HAND_MB).epsilon(1e-12));
}

TEST_CASE("master_worker: rank 0 receives M from every worker, then sends M to each, and a worker sends, then receives") {
  const auto root = make("master_worker")->rank_schedule(0, CollectiveGroup{3, 0}, 500);
  REQUIRE(root.size() == 2u);
  REQUIRE(root[0].ops.size() == 2u);
  REQUIRE(root[1].ops.size() == 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(root[0].ops[i].kind == RankOp::Kind::RECV);
    CHECK(root[1].ops[i].kind == RankOp::Kind::SEND);
    CHECK(root[0].ops[i].peer == static_cast<int>(i) + 1);
    CHECK(root[1].ops[i].bytes == 500);
  }
  const auto worker = make("master_worker")->rank_schedule(2, CollectiveGroup{3, 0}, 500);
  REQUIRE(worker.size() == 2u);
  CHECK(worker[0].ops.front().kind == RankOp::Kind::SEND);
  CHECK(worker[0].ops.front().peer == 0);
  CHECK(worker[1].ops.front().kind == RankOp::Kind::RECV);
}
