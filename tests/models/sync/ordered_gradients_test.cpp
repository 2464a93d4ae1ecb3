// ordered_gradients: models/sync/ordered_gradients.cpp. Per iteration, after a norm exchange with
// the servers (one control scalar each way), only m selected workers push their buckets; every
// worker pulls. The seeded surrogate selects m of the N workers uniformly, so the counts are exact.
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

TEST_CASE("ordered_gradients: m of N workers push each iteration, the others only pull") {
  TwoLayers w(5);
  const int n = 4, m = 2;
  auto model = make_sync("ordered_gradients", {{"decisions", "surrogate"}, {"m", m}});
  model->bind(binding(n, 5, w.profile));
  std::vector<int> pushers(5, 0);
  std::int64_t pushes = 0;
  for (int r = 0; r < n; ++r) {
    FakeRuntime rt(r, n);
    model->run_worker(rt, w.plan);
    for (int it = 0; it < 5; ++it) {
      CAPTURE(r);
      CAPTURE(it);
      const auto log = iteration_log(rt, it);
      std::vector<std::string> submits;
      for (const auto& l : log)
        if (l.rfind("submit:", 0) == 0) submits.push_back(l);
      // The norm up and the selection back (a control scalar per server), then both buckets.
      REQUIRE(submits.size() == 3u);
      CHECK(submits[0].rfind("submit:push_pull:-1:", 0) == 0);
      const bool selected = submits[1] == "submit:push_pull:0:50";
      CHECK(submits[1] == (selected ? "submit:push_pull:0:50" : "submit:pull:0:50"));
      CHECK(submits[2] == (selected ? "submit:push_pull:1:100" : "submit:pull:1:100"));
      pushers[static_cast<std::size_t>(it)] += selected ? 1 : 0;
      // The selection needs the whole gradient: no submit before backward ends, no optimizer step.
      CHECK(log[1] == "compute:forward:l0");
      CHECK(log[4] == "compute:backward:l0");
      CHECK(log[5] == submits[0]);
    }
    CHECK(rt.only("compute:optimizer").empty());
    pushes += model->pushes_per_worker(w.plan, r);
  }
  for (int it = 0; it < 5; ++it) CHECK(pushers[static_cast<std::size_t>(it)] == m);
  // Per worker: one control push per iteration, and its selected iterations' buckets.
  CHECK(pushes == n * 5 + m * 5 * 2);
  CHECK(model->settings() ==
        nlohmann::json{{"m", m}, {"decisions", "surrogate"}, {"control_bytes_per_worker_and_server", 4.0}});
}

TEST_CASE("ordered_gradients: a server answers the norms, then updates once the m selected pushes are in") {
  TwoLayers w(1);
  w.plan.buckets = {Bucket{1, 0, 150}};
  auto model = make_sync("ordered_gradients", {{"decisions", "surrogate"}, {"m", 2}});
  model->bind(binding(2, 1, w.profile));  // m = N: both selected
  FakeServerRuntime srv(2, 1, {Push{0, CONTROL_BUCKET, 4, 0, 0}, Push{1, CONTROL_BUCKET, 4, 0, 0}, Push{1, 0, 150, 0, 0},
                               Push{0, 0, 150, 0, 0}});
  model->run_server(srv, w.plan);
  CHECK(srv.log == std::vector<std::string>{"push:w0:b-1:i0", "push:w1:b-1:i0", "pull:w0:b-1:v0", "pull:w1:b-1:v0",
                                            "push:w1:b0:i0", "push:w0:b0:i0", "compute:update", "pull:w0:b0:v1",
                                            "pull:w1:b0:v1"});
}

TEST_CASE("ordered_gradients: params are checked with their JSON paths") {
  TwoLayers w(1);
  auto five = make_sync("ordered_gradients", {{"decisions", "surrogate"}, {"m", 5}});
  CHECK_THROWS_WITH_AS(five->bind(binding(4, 1, w.profile)), "/training/sync/params/m: 5 exceeds the 4 workers",
                       ddlsim::ConfigError);
  auto no_m = make_sync("ordered_gradients", {{"decisions", "surrogate"}});
  CHECK_THROWS_WITH_AS(no_m->bind(binding(4, 1, w.profile)),
                       "/training/sync/params/m: missing required key (the surrogate selects m workers)",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make_sync("ordered_gradients", {{"decisions", "surrogate"}, {"m", 1}, {"windows", 3}}),
                       "/training/sync/params/windows: the ordered_gradients surrogate has no windows: it selects "
                       "uniformly",
                       ddlsim::ConfigError);
  CHECK_THROWS_WITH_AS(make_sync("ordered_gradients", {{"m", 0}, {"decisions", "surrogate"}}),
                       "/training/sync/params/m: expected an integer in [1, 1000000], got 0", ddlsim::ConfigError);
}
