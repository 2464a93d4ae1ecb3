// asp: models/sync/asp.cpp. Asynchronous SGD on sharded parameter servers: workers push every
// bucket and pull it back with no barrier and no optimizer step of their own; a server applies
// each push at once and records its staleness (updates since the worker's pull).
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("asp: a worker pushes every bucket as backward fills it and takes no optimizer step") {
  TwoLayers w(1);
  auto model = make_sync("asp");
  FakeRuntime rt;
  model->run_worker(rt, w.plan);
  CHECK(rt.log == std::vector<std::string>{"begin:0", "compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                           "submit:push_pull:0:50", "compute:backward:l0", "submit:push_pull:1:100",
                                           "wait_comm", "end:0"});
  CHECK(model->traits().uses_servers);
  CHECK_FALSE(model->traits().synchronous);
}

TEST_CASE("asp: a server applies each push at once and answers only the pusher") {
  TwoLayers w(2);
  w.plan.buckets = {Bucket{1, 0, 150}};
  // Two workers, two iterations: four pushes. Worker 1 pulled version 0 but pushes after worker 0's
  // update (staleness 1); worker 0 then pushes having seen version 1, after two updates (staleness 1).
  FakeServerRuntime srv(2, 1, {Push{0, 0, 150, 0, 0}, Push{1, 0, 150, 0, 0}, Push{0, 0, 150, 1, 1}, Push{1, 0, 150, 2, 1}});
  make_sync("asp")->run_server(srv, w.plan);
  CHECK(srv.log == std::vector<std::string>{"push:w0:b0:i0", "compute:update", "pull:w0:b0:v1",  //
                                            "push:w1:b0:i0", "compute:update", "pull:w1:b0:v2",  //
                                            "push:w0:b0:i1", "compute:update", "pull:w0:b0:v3",  //
                                            "push:w1:b0:i1", "compute:update", "pull:w1:b0:v4"});
  CHECK(srv.staleness == std::vector<std::int64_t>{0, 1, 1, 1});
}

TEST_CASE("asp: takes no params") {
  CHECK_THROWS_WITH_AS(make_sync("asp", {{"staleness_bound", 1}}),
                       "/training/sync/params/staleness_bound: unknown key \"staleness_bound\"; valid keys are: (none)",
                       ddlsim::ConfigError);
}
