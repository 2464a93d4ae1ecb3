// The size-cap policy (models/bucketing.cpp): buckets in backward order, never past the cap.
#include "models/bucketing.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <vector>

using namespace ddlsim::models;

namespace {
Profile with_grads(const std::vector<double>& grads) {
  Profile p;
  p.model = std::string("bucketing-test-model");
  for (std::size_t i = 0; i < grads.size(); ++i) p.layers.push_back(Layer{fmt::format("l{}", i), 1e-3, 2e-3, 0, grads[i]});
  return p;
}
}  // namespace

TEST_CASE("buckets fill in backward order and never pass the cap") {
  // Layers 0..4 with 10, 20, 5, 5, 30 MB; backward visits 4, 3, 2, 1, 0.
  const auto b = make_buckets(with_grads({10e6, 20e6, 5e6, 5e6, 30e6}), 25e6);
  REQUIRE(b.size() == 4);
  CHECK(b[0].first_layer == 4);  // 30 MB alone: larger than the cap
  CHECK(b[0].last_layer == 4);
  CHECK(b[0].bytes == 30e6);
  CHECK(b[1].first_layer == 3);  // 5 + 5 = 10; + 20 would be 30 > 25
  CHECK(b[1].last_layer == 2);
  CHECK(b[1].bytes == 10e6);
  CHECK(b[2].bytes == 20e6);  // 20; + 10 would be 30 > 25
  CHECK(b[3].bytes == 10e6);
  CHECK(b[3].last_layer == 0);
}

TEST_CASE("cap 0 means one bucket per layer and a huge cap means one bucket") {
  const auto p = with_grads({1, 2, 3});
  const auto per_layer = make_buckets(p, 0);
  REQUIRE(per_layer.size() == 3);
  CHECK(per_layer[0].bytes == 3);
  CHECK(per_layer[2].bytes == 1);
  const auto one = make_buckets(p, 1e12);
  REQUIRE(one.size() == 1);
  CHECK(one[0].first_layer == 2);
  CHECK(one[0].last_layer == 0);
  CHECK(one[0].bytes == 6);
}

TEST_CASE("layers without gradients belong to no bucket") {
  const auto b = make_buckets(with_grads({0, 4, 0, 0}), 0);
  REQUIRE(b.size() == 1);
  CHECK(b[0].first_layer == 3);
  CHECK(b[0].last_layer == 1);  // ready after layer 1's backward, not layer 0's
  CHECK(make_buckets(with_grads({0, 0}), 25e6).empty());
}
