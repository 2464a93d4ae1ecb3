// direct: models/collectives/direct.cpp. 2 a + 2(N-1)/N M b: one all-to-all of M/N shards, twice.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("direct: closed form by hand") {
  CHECK(hand_time("direct", 4) == doctest::Approx(2e-6 + 1.5 * HAND_MB).epsilon(1e-12));
}

TEST_CASE("direct: two steps, each sending and receiving M/N to and from every other rank") {
  const auto steps = make("direct")->rank_schedule(2, CollectiveGroup{4, 0}, 800);
  REQUIRE(steps.size() == 2u);
  for (const auto& step : steps) {
    REQUIRE(step.ops.size() == 6u);  // (N-1) sends + (N-1) receives
    std::map<std::pair<int, int>, int> seen;  // (kind, peer) -> count
    for (const auto& op : step.ops) {
      CHECK(op.bytes == 200);
      ++seen[{static_cast<int>(op.kind), op.peer}];
    }
    for (int q : {0, 1, 3}) {
      CHECK(seen[{static_cast<int>(RankOp::Kind::SEND), q}] == 1);
      CHECK(seen[{static_cast<int>(RankOp::Kind::RECV), q}] == 1);
    }
  }
}
