// The transfers of a collective's rank schedules and their order (models/schedule_graph.cpp): every
// send matched with its receive in program order per pair, each transfer's round (the earliest wave
// of posted steps both its sides belong to), the budget on ends, and the refusals -- on a ring
// all-reduce, whose step i is round i everywhere, and on hand-written schedules.
#include "models/collective.hpp"
#include "models/schedule_graph.hpp"

#include <doctest/doctest.h>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::models::detail;

namespace {

RankOp to(int peer, double bytes) { return RankOp{RankOp::Kind::SEND, peer, bytes}; }
RankOp from(int peer, double bytes) { return RankOp{RankOp::Kind::RECV, peer, bytes}; }
RankStep step(std::vector<RankOp> ops) {
  RankStep s;
  for (const auto& op : ops) s.ops.push_back(op);
  return s;
}

/// A made-up collective whose rank r runs schedules[r].
class Written final : public Collective {
 public:
  explicit Written(std::vector<std::vector<RankStep>> schedules) : schedules_(std::move(schedules)) {}
  [[nodiscard]] std::string operation() const override { return "allreduce"; }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup&, double, const AlphaBeta&) const override { return 0; }
  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup&, double) const override {
    return schedules_.at(static_cast<std::size_t>(rank));
  }
  [[nodiscard]] CollectiveGroup group() const { return CollectiveGroup{static_cast<int>(schedules_.size())}; }

 private:
  std::vector<std::vector<RankStep>> schedules_;
};

ScheduleGraph flatten(const Written& w) {
  auto g = flatten_schedules(w, w.group(), 0, false, 1'000'000);
  REQUIRE(g.has_value());
  return *g;
}

}  // namespace

