// ring_reduce_scatter: models/collectives/ring_reduce_scatter.cpp. (N-1) a + (N-1)/N M b: N-1 steps of M/N.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ring_reduce_scatter: closed form by hand") {
  CHECK(hand_time("ring_reduce_scatter", 8) == doctest::Approx(7e-6 + 0.875 * HAND_MB).epsilon(1e-12));
}

TEST_CASE("ring_reduce_scatter: N-1 steps, each a block of M/N to r+1 and one from r-1") {
  const auto steps = make("ring_reduce_scatter")->rank_schedule(2, CollectiveGroup{3, 0}, 900);
  REQUIRE(steps.size() == 2u);
  for (const auto& step : steps) {
    REQUIRE(step.ops.size() == 2u);
    for (const auto& op : step.ops) {
      CHECK(op.peer == (op.kind == RankOp::Kind::SEND ? 0 : 1));
      CHECK(op.bytes == 300);
    }
  }
  CHECK(make("ring_reduce_scatter")->operation() == "reduce_scatter");
}

TEST_CASE("ring_reduce_scatter: rank_phases is rank_schedule merged (one phase of (N-1) M/N each way, N-1 latencies)") {
  const auto c = make("ring_reduce_scatter");
  for (const int n : {1, 2, 3, 7}) {
    const CollectiveGroup g{n, 0};
    for (int r = 0; r < n; ++r) {
      const auto phases = c->rank_phases(r, g, 700);
      const auto merged = merge_steps(c->rank_schedule(r, g, 700));
      REQUIRE(phases.size() == merged.size());
      for (std::size_t i = 0; i < phases.size(); ++i) {
        CHECK(phases[i].latency_steps == merged[i].latency_steps);
        REQUIRE(phases[i].ops.size() == merged[i].ops.size());
        for (std::size_t k = 0; k < phases[i].ops.size(); ++k) {
          CHECK(phases[i].ops[k].kind == merged[i].ops[k].kind);
          CHECK(phases[i].ops[k].peer == merged[i].ops[k].peer);
          CHECK(phases[i].ops[k].bytes == doctest::Approx(merged[i].ops[k].bytes));
        }
      }
    }
  }
}
