#include "models/bucketing.hpp"
#include "models/sync_model.hpp"

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

namespace {
/// A deterministic fake Runtime: a clock, and a log of what the replay asked for.
class FakeRuntime final : public Runtime {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int workers() const override { return 1; }
  [[nodiscard]] int servers() const override { return 0; }
  double now() override { return clock; }
  void compute(double seconds, Phase phase, const std::string& label) override {
    clock += seconds;
    log.push_back(fmt::format("{}:{}", to_string(phase), label));
  }
  void submit(const CommRequest& r) override { log.push_back(fmt::format("submit:{}", r.bucket)); }
  void wait_comm() override { log.push_back("wait"); }
  void iteration_begin(int) override {}
  void iteration_end(int) override {}
  double clock = 0;
  std::vector<std::string> log;
};
}  // namespace

TEST_CASE("replay order: forward in order, backward in reverse, a bucket as soon as it fills") {
  Profile p = with_grads({1, 1, 1});
  p.io_s = 1e-3;
  p.optimizer_s = 1e-3;
  TrainingPlan plan{&p, 1, make_buckets(p, 2), true};  // buckets: {2,1}, {0}
  FakeRuntime rt;
  replay_iteration(rt, plan, CommRequest::Kind::ALLREDUCE, true);
  CHECK(rt.log == std::vector<std::string>{"io:io", "forward:l0", "forward:l1", "forward:l2", "backward:l2",
                                           "backward:l1", "submit:0", "backward:l0", "submit:1", "wait",
                                           "optimizer:optimizer"});
  plan.overlap = false;
  FakeRuntime no_overlap;
  replay_iteration(no_overlap, plan, CommRequest::Kind::ALLREDUCE, false);
  CHECK(no_overlap.log == std::vector<std::string>{"io:io", "forward:l0", "forward:l1", "forward:l2", "backward:l2",
                                                   "backward:l1", "backward:l0", "submit:0", "submit:1", "wait"});
}
