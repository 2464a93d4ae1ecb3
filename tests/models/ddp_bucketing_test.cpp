// PyTorch DDP's bucketing rule (models/ddp_bucketing.cpp) on hand-made profiles, against the
// size-cap policy (models/bucketing.cpp). Every boundary is derived here from the rule as its
// source states it.
#include "models/bucketing.hpp"
#include "tests/models/bucketing_profiles.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <vector>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ddp: a small first bucket, then buckets that close once they reach the cap") {
  // Backward visits layers 5, 4, 3, 2, 1, 0 with 0.25, 0.5, 0.75, 10, 20, 8 MiB.
  const Profile p = layers({8 * MiB, 20 * MiB, 10 * MiB, 0.75 * MiB, 0.5 * MiB, 0.25 * MiB});
  // DDP, caps {1 MiB, 25 MiB}: 0.25 + 0.5 = 0.75 < 1, + 0.75 = 1.5 >= 1 closes the first
  // bucket (past its cap); the cap becomes 25: 10 + 20 = 30 >= 25 closes the second; 8 remains.
  const auto ddp = make_buckets_ddp(p, 1 * MiB, 25 * MiB);
  CHECK(bytes_of(ddp) == std::vector<double>{1.5 * MiB, 30 * MiB, 8 * MiB});
  REQUIRE(ddp.size() == 3);
  CHECK(ddp[0].first_layer == 5);
  CHECK(ddp[0].last_layer == 3);
  CHECK(ddp[1].first_layer == 2);
  CHECK(ddp[1].last_layer == 1);
  CHECK(ddp[2].last_layer == 0);
  // The size cap of 25 MiB never passes the cap: 0.25 + 0.5 + 0.75 + 10 = 11.5, + 20 would be
  // 31.5 > 25, so 20 starts the next; 20 + 8 = 28 > 25, so 8 is alone.
  CHECK(bytes_of(make_buckets(p, 25 * MiB)) == std::vector<double>{11.5 * MiB, 20 * MiB, 8 * MiB});
}

TEST_CASE("ddp: caps of zero give one bucket per gradient and layers without gradients join none") {
  const Profile p = layers({4, 0, 3, 2});
  CHECK(bytes_of(make_buckets_ddp(p, 0, 0)) == std::vector<double>{2, 3, 4});
  // First cap 5: 2 + 3 = 5 >= 5 closes it; the zero-byte layer 1 joins no bucket; 4 is alone.
  const auto b = make_buckets_ddp(p, 5, 100);
  CHECK(bytes_of(b) == std::vector<double>{5, 4});
  REQUIRE(b.size() == 2);
  CHECK(b[0].last_layer == 2);
  CHECK(b[1].last_layer == 0);  // ready after layer 0's backward, the zero-byte layer 1 in between
  // A first gradient larger than the first cap closes the first bucket alone.
  CHECK(bytes_of(make_buckets_ddp(layers({1, 1, 9}), 4, 100)) == std::vector<double>{9, 2});
  CHECK(make_buckets_ddp(layers({0, 0}), 1, 1).empty());
}
