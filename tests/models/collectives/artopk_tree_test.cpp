// artopk_tree: models/collectives/artopk_tree.cpp. AR-Topk over a binomial tree: broadcast of the indices, binomial
// reduce of the values to the root, binomial broadcast back: 3L steps (closed forms: tests/models/artopk_test.cpp).
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("artopk_tree: the root sends L, receives L from its largest subtree first, sends L") {
  const CollectiveGroup g{8, 0};
  const double mc = 1000;
  const auto tree_root = make("artopk_tree")->rank_schedule(0, g, mc);
  REQUIRE(tree_root.size() == 9u);
  const std::vector<int> peers{1, 2, 4, 4, 2, 1, 1, 2, 4};
  for (std::size_t i = 0; i < 9; ++i) {
    CAPTURE(i);
    CHECK(tree_root[i].ops.size() == 1u);
    CHECK(tree_root[i].ops[0].peer == peers[i]);
    CHECK((tree_root[i].ops[0].kind == RankOp::Kind::RECV) == (i >= 3 && i < 6));
    CHECK(tree_root[i].ops[0].bytes == mc);
  }
}

TEST_CASE("artopk_tree: roots and irregular sizes match and equal their closed forms") {
  check_all_sizes("artopk_tree", json::object(), {2, 3, 5, 6, 7, 12, 19, 27, 33});
  check_all_sizes("artopk_tree", json{{"root", 1}}, {2, 3, 5, 6, 7, 12});
}

TEST_CASE("artopk_tree: a root outside the params' range is refused") {
  CHECK_THROWS_WITH_AS(make("artopk_tree", json{{"roots", 1}}),
                       "/training/collective/params/roots: unknown key \"roots\"; valid keys are: root", ConfigError);
  CHECK_THROWS_WITH_AS(make("artopk_tree", json{{"root", -1}}),
                       "/training/collective/params/root: expected an integer in [0, 1073741824], got -1", ConfigError);
}
