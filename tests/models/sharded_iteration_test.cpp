// One sharded iteration as ZeRO and FSDP issue it (models/sharded_iteration.cpp): the units cut from
// the profile's gradient bytes, and the order of every all-gather, reduce-scatter and wait, logged by
// the fake runtime, for each backward prefetch (FSDP's _pre_backward_hook and _post_backward_hook)
// and for ZeRO-2's buckets; the optimizer on the rank's shard only.
#include "models/sharded_iteration.hpp"
#include "tests/models/fake_runtime.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ddlsim::models;
using ddlsim::test::FakeRuntime;

namespace {

Profile sharded_test_profile(int layers, double bytes_each) {
  Profile p;
  p.optimizer_s = 0.008;
  for (int l = 0; l < layers; ++l)
    p.layers.push_back(Layer{"l" + std::to_string(l), 0.001, 0.002, static_cast<std::int64_t>(bytes_each / 4), bytes_each});
  return p;
}

/// The log without compute lines other than each unit's first layer and the optimizer.
std::vector<std::string> comm_log(const std::vector<std::string>& log) {
  std::vector<std::string> out;
  for (const auto& l : log)
    if (l.rfind("compute", 0) != 0 || l.find(":optimizer") != std::string::npos) out.push_back(l);
  return out;
}

std::vector<std::string> replay_log(ShardingStrategy strategy, BackwardPrefetch prefetch, int units, int ranks = 4) {
  static Profile profile;  // the plan keeps a pointer
  profile = sharded_test_profile(6, 100);
  TrainingPlan plan;
  plan.profile = &profile;
  auto it = plan_sharded_iteration(strategy, Sharding{stage_of(strategy), ranks, ranks}, prefetch, profile, units,
                                   make_buckets(profile, 200));
  plan.buckets = it.buckets;
  plan.sharded = it.plan;
  FakeRuntime rt;
  replay_sharded_iteration(rt, plan);
  return comm_log(rt.log);
}

}  // namespace

