// training.bucketing.max_inflight: bucket all-reduces in flight at once on a worker's
// communication stream. Expectations derived here from the alpha-beta model of the
// star (host-to-host path = 2 links: alpha = 2 x link latency, beta = 1 / bandwidth)
// and the rule of models/concurrent_collectives.hpp; flow and analytic fidelity must
// both give them.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr int N = 4;
constexpr double BETA = 8 / 10e9;  // 10 Gbps
constexpr double CALL = 10e-6;     // network.collective_call_cost, its default

json star(const std::string& latency, const json& workload, const json& bucketing, const std::string& fidelity) {
  return json{{"name", "inflight"},
              {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", latency}}}}},
              {"network", {{"fidelity", fidelity}}},
              {"workload", workload},
              {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}, {"bucketing", bucketing}}},
              {"output", {{"timeline_workers", 1}, {"timeline_iterations", 1}}}};
}

struct Run {
  json summary;
  json timeline;
};

Run run(const TempDir& tmp, const std::string& name, const json& scenario, const std::string& extra = "") {
  const std::string file = tmp.write(name + ".json", scenario.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet {}", file, tmp.file(name), extra));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Run{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")),
             json::parse(ddlsim::test::slurp(tmp.path() / name / "timeline.json"))};
}

/// When worker 0's communication of `bucket` ended in iteration 0 (timeline.json, microseconds).
double bucket_end_s(const json& timeline, int bucket) {
  for (const auto& e : timeline["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 0 && e["name"] == fmt::format("bucket {}", bucket))
      return (e["ts"].get<double>() + e["dur"].get<double>()) * 1e-6;
  FAIL("no bucket ", bucket, " on worker 0's timeline");
  return -1;
}

}  // namespace

TEST_CASE("two equal buckets at once: with max_inflight 2 each transfer term doubles and the latency is paid once") {
  // Two 10 MB layers, bucket cap 10 MB, no overlap: both buckets are submitted together at the
  // end of backward (6 ms). Ring closed form: L = call + 2 (N - 1) alpha, T = 2 (N - 1) / N M beta.
  // One at a time: 2 (L + T). Two at once on the star: every link carries one flow of each ring,
  // each at half the bandwidth, and both pay the same latencies: L + 2 T.
  const double alpha = 2 * 5e-6, m = 10e6;
  const double latency = CALL + 2.0 * (N - 1) * alpha, transfer = 2.0 * (N - 1) / N * m * BETA;
  const json workload = {{"synthetic", {{"layers", 2}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "10MB"}}},
                         {"iterations", 3}};
  TempDir tmp;
  for (const int k : {1, 2}) {
    const json bucketing = {{"bucket_bytes", "10MB"}, {"overlap", false}, {"max_inflight", k}};
    const double comm = k == 1 ? 2 * (latency + transfer) : latency + 2 * transfer;
    for (const std::string fidelity : {"analytic", "flow"})
      for (const std::string granularity : {"stepwise", "pipelined"}) {
        if (fidelity == "analytic" && granularity == "pipelined") continue;
        CAPTURE(k);
        CAPTURE(fidelity);
        CAPTURE(granularity);
        json s = star("5us", workload, bucketing, fidelity);
        s["network"]["collective_granularity"] = granularity;
        const auto r = run(tmp, fmt::format("{}-{}-{}", k, fidelity, granularity), s);
        CHECK(r.summary["max_inflight"] == k);
        CHECK(r.summary["iteration_time_s"].get<double>() == doctest::Approx(6e-3 + comm).epsilon(1e-6));
        // The stream is busy over the union of the two collectives, not their sum.
        CHECK(r.summary["comm_time_per_iteration_s"].get<double>() == doctest::Approx(comm).epsilon(1e-6));
        CHECK(bucket_end_s(r.timeline, 0) == doctest::Approx(6e-3 + (k == 1 ? latency + transfer : comm)).epsilon(1e-6));
      }
  }
}

TEST_CASE("staggered unequal buckets on a latency-free star: flow shares the links exactly as the analytic rule") {
  // Four 10 MB layers (1 ms forward, 2 ms backward) under DDP's rule: the first bucket closes at
  // its first layer (10 MB >= 1 MiB), the second at 30 MB >= 25 MiB. Bucket 0 (T0 = 1.5 x 10 MB
  // beta = 12 ms) is submitted at 4 + 2 = 6 ms, bucket 1 (T1 = 36 ms) at 4 + 8 = 12 ms; each pays
  // the 10 us call alone (links have no latency). Two at once: bucket 0 transfers alone on
  // [6.01, 12.01] (6 ms done), then both at half rate: bucket 0 ends at 12.01 + 2 x 6 = 24.01 ms,
  // bucket 1 has 30 ms left and ends alone at 54.01 ms. One at a time: bucket 0 ends at 18.01,
  // bucket 1 runs from 18.01 and ends at 54.02 ms.
  const json workload = {{"synthetic", {{"layers", 4}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "10MB"}}},
                         {"iterations", 2}};
  const double t0 = 1.5 * 10e6 * BETA, t1 = 1.5 * 30e6 * BETA;
  CHECK(t0 == doctest::Approx(12e-3));
  TempDir tmp;
  for (const int k : {1, 2})
    for (const std::string fidelity : {"analytic", "flow"}) {
      CAPTURE(k);
      CAPTURE(fidelity);
      const auto r = run(tmp, fmt::format("{}-{}", k, fidelity),
                         star("0us", workload, {{"policy", "ddp"}, {"max_inflight", k}}, fidelity));
      CHECK(r.summary["buckets_per_iteration"] == 2);
      const double end0 = k == 1 ? 6e-3 + CALL + t0 : 12e-3 + CALL + 2 * (t0 - 6e-3);
      const double end1 = k == 1 ? end0 + CALL + t1 : 12e-3 + CALL + t1 + (t0 - 6e-3);
      CHECK(bucket_end_s(r.timeline, 0) == doctest::Approx(end0).epsilon(1e-6));
      CHECK(bucket_end_s(r.timeline, 1) == doctest::Approx(end1).epsilon(1e-6));
      CHECK(r.summary["iteration_time_s"].get<double>() == doctest::Approx(end1).epsilon(1e-6));
    }
}
