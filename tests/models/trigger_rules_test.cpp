// The decision rules of the event-driven models on hand-made sequences, each expectation derived
// here from the rule as its source states it (models/trigger_rules.hpp), and the training-trace
// loader's checks.
#include "models/error.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"
#include "models/trigger_rules.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <vector>

using namespace ddlsim::models;
using nlohmann::json;

TEST_CASE("event trigger, adaptive: the thresholds are the mean of the last two slopes, times horizon every pass") {
  const double h = 0.5;
  EventTriggerSettings s;
  s.adaptive = true;
  s.horizon = h;
  s.initial_comm_passes = 2;  // pass 1 always sends
  EventTrigger trig(s);
  // pass:   1    2     3     4    5     6
  const std::vector<double> norms{1.0, 1.05, 1.5, 1.6, 1.61, 3.0};
  // Pass 1: thres = 0 * h = 0; sends (initial); slope (1.0 - 0) / (1 - 0) = 1.0; thres = (0 + 1.0) / 2 = 0.5.
  CHECK(trig.step(1, norms[0]));
  CHECK(trig.threshold() == 0.5);
  // Pass 2: thres = 0.5 * h = 0.25; diff 0.05 < 0.25: no send, threshold stays 0.25.
  CHECK_FALSE(trig.step(2, norms[1]));
  CHECK(trig.threshold() == 0.25);
  // Pass 3: thres = 0.125; diff 0.5 >= 0.125: send; slopes [1.0, 0.5 / (3 - 1)] -> thres = (1.0 + 0.25) / 2.
  CHECK(trig.step(3, norms[2]));
  CHECK(trig.threshold() == doctest::Approx((1.0 + 0.5 / 2) / 2).epsilon(1e-15));
  // Pass 4: thres = 0.625 * 0.5 = 0.3125; diff 0.1: no.
  CHECK_FALSE(trig.step(4, norms[3]));
  CHECK(trig.threshold() == doctest::Approx(0.3125).epsilon(1e-15));
  // Pass 5: thres = 0.15625; diff |1.61 - 1.5| = 0.11: no.
  CHECK_FALSE(trig.step(5, norms[4]));
  // Pass 6: thres = 0.078125; diff 1.5: send; slopes [0.25, 1.5 / 3] -> thres 0.375.
  CHECK(trig.step(6, norms[5]));
  CHECK(trig.threshold() == doctest::Approx((0.25 + 1.5 / 3) / 2).epsilon(1e-15));
}

TEST_CASE("event trigger: horizon 0 and constant 0 send every pass, a threshold above every change only the initial passes") {
  const std::vector<double> norms{1.0, 1.0, 1.2, 1.3, 1.3, 0.9, 5.0};
  EventTriggerSettings zero_horizon;
  zero_horizon.horizon = 0;
  zero_horizon.initial_comm_passes = 0;
  EventTriggerSettings zero_constant;
  zero_constant.adaptive = false;
  zero_constant.value = 0;
  zero_constant.initial_comm_passes = 0;
  EventTriggerSettings high;
  high.adaptive = false;
  high.value = 100;  // above |5.0 - anything| here
  high.initial_comm_passes = 3;
  EventTrigger a(zero_horizon), b(zero_constant), c(high);
  for (std::size_t k = 0; k < norms.size(); ++k) {
    const int pass = static_cast<int>(k) + 1;
    CHECK(a.step(pass, norms[k]));
    CHECK(b.step(pass, norms[k]));
    CHECK(c.step(pass, norms[k]) == (pass < 3));
  }
}

TEST_CASE("ordered selection: the m largest norms, ties to the lower rank") {
  CHECK(ordered_selection({3, 1, 2, 5}, 2) == std::vector<char>{1, 0, 0, 1});
  CHECK(ordered_selection({1, 2, 2, 2}, 2) == std::vector<char>{0, 1, 1, 0});
  CHECK(ordered_selection({1, 2, 3}, 3) == std::vector<char>{1, 1, 1});
  CHECK(total_norm(std::vector<double>{3, 4}.data(), 2) == 5.0);
}

TEST_CASE("selsync trigger: the first iteration flags, then a relative change of delta or more") {
  SelSyncTrigger t(0.1);
  CHECK(t.step(10));        // first
  CHECK_FALSE(t.step(10.5)); // 5 %
  CHECK(t.step(12));        // |12 - 10.5| / 10.5 = 14 %
  CHECK(t.step(10.7));      // |10.7 - 12| / 12 = 10.8 %
  SelSyncTrigger zero(0);
  for (double g : {1.0, 1.0, 2.0, 2.0}) CHECK(zero.step(g));
}

