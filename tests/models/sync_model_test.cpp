// The trace replay every sync model is written with (models/sync_model.cpp): the order of an
// iteration's compute and communication, the compute the per-layer profile does not capture (the
// profile's unattributed time, the scenario's framework overhead and bucket copies, charged in one
// place for every sync model), compression's encode and decode, and the parameter-server and
// control-scalar helpers. Expectations derived by hand.
#include "models/profile.hpp"
#include "models/sync_model.hpp"
#include "tests/models/fake_runtime.hpp"

#include <deque>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;
using ddlsim::test::FakeRuntime;

namespace {

/// Two layers of 100 and 50 gradient bytes; buckets of 100 bytes: {layer 1}, {layer 0}.
struct TwoLayers {
  Profile profile;
  TrainingPlan plan;
  TwoLayers() {
    profile.layers = {Layer{"l0", 1e-3, 2e-3, 25, 100}, Layer{"l1", 1e-3, 2e-3, 12, 50}};
    profile.optimizer_s = 1e-3;
    profile.io_s = 0.25e-3;
    profile.unattributed_s = 0.5e-3;
    plan = TrainingPlan{&profile, 1, make_buckets(profile, 100), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  }
};

std::unique_ptr<SyncModel> make(const std::string& name, const nlohmann::json& params = nlohmann::json::object()) {
  return SyncModelRegistry::instance().create(name, params, "/training/sync/name", "/training/sync/params", "sync model");
}

/// Layers l0..l(n-1) with these gradient bytes, 1 ms forward and 2 ms backward each.
Profile with_grads(const std::vector<double>& grads) {
  Profile p;
  p.model = std::string("sync-model-test");
  for (std::size_t i = 0; i < grads.size(); ++i) p.layers.push_back(Layer{fmt::format("l{}", i), 1e-3, 2e-3, 0, grads[i]});
  return p;
}

/// A Runtime that logs like FakeRuntime, with parameter servers and a compression variant per
/// iteration, and the root of every submitted request.
class VariantRuntime final : public Runtime {
 public:
  VariantRuntime(int servers, std::vector<int> variants) : servers_(servers), variants_(std::move(variants)) {}
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int workers() const override { return 4; }
  [[nodiscard]] int servers() const override { return servers_; }
  double now() override { return clock; }
  void compute(double seconds, Phase phase, const std::string& label) override {
    clock += seconds;
    log.push_back(fmt::format("compute:{}:{}", to_string(phase), label));
  }
  void submit(const CommRequest& r) override {
    const char* kind = r.kind == CommRequest::Kind::ALLREDUCE ? "allreduce" : r.kind == CommRequest::Kind::PUSH_PULL ? "push_pull" : "pull";
    log.push_back(fmt::format("submit:{}:{}:{}:root{}", kind, r.bucket, r.bytes, r.root));
  }
  void wait_comm() override { log.push_back("wait_comm"); }
  void iteration_begin(int it) override { log.push_back(fmt::format("begin:{}", it)); }
  void iteration_end(int it) override { log.push_back(fmt::format("end:{}", it)); }
  int compression_variant(int iteration) override {
    return variants_.empty() ? -1 : variants_.at(static_cast<std::size_t>(iteration));
  }
  double clock = 0;
  std::vector<std::string> log;

