// ps: models/collectives/ps.cpp. Push/pull through S sharded servers: 2 a + 2 max(N/S, 1) M b.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ps: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("ps", 8, json::object(), 1) == doctest::Approx(2e-6 + 16 * mb).epsilon(1e-12));
  CHECK(hand_time("ps", 8, json::object(), 2) == doctest::Approx(2e-6 + 8 * mb).epsilon(1e-12));
  CHECK(hand_time("ps", 2, json::object(), 4) == doctest::Approx(2e-6 + 2 * mb).epsilon(1e-12));  // servers outnumber workers
  CHECK(hand_time("ps", 1, json::object(), 1) == doctest::Approx(2e-6 + 2 * mb).epsilon(1e-12));  // push M, pull M back
}

TEST_CASE("ps: more workers than the default sizes match and equal their closed forms") {
  check_all_sizes("ps", json::object(), {5, 6, 12});
}

TEST_CASE("ps: with one worker pushes its gradient and pulls the parameters back") {
  // One worker, S servers: the push is S flows of M/S sharing the worker's uplink (alpha + M beta),
  // the pull S flows of M/S sharing its downlink (alpha + M beta): T = 2 alpha + 2 M beta for every S.
  const auto ps = make("ps");
  for (const auto& ab : NETWORKS)
    for (double m : BYTES)
      for (int servers : {1, 2, 4}) {
        CAPTURE(servers);
        CAPTURE(m);
        const CollectiveGroup g{1, servers};
        const double expected = 2 * ab.alpha_s + 2 * m * ab.beta_s_per_byte;
        CHECK(ps->analytic_time_s(g, m, ab) == doctest::Approx(expected).epsilon(1e-12));
        const Schedules steps = stepwise(*ps, g, m);
        REQUIRE(steps[0].size() == 2u);  // the worker: push then pull, M/S to and from every server
        CHECK(steps[0][0].ops.size() == static_cast<std::size_t>(servers));
        for (const auto& op : steps[0][0].ops) {
          CHECK(op.kind == RankOp::Kind::SEND);
          CHECK(op.bytes == doctest::Approx(m / servers).epsilon(1e-15));
        }
        for (const auto& op : steps[0][1].ops) CHECK(op.kind == RankOp::Kind::RECV);
        for (int s = 1; s <= servers; ++s) CHECK(steps[static_cast<std::size_t>(s)].size() == 2u);
        const auto totals = check_matching(steps);
        CHECK(totals.size() == static_cast<std::size_t>(2 * servers));
        CHECK(evaluate(steps, ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(expected).epsilon(1e-6));
        CHECK(evaluate(pipelined(*ps, g, m), ab.alpha_s, ab.beta_s_per_byte) == doctest::Approx(expected).epsilon(1e-6));
      }
  CHECK_THROWS_WITH_AS((void)ps->analytic_time_s(CollectiveGroup{1, 0}, 1, AlphaBeta{1, 1}),
                       "ps: the group has no parameter server (servers must be >= 1)", std::invalid_argument);
}

TEST_CASE("ps: a group without servers is refused when the collective is used") {
  CHECK_THROWS_WITH_AS((void)make("ps")->rank_schedule(0, CollectiveGroup{4, 0}, 1),
                       "ps: the group has no parameter server (servers must be >= 1)", std::invalid_argument);
}
