// Collective algorithms, all at once: schedules match, and the closed forms are exact.
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
                       "artopk_tree, auto, binomial_broadcast, bruck_allgather, direct, double_binary_tree, halving_doubling, "
                       "hierarchical, master_worker, multitree, ps, recursive_doubling, ring, ring_allgather, ring_reduce_scatter, torus2d, tree",
                       ConfigError);
}

// ---------------------------------------------------------------- (a)-(c) every algorithm, default parameters

TEST_CASE("collectives: every registered algorithm matches and equals its closed form") {
  for (const auto& name : CollectiveRegistry::instance().names()) check_all_sizes(name, json::object());
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
