// Multi-batch profiles (models/profile_batches.cpp, docs/profiles.md "batch_profiles"): reading the
// measured batches and the profile at any batch -- measured exactly, interpolated linearly between
// two, extrapolated per sample outside -- each expectation derived here from the rule.
#include "models/profile.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

models::Profile load(const std::string& relative) {
  return models::load_profile_file(std::string(DDLSIM_SOURCE_DIR) + "/scenarios/profiles/" + relative,
                                   "/workload/profile");
}

/// Batch 8 at the top level with unattributed_s, batch 16 under batch_profiles.
nlohmann::json two_batches() {
  return nlohmann::json::parse(R"({
    "model": "tiny", "batch_size": 8, "optimizer_s": "1ms", "io_s": "0.1ms", "unattributed_s": "0.5ms",
    "layers": [{"name": "a", "forward_s": "2ms", "backward_s": "4ms", "parameters": 100}],
    "batch_profiles": [{"batch_size": 16, "io_s": "0.2ms", "optimizer_s": "1ms", "unattributed_s": "0.7ms",
                        "layers": [{"name": "a", "forward_s": "3ms", "backward_s": "6ms"}]}]})");
}

}  // namespace

namespace {

/// Batch 8 at the top level, 16 and 32 under batch_profiles; two layers.
nlohmann::json multi_batch() {
  return nlohmann::json::parse(R"({
    "model": "tiny", "batch_size": 8, "optimizer_s": "1ms", "io_s": "0.1ms",
    "layers": [{"name": "a", "forward_s": "2ms", "backward_s": "4ms", "parameters": 100},
               {"name": "b", "forward_s": "1ms", "backward_s": "2ms", "parameters": 10}],
    "batch_profiles": [
      {"batch_size": 16, "io_s": "0.2ms", "optimizer_s": "1.2ms",
       "layers": [{"name": "a", "forward_s": "3ms", "backward_s": "6ms"}, {"name": "b", "forward_s": "1.5ms", "backward_s": "3ms"}]},
      {"batch_size": 32, "io_s": "0.4ms", "optimizer_s": "1.1ms",
       "layers": [{"name": "a", "forward_s": "5ms", "backward_s": "10ms"}, {"name": "b", "forward_s": "2.5ms", "backward_s": "5ms"}]}
    ]})");
}