 private:
  int servers_;
  std::vector<int> variants_;
};

/// A sync model that overrides nothing: SyncModel's defaults.
class Bare final : public SyncModel {};

}  // namespace

TEST_CASE("every iteration starts with the unattributed time and the framework overhead, then I/O and forward") {
  TwoLayers w;
  w.plan.framework_overhead_s = 0.75e-3;
  FakeRuntime rt;
  make("bsp")->run_worker(rt, w.plan);
  CHECK(rt.log == std::vector<std::string>{"begin:0", "compute:framework:unattributed",
                                           "compute:framework:framework overhead", "compute:io:io", "compute:forward:l0",
                                           "compute:forward:l1", "compute:backward:l1", "submit:allreduce:0:50",
                                           "compute:backward:l0", "submit:allreduce:1:100", "wait_comm",
                                           "compute:optimizer:optimizer", "end:0"});
  CHECK(rt.clock == doctest::Approx(0.5e-3 + 0.75e-3 + 0.25e-3 + 2 * (1e-3 + 2e-3) + 1e-3).epsilon(1e-12));
  // The models that replay without a bucketed exchange charge them in the same place.
  for (const char* name : {"local_sgd", "crossbow"}) {
    CAPTURE(name);
    FakeRuntime other;
    make(name)->run_worker(other, w.plan);
    REQUIRE(other.log.size() > 3);
    CHECK(other.log[1] == "compute:framework:unattributed");
    CHECK(other.log[2] == "compute:framework:framework overhead");
  }
}

TEST_CASE("bucket copies: in before each bucket is submitted, out of every bucket after the wait, on the compute stream") {
  TwoLayers w;
  w.plan.copy_bandwidth_Bps = 1e5;  // 100 bytes: 1 ms, 50 bytes: 0.5 ms
  CHECK(bucket_copy_s(w.plan, 0) == doctest::Approx(0.5e-3).epsilon(1e-12));
  CHECK(bucket_copy_s(w.plan, 1) == doctest::Approx(1e-3).epsilon(1e-12));
  FakeRuntime rt;
  make("bsp")->run_worker(rt, w.plan);
  CHECK(rt.log == std::vector<std::string>{"begin:0", "compute:framework:unattributed", "compute:io:io",
                                           "compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                           "compute:copy:copy in bucket 0", "submit:allreduce:0:50",
                                           "compute:backward:l0", "compute:copy:copy in bucket 1",
                                           "submit:allreduce:1:100", "wait_comm", "compute:copy:copy out bucket 0",
                                           "compute:copy:copy out bucket 1", "compute:optimizer:optimizer", "end:0"});
  // Every gradient byte copied twice at 1e5 B/s on top of the compute.
  CHECK(rt.clock == doctest::Approx(w.profile.iteration_compute_s() + 2 * 150 / 1e5).epsilon(1e-12));
  // The bucketed exchanges outside replay_iteration copy the same way; a PULL sends nothing, so it copies out only.
  FakeRuntime avg;
  submit_buckets(avg, w.plan, CommRequest::Kind::ALLREDUCE);
  wait_buckets(avg, w.plan);
  CHECK(avg.log == std::vector<std::string>{"compute:copy:copy in bucket 0", "submit:allreduce:0:50",
                                            "compute:copy:copy in bucket 1", "submit:allreduce:1:100", "wait_comm",
                                            "compute:copy:copy out bucket 0", "compute:copy:copy out bucket 1"});
  FakeRuntime pull;
  submit_buckets(pull, w.plan, CommRequest::Kind::PULL);
  wait_buckets(pull, w.plan);
  CHECK(pull.only("compute:copy") == std::vector<std::string>{"compute:copy:copy out bucket 0",
                                                              "compute:copy:copy out bucket 1"});
}

TEST_CASE("replay order: forward in order, backward in reverse, a bucket as soon as it fills") {
  Profile p = with_grads({1, 1, 1});
  p.io_s = 1e-3;
  p.optimizer_s = 1e-3;
  TrainingPlan plan{&p, 1, make_buckets(p, 2), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};  // buckets: {2,1}, {0}
  ddlsim::test::FakeRuntime rt;
  replay_iteration(rt, plan, CommRequest::Kind::ALLREDUCE, true);
  CHECK(rt.log == std::vector<std::string>{"compute:io:io", "compute:forward:l0", "compute:forward:l1", "compute:forward:l2", "compute:backward:l2",
                                           "compute:backward:l1", "submit:allreduce:0:2", "compute:backward:l0", "submit:allreduce:1:1", "wait_comm",
                                           "compute:optimizer:optimizer"});
  plan.overlap = false;
  ddlsim::test::FakeRuntime no_overlap;
  replay_iteration(no_overlap, plan, CommRequest::Kind::ALLREDUCE, false);
  CHECK(no_overlap.log == std::vector<std::string>{"compute:io:io", "compute:forward:l0", "compute:forward:l1", "compute:forward:l2", "compute:backward:l2",
                                                   "compute:backward:l1", "compute:backward:l0", "submit:allreduce:0:2", "submit:allreduce:1:1", "wait_comm"});
}

TEST_CASE("replay_iteration under a compressor: encode before each submit, the wire bytes sent, decode after the wait") {
  // Layers of 100, 50 and 30 B; cap 70 (30 + 50 > 70): buckets {l2} (30 B), {l1} (50 B), {l0} (100 B).
  Profile p = with_grads({100, 50, 30});
  TrainingPlan plan{&p, 2, make_buckets(p, 70), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};
  REQUIRE(plan.buckets.size() == 3);
  plan.compression = {{3, 1e-4, 2e-4, 0}, {5, 1e-4, 2e-4, 0}, {10, 1e-4, 2e-4, 0}};
  plan.compression_variants = {plan.compression, {{6, 3e-4, 4e-4, 0}, {10, 3e-4, 4e-4, 0}, {20, 3e-4, 4e-4, 0}}};
  plan.roots = {2, 3};
  // No variant (-1): plan.compression, root of iteration 0.
  VariantRuntime plain(0, {});
  replay_iteration(plain, plan, CommRequest::Kind::ALLREDUCE, true, 0);
  CHECK(plain.log == std::vector<std::string>{
                         "compute:forward:l0", "compute:forward:l1", "compute:forward:l2", "compute:backward:l2",
                         "compute:encode:encode bucket 0", "submit:allreduce:0:3:root2", "compute:backward:l1",
                         "compute:encode:encode bucket 1", "submit:allreduce:1:5:root2", "compute:backward:l0",
                         "compute:encode:encode bucket 2", "submit:allreduce:2:10:root2", "wait_comm",
                         "compute:decode:decode bucket 0", "compute:decode:decode bucket 1",
                         "compute:decode:decode bucket 2"});
  // 3 x (1 + 2) ms of layers, 3 encodes of 0.1 ms and 3 decodes of 0.2 ms; no optimizer in the profile.
  CHECK(plain.clock == doctest::Approx(9e-3 + 3 * 1e-4 + 3 * 2e-4).epsilon(1e-12));
  // Iteration 1 under variant 1: its wire bytes, encode and decode times, and root 3.
  VariantRuntime adaptive(0, {0, 1});
  replay_iteration(adaptive, plan, CommRequest::Kind::ALLREDUCE, false, 1);
  std::vector<std::string> submits;
  for (const auto& l : adaptive.log)
    if (l.rfind("submit:", 0) == 0) submits.push_back(l);
  CHECK(submits == std::vector<std::string>{"submit:allreduce:0:6:root3", "submit:allreduce:1:10:root3",
                                            "submit:allreduce:2:20:root3"});
  CHECK(adaptive.clock == doctest::Approx(9e-3 + 3 * 3e-4 + 3 * 4e-4).epsilon(1e-12));
}

TEST_CASE("run_push_pull_worker replays every iteration with push-pulls and no optimizer, replay_compute sends nothing") {
  Profile p = with_grads({4, 8});
  p.optimizer_s = 5e-3;
  TrainingPlan plan{&p, 2, make_buckets(p, 0), false, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};  // one bucket per layer, no overlap
  VariantRuntime ps(2, {});
  run_push_pull_worker(ps, plan);
  const std::vector<std::string> iteration{"compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                           "compute:backward:l0", "submit:push_pull:0:8:root0",
                                           "submit:push_pull:1:4:root0", "wait_comm"};
  std::vector<std::string> expected{"begin:0"};
  expected.insert(expected.end(), iteration.begin(), iteration.end());
  expected.emplace_back("end:0");
  expected.emplace_back("begin:1");
  expected.insert(expected.end(), iteration.begin(), iteration.end());
  expected.emplace_back("end:1");
  CHECK(ps.log == expected);
  CHECK(ps.clock == doctest::Approx(2 * 2 * 3e-3).epsilon(1e-12));  // the optimizer is the servers' job

  VariantRuntime local(0, {});
  replay_compute(local, plan, true);
  CHECK(local.log == std::vector<std::string>{"compute:forward:l0", "compute:forward:l1", "compute:backward:l1",
                                              "compute:backward:l0", "compute:optimizer:optimizer"});
  CHECK(local.clock == doctest::Approx(2 * 3e-3 + 5e-3).epsilon(1e-12));
}

TEST_CASE("parameter-server helpers: pushes expected, shard bytes, decoding on receipt and the control scalars") {
  Profile p = with_grads({90, 30});
  TrainingPlan plan{&p, 5, make_buckets(p, 0), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};  // buckets {l1} 30 B, {l0} 90 B
  ddlsim::test::FakeServerRuntime srv(3, 2, {Push{1, 1, 45, 0, 0}, Push{2, 0, 15, 0, 0}});
  CHECK(expected_pushes(srv, plan) == 3 * 5 * 2);  // workers x iterations x buckets
  CHECK(shard_bytes(srv, plan, 0) == 15);          // 30 B over 2 servers
  CHECK(shard_bytes(srv, plan, 1) == 45);
  // Dense: the push as received, no decode.
  CHECK(receive_gradient(srv, plan).worker == 1);
  CHECK(srv.log == std::vector<std::string>{"push:w1:b1:i0"});
  // Compressed: one shard's decode on the server's compute per push.
  plan.compression = {{1, 0, 0, 0.25}, {2, 0, 0, 0.5}};
  const double before = srv.clock;
  CHECK(receive_gradient(srv, plan).bucket == 0);
  CHECK(srv.log.back() == "compute:decode");
  CHECK(srv.clock - before == doctest::Approx(1.0 + 0.25).epsilon(1e-12));  // the fake's 1 s per push, then bucket 0's decode

  // Control scalars: one fp32 from each worker to every server, answered with one each.
  VariantRuntime worker(2, {});
  exchange_control(worker);
  CHECK(worker.log == std::vector<std::string>{fmt::format("submit:push_pull:{}:{}:root0", CONTROL_BUCKET, 2 * CONTROL_BYTES),
                                               "wait_comm"});
  ddlsim::test::FakeServerRuntime control(2, 1, {Push{1, CONTROL_BUCKET, 4, 0, 0}, Push{0, CONTROL_BUCKET, 4, 0, 0}});
  const auto controls = receive_control(control);
  REQUIRE(controls.size() == 2);
  answer_control(control, controls, 7);
  CHECK(control.log == std::vector<std::string>{"push:w1:b-1:i0", "push:w0:b-1:i0", "pull:w1:b-1:v7", "pull:w0:b-1:v7"});
  ddlsim::test::FakeServerRuntime early(2, 1, {Push{0, CONTROL_BUCKET, 4, 0, 0}, Push{1, 3, 4, 0, 0}});
  CHECK_THROWS_WITH_AS(receive_control(early),
                       "server 0: a gradient push from worker 1 arrived before every worker's control scalar",
                       std::logic_error);
}

TEST_CASE("SyncModel defaults: the profile as the workload, a push per bucket and iteration, no point-to-point loop") {
  Profile p = with_grads({10, 20, 30});
  p.batch_size = 16;
  p.io_s = 1e-3;
  const Bare bare{};
  const WorkerWorkload w = bare.worker_workload(p, 24, false);
  CHECK(w.samples == 24);
  CHECK(w.single_worker_iteration_s == doctest::Approx(1e-3 + 3 * 3e-3).epsilon(1e-12));
  CHECK(w.profile.grad_bytes() == 60);
  const TrainingPlan plan{&p, 7, make_buckets(p, 25), true, {}, {}, {}, 0, 0, nullptr, nullptr, nullptr};  // {30}, {20}, {10}
  CHECK(bare.pushes_per_worker(plan, 0) == 7 * 3);
  const SyncTraits traits = bare.traits();
  CHECK_FALSE(traits.uses_servers);
  CHECK(traits.uses_collective);
  CHECK(traits.synchronous);
  CHECK(bare.logical_graph(4, 1) == nullptr);
  ddlsim::test::FakeRuntime rt(3, 4);
  CHECK_THROWS_WITH_AS(bare.run_worker(rt, plan),
                       "worker 3: this sync model exchanges point to point and runs only on an engine that gives it a "
                       "PeerComm (SyncModel::run_peer_worker)",
                       std::logic_error);
  // The names the timeline and recorder use for each phase.
  const std::vector<std::pair<Phase, std::string>> names{
      {Phase::IO, "io"},         {Phase::FORWARD, "forward"}, {Phase::BACKWARD, "backward"},
      {Phase::OPTIMIZER, "optimizer"}, {Phase::UPDATE, "update"}, {Phase::ENCODE, "encode"},
      {Phase::DECODE, "decode"}, {Phase::FRAMEWORK, "framework"}, {Phase::COPY, "copy"}};
  for (const auto& [phase, name] : names) CHECK(to_string(phase) == name);
}

TEST_CASE("ServerClocks: per worker and bucket, the slowest worker's clock") {
  ServerClocks clocks(3, 2);
  clocks.pushed(0, 1);
  clocks.pushed(0, 1);
  clocks.pushed(1, 1);
  clocks.pushed(2, 1);
  clocks.pushed(2, 0);
  CHECK(clocks.clock(0, 1) == 2);
  CHECK(clocks.clock(0, 0) == 0);
  CHECK(clocks.min_clock(1) == 1);  // min(2, 1, 1)
  CHECK(clocks.min_clock(0) == 0);  // workers 0 and 1 never pushed bucket 0
}
