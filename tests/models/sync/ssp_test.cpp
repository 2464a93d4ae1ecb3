// ssp: models/sync/ssp.cpp. Stale-synchronous parameter server: a pull waits until the slowest clock reaches t + 1 - s.
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ssp: a pull is answered once the slowest worker's clock reaches t + 1 - s") {
  TwoLayers w(3);
  w.plan.buckets = {Bucket{1, 0, 150}};  // one shard
  auto model = make_sync("ssp", {{"staleness_bound", 1}});
  // Two workers, three iterations, in an order the bound allows (a worker pushes its next
  // iteration only after its pull): worker 0 runs ahead by one iteration.
  auto push = [](int worker, int iteration, std::int64_t seen) { return Push{worker, 0, 150, seen, iteration}; };
  FakeServerRuntime srv(2, 1, {push(0, 0, 0), push(0, 1, 1), push(1, 0, 0), push(0, 2, 2), push(1, 1, 2), push(1, 2, 3)});
  model->run_server(srv, w.plan);
  // One second between pushes. Worker 0's pull of iteration 1 needs min clock >= 1: held from t=2
  // until worker 1's first push at t=3; its pull of iteration 2 needs 2: held from t=4 to t=5.
  // A step folds in every gradient received since the last one.
  CHECK(srv.log == std::vector<std::string>{
                       "push:w0:b0:i0", "compute:update", "pull:w0:b0:v1",                                  //
                       "push:w0:b0:i1",                                                                     //
                       "push:w1:b0:i0", "held:w0:i1:1s", "compute:update", "pull:w0:b0:v2", "pull:w1:b0:v2",  //
                       "push:w0:b0:i2",                                                                     //
                       "push:w1:b0:i1", "held:w0:i2:1s", "compute:update", "pull:w0:b0:v3", "pull:w1:b0:v3",  //
                       "push:w1:b0:i2", "compute:update", "pull:w1:b0:v4"});
  // Staleness = steps between the worker's pull and the step applying its gradient.
  CHECK(srv.staleness == std::vector<std::int64_t>{0, 0, 1, 0, 0, 0});
}

TEST_CASE("ssp: bound 0 aggregates like bsp's server, a huge bound applies each push like asp's") {
  TwoLayers w(1);
  w.plan.buckets = {Bucket{1, 0, 150}};
  auto pushes = [] { return std::deque<Push>{Push{1, 0, 150, 0, 0}, Push{0, 0, 150, 0, 0}, Push{2, 0, 150, 0, 0}}; };
  FakeServerRuntime ssp0(3, 1, pushes()), bsp(3, 1, pushes()), ssp_inf(3, 1, pushes()), asp(3, 1, pushes());
  make_sync("ssp", {{"staleness_bound", 0}})->run_server(ssp0, w.plan);
  make_sync("bsp", {{"aggregation", "parameter_server"}})->run_server(bsp, w.plan);
  make_sync("ssp", {{"staleness_bound", 1'000'000'000}})->run_server(ssp_inf, w.plan);
  make_sync("asp")->run_server(asp, w.plan);
  auto without_holds = [](const std::vector<std::string>& log) {
    std::vector<std::string> out;
    for (const auto& l : log)
      if (l.rfind("held:", 0) != 0) out.push_back(l);
    return out;
  };
  CHECK(without_holds(ssp0.log) == bsp.log);
  CHECK(ssp_inf.log == asp.log);
  CHECK(ssp_inf.staleness == asp.staleness);
  // Bound 0: worker 1 waited from t=1 and worker 0 from t=2 for worker 2's push at t=3.
  CHECK(ssp0.log == std::vector<std::string>{"push:w1:b0:i0", "push:w0:b0:i0", "push:w2:b0:i0", "held:w1:i0:2s",
                                             "compute:update", "pull:w1:b0:v1", "held:w0:i0:1s", "pull:w0:b0:v1",
                                             "pull:w2:b0:v1"});
}

TEST_CASE("ssp: params are checked with their JSON paths") {
  CHECK_THROWS_WITH_AS(make_sync("ssp", {{"staleness_bound", -1}}),
                       "/training/sync/params/staleness_bound: expected an integer in [0, 2147483647], got -1",
                       ddlsim::ConfigError);
}
