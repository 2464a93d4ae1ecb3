// MG-WFBP bucketing (models/mgwfbp.cpp): the grouping whose last communication ends first, derived
// by hand on a small profile and checked against every contiguous grouping of random ones.
#include "models/bucketing.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <functional>
#include <random>
#include <vector>

using namespace ddlsim::models;

namespace {

/// The end of the last group's communication for a grouping (backward order).
double comm_end(const Profile& p, const std::vector<Bucket>& buckets, const std::function<double(double)>& tc) {
  double end = 0;
  for (const auto& b : buckets) {
    double ready = 0;
    for (std::size_t k = p.layers.size(); k-- > b.last_layer;) ready += p.layers[k].backward_s;
    end = std::max(ready, end) + tc(b.bytes);
  }
  return end;
}

}  // namespace

TEST_CASE("MG-WFBP finds the grouping whose last communication ends first") {
  // Layers 0..3, 1 MB each, backward 1 ms each: in backward order (layers 3, 2,
  // 1, 0) the gradients are ready at 1, 2, 3, 4 ms. t_c(m) = 0.6 ms + 1 ms/MB.
  // By hand: all apart ends at 2.6, 4.2, 5.8, 7.4; {3}{2}{1,0}: 2.6, 4.2, then
  // max(4, 4.2) + 2.6 = 6.8; {3}{2,1}{0}: 2.6, 5.6, 7.2; {3,2}{1,0}: 4.6, 7.2;
  // {3,2,1}{0}: 6.6, 8.2; {3}{2,1,0}: 7.6; all in one: 8.6. Best: {3}{2}{1,0}.
  Profile p;
  p.model = "mgwfbp";
  for (int i = 0; i < 4; ++i) p.layers.push_back(Layer{fmt::format("l{}", i), 0, 1e-3, 0, 1e6});
  const auto tc = [](double bytes) { return 0.6e-3 + bytes * 1e-9; };
  const auto b = make_buckets_mgwfbp(p, tc);
  REQUIRE(b.size() == 3);
  CHECK(b[0].first_layer == 3);
  CHECK(b[0].last_layer == 3);
  CHECK(b[1].last_layer == 2);
  CHECK(b[2].first_layer == 1);
  CHECK(b[2].last_layer == 0);
  CHECK(b[2].bytes == 2e6);
  CHECK(comm_end(p, b, tc) == doctest::Approx(6.8e-3).epsilon(1e-12));
  // A startup larger than every gain merges everything; a zero startup merges nothing.
  CHECK(make_buckets_mgwfbp(p, [](double bytes) { return 5e-3 + bytes * 1e-12; }).size() == 1);
  CHECK(make_buckets_mgwfbp(p, [](double bytes) { return bytes * 1e-9; }).size() == 4);
}

TEST_CASE("MG-WFBP is no worse than any contiguous grouping (exhaustive over 8 layers)") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  for (int trial = 0; trial < 20; ++trial) {
    Profile p;
    p.model = "random";
    for (int i = 0; i < 8; ++i) p.layers.push_back(Layer{fmt::format("l{}", i), 0, u(rng) * 1e-3, 0, u(rng) * 1e6});
    const double a = u(rng) * 1e-3;
    const auto tc = [a](double bytes) { return a + bytes * 1e-9; };
    const double best = comm_end(p, make_buckets_mgwfbp(p, tc), tc);
    for (unsigned mask = 0; mask < (1u << 7); ++mask) {  // bit k: a group boundary after the k-th gradient
      std::vector<Bucket> groups;
      Bucket open{7, 7, 0};
      for (int g = 0; g < 8; ++g) {
        const std::size_t k = static_cast<std::size_t>(7 - g);
        open.last_layer = k;
        open.bytes += p.layers[k].grad_bytes;
        if (g == 7 || (mask >> g & 1u)) {
          groups.push_back(open);
          open = Bucket{k - 1, k - 1, 0};
        }
      }
      CHECK(best <= comm_end(p, groups, tc) * (1 + 1e-12));
    }
  }
}
