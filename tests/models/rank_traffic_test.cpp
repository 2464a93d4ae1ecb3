// What a rank of a collective sends, counted without running it (models/rank_traffic.cpp):
// schedule_traffic on a ring all-reduce's schedule -- 2(N-1) messages of M/N bytes each, or one
// pipelined phase standing for them -- and rank_steps giving the stepwise steps or the phases.
#include "models/collective.hpp"
#include "models/rank_traffic.hpp"

#include <doctest/doctest.h>
#include <memory>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

std::unique_ptr<Collective> ring(int segments = 1) {
  return CollectiveRegistry::instance().create("ring", json{{"segments", segments}}, "/training/collective/name",
                                               "/training/collective/params", "collective");
}

std::vector<RankStep> drain(StepSource& source) {
  std::vector<RankStep> out;
  for (RankStep step; source.next(step);) out.push_back(step);
  return out;
}

}  // namespace

TEST_CASE("rank traffic of a ring all-reduce: 2(N-1) messages of M/N bytes, whatever the granularity") {
  const double bytes = 1200;
  for (const int n : {2, 3, 4, 6}) {
    CAPTURE(n);
    const CollectiveGroup group{n};
    const auto algo = ring();
    for (int r = 0; r < n; ++r) {
      const TrafficCounters stepwise = schedule_traffic(algo->rank_schedule(r, group, bytes));
      CHECK(stepwise.messages_sent == 2 * (n - 1));
      CHECK(stepwise.bytes_sent == doctest::Approx(2 * (n - 1) * bytes / n).epsilon(1e-12));
      CHECK(stepwise.flows == 0);  // nothing simulated
      // One pipelined phase carries the same bytes and counts as its 2(N-1) steps.
      const auto phases = algo->rank_phases(r, group, bytes);
      CHECK(phases.size() == 1);
      const TrafficCounters pipelined = schedule_traffic(phases);
      CHECK(pipelined.messages_sent == 2 * (n - 1));
      CHECK(pipelined.bytes_sent == doctest::Approx(stepwise.bytes_sent).epsilon(1e-12));
    }
    // S segments per chunk: S times the messages, the same bytes.
    const TrafficCounters segmented = schedule_traffic(ring(3)->rank_schedule(0, group, bytes));
    CHECK(segmented.messages_sent == 2 * (n - 1) * 3);
    CHECK(segmented.bytes_sent == doctest::Approx(2 * (n - 1) * bytes / n).epsilon(1e-12));
  }
  // A group of one sends nothing.
  const TrafficCounters alone = schedule_traffic(ring()->rank_schedule(0, CollectiveGroup{1}, bytes));
  CHECK(alone.messages_sent == 0);
  CHECK(alone.bytes_sent == 0);
}

TEST_CASE("schedule_traffic counts sends only, each weighted by its step's latency steps") {
  const std::vector<RankStep> steps{
      RankStep{{RankOp{RankOp::Kind::SEND, 1, 100}, RankOp{RankOp::Kind::SEND, 2, 50}}, 1},  // two messages
      RankStep{{RankOp{RankOp::Kind::RECV, 1, 1000}}, 1},                                    // receives count nothing
      RankStep{{RankOp{RankOp::Kind::SEND, 3, 30}, RankOp{RankOp::Kind::RECV, 3, 30}}, 4},   // a phase of 4 steps
      RankStep{}};
  const TrafficCounters c = schedule_traffic(steps);
  CHECK(c.bytes_sent == 100 + 50 + 30);
  CHECK(c.messages_sent == 1 + 1 + 4);
  CHECK(schedule_traffic({}).messages_sent == 0);
}

TEST_CASE("rank_steps: the stepwise steps one at a time, or the merged phases held whole") {
  const int n = 5;
  const CollectiveGroup group{n};
  const double bytes = 1000;
  const auto algo = ring();
  const auto stepwise = rank_steps(*algo, 2, group, bytes, true);
  const auto steps = drain(*stepwise);
  REQUIRE(steps.size() == 2 * (n - 1));
  for (const auto& s : steps) {
    REQUIRE(s.ops.size() == 2);
    CHECK(s.ops[0].kind == RankOp::Kind::SEND);
    CHECK(s.ops[0].peer == 3);
    CHECK(s.ops[0].bytes == bytes / n);
    CHECK(s.ops[1].kind == RankOp::Kind::RECV);
    CHECK(s.ops[1].peer == 1);
    CHECK(s.latency_steps == 1);
  }
  const auto pipelined = rank_steps(*algo, 2, group, bytes, false);
  CHECK(pipelined->held() == 1);
  const auto phases = drain(*pipelined);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].latency_steps == 2 * (n - 1));
  CHECK(phases[0].ops[0].bytes == doctest::Approx(2.0 * (n - 1) * bytes / n).epsilon(1e-12));
  CHECK(schedule_traffic(steps).bytes_sent == doctest::Approx(schedule_traffic(phases).bytes_sent).epsilon(1e-12));
}