TEST_CASE("schedule graph of a ring all-reduce: N x 2(N-1) transfers of M/N, step i in round i") {
  const int n = 4;
  const double bytes = 800;
  const auto ring = CollectiveRegistry::instance().create("ring", json::object(), "/c/name", "/c/params", "collective");
  auto g = flatten_schedules(*ring, CollectiveGroup{n}, bytes, false, 1'000'000);
  REQUIRE(g.has_value());
  CHECK(g->ranks == n);
  CHECK(g->first == std::vector<int>{0, 6, 12, 18, 24});
  for (int r = 0; r < n; ++r) CHECK(g->steps_of(r) == 2 * (n - 1));
  REQUIRE(g->transfers.size() == static_cast<std::size_t>(n * 2 * (n - 1)));
  for (const int c : g->count) CHECK(c == 2);  // each step sends one chunk and receives one
  const auto order = order_transfers(*g);
  CHECK(order.size() == g->transfers.size());
  std::vector<int> position(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  for (const auto& t : g->transfers) {
    CAPTURE(t.src);
    CHECK(t.dst == (t.src + 1) % n);
    CHECK(t.bytes == bytes / n);
    const int i = t.send_step - g->first[static_cast<std::size_t>(t.src)];
    CHECK(t.recv_step - g->first[static_cast<std::size_t>(t.dst)] == i);  // program order per pair
    CHECK(t.round == i);
  }
  // Every transfer comes after those of the previous steps of both its ranks.
  for (std::size_t a = 0; a < g->transfers.size(); ++a)
    for (std::size_t b = 0; b < g->transfers.size(); ++b) {
      const auto& ta = g->transfers[a];
      const auto& tb = g->transfers[b];
      const bool shares_rank = ta.src == tb.src || ta.src == tb.dst || ta.dst == tb.src || ta.dst == tb.dst;
      if (shares_rank && ta.round < tb.round) CHECK(position[a] < position[b]);
    }

  // Pipelined: one phase per rank, one transfer each, all in round 0.
  auto phases = flatten_schedules(*ring, CollectiveGroup{n}, bytes, true, 1'000'000);
  REQUIRE(phases.has_value());
  CHECK(phases->transfers.size() == static_cast<std::size_t>(n));
  CHECK(phases->latency_steps == std::vector<int>(n, 2 * (n - 1)));
  (void)order_transfers(*phases);
  for (const auto& t : phases->transfers) {
    CHECK(t.bytes == doctest::Approx(2.0 * (n - 1) * bytes / n).epsilon(1e-12));
    CHECK(t.round == 0);
  }
  // The budget: 24 sends fit in 24 ends, not in 10 (given up after rank 1's 12).
  CHECK(flatten_schedules(*ring, CollectiveGroup{n}, bytes, false, 24).has_value());
  CHECK_FALSE(flatten_schedules(*ring, CollectiveGroup{n}, bytes, false, 10).has_value());
}

TEST_CASE("schedule graph: a relay waits a round, messages of a pair match in program order, empty steps pass through") {
  // Rank 0 sends 10 then 20 to rank 1; rank 1 receives both, then relays 5 to rank 2 (empty step first).
  const Written relay({{step({to(1, 10)}), step({to(1, 20)})},
                       {step({from(0, 10)}), step({from(0, 20)}), step({to(2, 5)})},
                       {RankStep{}, step({from(1, 5)})}});
  auto g = flatten(relay);
  CHECK(g.first == std::vector<int>{0, 2, 5, 7});
  CHECK(g.step_rank == std::vector<int>{0, 0, 1, 1, 1, 2, 2});
  CHECK(g.count == std::vector<int>{1, 1, 1, 1, 1, 0, 1});
  const auto order = order_transfers(g);
  REQUIRE(g.transfers.size() == 3);
  // Transfers sorted by (src, dst) pair, program order within: 0->1 (10), 0->1 (20), 1->2 (5).
  CHECK(g.transfers[0].bytes == 10);
  CHECK(g.transfers[0].send_step == 0);
  CHECK(g.transfers[0].recv_step == 2);
  CHECK(g.transfers[1].bytes == 20);
  CHECK(g.transfers[1].recv_step == 3);
  CHECK(g.transfers[2].src == 1);
  CHECK(g.transfers[2].dst == 2);
  // Rounds: 10 B in round 0; 20 B once both first steps are done: round 1; the relay after that: round 2
  // (rank 2's empty step passed through at round 0, its receive posted and waiting).
  CHECK(g.transfers[0].round == 0);
  CHECK(g.transfers[1].round == 1);
  CHECK(g.transfers[2].round == 2);
  CHECK(order == std::vector<int>{0, 1, 2});
}

TEST_CASE("schedule graph: peers outside the group, unmatched sends and deadlocks are refused") {
  CHECK_THROWS_WITH_AS(flatten_schedules(Written({{step({to(5, 1)})}, {}, {}}), CollectiveGroup{3}, 0, false, 100),
                       "ContentionCost: rank 0 addresses peer 5 in a group of 3", std::logic_error);
  CHECK_THROWS_WITH_AS(flatten_schedules(Written({{}, {step({to(1, 1)})}}), CollectiveGroup{2}, 0, false, 100),
                       "ContentionCost: rank 1 addresses peer 1 in a group of 2", std::logic_error);
  CHECK_THROWS_WITH_AS(flatten_schedules(Written({{step({to(1, 1)})}, {}}), CollectiveGroup{2}, 0, false, 100),
                       "ContentionCost: 1 sends but 0 receives", std::logic_error);
  CHECK_THROWS_WITH_AS(flatten_schedules(Written({{step({to(1, 1)})}, {}, {step({from(1, 1)})}}), CollectiveGroup{3}, 0,
                                         false, 100),
                       "ContentionCost: a send 0 -> 1 has no matching receive", std::logic_error);
  // Both ranks receive before they send: neither step can finish.
  const Written crossed({{step({from(1, 1)}), step({to(1, 1)})}, {step({from(0, 1)}), step({to(0, 1)})}});
  auto g = flatten(crossed);
  CHECK_THROWS_WITH_AS(order_transfers(g), "ContentionCost: the schedule deadlocks (rank 0 waits at step 0)",
                       std::logic_error);
  // Sending in the same step as receiving does not deadlock: the exchange is round 0.
  const Written swapped({{step({from(1, 1), to(1, 1)})}, {step({from(0, 1), to(0, 1)})}});
  auto ok = flatten(swapped);
  CHECK(order_transfers(ok).size() == 2);
  for (const auto& t : ok.transfers) CHECK(t.round == 0);
}
