// event_triggered: models/sync/event_triggered.cpp. EventGraD on a ring: after its compute a
// worker puts each tensor whose norm moved by the threshold to its left and right neighbour (one
// put each, completed one after the other by default), reads what its neighbours last put, and
// steps. Decisions replayed from a hand-written trace whose "sent" follows the constant rule.
#include "tests/models/plugin_util.hpp"

#include "tests/models/event_trace.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

namespace {


struct Fc {  // one layer holding both tensors: 400 + 40 gradient bytes
  Profile profile;
  TrainingPlan plan;
  Fc() {
    profile.layers = {Layer{"fc", 1e-3, 2e-3, 110, 440}};
    profile.optimizer_s = 1e-3;
    plan = TrainingPlan{&profile, 3, make_buckets(profile, 1000), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  }
};

}  // namespace

TEST_CASE("event_triggered: the traced tensors are put to both neighbours, each put completed before the next") {
  Fc w;
  const std::string file = write_trace("event_triggered_test", event_trace());
  auto model = make_sync("event_triggered", {{"trace", file}});
  model->bind(binding(2, 3, w.profile));
  FakeRuntime rt(0, 2);  // on a ring of 2, left and right are both worker 1
  model->run_peer_worker(rt, rt, w.plan);
  // Worker 0 sends both tensors in iteration 0, fc.weight in 1, fc.bias in 2.
  CHECK(rt.only("put") == std::vector<std::string>{"put:1:400:v0", "put:1:400:v0", "put:1:40:v0", "put:1:40:v0",
                                                   "put:1:400:v1", "put:1:400:v1", "put:1:40:v2", "put:1:40:v2"});
  CHECK(rt.only("put:1:400:v0").size() == 2u);
  const auto first = iteration_log(rt, 1);
  CHECK(first == std::vector<std::string>{"begin:1", "compute:forward:fc", "compute:backward:fc", "put:1:400:v1",
                                          "wait:4", "put:1:400:v1", "wait:5", "latest:1", "latest:1", "latest:1",
                                          "latest:1", "compute:optimizer:optimizer", "end:1"});
  // Nothing ever arrived in the fake: every neighbour value is as old as the iteration + 1.
  CHECK(rt.neighbour_staleness == std::vector<std::int64_t>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK(rt.only("submit").empty());
  CHECK_FALSE(model->traits().uses_collective);
  std::filesystem::remove(file);
}

TEST_CASE("event_triggered: concurrent puts to one distinct neighbour are all started, then waited for") {
  Fc w;
  const std::string file = write_trace("event_triggered_concurrent_test", event_trace());
  auto model = make_sync("event_triggered", {{"trace", file}, {"puts", "concurrent"}, {"distinct_neighbours", true}});
  model->bind(binding(2, 3, w.profile));
  FakeRuntime rt(1, 2);  // worker 1 sends both tensors in iteration 0, fc.weight in 2
  model->run_peer_worker(rt, rt, w.plan);
  CHECK(rt.only("put") == std::vector<std::string>{"put:0:400:v0", "put:0:40:v0", "put:0:400:v2"});
  const auto zero = iteration_log(rt, 0);
  REQUIRE(zero.size() >= 7u);
  CHECK(std::vector<std::string>(zero.begin() + 3, zero.begin() + 7) ==
        std::vector<std::string>{"put:0:400:v0", "put:0:40:v0", "wait:0", "wait:1"});
  std::filesystem::remove(file);
}

TEST_CASE("event_triggered: a ring needs two workers, and the threshold must be the trace's") {
  Fc w;
  const std::string file = write_trace("event_triggered_params_test", event_trace());
  CHECK_THROWS_WITH_AS(make_sync("event_triggered", {{"trace", file}})->bind(binding(1, 3, w.profile)),
                       "/platform/workers: event_triggered needs at least 2 workers (a ring of neighbours)",
                       ddlsim::ConfigError);
  const std::string other_value = "/training/sync/params/value: 0.7 here, but the training trace \"" + file +
                                  "\" was recorded with value 0.5; other settings give other numerics: record a "
                                  "trace with them (tools/record_training.py) or leave \"value\" out";
  CHECK_THROWS_WITH_AS(make_sync("event_triggered", {{"trace", file}, {"value", 0.7}})->bind(binding(2, 3, w.profile)),
                       other_value.c_str(), ddlsim::ConfigError);
  std::filesystem::remove(file);
  CHECK_THROWS_WITH_AS(make_sync("event_triggered", {{"trace", "t.json"}, {"puts", "batched"}}),
                       "/training/sync/params/puts: unknown value \"batched\"; valid values are: sequential, concurrent",
                       ddlsim::ConfigError);
}
