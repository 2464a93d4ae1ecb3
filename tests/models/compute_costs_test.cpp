// Compute the per-layer profile does not capture: the profile's unattributed time, the
// scenario's framework overhead and bucket copies (charged in one place for every sync model),
// and compute_scale (models/profile.hpp scale_compute). Expectations derived by hand.
#include "models/profile.hpp"
#include "models/sync_model.hpp"
#include "tests/models/fake_runtime.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using ddlsim::test::FakeRuntime;

namespace {

std::string refusal(const nlohmann::json& doc) {
  try {
    (void)parse_profile(doc, "");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

/// Batch 8 at the top level with unattributed_s, batch 16 under batch_profiles.
nlohmann::json two_batches() {
  return nlohmann::json::parse(R"({
    "model": "tiny", "batch_size": 8, "optimizer_s": "1ms", "io_s": "0.1ms", "unattributed_s": "0.5ms",
    "layers": [{"name": "a", "forward_s": "2ms", "backward_s": "4ms", "parameters": 100}],
    "batch_profiles": [{"batch_size": 16, "io_s": "0.2ms", "optimizer_s": "1ms", "unattributed_s": "0.7ms",
                        "layers": [{"name": "a", "forward_s": "3ms", "backward_s": "6ms"}]}]})");
}

/// Two layers of 100 and 50 gradient bytes; buckets of 100 bytes: {layer 1}, {layer 0}.
struct TwoLayers {
  Profile profile;
  TrainingPlan plan;
  TwoLayers() {
    profile.layers = {Layer{"l0", 1e-3, 2e-3, 25, 100}, Layer{"l1", 1e-3, 2e-3, 12, 50}};
    profile.optimizer_s = 1e-3;
    profile.io_s = 0.25e-3;
    profile.unattributed_s = 0.5e-3;
    plan = TrainingPlan{&profile, 1, make_buckets(profile, 100), true, {}, {}, {}, 0, 0};
  }
};

std::unique_ptr<SyncModel> make(const std::string& name, const nlohmann::json& params = nlohmann::json::object()) {
  return SyncModelRegistry::instance().create(name, params, "/training/sync/name", "/training/sync/params", "sync model");
}

}  // namespace

TEST_CASE("unattributed_s: read as a time, part of the single-worker iteration, absent = 0") {
  auto doc = two_batches();
  doc.erase("batch_profiles");
  const auto p = parse_profile(doc, "");
  CHECK(p.unattributed_s == doctest::Approx(0.5e-3).epsilon(1e-15));
  CHECK(p.iteration_compute_s() == doctest::Approx(0.5e-3 + 0.1e-3 + 2e-3 + 4e-3 + 1e-3).epsilon(1e-12));
  doc.erase("unattributed_s");
  CHECK(parse_profile(doc, "").unattributed_s == 0);
  doc["unattributed_s"] = "-1ms";
  CHECK(refusal(doc) == "/unattributed_s: time must not be negative, got \"-1ms\"");
}

TEST_CASE("unattributed_s in a multi-batch profile: in every batch or in none, interpolated, kept by per-sample scaling") {
  const auto p = parse_profile(two_batches(), "");
  CHECK(p.at_batch(16).unattributed_s == doctest::Approx(0.7e-3).epsilon(1e-12));
  CHECK(p.at_batch(12).unattributed_s == doctest::Approx(0.5e-3 + (0.7e-3 - 0.5e-3) * (12.0 - 8) / (16 - 8)).epsilon(1e-12));
  // Per-sample scaling beyond the measured batches scales forward, backward and I/O, not the unattributed time.
  CHECK(p.at_batch(32, true).unattributed_s == doctest::Approx(0.7e-3).epsilon(1e-12));
  CHECK(p.at_batch(32, true).io_s == doctest::Approx(2 * 0.2e-3).epsilon(1e-12));
  auto doc = two_batches();
  doc["batch_profiles"][0].erase("unattributed_s");
  CHECK(refusal(doc) == "/batch_profiles/0/unattributed_s: missing: the top level gives \"unattributed_s\", so every "
                        "batch does");
  doc = two_batches();
  doc.erase("unattributed_s");
  CHECK(refusal(doc) == "/batch_profiles/0/unattributed_s: the top level gives no \"unattributed_s\": give it there "
                        "too, or in no batch");
  doc["batch_profiles"][0].erase("unattributed_s");
  CHECK(parse_profile(doc, "").at_batch(12).unattributed_s == 0);
}

TEST_CASE("scale_compute multiplies every compute time at every measured batch, never the bytes") {
  const auto p = parse_profile(two_batches(), "");
  const auto s = scale_compute(p, 2.5);
  CHECK(s.layers[0].forward_s == doctest::Approx(2.5 * 2e-3).epsilon(1e-12));
  CHECK(s.layers[0].backward_s == doctest::Approx(2.5 * 4e-3).epsilon(1e-12));
  CHECK(s.io_s == doctest::Approx(2.5 * 0.1e-3).epsilon(1e-12));
  CHECK(s.optimizer_s == doctest::Approx(2.5 * 1e-3).epsilon(1e-12));
  CHECK(s.unattributed_s == doctest::Approx(2.5 * 0.5e-3).epsilon(1e-12));
  CHECK(s.iteration_compute_s() == doctest::Approx(2.5 * p.iteration_compute_s()).epsilon(1e-12));
  CHECK(s.grad_bytes() == p.grad_bytes());
  CHECK(s.parameters() == p.parameters());
  // Scaling commutes with the profile at another batch (linear in every time).
  for (const std::int64_t b : {8, 12, 16}) {
    CAPTURE(b);
    CHECK(s.at_batch(b).iteration_compute_s() == doctest::Approx(2.5 * p.at_batch(b).iteration_compute_s()).epsilon(1e-12));
  }
  CHECK(scale_compute(p, 1.0).iteration_compute_s() == p.iteration_compute_s());
}

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
