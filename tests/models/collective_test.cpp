// The Collective interface (models/collective.cpp) and every algorithm at once: the default
// pipelined phases (merge_steps), AlphaBeta's step cost with and without software costs, schedules
// that match and closed forms that are exact.
//
// The oracle (tests/models/collective_oracle.hpp) is a small flow-level simulator of the
// reference platform, independent of the algorithms; its hand-checked cases are here. Each
// algorithm's own tests (hand-computed closed forms, parameter variants and errors) are in
// tests/models/collectives/<name>_test.cpp, beside models/collectives/<name>.cpp.
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

namespace {

const std::vector<std::string> EXPECTED{"artopk_ring",   "artopk_tree",        "bruck_allgather",
                                        "auto",          "binomial_broadcast", "direct",         "double_binary_tree",
                                        "halving_doubling", "hierarchical",    "master_worker",  "multitree",
                                        "ps",            "recursive_doubling", "ring",           "ring_allgather",
                                        "ring_reduce_scatter", "torus2d",      "tree"};

}  // namespace

TEST_CASE("evaluator: hand-checked cases") {
  const double a = 1e-3, b = 1e-6;  // 1 ms latency, 1 MB/s
  // One transfer: alpha + bytes beta.
  Schedules one{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 1}}, {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}}};
  CHECK(evaluate(one, a, b) == doctest::Approx(a + 1000 * b).epsilon(1e-12));
  // Two senders into one downlink, the second starting later: rank 2 first sends 500 B to
  // rank 3 (done at a + 500 b), then 1000 B to rank 0. Rank 1's 3000 B to rank 0 has the
  // downlink alone from a until 2a + 500 b, then shares it; the downlink never idles from a
  // on, so the last byte arrives at a + 4000 b.
  Schedules late{{RankStep{{RankOp{RankOp::Kind::RECV, 1, 3000}, RankOp{RankOp::Kind::RECV, 2, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::SEND, 0, 3000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::SEND, 3, 500}}, 1}, RankStep{{RankOp{RankOp::Kind::SEND, 0, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 2, 500}}, 1}}};
  CHECK(evaluate(late, a, b) == doctest::Approx(a + 4000 * b).epsilon(1e-12));
  // Rendezvous: a receive posted late holds the transfer back.
  Schedules held{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 1}, RankStep{{RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}},
                 {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}}};
  CHECK(evaluate(held, a, b) == doctest::Approx(2 * (a + 1000 * b)).epsilon(1e-12));
  // Max-min with unequal loads: 0 -> 1, 0 -> 2, 3 -> 2 all at once: uplink 0 and downlink 2 each
  // carry two flows: every flow gets 1/2; all end at a + 2000 b.
  Schedules mm{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}, RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}, RankOp{RankOp::Kind::RECV, 3, 1000}}, 1}},
               {RankStep{{RankOp{RankOp::Kind::SEND, 2, 1000}}, 1}}};
  CHECK(evaluate(mm, a, b) == doctest::Approx(a + 2000 * b).epsilon(1e-12));
  // Progressive filling: flows 0->1 (alone on both links) and 0->2, 3->2, 4->2 (downlink 2 shared by 3).
  // 0->2 gets 1/3, so 0->1 gets 2/3 of uplink 0.
  const auto r = max_min_rates({0, 0, 3, 4}, {1, 2, 2, 2}, 5, 1.0);
  CHECK(r[0] == doctest::Approx(2.0 / 3));
  CHECK(r[1] == doctest::Approx(1.0 / 3));
  CHECK(r[2] == doctest::Approx(1.0 / 3));
  // A pipelined entry pays (k-1) extra latencies after its flow.
  Schedules piped{{RankStep{{RankOp{RankOp::Kind::SEND, 1, 1000}}, 3}},
                  {RankStep{{RankOp{RankOp::Kind::RECV, 0, 1000}}, 3}}};
  CHECK(evaluate(piped, a, b) == doctest::Approx(3 * a + 1000 * b).epsilon(1e-12));
}

