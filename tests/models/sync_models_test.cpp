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
    plan = TrainingPlan{&profile, iterations, make_buckets(profile, 100), true, {}, {}, {}, 0, 0};
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
  CHECK(model->traits().uses_collective == false);
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

namespace {

/// Batches 4 (top level), 8 and 16 of two layers (100 and 50 gradient bytes).
Profile three_batches() {
  return parse_profile(nlohmann::json::parse(R"({
    "model": "tiny", "batch_size": 4, "optimizer_s": 0.001, "io_s": 0.0001,
    "layers": [{"name": "l0", "forward_s": 0.002, "backward_s": 0.004, "grad_bytes": 100},
               {"name": "l1", "forward_s": 0.001, "backward_s": 0.002, "grad_bytes": 50}],
    "batch_profiles": [
      {"batch_size": 8, "io_s": 0.0002, "optimizer_s": 0.0012,
       "layers": [{"name": "l0", "forward_s": 0.003, "backward_s": 0.006}, {"name": "l1", "forward_s": 0.0015, "backward_s": 0.003}]},
      {"batch_size": 16, "io_s": 0.0004, "optimizer_s": 0.0011,
       "layers": [{"name": "l0", "forward_s": 0.005, "backward_s": 0.010}, {"name": "l1", "forward_s": 0.0025, "backward_s": 0.005}]}
    ]})"),
                       "");
}

