// hierarchical: models/collectives/hierarchical.cpp. 2 [g >= 2](a_l + (g-1) M b_l) + 2 [L >= 2](L-1)(a + M b / L).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("hierarchical: closed form by hand") {
  const double mb = HAND_MB;
  CHECK(hand_time("hierarchical", 16) == doctest::Approx(2 * (1e-6 + 7 * mb) + 2 * (1e-6 + mb / 2)).epsilon(1e-12));
  CHECK(hand_time("hierarchical", 20) == doctest::Approx(2 * (1e-6 + 7 * mb) + 4 * (1e-6 + mb / 3)).epsilon(1e-12));
  CHECK(hand_time("hierarchical", 5) == doctest::Approx(2 * (1e-6 + 4 * mb)).epsilon(1e-12));
}

TEST_CASE("hierarchical: gpus_per_node variants match and equal their closed forms") {
  for (int g : {1, 2, 3, 4, 16}) check_all_sizes("hierarchical", json{{"gpus_per_node", g}});
  check_all_sizes("hierarchical", json{{"gpus_per_node", 3}}, {2, 3, 5, 6, 7, 12, 19, 27, 33});
}

TEST_CASE("hierarchical: takes G from the platform and pays each phase's link class") {
  const double m = 1048576.0;
  auto h = make("hierarchical");  // no gpus_per_node param: the group's, else 8
  CollectiveGroup g(8, 0);
  // Without platform nodes: G = 8, one node, phases 1 and 3 only.
  CHECK(h->rank_schedule(0, g, m).size() == 2u);
  g.ranks_per_node = 4;  // two nodes of 4: leaders 0 and 4
  CHECK(h->rank_schedule(0, g, m).size() == 1u + 2u + 1u);
  CHECK(h->rank_schedule(5, g, m).front().ops.front().peer == 4);
  check_collective("hierarchical, G from the group", *h, g);
  // Link classes: phases 1 and 3 pay the local pair, the leaders' ring the global one:
  //   2 (a_l + (G-1) M b_l) + 2 (L-1) (a + M b / L), G = 4, L = 2.
  AlphaBeta ab{4e-6, 8.0 / 100e9};
  ab.local = LinkClass{2e-6, 8.0 / 2400e9};
  CHECK(h->analytic_time_s(g, m, ab) ==
        doctest::Approx(2 * (2e-6 + 3 * m * 8.0 / 2400e9) + 2 * (4e-6 + m / 2 * 8.0 / 100e9)).epsilon(1e-12));
  // Without a local pair every phase pays the global one (the reference star).
  CHECK(ab.intra().alpha_s == 2e-6);
  CHECK(AlphaBeta(1e-6, 1e-9).intra().beta_s_per_byte == 1e-9);
  // The param still sets G where the platform has no nodes; agreeing with the platform is fine.
  auto h4 = make("hierarchical", json{{"gpus_per_node", 4}});
  CHECK(h4->analytic_time_s(CollectiveGroup(8, 0), m, ab) == h->analytic_time_s(g, m, ab));
  CHECK(h4->analytic_time_s(g, m, ab) == h->analytic_time_s(g, m, ab));
  // ... contradicting it is refused at the param's path, naming both values.
  auto h8 = make("hierarchical", json{{"gpus_per_node", 8}});
  CHECK_THROWS_WITH_AS((void)h8->analytic_time_s(g, m, ab),
                       "/training/collective/params/gpus_per_node: gpus_per_node = 8 contradicts the platform's 4 GPUs "
                       "per node (the hierarchical topology's gpus_per_node); leave it out to use the platform's",
                       ConfigError);
}

TEST_CASE("hierarchical: parameter errors name the JSON path") {
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"gpus_per_node", "8"}}),
                       "/training/collective/params/gpus_per_node: expected an integer, got the string \"8\"",
                       ConfigError);
}

TEST_CASE("hierarchical, node_phase chain: NCCL's pipelined reduce and broadcast, closed form by hand") {
  const double mb = HAND_MB;  // 1 MiB at 1 GB/s
  // 16 ranks, G = 8, chunks of 256 KiB: k = 4; each node phase (G - 1 + k - 1) (a + M b / 4).
  const json chain{{"gpus_per_node", 8}, {"node_phase", "chain"}, {"node_chunk_bytes", 262144}};
  CHECK(hand_time("hierarchical", 16, chain) ==
        doctest::Approx(2 * 10 * (1e-6 + mb / 4) + 2 * (1e-6 + mb / 2)).epsilon(1e-12));
  // One chunk (the default 512 KiB chunk is half the message: k = 2).
  const json chain2{{"gpus_per_node", 8}, {"node_phase", "chain"}};
  CHECK(hand_time("hierarchical", 8, chain2) == doctest::Approx(2 * 8 * (1e-6 + mb / 2)).epsilon(1e-12));
  // Against the star: every intra link carries M once, so with many chunks the node phase nears M b
  // where the star's is (G - 1) M b.
  const json fine{{"gpus_per_node", 8}, {"node_phase", "chain"}, {"node_chunk_bytes", 1024}};
  CHECK(hand_time("hierarchical", 8, fine) < hand_time("hierarchical", 8, json{{"gpus_per_node", 8}}) / 3);
}

TEST_CASE("hierarchical, leaders halving_doubling: the leaders' phase as Rabenseifner's, closed form by hand") {
  const double mb = HAND_MB;
  const json hd{{"gpus_per_node", 4}, {"leaders", "halving_doubling"}};
  // 16 ranks: 4 nodes, levels M/2 and M/4, each twice; plus the star node phases.
  CHECK(hand_time("hierarchical", 16, hd) ==
        doctest::Approx(2 * (1e-6 + 3 * mb) + 2 * (1e-6 + mb / 2) + 2 * (1e-6 + mb / 4)).epsilon(1e-12));
  // 12 ranks: 3 nodes, L' = 2: one level of M/2 and the fold in and out of M.
  CHECK(hand_time("hierarchical", 12, hd) ==
        doctest::Approx(2 * (1e-6 + 3 * mb) + 2 * (1e-6 + mb / 2) + 2 * (1e-6 + mb)).epsilon(1e-12));
}

TEST_CASE("hierarchical options: schedules match and equal their closed forms") {
  for (int g : {1, 2, 3, 4, 8}) {
    check_all_sizes("hierarchical", json{{"gpus_per_node", g}, {"node_phase", "chain"}, {"node_chunk_bytes", 300000}});
    check_all_sizes("hierarchical", json{{"gpus_per_node", g}, {"leaders", "halving_doubling"}});
    check_all_sizes("hierarchical", json{{"gpus_per_node", g}, {"node_phase", "chain"}, {"leaders", "halving_doubling"}},
                    {2, 3, 5, 6, 7, 12, 19, 27, 33});
  }
}

TEST_CASE("hierarchical options: errors name the JSON path and the choices") {
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"node_phase", "ring"}}),
                       "/training/collective/params/node_phase: unknown value \"ring\"; valid values are: star, chain",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"leaders", "tree"}}),
                       "/training/collective/params/leaders: unknown value \"tree\"; valid values are: ring, "
                       "halving_doubling",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"node_chunk_bytes", 4096}}),
                       "/training/collective/params/node_chunk_bytes: node_chunk_bytes applies only with "
                       "\"node_phase\": \"chain\"",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("hierarchical", json{{"node_phase", "chain"}, {"node_chunk_bytes", 0}}),
                       "/training/collective/params/node_chunk_bytes: node_chunk_bytes must be at least 1 byte, got 0",
                       ConfigError);
}
