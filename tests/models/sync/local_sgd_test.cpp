// local_sgd: models/sync/local_sgd.cpp. Post-local SGD: bsp for K warm-up iterations, then a model average every H.
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("local_sgd: bsp during warm-up, then one model averaging every H iterations after the optimizer") {
  TwoLayers w(8);
  const int K = 2, H = 3;
  auto model = make_sync("local_sgd", {{"period_iterations", H}, {"warmup_bsp_iterations", K}});
  FakeRuntime rt;
  model->run_worker(rt, w.plan);
  // Averaging at the end of iterations t >= K with (t - K + 1) % H == 0: 4 and 7.
  CHECK(iterations_with(rt, "submit:allreduce") == std::vector<int>{0, 1, 4, 7});
  // Bytes: every bucket in each of those four iterations.
  CHECK(rt.submitted_bytes == doctest::Approx(4 * w.profile.grad_bytes()));
  // In a local iteration the averaging follows the optimizer step and nothing overlaps backward.
  std::vector<std::string> iteration4;
  bool in4 = false;
  for (const auto& l : rt.log) {
    if (l == "begin:4") in4 = true;
    if (in4) iteration4.push_back(l);
    if (l == "end:4") break;
  }
  CHECK(iteration4 == std::vector<std::string>{"begin:4", "compute:forward:l0", "compute:forward:l1",
                                               "compute:backward:l1", "compute:backward:l0",
                                               "compute:optimizer:optimizer", "submit:allreduce:0:50",
                                               "submit:allreduce:1:100", "wait_comm", "end:4"});
  CHECK(model->settings() == nlohmann::json{{"period_iterations", H}, {"warmup_bsp_iterations", K}});
}

TEST_CASE("local_sgd: params are checked with their JSON paths") {
  CHECK_THROWS_WITH_AS(make_sync("local_sgd", {{"period_iterations", 0}}),
                       "/training/sync/params/period_iterations: expected an integer in [1, 1000000], got 0",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make_sync("local_sgd", {{"warmup_bsp_iterations", -1}}),
                       "/training/sync/params/warmup_bsp_iterations: expected an integer in [0, 1000000], got -1",
                       ddlsim::ConfigError);
}
