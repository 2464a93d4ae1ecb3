// crossbow: models/sync/crossbow.cpp. k learners per GPU, their corrections combined, the model all-reduced after the compute.
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim::models;
using namespace ddlsim::test;

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
  auto model = make_sync("crossbow", {{"learners_per_gpu", k}, {"device_memory_bandwidth", "1GBps"}});
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
  make_sync("crossbow")->run_worker(crossbow, w.plan);
  make_sync("bsp")->run_worker(bsp, w.plan);
  CHECK(crossbow.log == bsp.log);
  CHECK(crossbow.clock == bsp.clock);
  const auto one = make_sync("crossbow")->worker_workload(w.profile, 32, false);
  CHECK(one.samples == 32);
  CHECK(one.single_worker_iteration_s == w.profile.iteration_compute_s());
  CHECK(one.settings["combine_s"] == 0.0);
}

TEST_CASE("crossbow: k learners of batch b run as the profile interpolated at k b, and count k b samples") {
  const Profile p = three_batches();
  const int k = 3;
  const std::int64_t b = 4;  // k b = 12, between the measured 8 and 16
  const double bw = 2e9;
  auto model = make_sync("crossbow", {{"learners_per_gpu", k}, {"device_memory_bandwidth", "2GBps"}});
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
  TrainingPlan plan{&work.profile, 1, make_buckets(work.profile, 1000), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  FakeRuntime rt;
  model->run_worker(rt, plan);
  CHECK(rt.clock == doctest::Approx(work.single_worker_iteration_s).epsilon(1e-12));
}

TEST_CASE("crossbow: k > 1 needs a multi-batch profile that covers k b, or linear scaling") {
  Profile single = three_batches();
  single.measured_batches.clear();  // batch 4 only
  auto model = make_sync("crossbow", {{"learners_per_gpu", 4}});
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
  auto five = make_sync("crossbow", {{"learners_per_gpu", 5}});
  CHECK(refusal(*five, three_batches(), 4, false) ==
        "/training/sync/params/learners_per_gpu: 5 learners of batch 4 share a GPU as one batch of 20: the profile was "
        "measured at batches 4, 8, 16 per worker; 20 is outside [4, 16]: add \"batch_scaling\": \"linear\" to scale "
        "forward, backward and I/O times per sample from the nearest measured batch (the optimizer step and the "
        "gradient bytes stay), or profile that batch");
  CHECK(refusal(*five, three_batches(), 4, true) == "accepted");
  CHECK(five->worker_workload(three_batches(), 4, true).profile.layers[0].forward_s ==
        doctest::Approx(0.005 * 20 / 16).epsilon(1e-12));
}

TEST_CASE("crossbow: params are checked with their JSON paths") {
  CHECK_THROWS_WITH_AS(make_sync("crossbow", {{"learners_per_gpu", 0}}),
                       "/training/sync/params/learners_per_gpu: expected an integer in [1, 1024], got 0", ddlsim::ConfigError);
}
