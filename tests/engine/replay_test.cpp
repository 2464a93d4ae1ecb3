// Trace replay: buckets, overlap, stragglers, parameter servers, determinism.
// Every expectation is derived here from the alpha-beta model of the star:
// host-to-host path = 2 links, so alpha = 2 * link latency, beta = 1 / bandwidth.
#include "models/software_cost.hpp"
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double BW = 10e9 / 8;  // 10 Gbps in bytes/s
constexpr double LAT = 5e-6;
constexpr double ALPHA = 2 * LAT;
constexpr double BETA = 1 / BW;
constexpr double CALL = 10e-6;  // network.collective_call_cost: its default, paid once per all-reduce call

json two_layer(int workers, bool overlap) {
  return json{{"name", "replay"},
              {"platform", {{"topology", "star"}, {"workers", workers}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}},
              {"workload", {{"synthetic", {{"layers", 2}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "10MB"}}},
                            {"iterations", 4}}},
              {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}},
                            {"bucketing", {{"bucket_bytes", "10MB"}, {"overlap", overlap}}}}}};
}

struct Run {
  json summary;
  std::string iterations_csv;
  std::string dir;
};

Run run(const TempDir& tmp, const std::string& name, const json& scenario) {
  const std::string file = tmp.write(name + ".json", scenario.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Run{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")),
             ddlsim::test::slurp(tmp.path() / name / "iterations.csv"), tmp.file(name)};
}

double ring(int n, double bytes) { return CALL + 2.0 * (n - 1) * ALPHA + 2.0 * (n - 1) / n * bytes * BETA; }

/// Mean duration of one worker's iterations, from iterations.csv.
double worker_mean(const std::string& text, int worker) {
  const auto csv = ddlsim::test::Csv::parse(text);
  double sum = 0;
  int count = 0;
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.integer(i, "worker") == worker) {
      sum += csv.number(i, "duration_s");
      ++count;
    }
  return sum / count;
}

}  // namespace

TEST_CASE("two layers, two buckets, four workers: overlap off and on") {
  TempDir tmp;
  const double fwd = 2e-3, bwd_layer = 2e-3, compute = fwd + 2 * bwd_layer;
  const double t_bucket = ring(4, 10e6);
  const double comm = 2 * t_bucket;

  const json off = run(tmp, "off", two_layer(4, false)).summary;
  CHECK(off["buckets_per_iteration"] == 2);
  // No overlap: compute, then the two buckets one after the other.
  CHECK(off["iteration_time_s"].get<double>() == doctest::Approx(compute + comm).epsilon(1e-6));
  CHECK(off["overlap_fraction"].get<double>() == doctest::Approx(0.0).epsilon(1e-6));

  const json on = run(tmp, "on", two_layer(4, true)).summary;
  const double t = on["iteration_time_s"].get<double>();
  // The last layer's bucket starts when its backward ends (fwd + one layer's
  // backward); the second queues behind it on the one communication stream.
  CHECK(t == doctest::Approx(fwd + bwd_layer + comm).epsilon(1e-6));
  CHECK(t >= std::max(compute, comm) * (1 - 1e-9));
  CHECK(t <= (compute + comm) * (1 + 1e-9));
  CHECK(on["exposed_comm_time_per_iteration_s"].get<double>() == doctest::Approx(t - compute).epsilon(1e-6));
  CHECK(on["comm_time_per_iteration_s"].get<double>() == doctest::Approx(comm).epsilon(1e-6));
  CHECK(on["overlap_fraction"].get<double>() == doctest::Approx(1 - (t - compute) / comm).epsilon(1e-6));
}

TEST_CASE("a slow rank stretches BSP while ASP loses only that rank share") {
  TempDir tmp;
  const double c = 2 * 1e-3 + 2 * 2e-3;  // per-iteration compute of the two-layer model
  json bsp = two_layer(4, false);
  bsp["training"]["stragglers"] = {{"slow", {{{"rank", 3}, {"factor", 2.0}}}}};
  const Run slow_bsp = run(tmp, "bsp", bsp);
  // Everyone waits in the all-reduce for rank 3, which computes 2c.
  CHECK(slow_bsp.summary["iteration_time_s"].get<double>() == doctest::Approx(2 * c + 2 * ring(4, 10e6)).epsilon(1e-6));
  CHECK(slow_bsp.summary["straggler_wait_per_iteration_s"].get<double>() > 0.5 * c);

  // ASP on a fast network: each worker's rate is its own, no worker waits for another.
  auto asp = [](bool slow) {
    json s = two_layer(4, true);
    s["platform"]["parameter_servers"] = 1;
    s["platform"]["link"] = {{"bandwidth", "1000Tbps"}, {"latency", "1ns"}};
    s["training"]["sync"] = {{"name", "asp"}};
    s["training"].erase("collective");
    if (slow) s["training"]["stragglers"] = {{"slow", {{{"rank", 3}, {"factor", 2.0}}}}};
    return s;
  };
  const Run even = run(tmp, "asp-even", asp(false));
  const Run skewed = run(tmp, "asp-slow", asp(true));
  const double ratio = skewed.summary["throughput_samples_per_s"].get<double>() /
                       even.summary["throughput_samples_per_s"].get<double>();
  CHECK(ratio == doctest::Approx((3 + 0.5) / 4).epsilon(1e-3));
  // The fast workers are not slowed down by the slow one.
  CHECK(worker_mean(skewed.iterations_csv, 0) == doctest::Approx(worker_mean(even.iterations_csv, 0)).epsilon(1e-3));
  CHECK(worker_mean(skewed.iterations_csv, 3) == doctest::Approx(2 * worker_mean(even.iterations_csv, 3)).epsilon(1e-3));
  CHECK(skewed.summary.contains("staleness"));
  CHECK(skewed.summary["staleness"]["count"].get<int>() == 4 * 4 * 2);  // workers x iterations x buckets
}

