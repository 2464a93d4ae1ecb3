// Terms of the work estimate (scenario/work_estimate.cpp) checked against a hand count, and the
// per-iteration state that used to grow without the estimate knowing.
#include "tests/support/cli.hpp"

#include "engine/iteration_records.hpp"
#include "scenario/work_constants.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

const std::string SCENARIOS = std::string(DDLSIM_SOURCE_DIR) + "/scenarios";

json estimate(const std::string& args) {
  const auto r = ddlsim::test::ddlsim("run " + args + " --estimate");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out);
}

const json& term(const json& e, const std::string& what) {
  for (const auto& t : e["terms"])
    if (t["what"] == what) return t;
  FAIL("no term \"" << what << "\" in " << e["terms"].dump());
  static const json none;
  return none;
}

}  // namespace

TEST_CASE("selective_sync's flag all-reduce runs as flows at analytic fidelity, and the estimate counts them") {
  namespace w = ddlsim::sim::work;
  // Surrogate decisions on 64 workers at analytic fidelity (41 s measured, 0.7 s estimated before):
  // every iteration, a 4-byte ring all-reduce among all the workers, 2(N-1) sends of one flow
  // per rank, as flows on SimGrid; the buckets of synchronised iterations are analytic.
  constexpr int N = 64, ITERATIONS = 2000;
  const json e = estimate(fmt::format("{}/eventgrad_cnn_selsync_4w.json --set training.sync.params.decisions=surrogate "
                                      "--set platform.workers={} --set network.fidelity=analytic --set "
                                      "workload.iterations={}",
                                      SCENARIOS, N, ITERATIONS));
  const double flows_per_iteration = N * 2.0 * (N - 1);
  CHECK(e["flows"].get<double>() == doctest::Approx(ITERATIONS * flows_per_iteration));
  const json& flags = term(e, "flag all-reduce flows");
  CHECK(flags["path"] == "/training/sync");
  CHECK(flags["wall_s"].get<double>() ==
        doctest::Approx(ITERATIONS * flows_per_iteration * (w::FLOW_S + w::STEP_SHARED_FLOW_S)));
  CHECK(e["wall_s"].get<double>() > 60);  // the run takes about 40 s: the flows are most of it
  // The parameter-server variant exchanges its flags with the servers: no all-reduce.
  const json ps = estimate(fmt::format("{}/eventgrad_cnn_selsync_4w.json --set training.sync.params.aggregation="
                                       "parameter_server --set platform.parameter_servers=1",
                                       SCENARIOS));
  for (const auto& t : ps["terms"]) CHECK(t["what"] != "flag all-reduce flows");
}

TEST_CASE("parameter-server flows cost their own events on the fluid links and N^2 sharing on SimGrid's LMM") {
  namespace w = ddlsim::sim::work;
  // ssp on S = 4 servers, 256 workers, the bundled ResNet-50's B buckets: 2 N S B flows per
  // iteration. The estimate's "per_iteration_s" covers every per-iteration term, so the PS term's
  // own wall time is compared, against the hand count.
  constexpr int N = 256, S = 4, ITERATIONS = 10;
  const std::string base = fmt::format("{}/ssp_one_slow_worker.json --set platform.workers={} --set platform.parameter_servers={} "
                                       "--set workload.iterations={}",
                                       SCENARIOS, N, S, ITERATIONS);
  const json fluid = estimate(base);
  const double flows = fluid["flows"].get<double>();
  const double buckets = flows / (ITERATIONS * 2.0 * N * S);
  CHECK(buckets == doctest::Approx(std::round(buckets)));
  const json& f = term(fluid, "parameter-server flows (fluid links)");
  CHECK(f["path"] == "/platform/parameter_servers");
  CHECK(f["wall_s"].get<double>() == doctest::Approx(flows * w::FLUID_FLOW_S));
  const json lmm = estimate(base + " --set network.push_pull_solver=simgrid");
  const json& l = term(lmm, "parameter-server flows");
  const double sharing = ITERATIONS * 2.0 * buckets * N * N * S * w::ASYNCHRONOUS_SHARING;
  CHECK(l["wall_s"].get<double>() == doctest::Approx(flows * w::FLOW_S + sharing * w::SHARED_FLOW_S));
  // and so do the reasons the engine leaves the fluid links: the tcp model
  const json tcp = estimate(base + " --set network.model=tcp");
  CHECK(term(tcp, "parameter-server flows")["wall_s"].get<double>() == doctest::Approx(l["wall_s"].get<double>()));
}

