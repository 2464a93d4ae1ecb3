// Every sync model's loop against fake runtimes (no engine): what it asks for, in order.
#include "models/logical_graph.hpp"
#include "models/sync_model.hpp"
#include "tests/models/fake_runtime.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace ddlsim::models;
using ddlsim::test::FakeRuntime;
using ddlsim::test::FakeServerRuntime;

namespace {

std::unique_ptr<SyncModel> make(const std::string& name, const nlohmann::json& params = nlohmann::json::object()) {
  return SyncModelRegistry::instance().create(name, params, "/training/sync/name", "/training/sync/params", "sync model");
}

/// Two layers of 100 and 50 gradient bytes; buckets of 100 bytes: {layer 1}, {layer 0}.
struct TwoLayers {
  Profile profile;
  TrainingPlan plan;
  explicit TwoLayers(int iterations) {
    profile.layers = {Layer{"l0", 1e-3, 2e-3, 25, 100}, Layer{"l1", 1e-3, 2e-3, 12, 50}};
    profile.optimizer_s = 1e-3;
    plan = TrainingPlan{&profile, iterations, make_buckets(profile, 100), true, {}, {}, {}};
  }
};

/// The iterations in which `rt` submitted something, from its log.
std::vector<int> iterations_with(const FakeRuntime& rt, const std::string& prefix) {
  std::vector<int> out;
  int it = -1;
  for (const auto& l : rt.log) {
    if (l.rfind("begin:", 0) == 0) it = std::stoi(l.substr(6));
    if (l.rfind(prefix, 0) == 0 && (out.empty() || out.back() != it)) out.push_back(it);
  }
  return out;
}

}  // namespace

TEST_CASE("local_sgd: bsp during warm-up, then one model averaging every H iterations after the optimizer") {
  TwoLayers w(8);
  const int K = 2, H = 3;
  auto model = make("local_sgd", {{"period_iterations", H}, {"warmup_bsp_iterations", K}});
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

TEST_CASE("ssp: a pull is answered once the slowest worker's clock reaches t + 1 - s") {
  TwoLayers w(3);
  w.plan.buckets = {Bucket{1, 0, 150}};  // one shard
  auto model = make("ssp", {{"staleness_bound", 1}});
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
  make("ssp", {{"staleness_bound", 0}})->run_server(ssp0, w.plan);
  make("bsp", {{"aggregation", "parameter_server"}})->run_server(bsp, w.plan);
  make("ssp", {{"staleness_bound", 1'000'000'000}})->run_server(ssp_inf, w.plan);
  make("asp")->run_server(asp, w.plan);
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

TEST_CASE("gossip synchronous: receive from in-peers and send the model to out-peers, every iteration") {
  TwoLayers w(2);
  auto model = make("gossip", {{"graph", "ring"}});
  auto graph = model->logical_graph(4, 1);
  REQUIRE(graph != nullptr);
  FakeRuntime rt(1, 4, graph);
  model->run_worker(rt, w.plan);
  const auto exchanges = rt.only("i");
  CHECK(exchanges == std::vector<std::string>{"irecv:0", "irecv:2", "isend:0:150:v0", "isend:2:150:v0",  //
                                              "irecv:0", "irecv:2", "isend:0:150:v1", "isend:2:150:v1"});
  CHECK(rt.only("wait:").size() == 8);  // every handle waited within its iteration
  CHECK(rt.in_flight.empty());
  CHECK(rt.only("submit").empty());
  CHECK(model->uses_collective() == false);
}

TEST_CASE("gossip asynchronous: one-sided puts, averaging with whatever has arrived, its age recorded") {
  TwoLayers w(3);
  auto model = make("gossip", {{"graph", "ring"}, {"variant", "asynchronous"}});
  FakeRuntime rt(1, 4, model->logical_graph(4, 1));
  rt.arrived[{0, 0}] = Message{0, 0, 150, 0};  // worker 0's model of iteration 0 has arrived; worker 2's never
  model->run_worker(rt, w.plan);
  CHECK(rt.only("put") == std::vector<std::string>{"put:0:150:v0", "put:2:150:v0", "put:0:150:v1", "put:2:150:v1",
                                                   "put:0:150:v2", "put:2:150:v2"});
  CHECK(rt.only("latest").size() == 6);
  // Per iteration t: peer 0 is t - 0 old, peer 2 (nothing yet) t - (-1).
  CHECK(rt.neighbour_staleness == std::vector<std::int64_t>{0, 1, 1, 2, 2, 3});
  // The previous iteration's puts are waited for before new ones; the last ones are left to the runtime.
  CHECK(rt.only("wait:").size() == 4);
  CHECK(rt.in_flight.size() == 2);
}