TEST_CASE("BSP parameter server: one server against S = 4 shards") {
  TempDir tmp;
  auto ps = [](int servers) {
    json s = two_layer(4, false);
    s["platform"]["parameter_servers"] = servers;
    s["training"]["sync"] = {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}};
    s["training"].erase("collective");
    s["training"]["bucketing"] = {{"bucket_bytes", "1TB"}, {"overlap", false}};
    return s;
  };
  const double c = 2 * 1e-3 + 2 * 2e-3, m = 20e6;
  // One server: its NIC receives 4 pushes of M, then sends 4 pulls of M.
  const double one = c + 2 * ALPHA + 2 * 4 * m * BETA;
  // Four shards: each worker's NIC carries M (4 shards of M/4) each way; each server's NIC carries 4 x M/4.
  const double four = c + 2 * ALPHA + 2 * m * BETA;
  CHECK(run(tmp, "ps1", ps(1)).summary["iteration_time_s"].get<double>() == doctest::Approx(one).epsilon(1e-6));
  CHECK(run(tmp, "ps4", ps(4)).summary["iteration_time_s"].get<double>() == doctest::Approx(four).epsilon(1e-6));
}

TEST_CASE("BSP parameter server under gloo: every push and pull pays the library") {
  TempDir tmp;
  json s = two_layer(4, false);
  s["platform"]["parameter_servers"] = 1;
  s["network"] = {{"software", "gloo"}};
  s["training"]["sync"] = {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}};
  s["training"].erase("collective");
  s["training"]["bucketing"] = {{"bucket_bytes", "1TB"}, {"overlap", false}};
  const auto gloo = *ddlsim::models::software_preset("gloo");
  const double c = 2 * 1e-3 + 2 * 2e-3, m = 20e6, wire = m / gloo.protocol_efficiency;
  // The first iteration, where every worker starts at 0: the four workers post their pushes together
  // after o_send; the server's NIC takes the 4 x m / eta wire bytes; its CPU takes the four pushes in
  // one after another (4 o_recv) and posts the four replies one after another (an o_send before
  // each: its NIC is busy from the first reply on, so the last one ends 4 m / eta beta after the
  // first starts); the last worker served takes its reply in (o_recv). The servers' receives are
  // posted ahead: no receiver-ready wait. (Later iterations overlap the server's CPU with the
  // workers' staggered pushes.)
  const double pushes = gloo.send_overhead_s + ALPHA + 4 * wire * BETA;
  const double pulls = gloo.send_overhead_s + ALPHA + 4 * wire * BETA;
  const double want = c + pushes + 4 * gloo.recv_overhead_s + pulls + gloo.recv_overhead_s;
  const auto out = run(tmp, "ps_gloo", s);
  const auto csv = ddlsim::test::Csv::parse(out.iterations_csv);
  double last_end = 0;
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.integer(i, "iteration") == 0) last_end = std::max(last_end, csv.number(i, "end_s"));
  CHECK(last_end == doctest::Approx(want).epsilon(1e-6));
  // Against the ideal library: the overheads and the protocol's header bytes are all it adds.
  const double ideal = c + 2 * (ALPHA + 4 * m * BETA);
  CHECK(want - ideal == doctest::Approx(2 * gloo.send_overhead_s + 5 * gloo.recv_overhead_s +
                                        8 * (wire - m) * BETA));
  const auto& summary = out.summary;
  CHECK(summary["software"]["applies_to"] == "every message: collectives, point to point, parameter-server pushes and pulls");
}

TEST_CASE("identical scenario and seed give identical files and another seed does not") {
  TempDir tmp;
  json s = two_layer(4, true);
  s["training"]["stragglers"] = {{"distribution", "lognormal"}, {"sigma", 0.2}};
  const Run a = run(tmp, "a", s);
  const Run b = run(tmp, "b", s);
  for (const char* f : {"summary.json", "iterations.csv", "links.csv", "timeline.json"})
    CHECK(ddlsim::test::slurp(std::filesystem::path(a.dir) / f) == ddlsim::test::slurp(std::filesystem::path(b.dir) / f));
  s["seed"] = 2;
  const Run c = run(tmp, "c", s);
  CHECK(c.iterations_csv != a.iterations_csv);
}