TEST_CASE("a staleness histogram keeps every value exactly up to its limit, then bins the large ones") {
  using ddlsim::sim::Histogram;
  Histogram exact;
  for (int v = 0; v < static_cast<int>(Histogram::EXACT_LIMIT); ++v) exact.add(v);
  CHECK_FALSE(exact.binned);
  CHECK(exact.counts.size() == Histogram::EXACT_LIMIT);
  Histogram h;
  constexpr std::int64_t VALUES = 1'000'000;
  for (std::int64_t v = 0; v < VALUES; ++v) h.add(v);
  CHECK(h.binned);
  CHECK(h.total == VALUES);
  CHECK(h.max == VALUES - 1);
  CHECK(h.sum == doctest::Approx(VALUES * (VALUES - 1) / 2.0));
  // Below EXACT_BELOW each value has its own key; above, 128 bins per power of two.
  for (std::int64_t v = 0; v < Histogram::EXACT_BELOW; ++v) CHECK(h.counts.at(v) == 1);
  CHECK(h.counts.size() <= static_cast<std::size_t>(Histogram::EXACT_BELOW + 128 * 10));
  CHECK(Histogram::bin_of(1024) == 1024);
  CHECK(Histogram::bin_of(1031) == 1024);
  CHECK(Histogram::bin_of(1032) == 1032);
  CHECK(Histogram::bin_of(999'999) == (999'999 >> 12) << 12);
  std::int64_t counted = 0;
  for (const auto& [key, n] : h.counts) counted += n;
  CHECK(counted == VALUES);
  CHECK(h.quantile(0.5) == doctest::Approx(VALUES / 2.0).epsilon(1.0 / 128));
}

TEST_CASE("an event-triggered surrogate keeps constant state per iteration with its outputs off") {
  // Its neighbour staleness grows with the run (a layer sent rarely): the histogram used to keep
  // one key per distinct value, 0.7 KB per iteration with summary.json, 747 MB at 10^6 iterations.
  TempDir tmp;
  json doc = ddlsim::test::small_scenario("soak");
  doc["network"] = {{"fidelity", "analytic"}};
  doc["workload"] = {{"synthetic", {{"layers", 4}, {"grad_bytes", "1MB"}}}, {"iterations", 20000}};
  doc["training"] = {{"sync", {{"name", "event_triggered"},
                               {"params", {{"decisions", "surrogate"},
                                           {"trace", SCENARIOS + "/traces/eventgrad_cnn_event_adaptive_4w.json"}}}}}};
  doc["output"] = {{"iterations_csv", false}, {"timeline", false}};
  const auto r = ddlsim::test::ddlsim(
      fmt::format("run {} --out {} --quiet", tmp.write("s.json", doc.dump()), tmp.file("out")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json summary = json::parse(ddlsim::test::slurp(tmp.path() / "out" / "summary.json"));
  const json& staleness = summary["neighbour_staleness"];
  CHECK(staleness["count"] == 20000 * 4 * 4 * 2);  // iterations x workers x layers x neighbours
  CHECK(staleness["max"].get<double>() > 2 * ddlsim::sim::Histogram::EXACT_BELOW);
  CHECK(staleness["histogram"].size() <= ddlsim::sim::Histogram::EXACT_LIMIT);
}

TEST_CASE("the co-simulated training's term: flops of the union batches and evaluations, memory of the data") {
  namespace w = ddlsim::sim::work;
  const json e = estimate(SCENARIOS + "/convergence_fashion_bsp.json");  // 8 x 32 samples, 400 iterations, 7,850 parameters
  const json& t = term(e, "co-simulated training");
  CHECK(t["path"] == "/training/convergence");
  const double per_iteration = 8 * 32 * 7850.0 * w::NUMERICS_TRAIN_FLOPS + 10000 * 7850.0 * w::NUMERICS_EVAL_FLOPS / 10;
  CHECK(t["wall_s"].get<double>() == doctest::Approx(400 * per_iteration / w::NUMERICS_FLOP_RATE));
  CHECK(t["memory_bytes"].get<double>() == doctest::Approx((60000 * 5 + 10000 * 13) * 784.0 + 256 * 784 * 8.0));
  const json local = estimate(SCENARIOS + "/convergence_fashion_bsp.json --set training.sync.name=local_sgd");
  CHECK(term(local, "co-simulated training")["memory_bytes"].get<double>() ==
        doctest::Approx(t["memory_bytes"].get<double>() + 9 * 7850 * 8.0));  // one copy per worker, and bsp's
  CHECK(term(local, "co-simulated training")["wall_s"].get<double>() == doctest::Approx(2 * t["wall_s"].get<double>()));
  const json alone = estimate(SCENARIOS + "/convergence_fashion_bsp.json --set training.sync.name=local_sgd "
                                          "--set training.convergence.bsp_baseline=false");
  CHECK(term(alone, "co-simulated training")["wall_s"].get<double>() == doctest::Approx(t["wall_s"].get<double>()));
  // Decentralised: every worker's own step, norms and mix, and its parameters, gradient and sent values.
  const json gossip = estimate(SCENARIOS + "/convergence_fashion_gossip.json");
  CHECK(term(gossip, "co-simulated training")["wall_s"].get<double>() ==
        doctest::Approx(2 * 400 * (per_iteration + 8 * 7850.0 * w::NUMERICS_MIX_FLOPS) / w::NUMERICS_FLOP_RATE));
  CHECK(term(gossip, "co-simulated training")["memory_bytes"].get<double>() ==
        doctest::Approx(t["memory_bytes"].get<double>() + 8 * 7850 * 8.0 * w::PEER_COPIES + 7850 * 8.0));
  const json none = estimate(SCENARIOS + "/resnet50_bsp_ring_10gbps.json");
  for (const auto& x : none["terms"]) CHECK(x["what"] != "co-simulated training");
}
