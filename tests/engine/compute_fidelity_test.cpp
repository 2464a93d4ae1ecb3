// Compute-side fidelity end to end: speedup and scaling efficiency against the same workers
// alone, compute_scale, the profile's unattributed time and the framework overhead in every sync
// model, and DDP's bucket copies. Every expectation is derived here from the scenario (times,
// bytes, the star's alpha-beta model: host-to-host path = 2 links), never copied from a run.
#include "analysis/scaling.hpp"
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <numbers>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json star(int workers, const json& workload, const json& training, const std::string& bandwidth = "10Gbps",
          const std::string& latency = "5us") {
  return json{{"name", "compute"},
              {"platform", {{"topology", "star"}, {"workers", workers}, {"link", {{"bandwidth", bandwidth}, {"latency", latency}}}}},
              {"workload", workload},
              {"training", training}};
}

/// Ten layers of 1 ms forward and 2 ms backward: T = 30 ms per iteration on one worker.
json ten_layers(const std::string& grad_bytes, int iterations = 4) {
  return json{{"synthetic", {{"layers", 10}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", grad_bytes}}},
              {"iterations", iterations}};
}

json run(const TempDir& tmp, const std::string& name, const json& scenario) {
  const std::string file = tmp.write(name + ".json", scenario.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

double get(const json& summary, const char* key) { return summary.at(key).get<double>(); }

}  // namespace

TEST_CASE("speedup and scaling efficiency against the same workers alone: speed factors 1, 1, 1, 3, no communication cost") {
  TempDir tmp;
  // One byte per layer on a 1000 Tbps star without latency or call cost: the all-reduce is the
  // barrier of bsp and costs nothing (< 1e-13 s), so every iteration waits for the slowest worker.
  const double T = 10 * (1e-3 + 2e-3), b = 32;
  json sc = star(4, ten_layers("1B"), {{"stragglers", {{"speed_factors", {1, 1, 1, 3}}}}}, "1000Tbps", "0us");
  sc["network"] = {{"collective_call_cost", 0}};
  const json s = run(tmp, "hetero", sc);
  CHECK(get(s, "iteration_time_s") == doctest::Approx(3 * T).epsilon(1e-9));
  CHECK(get(s, "throughput_samples_per_s") == doctest::Approx(4 * b / (3 * T)).epsilon(1e-9));
  CHECK(get(s, "single_worker_iteration_time_s") == doctest::Approx(T).epsilon(1e-12));
  // Alone, workers 0-2 each do b / T, worker 3 does b / (3 T): 10 b / (3 T) together.
  CHECK(get(s, "workers_alone_throughput_samples_per_s") == doctest::Approx(10 * b / (3 * T)).epsilon(1e-12));
  // Efficiency = (4 b / 3T) / (10 b / 3T) = 0.4; speedup = 4 x 0.4 (the old definitions gave 1/3 and 4/3).
  CHECK(get(s, "scaling_efficiency") == doctest::Approx(0.4).epsilon(1e-9));
  CHECK(get(s, "speedup") == doctest::Approx(1.6).epsilon(1e-9));

  // Four equally slow workers (factor 3) lose nothing to each other: efficiency 1, speedup 4 (old: 1/3, 4/3).
  sc["training"]["stragglers"]["speed_factors"] = {3, 3, 3, 3};
  const json slow = run(tmp, "slow", sc);
  CHECK(get(slow, "scaling_efficiency") == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(get(slow, "speedup") == doctest::Approx(4.0).epsilon(1e-9));
  // "slow" ranks are static factors too.
  sc["training"]["stragglers"] = {{"slow", {{{"rank", 3}, {"factor", 3}}}}};
  CHECK(get(run(tmp, "slow_rank", sc), "scaling_efficiency") == doctest::Approx(0.4).epsilon(1e-9));
}

TEST_CASE("the workers alone include the mean of the per-iteration noise: 1, clamped normal, 1 + sigma") {
  const auto baseline = [](const json& stragglers) {
    json sc = star(2, ten_layers("1MB"), {{"stragglers", stragglers}});
    return ddlsim::analysis::scaling_baseline(ddlsim::sim::parse_scenario(sc, ""));
  };
  const double T = 0.03, b = 32;
  CHECK(baseline(json::object()).workers_alone_throughput == doctest::Approx(2 * b / T).epsilon(1e-12));
  CHECK(baseline({{"distribution", "lognormal"}, {"sigma", 0.5}}).workers_alone_throughput ==
        doctest::Approx(2 * b / T).epsilon(1e-12));
  CHECK(baseline({{"distribution", "exponential"}, {"sigma", 0.5}}).workers_alone_throughput ==
        doctest::Approx(2 * b / (1.5 * T)).epsilon(1e-12));
  // max(0, 1 + 0.5 z): Phi(2) + 0.5 phi(2) = 0.977249868 + 0.5 x 0.053990967 = 1.004245352.
  const double normal = 0.9772498680518208 + 0.5 * std::exp(-2.0) / std::sqrt(2 * std::numbers::pi);
  CHECK(normal == doctest::Approx(1.004245352).epsilon(1e-9));
  CHECK(baseline({{"distribution", "normal"}, {"sigma", 0.5}, {"speed_factors", {1, 2}}}).workers_alone_throughput ==
        doctest::Approx(b / (normal * T) * 1.5).epsilon(1e-9));
}

TEST_CASE("compute_scale multiplies the profile's compute and the framework overhead, and the metrics use the scaled time") {
  TempDir tmp;
  json workload = ten_layers("1MB", 3);
  workload["synthetic"]["io_s"] = "0.25ms";
  workload["synthetic"]["optimizer_s"] = "1ms";
  workload["synthetic"]["unattributed_s"] = "0.5ms";
  workload["framework_overhead_s"] = "2ms";
  workload["compute_scale"] = 2;
  json sc = star(1, workload, json::object());
  sc["network"] = {{"collective_call_cost", 0}};
  const json s = run(tmp, "scaled", sc);
  const double T = 2 * (0.5e-3 + 0.25e-3 + 30e-3 + 1e-3), overhead = 2 * 2e-3;
  CHECK(get(s, "compute_scale") == 2);
  CHECK(get(s, "unattributed_time_per_iteration_s") == doctest::Approx(1e-3).epsilon(1e-12));
  CHECK(get(s, "framework_overhead_per_iteration_s") == doctest::Approx(overhead).epsilon(1e-12));
  // One worker: no communication; the overhead is a cost of the distributed run, not of the worker alone.
  CHECK(get(s, "single_worker_iteration_time_s") == doctest::Approx(T).epsilon(1e-12));
  CHECK(get(s, "iteration_time_s") == doctest::Approx(T + overhead).epsilon(1e-9));
  CHECK(get(s, "compute_time_per_iteration_s") == doctest::Approx(T + overhead).epsilon(1e-9));
  CHECK(get(s, "speedup") == doctest::Approx(T / (T + overhead)).epsilon(1e-9));
  CHECK(get(s, "scaling_efficiency") == doctest::Approx(T / (T + overhead)).epsilon(1e-9));
  CHECK(s["bucket_copy_bandwidth_Bps"].is_null());
  CHECK(get(s, "bucket_copy_time_per_exchange_s") == 0);
}

TEST_CASE("the unattributed time and the framework overhead open every iteration of every sync model") {
  TempDir tmp;
  const std::string root = DDLSIM_SOURCE_DIR;
  json profile = json::parse(ddlsim::test::slurp(root + "/scenarios/profiles/measured/eventgrad_cnn_cpu.json"));
  profile["unattributed_s"] = "0.3ms";
  const std::string profile_file = tmp.write("profile.json", profile.dump());
  const auto trace = [&root](const char* name) { return root + "/scenarios/traces/" + name; };
  const std::vector<std::pair<json, int>> models = {  // sync, parameter servers
      {{{"name", "bsp"}}, 0},
      {{{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}}, 1},
      {{{"name", "asp"}}, 1},
      {{{"name", "ssp"}}, 1},
      {{{"name", "local_sgd"}}, 0},
      {{{"name", "gossip"}}, 0},
      {{{"name", "crossbow"}}, 0},
      {{{"name", "event_triggered"}, {"params", {{"trace", trace("eventgrad_cnn_event_adaptive_4w.json")}}}}, 0},
      {{{"name", "ordered_gradients"}, {"params", {{"trace", trace("eventgrad_cnn_ordered_m2_4w.json")}}}}, 1},
      {{{"name", "selective_sync"}, {"params", {{"trace", trace("eventgrad_cnn_selsync_4w.json")}}}}, 0}};
  for (std::size_t m = 0; m < models.size(); ++m) {
    const auto& [sync, servers] = models[m];
    CAPTURE(sync.dump());
    json sc = star(4, {{"profile", profile_file}, {"iterations", 2}, {"framework_overhead_s", "0.2ms"}},
                   {{"sync", sync}}, "1Gbps", "50us");
    sc["platform"]["parameter_servers"] = servers;
    const std::string name = fmt::format("m{}", m);
    (void)run(tmp, name, sc);
    const json timeline = json::parse(ddlsim::test::slurp(tmp.path() / name / "timeline.json"));
    std::vector<json> compute;  // worker 0's compute thread, in time order
    for (const auto& e : timeline["traceEvents"])
      if (e["ph"] == "X" && e["pid"] == 0 && e["tid"] == 0) compute.push_back(e);
    std::stable_sort(compute.begin(), compute.end(), [](const json& a, const json& b) { return a["ts"] < b["ts"]; });
    REQUIRE(compute.size() > 3);
    CHECK(compute[0]["name"] == "unattributed");
    CHECK(compute[0]["cat"] == "framework");
    CHECK(compute[0]["ts"].get<double>() == 0);
    CHECK(compute[0]["dur"].get<double>() == doctest::Approx(300).epsilon(1e-9));
    CHECK(compute[1]["name"] == "framework overhead");
    CHECK(compute[1]["ts"].get<double>() == doctest::Approx(300).epsilon(1e-9));
    CHECK(compute[1]["dur"].get<double>() == doctest::Approx(200).epsilon(1e-9));
    CHECK(compute[2]["cat"] == "io");
    const auto count = std::count_if(compute.begin(), compute.end(), [](const json& e) { return e["name"] == "unattributed"; });
    CHECK(count == 2);  // once per iteration
  }
}

TEST_CASE("bucket copies: the iteration time from the closed form, overlap on and off") {
  // Two layers of 1 ms forward, 2 ms backward and 10 MB of gradients; 10 MB buckets: bucket 0 is
  // layer 1 (ready first), bucket 1 layer 0. Copies at 10 GB/s: c = 1 ms per bucket and way.
  TempDir tmp;
  const double F = 2e-3, B = 2e-3, c = 10e6 / 10e9, CALL = 10e-6;
  for (const double gbps : {10.0, 100.0}) {
    const double alpha = 2 * 5e-6, beta = 8 / (gbps * 1e9);
    const double R = CALL + 2.0 * 3 * alpha + 2.0 * 3 / 4 * 10e6 * beta;  // ring all-reduce of one bucket on 4 workers
    for (const bool overlap : {true, false}) {
      CAPTURE(gbps);
      CAPTURE(overlap);
      json workload = {{"synthetic", {{"layers", 2}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "10MB"}}},
                       {"iterations", 3}};
      const json sc = star(4, workload, {{"bucketing", {{"bucket_bytes", "10MB"}, {"overlap", overlap}, {"copy_bandwidth", "10GBps"}}}},
                           fmt::format("{}Gbps", gbps));
      const json s = run(tmp, fmt::format("copies_{}_{}", gbps, overlap), sc);
      // Copy in on the compute stream right before each submit; the stream runs the buckets in
      // order; every copy out after the last bucket is back.
      const double submit0 = overlap ? F + B + c : F + 2 * B + c;
      const double submit1 = overlap ? F + 2 * B + 2 * c : F + 2 * B + 2 * c;
      const double expected = std::max(submit1, submit0 + R) + R + 2 * c;
      CHECK(get(s, "iteration_time_s") == doctest::Approx(expected).epsilon(1e-6));
      CHECK(get(s, "compute_time_per_iteration_s") == doctest::Approx(F + 2 * B + 4 * c).epsilon(1e-9));
      CHECK(get(s, "bucket_copy_bandwidth_Bps") == 10e9);
      CHECK(get(s, "bucket_copy_time_per_exchange_s") == doctest::Approx(4 * c).epsilon(1e-12));
      // The workers alone copy nothing: the baseline stays the profile's iteration.
      CHECK(get(s, "single_worker_iteration_time_s") == doctest::Approx(F + 2 * B).epsilon(1e-12));
    }
  }
}