TEST_CASE("timeline is a Chrome trace with compute and communication threads") {
  TempDir tmp;
  const Run r = run(tmp, "t", two_layer(2, true));
  const json trace = json::parse(ddlsim::test::slurp(std::filesystem::path(r.dir) / "timeline.json"));
  int forward = 0, backward = 0, buckets = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "forward") ++forward;
    if (e["cat"] == "backward") ++backward;
    if (e["cat"] == "allreduce") {
      ++buckets;
      CHECK(e["tid"] == 1);
    }
  }
  // 2 workers x 3 traced iterations x 2 layers; 2 buckets per iteration.
  CHECK(forward == 12);
  CHECK(backward == 12);
  CHECK(buckets == 12);
}

TEST_CASE("time-varying links: bandwidth and latency traces") {
  TempDir tmp;
  auto one_bucket = []() {
    json s = two_layer(4, false);
    s["workload"]["iterations"] = 2;
    s["training"]["bucketing"] = {{"bucket_bytes", "1TB"}, {"overlap", false}};
    return s;
  };
  const double c = 2 * 1e-3 + 2 * 2e-3, m = 20e6, n = 4;
  // Every link at half bandwidth from t = 0: beta doubles.
  json halved = one_bucket();
  halved["network"] = {{"link_traces", {{{"bandwidth", {{0, "5Gbps"}}}}}}};
  CHECK(run(tmp, "half", halved).summary["iteration_time_s"].get<double>() ==
        doctest::Approx(c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * 2 * BETA).epsilon(1e-6));
  // Only worker 0's link slowed: slower than no trace, and no slower than every
  // link slowed (ranks away from worker 0 run ahead within the ring's dependencies).
  json one_link = one_bucket();
  one_link["network"] = {{"link_traces", {{{"links", {"worker-0<->switch-0"}}, {"bandwidth", {{0, "5Gbps"}}}}}}};
  const double t_one = run(tmp, "one", one_link).summary["iteration_time_s"].get<double>();
  CHECK(t_one > c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * BETA);
  CHECK(t_one <= (c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * 2 * BETA) * (1 + 1e-12));  // ring: equal
  // Latency raised to 50 us per link from t = 0: alpha = 100 us.
  json slow = one_bucket();
  slow["network"] = {{"link_traces", {{{"latency", {{0, "50us"}}}}}}};
  CHECK(run(tmp, "lat", slow).summary["iteration_time_s"].get<double>() ==
        doctest::Approx(c + CALL + 2 * (n - 1) * 100e-6 + 2 * (n - 1) / n * m * BETA).epsilon(1e-6));
  // The bandwidth drops after the first iteration: the second one is slower.
  json later = one_bucket();
  const double first = c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * BETA;
  later["network"] = {{"link_traces", {{{"bandwidth", {{0, "10Gbps"}, {first, "5Gbps"}}}}}}};
  const Run r = run(tmp, "later", later);
  CHECK(worker_mean(r.iterations_csv, 0) ==
        doctest::Approx((first + c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * 2 * BETA) / 2).epsilon(1e-6));
}

TEST_CASE("network models: calibrated factors are exact, tcp is slower than ideal") {
  TempDir tmp;
  json s = two_layer(4, false);
  s["workload"]["iterations"] = 2;
  s["training"]["bucketing"] = {{"bucket_bytes", "1TB"}, {"overlap", false}};
  const double c = 6e-3, m = 20e6, n = 4;
  const double ideal = c + CALL + 2 * (n - 1) * ALPHA + 2 * (n - 1) / n * m * BETA;
  s["network"] = {{"model", "calibrated"}, {"latency_factor", 2}, {"bandwidth_factor", 0.5}};
  const json calibrated = run(tmp, "cal", s).summary;
  CHECK(calibrated["network_model"] == "calibrated");
  CHECK(calibrated["iteration_time_s"].get<double>() ==
        doctest::Approx(c + CALL + 2 * (n - 1) * 2 * ALPHA + 2 * (n - 1) / n * m * 2 * BETA).epsilon(1e-6));
  s["network"] = {{"model", "tcp"}};
  const json tcp = run(tmp, "tcp", s).summary;
  CHECK(tcp["network_model"] == "tcp");
  // LV08: latency x 13.01, bandwidth x 0.97, plus cross traffic: never faster than that bound.
  CHECK(tcp["iteration_time_s"].get<double>() >= c + CALL + 2 * (n - 1) * 13.01 * ALPHA + 2 * (n - 1) / n * m * BETA / 0.97);
  CHECK(tcp["iteration_time_s"].get<double>() > ideal);
}
