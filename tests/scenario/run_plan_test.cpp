// The run plan (scenario/run_plan.cpp): loading a scenario decides once which engine runs it, which
// workers form classes, the buckets, their compression, AR-Topk's selecting workers and what "auto"
// runs per bucket; the engine and the work estimate read Scenario::plan.
#include "models/artopk_choice.hpp"
#include "models/bucketing.hpp"
#include "models/collective.hpp"
#include "scenario/run_plan.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace sim = ddlsim::sim;
namespace models = ddlsim::models;
using nlohmann::json;

namespace {

constexpr int N = 8, LAYERS = 10;

/// 8 workers, 10 layers of 5 MB, BSP; `training` and `network` merged over the defaults.
sim::Scenario plan_of(const json& training, const json& network = json::object(), int workers = N) {
  json doc{{"name", "plan"},
           {"platform", {{"topology", "star"}, {"workers", workers}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}},
           {"workload",
            {{"synthetic", {{"layers", LAYERS}, {"forward_s", "1ms"}, {"backward_s", "1ms"}, {"grad_bytes", "5MB"}}},
             {"iterations", 6}}},
           {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}}},
           {"network", network},
           {"output", {{"timeline", false}}}};
  doc["training"].update(training);
  return sim::parse_scenario(doc, ".");
}

}  // namespace

TEST_CASE("run plan: made at load, with the engine and why") {
  const auto flow = plan_of(json::object());
  REQUIRE(flow.plan != nullptr);
  CHECK_FALSE(flow.plan->fiber_lane());
  CHECK(flow.plan->fiber_lane_exclusion == "not analytic fidelity");
  const auto analytic = plan_of(json::object(), {{"fidelity", "analytic"}});
  CHECK(analytic.plan->fiber_lane());
  CHECK(analytic.plan->replication_exclusion.empty());
  // Eight workers of one speed: one class; the timeline is off (it would show its workers: each
  // simulated), so one worker is simulated.
  REQUIRE(analytic.plan->classes.has_value());
  CHECK(analytic.plan->classes->simulated == std::vector<int>{0});
  CHECK(analytic.plan->classes->slot_of == std::vector<int>(N, 0));
}

TEST_CASE("run plan: buckets under the size cap, the group, and the analytic network at time 0") {
  const auto s = plan_of({{"bucketing", {{"policy", "size"}, {"bucket_bytes", "25MB"}}}});
  const auto& plan = *s.plan;
  // Ten 5 MB gradients under a 25 MB cap: two buckets of five layers.
  REQUIRE(plan.training.buckets.size() == 2);
  CHECK(plan.training.buckets[0].bytes == 25e6);
  CHECK(plan.training.buckets[1].bytes == 25e6);
  CHECK(plan.training.iterations == 6);
  CHECK(plan.training.profile == nullptr);  // a run points it at its scenario's profile
  CHECK(plan.training.compression.empty());
  CHECK(plan.training.roots.empty());
  CHECK(plan.group.workers == N);
  // The star: two links of 5 us between hosts; the slowest link's 10 Gbit/s.
  CHECK(plan.ab.alpha_s == doctest::Approx(10e-6));
  CHECK(plan.ab.beta_s_per_byte == doctest::Approx(8 / 10e9));
  CHECK(plan.network->constant());
}

TEST_CASE("run plan: auto resolved per bucket size at load, the same as resolving per call") {
  const auto s = plan_of({{"collective", {{"name", "auto"}}}, {"bucketing", {{"bucket_bytes", "15MB"}}}});
  const auto& plan = *s.plan;
  // 5 MB gradients under a 15 MB cap: three buckets of 15 MB and one of 5 MB: two sizes.
  REQUIRE(plan.training.buckets.size() == 4);
  REQUIRE(plan.resolved.size() == 2);
  for (const double bytes : {15e6, 5e6}) {
    const auto& picked = plan.resolved.at(bytes);
    CHECK(picked.algorithm == &models::resolve(*s.training.collective_algorithm, plan.group, bytes, plan.ab));
    CHECK(picked.name == models::resolved_name(*s.training.collective_algorithm, plan.group, bytes, plan.ab));
    CHECK(&plan.gradient_collective(bytes) == picked.algorithm);
    CHECK(plan.gradient_collective_name(bytes) == picked.name);
  }
  CHECK(plan.collective_choices.size() == 2);
  // A size the plan did not foresee is resolved when asked, with the same rule.
  CHECK(&plan.gradient_collective(4.0) == &models::resolve(*s.training.collective_algorithm, plan.group, 4.0, plan.ab));
  // A plain algorithm runs itself, under its own name.
  const auto ring = plan_of(json::object());
  CHECK(&ring.plan->gradient_collective(50e6) == ring.training.collective_algorithm.get());
  CHECK(ring.plan->gradient_collective_name(50e6) == "ring");
}

TEST_CASE("run plan: AR-Topk's selecting worker per iteration, round-robin under star") {
  const json free{{"fixed_s", 0}, {"per_element_s", 0}, {"n_log_k_s", 0}};
  const json costs{{"encode", free}, {"decode", free}};
  const auto s = plan_of({{"compressor", {{"name", "artopk"}, {"params", {{"ratio", 0.01}}}}}, {"compression_cost", costs},
                          {"collective", {{"name", "artopk_ring"}}}});
  const auto& plan = *s.plan;
  REQUIRE(plan.training.roots.size() == 6);
  for (int it = 0; it < 6; ++it) CHECK(plan.training.roots[static_cast<std::size_t>(it)] == it % N);
  CHECK(plan.static_cr == doctest::Approx(0.01).epsilon(1e-3));
  // Every other compressor leaves the collectives unrotated.
  const auto topk = plan_of({{"compressor", {{"name", "topk"}, {"params", {{"ratio", 0.01}}}}}, {"compression_cost", costs},
                             {"collective", {{"name", "auto"}}}});
  CHECK(topk.plan->training.roots.empty());
}

TEST_CASE("run plan: Horovod's fused buckets and waits, and the note when stragglers cannot move them") {
  const auto s = plan_of({{"bucketing", {{"policy", "horovod"}}}, {"stragglers", {{"speed_factors", std::vector<double>(N, 1.0)}}}});
  const auto& plan = *s.plan;
  CHECK(plan.launch_wait_s.size() == plan.training.buckets.size());
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].rfind("bucketing \"horovod\": the fused buckets", 0) == 0);
}