namespace {

/// A 2-worker, 2-tensor, 3-iteration trace under a constant threshold 0.5, one initial pass.
json small_trace() {
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "tiny"}, {"workers", 2}, {"iterations", 3},
          {"batch_size", 8}, {"dtype_bytes", 4},
          {"algorithm", {{"name", "event_triggered"}, {"threshold", "constant"}, {"value", 0.5}, {"initial_comm_passes", 2}}},
          {"tensors", {{{"name", "fc.weight"}, {"shape", {10, 10}}, {"numel", 100}}, {{"name", "fc.bias"}, {"numel", 10}}}},
          {"param_norm", {{{1.0, 0.1}, {1.0, 0.1}}, {{1.7, 0.1}, {1.2, 0.1}}, {{1.8, 0.9}, {1.6, 0.1}}}},
          {"grad_norm", {{{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}}},
          {"sent", {{{1, 1}, {1, 1}}, {{1, 0}, {0, 0}}, {{0, 1}, {1, 0}}}},
          {"epochs", {{{"epoch", 1}, {"last_iteration", 2}, {"train_loss", 0.5}, {"train_accuracy", 0.8},
                       {"test_loss", 0.6}, {"test_accuracy", 0.75}}}},
          {"provenance", {{"tool", "hand-written"}}}};
}

std::string error_of(const json& doc) {
  try {
    (void)TrainingTrace::read(doc, "");
  } catch (const ddlsim::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("training trace: a consistent trace loads, and its bytes, norms and decisions read back") {
  const auto t = TrainingTrace::read(small_trace(), "");
  CHECK(t.workers == 2);
  CHECK(t.tensor_count() == 2);
  CHECK(t.model_bytes() == 440);
  CHECK(t.param_norm(2, 1, 0) == 1.6);
  CHECK(t.sent(2, 0, 1));
  CHECK_FALSE(t.sent(1, 1, 0));
  CHECK(t.describe()["final_epoch"]["test_accuracy"] == 0.75);
}

TEST_CASE("training trace: decisions the rule does not give, bad shapes and values are refused at their JSON path") {
  auto flipped = small_trace();
  flipped["sent"][1][1][0] = 1;  // |1.2 - 1.0| = 0.2 < 0.5: the rule does not send
  CHECK(error_of(flipped) ==
        "/sent/1/1/0: the event_triggered rule with the recorded settings gives 0 here (iteration 1, worker 1, tensor "
        "\"fc.weight\"), the trace records 1; the trace's decisions do not follow its algorithm");
  auto short_workers = small_trace();
  short_workers["param_norm"][2].erase(1);
  CHECK(error_of(short_workers) == "/param_norm/2: expected an array of 2 workers, got 1 entries");
  auto negative = small_trace();
  negative["grad_norm"][0][1][1] = -1;
  CHECK(error_of(negative).rfind("/grad_norm/0/1/1: ", 0) == 0);
  auto flag = small_trace();
  flag["sent"][0][0][0] = 2;
  CHECK(error_of(flag).rfind("/sent/0/0/0: ", 0) == 0);
  auto shape = small_trace();
  shape["tensors"][0]["numel"] = 99;
  CHECK(error_of(shape) == "/tensors/0/numel: 99 is not the product of the shape, 100");
  auto algorithm = small_trace();
  algorithm["algorithm"]["name"] = "magic";
  CHECK(error_of(algorithm).rfind("/algorithm/name: ", 0) == 0);
  auto format = small_trace();
  format["format"] = "csv";
  CHECK(error_of(format) == "/format: expected \"ddlsim-training-trace\", got \"csv\"");
}

TEST_CASE("trace rules: each event-driven sync model registers its own under its name, and none is the trace file format's own") {
  const auto names = TraceRuleRegistry::instance().names();
  CHECK(names == std::vector<std::string>{"event_triggered", "none", "ordered_gradients", "selective_sync"});
  for (const auto& name : names)
    if (name != "none") CHECK(SyncModelRegistry::instance().contains(name));
  // A rule reads its settings beside "name": ordered_gradients' m is required, in range.
  const json algorithm = {{"name", "ordered_gradients"}};
  CHECK_THROWS_WITH_AS(TraceRuleRegistry::instance().create("ordered_gradients", algorithm, "/a/name", "/a", "trace algorithm"),
                       "/a/m: missing required key", ddlsim::ConfigError);
  const auto rule = TraceRuleRegistry::instance().create(
      "ordered_gradients", json{{"name", "ordered_gradients"}, {"m", 2}}, "/a/name", "/a", "trace algorithm");
  TraceAlgorithm described;
  rule->describe(described);
  CHECK(described.m == 2);
}