// ---------------------------------------------------------------- (d) registry and parameters

TEST_CASE("collectives: every algorithm is registered with a description") {
  const auto& registry = CollectiveRegistry::instance();
  for (const auto& name : EXPECTED) {
    CAPTURE(name);
    CHECK(registry.contains(name));
  }
  for (const auto* entry : registry.entries()) CHECK(!entry->description.empty());
  CHECK(make("ring_allgather")->operation() == "allgather");
  CHECK(make("ring_reduce_scatter")->operation() == "reduce_scatter");
  CHECK(make("binomial_broadcast")->operation() == "broadcast");
  CHECK(make("bruck_allgather")->operation() == "allgather");
  CHECK(make("artopk_ring")->operation() == "artopk");  // never a dense gradient's all-reduce
  CHECK(make("artopk_tree")->operation() == "artopk");
  CHECK(make("ps")->uses_servers());
  for (const char* name : {"auto", "direct", "double_binary_tree", "halving_doubling", "hierarchical", "master_worker",
                           "multitree", "recursive_doubling", "ring", "torus2d", "tree"}) {
    CAPTURE(name);
    CHECK(make(name)->operation() == "allreduce");
    CHECK_FALSE(make(name)->uses_servers());
  }
}

TEST_CASE("collectives: an unknown name is refused, listing every algorithm") {
  auto& registry = CollectiveRegistry::instance();
  CHECK_THROWS_WITH_AS(registry.create("treee", json::object(), "/training/collective/name",
                                       "/training/collective/params", "collective"),
                       "/training/collective/name: unknown collective \"treee\"; valid names are: artopk_ring, "
                       "artopk_tree, auto, binomial_broadcast, bruck_allgather, direct, double_binary_tree, gloo_ring, halving_doubling, "
                       "hierarchical, master_worker, multitree, ps, recursive_doubling, ring, ring_allgather, ring_reduce_scatter, torus2d, tree",
                       ConfigError);
}

// ---------------------------------------------------------------- (a)-(c) every algorithm, default parameters

TEST_CASE("collectives: every registered algorithm matches and equals its closed form") {
  // gloo_ring's windowed steps are not lockstep rounds, which this oracle evaluates: its closed form
  // is checked by hand and against the executor (tests/models/collectives/gloo_ring_test.cpp,
  // tests/engine/collective_identity_test.cpp, tests/engine/software_cost_test.cpp).
  for (const auto& name : CollectiveRegistry::instance().names())
    if (name != "gloo_ring") check_all_sizes(name, json::object());
}

// ---------------------------------------------------------------- rank_steps: the schedule one step at a time

TEST_CASE("collectives: rank_steps gives every rank's rank_schedule, step by step, for every algorithm") {
  std::vector<std::pair<std::string, json>> algorithms;
  for (const auto& name : CollectiveRegistry::instance().names()) algorithms.emplace_back(name, json::object());
  algorithms.emplace_back("ring", json{{"segments", 3}});
  for (const auto& [name, params] : algorithms) {
    const auto coll = make(name, params);
    for (const int n : SIZES) {
      const CollectiveGroup group{n, coll->uses_servers() ? 2 : 0};
      for (int r = 0; r < group.size(); ++r) {
        CAPTURE(name);
        CAPTURE(n);
        CAPTURE(r);
        const auto expected = coll->rank_schedule(r, group, BYTES[1]);
        const auto source = coll->rank_steps(r, group, BYTES[1]);
        std::size_t i = 0;
        for (RankStep step; source->next(step); ++i) {
          REQUIRE(i < expected.size());
          CHECK(step.latency_steps == expected[i].latency_steps);
          REQUIRE(step.ops.size() == expected[i].ops.size());
          for (std::size_t k = 0; k < step.ops.size(); ++k) {
            CHECK(step.ops[k].kind == expected[i].ops[k].kind);
            CHECK(step.ops[k].peer == expected[i].ops[k].peer);
            CHECK(step.ops[k].bytes == expected[i].ops[k].bytes);
          }
        }
        CHECK(i == expected.size());
      }
    }
  }
}

