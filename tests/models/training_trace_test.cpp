// Training traces (models/training_trace.cpp, docs/traces.md): a trace's shape and values read back,
// its decisions re-checked against its algorithm's rule (the "none" rule is this file's own), every
// refusal at its JSON path, and the trace rules each event-driven sync model registers.
#include "models/error.hpp"
#include "models/sync_model.hpp"
#include "models/training_trace.hpp"

#include <cmath>
#include "tests/models/event_trace.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace ddlsim::models;
using nlohmann::json;

namespace {

json small_trace() { return ddlsim::test::event_trace(); }

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

namespace {

/// One worker, two iterations, tensors "w" (3 elements) and "b" (1) in 2-byte floats, every gradient sent.
json every_gradient() {
  return {{"format", "ddlsim-training-trace"}, {"version", 1}, {"model", "pair"}, {"workers", 1}, {"iterations", 2},
          {"batch_size", 4}, {"dtype_bytes", 2}, {"algorithm", {{"name", "none"}}},
          {"tensors", {{{"name", "w"}, {"numel", 3}}, {{"name", "b"}, {"numel", 1}}}},
          {"param_norm", {{{1.0, 1.0}}, {{1.0, 1.0}}}},
          {"grad_norm", {{{3.0, 4.0}}, {{0.5, 1.2}}}},
          {"sent", {{{1, 1}}, {{1, 1}}}},
          {"epochs", {{{"epoch", 1}, {"last_iteration", 0}}, {{"epoch", 2}, {"last_iteration", 1}, {"test_accuracy", 0.5}}}}};
}

}  // namespace

TEST_CASE("training trace under none: every gradient sent, the bytes in the trace's dtype and the total gradient norm") {
  const auto t = TrainingTrace::read(every_gradient(), "");
  CHECK(t.algorithm.name == "none");
  CHECK(t.tensor_bytes(0) == 3 * 2);
  CHECK(t.tensor_bytes(1) == 1 * 2);
  CHECK(t.model_bytes() == 8);
  CHECK(t.total_grad_norm(0, 0) == doctest::Approx(5.0).epsilon(1e-15));   // sqrt(3^2 + 4^2)
  CHECK(t.total_grad_norm(1, 0) == doctest::Approx(1.3).epsilon(1e-15));   // sqrt(0.25 + 1.44)
  const json d = t.describe();
  CHECK(d["model"] == "pair");
  CHECK(d["tensors"] == 2);
  CHECK(d["final_epoch"]["epoch"] == 2);
  CHECK(d["final_epoch"]["test_accuracy"] == 0.5);
  CHECK(d["algorithm"] == json{{"name", "none"}});
  // A gradient not sent is not what "none" does.
  auto skipped = every_gradient();
  skipped["sent"][1][0][1] = 0;
  CHECK(error_of(skipped) == "/sent/1/0/1: the none rule with the recorded settings gives 1 here (iteration 1, worker 0, "
                             "tensor \"b\"), the trace records 0; the trace's decisions do not follow its algorithm");
}

TEST_CASE("training trace: epochs, version and the file are checked, each at its path") {
  auto late = every_gradient();
  late["epochs"][1]["last_iteration"] = 2;  // iterations 0 and 1 only
  CHECK(error_of(late) == "/epochs/1/last_iteration: expected an integer in [0, 1], got 2");
  auto backwards = every_gradient();
  backwards["epochs"][0]["last_iteration"] = 1;
  CHECK(error_of(backwards) == "/epochs/1/last_iteration: epochs must end at increasing iterations: 1 after 1");
  auto accuracy = every_gradient();
  accuracy["epochs"][0]["train_accuracy"] = 1.5;
  CHECK(error_of(accuracy) == "/epochs/0/train_accuracy: expected a number in [0, 1], got 1.5");
  auto version = every_gradient();
  version["version"] = 2;
  CHECK(error_of(version) == "/version: expected an integer in [1, 1], got 2");
  auto iterations = every_gradient();
  iterations["sent"].erase(1);
  CHECK(error_of(iterations) == "/sent: expected an array of 2 iterations, got 1 entries");
  auto provenance = every_gradient();
  provenance["provenance"] = "by hand";
  CHECK(error_of(provenance) == "/provenance: expected an object, got the string \"by hand\"");
  CHECK_THROWS_WITH_AS(TrainingTrace::load("/no/such/trace.json", "/training/sync/params/trace"),
                       "/training/sync/params/trace: cannot open training trace file \"/no/such/trace.json\"",
                       ddlsim::ConfigError);
}
