// ring: models/collectives/ring.cpp. Expectations derived from the header comment's closed form
// and schedule (2(N-1)S steps; chunks of M/(N S) to r+1, from r-1).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ring: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("ring", 4) == doctest::Approx(6e-6 + 1.5 * mb).epsilon(1e-12));  // 2(N-1) a + 2(N-1)/N M b
  CHECK(hand_time("ring", 4) == doctest::Approx(1.578864e-3).epsilon(1e-12));
}

TEST_CASE("ring: rank r sends M/(N S) to r+1 and receives from r-1 in each of 2(N-1)S steps") {
  const double m = 1200;
  for (int s : {1, 3}) {
    CAPTURE(s);
    const auto steps = make("ring", json{{"segments", s}})->rank_schedule(1, CollectiveGroup{4, 0}, m);
    REQUIRE(steps.size() == static_cast<std::size_t>(2 * 3 * s));
    for (const auto& step : steps) {
      REQUIRE(step.ops.size() == 2u);
      CHECK(step.ops[0].kind != step.ops[1].kind);
      for (const auto& op : step.ops) {
        CHECK(op.peer == (op.kind == RankOp::Kind::SEND ? 2 : 0));
        CHECK(op.bytes == doctest::Approx(m / 4 / s).epsilon(1e-15));
      }
    }
  }
  // One group member: nothing to do.
  CHECK(make("ring")->rank_schedule(0, CollectiveGroup{1, 0}, m).empty());
}

TEST_CASE("ring: segments variants match and equal their closed forms") {
  for (int s : {2, 3}) check_all_sizes("ring", json{{"segments", s}});
}

TEST_CASE("ring: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("ring", json{{"segment", 2}}),
                       "/training/collective/params/segment: unknown key \"segment\"; valid keys are: segments",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("ring", json{{"segments", 0}}),
                       "/training/collective/params/segments: expected an integer in [1, 1048576], got 0", ConfigError);
}
