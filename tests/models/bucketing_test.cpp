#include "models/bucketing.hpp"
#include "models/sync_model.hpp"
#include "tests/models/fake_runtime.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <functional>
#include <random>
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


TEST_CASE("replay order: forward in order, backward in reverse, a bucket as soon as it fills") {
  Profile p = with_grads({1, 1, 1});
  p.io_s = 1e-3;
  p.optimizer_s = 1e-3;
  TrainingPlan plan{&p, 1, make_buckets(p, 2), true, {}, {}, {}, 0, 0};  // buckets: {2,1}, {0}
  ddlsim::test::FakeRuntime rt;
  replay_iteration(rt, plan, CommRequest::Kind::ALLREDUCE, true);
  CHECK(rt.log == std::vector<std::string>{"compute:io:io", "compute:forward:l0", "compute:forward:l1", "compute:forward:l2", "compute:backward:l2",
                                           "compute:backward:l1", "submit:allreduce:0:2", "compute:backward:l0", "submit:allreduce:1:1", "wait_comm",
                                           "compute:optimizer:optimizer"});
  plan.overlap = false;
  ddlsim::test::FakeRuntime no_overlap;
  replay_iteration(no_overlap, plan, CommRequest::Kind::ALLREDUCE, false);
  CHECK(no_overlap.log == std::vector<std::string>{"compute:io:io", "compute:forward:l0", "compute:forward:l1", "compute:forward:l2", "compute:backward:l2",
                                                   "compute:backward:l1", "compute:backward:l0", "submit:allreduce:0:2", "submit:allreduce:1:1", "wait_comm"});
}

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