// ---------------------------------------------------------------- models/collective.cpp itself

namespace {

RankStep make_step(std::vector<RankOp> ops, int latency_steps = 1) {
  RankStep s;
  for (const auto& op : ops) s.ops.push_back(op);
  s.latency_steps = latency_steps;
  return s;
}

RankOp op_send(int peer, double bytes) { return RankOp{RankOp::Kind::SEND, peer, bytes}; }
RankOp op_recv(int peer, double bytes) { return RankOp{RankOp::Kind::RECV, peer, bytes}; }

/// A made-up algorithm with a fixed schedule for every rank: the interface's defaults only.
class FixedSchedule final : public Collective {
 public:
  explicit FixedSchedule(std::vector<RankStep> steps) : steps_(std::move(steps)) {}
  [[nodiscard]] std::string operation() const override { return "allreduce"; }
  [[nodiscard]] double analytic_time_s(const CollectiveGroup&, double, const AlphaBeta&) const override { return 0; }
  [[nodiscard]] std::vector<RankStep> rank_schedule(int, const CollectiveGroup&, double) const override { return steps_; }

 private:
  std::vector<RankStep> steps_;
};

void check_same(const std::vector<RankStep>& got, const std::vector<RankStep>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].latency_steps == expected[i].latency_steps);
    REQUIRE(got[i].ops.size() == expected[i].ops.size());
    for (std::size_t k = 0; k < got[i].ops.size(); ++k) {
      CHECK(got[i].ops[k].kind == expected[i].ops[k].kind);
      CHECK(got[i].ops[k].peer == expected[i].ops[k].peer);
      CHECK(got[i].ops[k].bytes == expected[i].ops[k].bytes);
    }
  }
}

}  // namespace

TEST_CASE("merge_steps: consecutive steps with the same kinds and peers become one phase carrying their bytes and latencies") {
  // Three ring-like steps to the same peers, one to another peer, then the first pattern again.
  const std::vector<RankStep> steps{make_step({op_send(1, 10), op_recv(3, 10)}), make_step({op_send(1, 20), op_recv(3, 20)}),
                                    make_step({op_send(1, 5), op_recv(3, 7)}, 2), make_step({op_send(2, 4)}),
                                    make_step({op_send(1, 1), op_recv(3, 1)})};
  check_same(merge_steps(steps), {make_step({op_send(1, 35), op_recv(3, 37)}, 4), make_step({op_send(2, 4)}), make_step({op_send(1, 1), op_recv(3, 1)})});
  // The same peers in another kind or order, or another op count, start a new phase.
  check_same(merge_steps({make_step({op_send(1, 1), op_recv(3, 1)}), make_step({op_recv(1, 1), op_send(3, 1)}), make_step({op_send(1, 1)})}),
             {make_step({op_send(1, 1), op_recv(3, 1)}), make_step({op_recv(1, 1), op_send(3, 1)}), make_step({op_send(1, 1)})});
  CHECK(merge_steps({}).empty());

  // The interface's defaults: rank_phases merges rank_schedule, rank_steps gives it one step at a time.
  const FixedSchedule fixed(steps);
  const CollectiveGroup group{4};
  check_same(fixed.rank_phases(0, group, 1), merge_steps(steps));
  const auto source = fixed.rank_steps(2, group, 1);
  CHECK(source->held() == steps.size());
  std::vector<RankStep> given;
  for (RankStep s; source->next(s);) given.push_back(s);
  check_same(given, steps);
  CHECK_FALSE(fixed.uses_servers());
  CHECK(group.size() == 4);
  CHECK(CollectiveGroup(4, 2).size() == 6);
}