std::string refusal(const nlohmann::json& doc) {
  try {
    (void)models::parse_profile(doc, "");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("multi-batch profile: loads, and at_batch gives the measured times exactly and interpolates between them") {
  const auto p = models::parse_profile(multi_batch(), "");
  REQUIRE(p.has_batches());
  REQUIRE(p.measured_batches.size() == 3);
  CHECK(p.measured_batches[0].batch_size == 8);
  CHECK(p.measured_batches[1].batch_size == 16);
  CHECK(p.measured_batches[2].batch_size == 32);
  CHECK(p.batch_size == 8);  // the top level is batch 8's profile
  CHECK(p.layers[0].forward_s == 2e-3);
  CHECK(p.grad_bytes() == 4.0 * 110);

  // A measured batch: its times exactly (the same doubles the loader parsed).
  const auto ms = [](const char* text) { return models::parse_profile(nlohmann::json{{"model", "m"}, {"optimizer_s", text},
                                                                                     {"layers", {{{"name", "x"}}}}}, "").optimizer_s; };
  const auto at16 = p.at_batch(16);
  CHECK(at16.batch_size == 16);
  CHECK(at16.io_s == ms("0.2ms"));
  CHECK(at16.optimizer_s == ms("1.2ms"));
  CHECK(at16.layers[0].forward_s == ms("3ms"));
  CHECK(at16.layers[0].backward_s == ms("6ms"));
  CHECK(at16.layers[1].forward_s == ms("1.5ms"));
  CHECK(at16.layers[1].backward_s == ms("3ms"));
  CHECK(at16.grad_bytes() == p.grad_bytes());
  const auto at8 = at16.at_batch(8);  // from the measurements, not from the profile it is called on
  CHECK(at8.layers[0].forward_s == 2e-3);
  CHECK(at8.iteration_compute_s() == p.iteration_compute_s());

  // Between two measured batches: t0 + (t1 - t0) (b - b0) / (b1 - b0), every time.
  const auto lerp = [](double t0, double t1, double b0, double b1, double b) { return t0 + (t1 - t0) * (b - b0) / (b1 - b0); };
  const auto at12 = p.at_batch(12);
  CHECK(at12.batch_size == 12);
  CHECK(at12.layers[0].forward_s == doctest::Approx(lerp(2e-3, 3e-3, 8, 16, 12)).epsilon(1e-12));
  CHECK(at12.layers[1].backward_s == doctest::Approx(lerp(2e-3, 3e-3, 8, 16, 12)).epsilon(1e-12));
  CHECK(at12.io_s == doctest::Approx(lerp(0.1e-3, 0.2e-3, 8, 16, 12)).epsilon(1e-12));
  CHECK(at12.optimizer_s == doctest::Approx(lerp(1e-3, 1.2e-3, 8, 16, 12)).epsilon(1e-12));
  const auto at20 = p.at_batch(20);
  CHECK(at20.layers[0].backward_s == doctest::Approx(lerp(6e-3, 10e-3, 16, 32, 20)).epsilon(1e-12));
  CHECK(at20.optimizer_s == doctest::Approx(lerp(1.2e-3, 1.1e-3, 16, 32, 20)).epsilon(1e-12));
  CHECK(at20.measured_batches.size() == 3);
}

TEST_CASE("multi-batch profile: outside the measured batches, refused unless extrapolated per sample from the nearest") {
  const auto p = models::parse_profile(multi_batch(), "");
  CHECK(!p.covers(64));
  CHECK(!p.covers(4));
  CHECK(p.covers(9));
  CHECK_THROWS_WITH_AS((void)p.at_batch(64, false, "/workload/batch_size"),
                       "/workload/batch_size: the profile was measured at batches 8, 16, 32 per worker; 64 is outside "
                       "[8, 32]: add \"batch_scaling\": \"linear\" to scale forward, backward and I/O times per sample "
                       "from the nearest measured batch (the optimizer step and the gradient bytes stay), or profile "
                       "that batch",
                       ConfigError);
  // Linear per sample from batch 32 (x 2) and from batch 8 (x 1/2); the optimizer step stays.
  const auto at64 = p.at_batch(64, true);
  CHECK(at64.layers[0].forward_s == doctest::Approx(2 * 5e-3).epsilon(1e-12));
  CHECK(at64.layers[1].backward_s == doctest::Approx(2 * 5e-3).epsilon(1e-12));
  CHECK(at64.io_s == doctest::Approx(2 * 0.4e-3).epsilon(1e-12));
  CHECK(at64.optimizer_s == doctest::Approx(1.1e-3).epsilon(1e-12));
  const auto at4 = p.at_batch(4, true);
  CHECK(at4.layers[0].backward_s == doctest::Approx(4e-3 / 2).epsilon(1e-12));
  CHECK(at4.optimizer_s == doctest::Approx(1e-3).epsilon(1e-12));
  // A single-batch profile covers its own batch only.
  auto single = multi_batch();
  single.erase("batch_profiles");
  const auto s = models::parse_profile(single, "");
  CHECK(!s.has_batches());
  CHECK(s.at_batch(8).layers[0].forward_s == 2e-3);
  CHECK_THROWS_WITH_AS((void)s.at_batch(16, false, "/workload/batch_size"),
                       "/workload/batch_size: the profile was measured with batch 8 per worker, not 16; add "
                       "\"batch_scaling\": \"linear\" to scale forward, backward and I/O times with the batch (the "
                       "optimizer step and the gradient bytes stay), or profile that batch",
                       ConfigError);
  CHECK(s.at_batch(16, true).layers[0].forward_s == doctest::Approx(4e-3).epsilon(1e-12));
}

TEST_CASE("multi-batch profile: mismatched layers, batches out of order and missing keys are refused at their path") {
  auto doc = multi_batch();
  doc["batch_profiles"][1]["layers"][1]["name"] = "c";
  CHECK(refusal(doc) == "/batch_profiles/1/layers/1/name: expected \"b\", the name of /layers/1: every batch lists "
                        "the same layers in the same order, got \"c\"");
  doc = multi_batch();
  doc["batch_profiles"][0]["layers"].erase(1);
  CHECK(refusal(doc) == "/batch_profiles/0/layers: expected the 2 layers of /layers in the same order, got an array of 1");
  doc = multi_batch();
  doc["batch_profiles"][0]["layers"][0]["parameters"] = 100;  // parameters are the top level's only
  CHECK(refusal(doc) == "/batch_profiles/0/layers/0/parameters: unknown key \"parameters\"; valid keys are: "
                        "backward_s, forward_s, name");
  doc = multi_batch();
  doc["batch_profiles"][1]["batch_size"] = 16;
  CHECK(refusal(doc) == "/batch_profiles/1/batch_size: batch sizes must increase, got 16 after 16");
  doc["batch_profiles"][1]["batch_size"] = 12;
  CHECK(refusal(doc) == "/batch_profiles/1/batch_size: batch sizes must increase, got 12 after 16");
  doc = multi_batch();
  doc["batch_profiles"][0]["batch_size"] = 8;
  CHECK(refusal(doc) == "/batch_profiles/0/batch_size: batch 8 is the top-level profile's (batch_size); list each "
                        "other measured batch once");
  doc = multi_batch();
  doc["batch_profiles"][0].erase("optimizer_s");
  CHECK(refusal(doc) == "/batch_profiles/0/optimizer_s: missing required key");
  doc = multi_batch();
  doc["batch_profiles"][1]["layers"][0].erase("backward_s");
  CHECK(refusal(doc) == "/batch_profiles/1/layers/0/backward_s: missing required key");
  doc = multi_batch();
  doc["batch_profiles"][0].erase("batch_size");
  CHECK(refusal(doc) == "/batch_profiles/0/batch_size: missing required key");
  doc = multi_batch();
  doc["batch_profiles"] = nlohmann::json::array();
  CHECK(refusal(doc) == "/batch_profiles: expected a non-empty array of {\"batch_size\", \"io_s\", \"optimizer_s\", "
                        "\"layers\"} objects, got an empty array");
  // Times are checked as at the top level.
  doc = multi_batch();
  doc["batch_profiles"][1]["layers"][0]["forward_s"] = "-1ms";
  CHECK(refusal(doc) == "/batch_profiles/1/layers/0/forward_s: time must not be negative, got \"-1ms\"");
}

TEST_CASE("measured multi-batch profile: mnist_cnn on CPU at batches 4 to 64 from tools/profile_torch.py --batch-sizes") {
  const auto p = load("measured/mnist_cnn_cpu_batches.json");
  CHECK(p.model == "mnist_cnn");
  CHECK(p.parameters() == 1'199'882);
  CHECK(p.grad_bytes() == 4.0 * 1'199'882);
  REQUIRE(p.has_batches());
  std::vector<std::int64_t> batches;
  for (const auto& b : p.measured_batches) batches.push_back(b.batch_size);
  CHECK(batches == std::vector<std::int64_t>{4, 8, 16, 32, 64});
  CHECK(p.provenance.find("--batch-sizes 4,8,16,32,64") != std::string::npos);
  // Forward + backward grows with the batch at every measured step.
  double previous = 0;
  for (const auto b : batches) {
    const auto at = p.at_batch(b);
    CAPTURE(b);
    CHECK(at.forward_s() + at.backward_s() > previous);
    previous = at.forward_s() + at.backward_s();
  }
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