TEST_CASE("make_units cuts contiguous units of about equal gradient bytes") {
  // 6 layers of 100 B into 3 units: 200 B each.
  auto u = make_units({100, 100, 100, 100, 100, 100}, {25, 25, 25, 25, 25, 25}, 3);
  REQUIRE(u.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(u[i].first_layer == 2 * i);
    CHECK(u[i].end_layer == 2 * i + 2);
    CHECK(u[i].bytes == 200);
    CHECK(u[i].parameters == 50);
  }
  // A big first layer: unit 0 holds its third (400 of 1200) at once; the 800 left split in two.
  u = make_units({400, 100, 100, 200, 200, 200}, {}, 3);
  REQUIRE(u.size() == 3);
  CHECK(u[0].end_layer == 1);
  CHECK(u[1].end_layer == 4);  // 400 + 100 + 100 + 200 = 800 = 2/3
  CHECK(u[2].bytes == 400);
  // Every layer its own unit; one unit for all.
  CHECK(make_units({1, 2, 3}, {}, 3).size() == 3);
  CHECK(make_units({1, 2, 3}, {}, 1).front().bytes == 6);
  // An embedding-sized first layer (60 % of the bytes) does not leave a run of one-layer units behind
  // it: the 400 B left are cut in two of 200 (cumulative thirds, 400 and 800, would close unit 1
  // after one layer and leave 300 to the last).
  u = make_units({600, 100, 100, 100, 100}, {}, 3);
  REQUIRE(u.size() == 3);
  CHECK(u[0].end_layer == 1);
  CHECK(u[1].end_layer == 3);
  CHECK(u[2].bytes == 200);
  // Units never empty: a huge last layer still leaves one layer to each earlier unit.
  u = make_units({1, 1, 1, 1000}, {}, 4);
  REQUIRE(u.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(u[i].end_layer == i + 1);
  CHECK_THROWS_WITH_AS((void)make_units({1, 2}, {}, 3), "units: expected 1 to 2 (the profile's layers), got 3",
                       std::invalid_argument);
  CHECK_THROWS_AS((void)make_units({1, 2}, {}, 0), std::invalid_argument);
}

TEST_CASE("fsdp_full_shard under BACKWARD_PRE: the next unit's gather overlaps the current unit's compute") {
  // 3 units of 200 B. Buckets: forward gathers 0-2, backward gathers 3-5, reduce-scatters 6-8.
  const std::vector<std::string> expected = {
      "submit:allgather:0:200", "wait_through:0", "submit:allgather:1:200",  // forward(0) overlaps gather(1)
      "wait_through:1", "submit:allgather:2:200", "wait_through:2",         // forward(1) overlaps gather(2)
      "submit:allgather:5:200",                                              // backward re-gathers unit 2
      "wait_through:5", "submit:allgather:4:200", "submit:reduce_scatter:8:200",  // PRE: before backward(2)
      "wait_through:4", "submit:allgather:3:200", "submit:reduce_scatter:7:200",
      "wait_through:3", "submit:reduce_scatter:6:200",
      "wait_comm", "compute:optimizer:optimizer (own shard)"};
  CHECK(replay_log(ShardingStrategy::FSDP_FULL_SHARD, BackwardPrefetch::PRE, 3) == expected);
  CHECK(replay_log(ShardingStrategy::ZERO3, BackwardPrefetch::PRE, 3) == expected);
}

TEST_CASE("BACKWARD_POST issues the gather after the unit's gradients and before its reduce-scatter and NONE after it") {
  // The compute lines are dropped by comm_log, so PRE and POST differ only in whether the gather is
  // submitted before backward(u) runs: check the full log's order around unit 2's backward.
  static Profile profile;
  profile = sharded_test_profile(6, 100);
  for (const auto prefetch : {BackwardPrefetch::PRE, BackwardPrefetch::POST, BackwardPrefetch::NONE}) {
    TrainingPlan plan;
    plan.profile = &profile;
    auto it = plan_sharded_iteration(ShardingStrategy::FSDP_FULL_SHARD, Sharding{3, 4, 4}, prefetch, profile, 3, {});
    plan.buckets = it.buckets;
    plan.sharded = it.plan;
    FakeRuntime rt;
    replay_sharded_iteration(rt, plan);
    auto at = [&](const std::string& line) {
      const auto pos = std::find(rt.log.begin(), rt.log.end(), line);
      REQUIRE(pos != rt.log.end());
      return pos - rt.log.begin();
    };
    const auto gather = at("submit:allgather:4:200"), backward = at("compute:backward:l5"),
               scatter = at("submit:reduce_scatter:8:200");
    if (prefetch == BackwardPrefetch::PRE) CHECK((gather < backward && backward < scatter));
    if (prefetch == BackwardPrefetch::POST) CHECK((backward < gather && gather < scatter));
    if (prefetch == BackwardPrefetch::NONE) CHECK((backward < scatter && scatter < gather));
  }
}

TEST_CASE("fsdp_shard_grad_op gathers once per unit in forward and keeps the parameters for backward") {
  const std::vector<std::string> expected = {
      "submit:allgather:0:300", "wait_through:0", "submit:allgather:1:300", "wait_through:1",
      "submit:reduce_scatter:3:300", "submit:reduce_scatter:2:300", "wait_comm",
      "compute:optimizer:optimizer (own shard)"};
  CHECK(replay_log(ShardingStrategy::FSDP_SHARD_GRAD_OP, BackwardPrefetch::PRE, 2) == expected);
}

TEST_CASE("zero1 and zero2 reduce-scatter each bucket once ready then all-gather the updated parameters") {
  // Buckets of 200 B in backward order: layers 5-4, 3-2, 1-0; reduce-scatters 0-2, gathers 3-5.
  const std::vector<std::string> expected = {
      "submit:reduce_scatter:0:200", "submit:reduce_scatter:1:200", "submit:reduce_scatter:2:200", "wait_comm",
      "compute:optimizer:optimizer (own shard)",
      "submit:allgather:3:200", "submit:allgather:4:200", "submit:allgather:5:200", "wait_comm"};
  CHECK(replay_log(ShardingStrategy::ZERO2, BackwardPrefetch::PRE, 0) == expected);
  CHECK(replay_log(ShardingStrategy::ZERO1, BackwardPrefetch::PRE, 0) == expected);
}

TEST_CASE("each rank steps the optimizer on its shard: optimizer_s / ranks") {
  static Profile profile;
  profile = sharded_test_profile(6, 100);
  TrainingPlan plan;
  plan.profile = &profile;
  auto it = plan_sharded_iteration(ShardingStrategy::ZERO2, Sharding{2, 4, 4}, BackwardPrefetch::PRE, profile, 0,
                                   make_buckets(profile, 200));
  plan.buckets = it.buckets;
  plan.sharded = it.plan;
  FakeRuntime rt;
  replay_sharded_iteration(rt, plan);
  // forward 6 x 1 ms, backward 6 x 2 ms, optimizer 8 ms / 4.
  CHECK(rt.clock == doctest::Approx(0.006 + 0.012 + 0.002));
  CHECK(it.plan->optimizer_fraction == 0.25);
  CHECK_THROWS_AS((void)plan_sharded_iteration(ShardingStrategy::NONE, Sharding{0, 4, 4}, BackwardPrefetch::PRE, profile, 1, {}),
                  std::invalid_argument);
}