std::string refusal(const SyncModel& model, const Profile& profile, std::int64_t batch, bool extrapolate) {
  try {
    (void)model.worker_workload(profile, batch, extrapolate);
  } catch (const ddlsim::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("crossbow: compute, the learners' corrections combined, every bucket all-reduced, then k learners' steps") {
  TwoLayers w(1);  // overlap on: crossbow never overlaps
  const int k = 3;
  const double bw = 1e9;
  auto model = make("crossbow", {{"learners_per_gpu", k}, {"device_memory_bandwidth", "1GBps"}});
  FakeRuntime rt;
  model->run_worker(rt, w.plan);
  CHECK(rt.log == std::vector<std::string>{"begin:0", "compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                           "compute:backward:l0", "compute:update:combine learners' corrections",
                                           "submit:allreduce:0:50", "submit:allreduce:1:100", "wait_comm",
                                           "compute:optimizer:optimizer", "end:0"});
  // (k - 1) adds of two model-sized buffers into a third; k learners' optimizer steps.
  const double combine = (k - 1) * 3 * w.profile.grad_bytes() / bw;
  CHECK(rt.clock == doctest::Approx(2 * (1e-3 + 2e-3) + combine + k * 1e-3).epsilon(1e-12));
  CHECK(rt.submitted_bytes == w.profile.grad_bytes());
  CHECK(model->settings() == nlohmann::json{{"learners_per_gpu", k}, {"device_memory_bandwidth_Bps", bw}});
  CHECK(model->traits().uses_collective);
  CHECK(!model->traits().compresses_gradients);
}

TEST_CASE("crossbow with one learner per GPU asks for what bsp without overlap asks for") {
  TwoLayers w(2);
  w.plan.overlap = false;
  FakeRuntime crossbow, bsp;
  make("crossbow")->run_worker(crossbow, w.plan);
  make("bsp")->run_worker(bsp, w.plan);
  CHECK(crossbow.log == bsp.log);
  CHECK(crossbow.clock == bsp.clock);
  const auto one = make("crossbow")->worker_workload(w.profile, 32, false);
  CHECK(one.samples == 32);
  CHECK(one.single_worker_iteration_s == w.profile.iteration_compute_s());
  CHECK(one.settings["combine_s"] == 0.0);
}

TEST_CASE("crossbow: k learners of batch b run as the profile interpolated at k b, and count k b samples") {
  const Profile p = three_batches();
  const int k = 3;
  const std::int64_t b = 4;  // k b = 12, between the measured 8 and 16
  const double bw = 2e9;
  auto model = make("crossbow", {{"learners_per_gpu", k}, {"device_memory_bandwidth", "2GBps"}});
  const auto work = model->worker_workload(p, b, false);
  const double x = (12.0 - 8) / (16 - 8);
  const auto lerp = [x](double t8, double t16) { return t8 + (t16 - t8) * x; };
  CHECK(work.profile.batch_size == 12);
  CHECK(work.profile.layers[0].forward_s == doctest::Approx(lerp(0.003, 0.005)).epsilon(1e-12));
  CHECK(work.profile.layers[0].backward_s == doctest::Approx(lerp(0.006, 0.010)).epsilon(1e-12));
  CHECK(work.profile.layers[1].forward_s == doctest::Approx(lerp(0.0015, 0.0025)).epsilon(1e-12));
  CHECK(work.profile.layers[1].backward_s == doctest::Approx(lerp(0.003, 0.005)).epsilon(1e-12));
  CHECK(work.profile.io_s == doctest::Approx(lerp(0.0002, 0.0004)).epsilon(1e-12));
  CHECK(work.profile.optimizer_s == doctest::Approx(lerp(0.0012, 0.0011)).epsilon(1e-12));
  CHECK(work.samples == k * b);
  const double compute = lerp(0.0002, 0.0004) + lerp(0.003, 0.005) + lerp(0.006, 0.010) + lerp(0.0015, 0.0025) +
                         lerp(0.003, 0.005);
  const double combine = (k - 1) * 3 * 150.0 / bw;
  const double update = k * lerp(0.0012, 0.0011);
  CHECK(work.single_worker_iteration_s == doctest::Approx(compute + combine + update).epsilon(1e-12));
  CHECK(work.settings == nlohmann::json{{"batch_size_per_learner", b},
                                        {"samples_per_gpu_iteration", k * b},
                                        {"combine_s", combine},
                                        {"update_s", update}});
  // Replaying that profile costs the same: the fake clock after one iteration.
  TrainingPlan plan{&work.profile, 1, make_buckets(work.profile, 1000), true, {}, {}, {}, 0, 0};
  FakeRuntime rt;
  model->run_worker(rt, plan);
  CHECK(rt.clock == doctest::Approx(work.single_worker_iteration_s).epsilon(1e-12));
}

TEST_CASE("crossbow: k > 1 needs a multi-batch profile that covers k b, or linear scaling") {
  Profile single = three_batches();
  single.measured_batches.clear();  // batch 4 only
  auto model = make("crossbow", {{"learners_per_gpu", 4}});
  CHECK(refusal(*model, single, 4, false) ==
        "/training/sync/params/learners_per_gpu: 4 learners of batch 4 share a GPU as one batch of 16, but the profile "
        "was measured at batch 4 only: give a multi-batch profile (\"batch_profiles\", tools/profile_torch.py "
        "--batch-sizes) that covers 16, or \"batch_scaling\": \"linear\" in the workload to scale its times per sample "
        "(then k learners take k times one learner's time)");
  // The fallback: per-sample scaling, so 4 learners compute 4 times one learner's forward, backward and I/O.
  const auto scaled = model->worker_workload(single, 4, true);
  CHECK(scaled.profile.forward_s() == doctest::Approx(4 * single.forward_s()).epsilon(1e-12));
  CHECK(scaled.profile.backward_s() == doctest::Approx(4 * single.backward_s()).epsilon(1e-12));
  CHECK(scaled.profile.io_s == doctest::Approx(4 * single.io_s).epsilon(1e-12));
  CHECK(scaled.profile.optimizer_s == single.optimizer_s);
  // Multi-batch, but k b beyond the largest measured batch.
  auto five = make("crossbow", {{"learners_per_gpu", 5}});
  CHECK(refusal(*five, three_batches(), 4, false) ==
        "/training/sync/params/learners_per_gpu: 5 learners of batch 4 share a GPU as one batch of 20: the profile was "
        "measured at batches 4, 8, 16 per worker; 20 is outside [4, 16]: add \"batch_scaling\": \"linear\" to scale "
        "forward, backward and I/O times per sample from the nearest measured batch (the optimizer step and the "
        "gradient bytes stay), or profile that batch");
  CHECK(refusal(*five, three_batches(), 4, true) == "accepted");
  CHECK(five->worker_workload(three_batches(), 4, true).profile.layers[0].forward_s ==
        doctest::Approx(0.005 * 20 / 16).epsilon(1e-12));
}