TEST_CASE("AlphaBeta: a step costs alpha + concurrent x bytes x beta, split into latency and transfer, on either link class") {
  const double alpha = 1e-3, beta = 1e-6;
  const AlphaBeta ab(alpha, beta);
  CHECK(ab.step_s(1000) == doctest::Approx(alpha + 1000 * beta).epsilon(1e-15));
  CHECK(ab.step_s(1000, 3) == doctest::Approx(alpha + 3 * 1000 * beta).epsilon(1e-15));
  CHECK(ab.only(AlphaBeta::Part::LATENCY).step_s(1000, 3) == alpha);
  CHECK(ab.only(AlphaBeta::Part::TRANSFER).step_s(1000, 3) == doctest::Approx(3000 * beta).epsilon(1e-15));
  // Without an intra-node class, local steps are global ones; with one, they use it.
  CHECK(ab.local_step_s(500, 2) == ab.step_s(500, 2));
  AlphaBeta nodes = ab;
  nodes.local = LinkClass{2e-6, 1e-9};
  CHECK(nodes.local_step_s(500, 2) == doctest::Approx(2e-6 + 2 * 500 * 1e-9).epsilon(1e-15));
  CHECK(nodes.step_s(500, 2) == ab.step_s(500, 2));
  // A network model's factors: latencies times the first, betas divided by the second, both classes.
  const AlphaBeta scaled = nodes.scaled(2, 4);
  CHECK(scaled.alpha_s == 2 * alpha);
  CHECK(scaled.beta_s_per_byte == beta / 4);
  REQUIRE(scaled.local.has_value());
  CHECK(scaled.local->alpha_s == 4e-6);
  CHECK(scaled.local->beta_s_per_byte == 1e-9 / 4);
  CHECK(ab.scaled(1, std::numeric_limits<double>::infinity()).step_s(1000, 3) == alpha);
}

TEST_CASE("AlphaBeta with software costs: overheads, protocol efficiency and the handshake above the eager limit") {
  const double alpha = 10e-6, beta = 1e-9;
  AlphaBeta ab(alpha, beta);
  SoftwareCost mpi;
  mpi.send_overhead_s = 2e-6;
  mpi.recv_overhead_s = 3e-6;
  mpi.protocol_efficiency = 0.8;
  mpi.rendezvous = Rendezvous::MESSAGE;
  mpi.eager_limit_bytes = 1000;
  ab.software = std::make_shared<const SoftwareCost>(mpi);
  const double wire = beta / 0.8;
  // Eager (at most 1000 B): one latency; above it the receiver's "ready" first: two.
  CHECK(ab.step_s(1000, 2) == doctest::Approx(5e-6 + alpha + 1000 * 2 * wire).epsilon(1e-12));
  CHECK(ab.step_s(4000, 1) == doctest::Approx(5e-6 + 2 * alpha + 4000 * wire).epsilon(1e-12));
  CHECK(ab.only(AlphaBeta::Part::LATENCY).step_s(4000, 1) == doctest::Approx(5e-6 + 2 * alpha).epsilon(1e-12));
  CHECK(ab.only(AlphaBeta::Part::TRANSFER).step_s(4000, 1) == doctest::Approx(4000 * wire).epsilon(1e-12));
  // The same cost as the software's own step_s, and the factors keep the software.
  CHECK(ab.step_s(4000, 3) == doctest::Approx(mpi.step_s(4000, 3, alpha, beta)).epsilon(1e-12));
  CHECK(ab.scaled(1, 2).step_s(4000, 1) == doctest::Approx(5e-6 + 2 * alpha + 4000 * wire / 2).epsilon(1e-12));
  // Ideal software is alpha-beta exactly.
  ab.software = std::make_shared<const SoftwareCost>();
  CHECK(ab.step_s(4000, 3) == doctest::Approx(alpha + 3 * 4000 * beta).epsilon(1e-15));
}
