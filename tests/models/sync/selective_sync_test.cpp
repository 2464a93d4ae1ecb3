// selective_sync: models/sync/selective_sync.cpp. SelSync: every worker steps locally; after a
// 4-byte flag all-reduce, all workers average their parameters (every bucket all-reduced) only in
// iterations where some worker's relative gradient change reached delta (the first always does).
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

namespace {

/// 2 workers, one tensor of 10 fp32 (40 bytes), 3 iterations, delta 0.1. Total gradient norms:
/// worker 0: 1.0, 1.02 (2 %: no flag), 1.5 (47 %: flag); worker 1: 2.0, 2.01, 2.02 (0.5 %: none).
json selsync_trace() {
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "tiny"}, {"workers", 2}, {"iterations", 3},
          {"batch_size", 8}, {"dtype_bytes", 4},
          {"algorithm", {{"name", "selective_sync"}, {"delta", 0.1}}},
          {"tensors", {{{"name", "w"}, {"numel", 10}}}},
          {"param_norm", {{{1.0}, {1.0}}, {{1.0}, {1.0}}, {{1.0}, {1.0}}}},
          {"grad_norm", {{{1.0}, {2.0}}, {{1.02}, {2.01}}, {{1.5}, {2.02}}}},
          {"sent", {{{1}, {1}}, {{0}, {0}}, {{1}, {0}}}},
          {"epochs", {{{"epoch", 1}, {"last_iteration", 2}, {"train_loss", 0.5}, {"train_accuracy", 0.8},
                       {"test_loss", 0.6}, {"test_accuracy", 0.75}}}},
          {"provenance", {{"tool", "hand-written"}}}};
}

struct OneLayer {
  Profile profile;
  TrainingPlan plan;
  OneLayer() {
    profile.layers = {Layer{"w", 1e-3, 2e-3, 10, 40}};
    profile.optimizer_s = 1e-3;
    plan = TrainingPlan{&profile, 3, make_buckets(profile, 100), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  }
};

}  // namespace

TEST_CASE("selective_sync: the flag all-reduce every iteration, the model averaged where any worker flagged") {
  OneLayer w;
  const std::string file = write_trace("selective_sync_test", selsync_trace());
  auto model = make_sync("selective_sync", {{"trace", file}});
  model->bind(binding(2, 3, w.profile));
  FakeRuntime rt(1, 2);  // worker 1 never flags after the first iteration, but follows worker 0
  model->run_worker(rt, w.plan);
  const std::vector<std::string> local{"compute:forward:w", "compute:backward:w", "compute:optimizer:optimizer",
                                       "submit:allreduce:0:4", "wait_comm"};
  for (int it = 0; it < 3; ++it) {
    CAPTURE(it);
    std::vector<std::string> expected{"begin:" + std::to_string(it)};
    expected.insert(expected.end(), local.begin(), local.end());
    if (it != 1) expected.insert(expected.end(), {"submit:allreduce:0:40", "wait_comm"});
    expected.push_back("end:" + std::to_string(it));
    CHECK(iteration_log(rt, it) == expected);
  }
  std::filesystem::remove(file);
}

TEST_CASE("selective_sync: params are checked with their JSON paths") {
  OneLayer w;
  const std::string file = write_trace("selective_sync_params_test", selsync_trace());
  auto other_delta = make_sync("selective_sync", {{"trace", file}, {"delta", 0.2}});
  const std::string refused = "/training/sync/params/delta: 0.2 here, but the training trace \"" + file +
                              "\" was recorded with delta 0.1; another delta gives other numerics: record a trace "
                              "with it (tools/record_training.py) or leave \"delta\" out";
  CHECK_THROWS_WITH_AS(other_delta->bind(binding(2, 3, w.profile)), refused.c_str(), ddlsim::ConfigError);
  std::filesystem::remove(file);
  CHECK_THROWS_WITH_AS(make_sync("selective_sync"), "/training/sync/params/trace: missing required key",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make_sync("selective_sync", {{"trace", "t.json"}, {"aggregation", "gossip"}}),
                       "/training/sync/params/aggregation: unknown value \"gossip\"; valid values are: allreduce, "
                       "parameter_server",
                       ddlsim::ConfigError);
}
