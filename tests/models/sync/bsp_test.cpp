// bsp: models/sync/bsp.cpp. Bulk-synchronous SGD: every bucket aggregated as soon as backward
// fills it (all-reduced, or pushed to the servers, which update once all N pushes are in), then
// the optimizer step on the workers (all-reduce) or none (the servers step).
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("bsp: each bucket is all-reduced when backward fills it, then the optimizer steps") {
  TwoLayers w(2);
  auto model = make_sync("bsp");
  FakeRuntime rt;
  model->run_worker(rt, w.plan);
  // Bucket 0 is layer 1 (50 bytes), ready after the first backward layer; bucket 1 is layer 0.
  const std::vector<std::string> iteration{"compute:forward:l0",    "compute:forward:l1", "compute:backward:l1",
                                           "submit:allreduce:0:50", "compute:backward:l0", "submit:allreduce:1:100",
                                           "wait_comm",             "compute:optimizer:optimizer"};
  std::vector<std::string> expected;
  for (int it = 0; it < 2; ++it) {
    expected.push_back("begin:" + std::to_string(it));
    expected.insert(expected.end(), iteration.begin(), iteration.end());
    expected.push_back("end:" + std::to_string(it));
  }
  CHECK(rt.log == expected);
  CHECK(rt.submitted_bytes == 2 * w.profile.grad_bytes());
  // Compute time only: 2 forward + 2 backward layers and the optimizer, twice.
  CHECK(rt.clock == doctest::Approx(2 * (2 * 1e-3 + 2 * 2e-3 + 1e-3)).epsilon(1e-12));
  CHECK(model->traits().uses_collective);
  CHECK_FALSE(model->traits().uses_servers);
  CHECK(model->traits().allreduces_in_backward);
}

TEST_CASE("bsp without overlap: every bucket after the whole backward pass") {
  TwoLayers w(1);
  w.plan.overlap = false;
  FakeRuntime rt;
  make_sync("bsp")->run_worker(rt, w.plan);
  CHECK(rt.log == std::vector<std::string>{"begin:0", "compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                           "compute:backward:l0", "submit:allreduce:0:50", "submit:allreduce:1:100",
                                           "wait_comm", "compute:optimizer:optimizer", "end:0"});
}

TEST_CASE("bsp on parameter servers: workers push and pull with no optimizer step, a server steps once all N pushed") {
  TwoLayers w(1);
  auto model = make_sync("bsp", {{"aggregation", "parameter_server"}});
  CHECK(model->traits().uses_servers);
  CHECK_FALSE(model->traits().uses_collective);
  FakeRuntime rt;
  model->run_worker(rt, w.plan);
  CHECK(rt.only("submit") == std::vector<std::string>{"submit:push_pull:0:50", "submit:push_pull:1:100"});
  CHECK(rt.only("compute:optimizer").empty());
  // One shard of 150 bytes, three workers: the update waits for the third push, then all pull version 1.
  w.plan.buckets = {Bucket{1, 0, 150}};
  FakeServerRuntime srv(3, 1, {Push{1, 0, 150, 0, 0}, Push{0, 0, 150, 0, 0}, Push{2, 0, 150, 0, 0}});
  model->run_server(srv, w.plan);
  CHECK(srv.log == std::vector<std::string>{"push:w1:b0:i0", "push:w0:b0:i0", "push:w2:b0:i0", "compute:update",
                                            "pull:w1:b0:v1", "pull:w0:b0:v1", "pull:w2:b0:v1"});
  // The update is the profile's optimizer step (one server holds the whole bucket).
  CHECK(srv.clock == doctest::Approx(3.0 + 1e-3).epsilon(1e-12));
}

TEST_CASE("bsp: aggregation is checked with its JSON path") {
  CHECK_THROWS_WITH_AS(make_sync("bsp", {{"aggregation", "ring"}}),
                       "/training/sync/params/aggregation: unknown value \"ring\"; valid values are: allreduce, "
                       "parameter_server",
                       ddlsim::ConfigError);
}
