// ssp, local_sgd and gossip end to end: each expectation derived here from the
// platform (bandwidths, latencies, bytes) or from another model's run that it
// must reproduce, never copied from a run of its own.
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double LAT = 1e-6;           // every link
constexpr double BW = 10e9 / 8;        // 10 Gbps, bytes per second
constexpr int LAYERS = 4;
constexpr double FWD = 1e-3, BWD = 2e-3, OPT = 1e-3, GRAD = 2e6;  // per layer: s, s, -, bytes
constexpr double MODEL = LAYERS * GRAD;
constexpr double COMPUTE = LAYERS * (FWD + BWD) + OPT;

json star(int workers, const json& sync, int iterations, int servers = 0) {
  json training = {{"sync", sync}, {"bucketing", {{"bucket_bytes", "4MB"}}}};
  return json{{"name", "t"},
              {"platform", {{"topology", "star"}, {"workers", workers}, {"parameter_servers", servers},
                            {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"network", {{"fidelity", "flow"}, {"collective_granularity", "pipelined"}}},
              {"workload", {{"synthetic", {{"layers", LAYERS}, {"forward_s", "1ms"}, {"backward_s", "2ms"},
                                           {"grad_bytes", "2MB"}, {"optimizer_s", "1ms"}}},
                            {"iterations", iterations}}},
              {"training", training},
              {"output", {{"timeline", false}}}};
}

struct Row {
  int worker = 0, iteration = 0;
  double end_s = 0, duration_s = 0, staleness_wait_s = 0;
};

struct Run {
  json summary;
  std::vector<Row> rows;
  std::string csv;
};

Run run(const TempDir& tmp, const std::string& name, const json& scenario) {
  const std::string file = tmp.write(name + ".json", scenario.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  Run out{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")), {},
          ddlsim::test::slurp(tmp.path() / name / "iterations.csv")};
  const auto csv = ddlsim::test::Csv::parse(out.csv);
  CHECK(csv.header_line() == "worker,iteration,start_s,end_s,duration_s,compute_s,exposed_comm_s,comm_busy_s,straggler_wait_s,"
                             "staleness_wait_s,encode_decode_s,cr,collective,exploring");
  for (std::size_t i = 0; i < csv.size(); ++i)
    out.rows.push_back(Row{csv.integer(i, "worker"), csv.integer(i, "iteration"), csv.number(i, "end_s"),
                           csv.number(i, "duration_s"), csv.number(i, "staleness_wait_s")});
  return out;
}

json with_slow_rank(json s, int rank, double factor) {
  s["training"]["stragglers"] = {{"slow", json::array({{{"rank", rank}, {"factor", factor}}})}};
  return s;
}

}  // namespace

TEST_CASE("ssp with bound 0 reproduces bsp on a parameter server, iteration by iteration") {
  TempDir tmp;
  const auto bsp = run(tmp, "bsp", with_slow_rank(star(4, {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}}, 5, 1), 3, 2.0));
  const auto ssp = run(tmp, "ssp", with_slow_rank(star(4, {{"name", "ssp"}, {"params", {{"staleness_bound", 0}}}}, 5, 1), 3, 2.0));
  REQUIRE(bsp.rows.size() == ssp.rows.size());
  for (std::size_t i = 0; i < bsp.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(ssp.rows[i].duration_s == doctest::Approx(bsp.rows[i].duration_s).epsilon(1e-12));
  }
  // The fast workers wait at the bound for the slow one; every applied gradient is fresh.
  CHECK(ssp.rows[0].staleness_wait_s > 0);
  CHECK(ssp.summary["staleness_wait_per_iteration_s"].get<double>() > 0);
  CHECK(ssp.summary["staleness"]["max"].get<double>() == 0);
  CHECK(ssp.summary["staleness"]["histogram"] == json::array({{{"updates", 0}, {"count", 4 * 5 * 2}}}));
  CHECK(ssp.summary["sync_settings"] == json{{"staleness_bound", 0}});
}

TEST_CASE("ssp with a bound beyond the run reproduces asp exactly") {
  TempDir tmp;
  const auto asp = run(tmp, "asp", with_slow_rank(star(4, {{"name", "asp"}}, 5, 1), 3, 2.0));
  const auto ssp = run(tmp, "ssp", with_slow_rank(star(4, {{"name", "ssp"}, {"params", {{"staleness_bound", 1'000'000'000}}}}, 5, 1), 3, 2.0));
  CHECK(ssp.csv == asp.csv);
  CHECK(ssp.summary["staleness"] == asp.summary["staleness"]);
  CHECK(ssp.summary["throughput_samples_per_s"] == asp.summary["throughput_samples_per_s"]);
  CHECK(ssp.summary["staleness_wait_per_iteration_s"].get<double>() == 0);
}

TEST_CASE("ssp throughput does not decrease as the bound grows, with one 2x slow worker") {
  TempDir tmp;
  double previous = 0;
  std::vector<double> seen;
  for (int s : {0, 1, 2, 3, 5, 8, 100}) {
    const auto r = run(tmp, fmt::format("s{}", s),
                       with_slow_rank(star(4, {{"name", "ssp"}, {"params", {{"staleness_bound", s}}}}, 8, 1), 3, 2.0));
    const double t = r.summary["throughput_samples_per_s"].get<double>();
    CAPTURE(s);
    CHECK(t >= previous * (1 - 1e-12));
    previous = t;
    seen.push_back(t);
  }
  CHECK(seen.back() > seen.front() * 1.2);  // the bound costs the fast workers real throughput
}

TEST_CASE("local_sgd with H = 1 costs what bsp without overlap costs") {
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json bsp = star(4, {{"name", "bsp"}}, 3);
    bsp["training"]["bucketing"]["overlap"] = false;
    bsp["network"]["fidelity"] = fidelity;
    json local = star(4, {{"name", "local_sgd"}, {"params", {{"period_iterations", 1}}}}, 3);
    local["network"]["fidelity"] = fidelity;
    const auto b = run(tmp, fmt::format("bsp-{}", fidelity), bsp);
    const auto l = run(tmp, fmt::format("local-{}", fidelity), local);
    // Both: compute + the buckets' all-reduces + the optimizer, in another order.
    CHECK(l.summary["iteration_time_s"].get<double>() ==
          doctest::Approx(b.summary["iteration_time_s"].get<double>()).epsilon(1e-9));
    CHECK(l.summary["comm_bytes_per_iteration"] == b.summary["comm_bytes_per_iteration"]);
  }
}

TEST_CASE("local_sgd sends 1/H of bsp's bytes per iteration after its warm-up") {
  TempDir tmp;
  const auto bsp = run(tmp, "bsp", star(4, {{"name", "bsp"}}, 12));
  const double per_iteration = bsp.summary["comm_bytes_per_iteration"].get<double>();
  const auto plain = run(tmp, "h4", star(4, {{"name", "local_sgd"}, {"params", {{"period_iterations", 4}}}}, 12));
  CHECK(plain.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(per_iteration / 4).epsilon(1e-12));
  // K = 2 warm-up iterations of bsp, then 8 local ones with H = 4: (2 + 2) averagings' worth in 10.
  const auto post = run(tmp, "post", star(4, {{"name", "local_sgd"}, {"params", {{"period_iterations", 4},
                                                                                 {"warmup_bsp_iterations", 2}}}}, 10));
  CHECK(post.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(per_iteration * 4 / 10).epsilon(1e-12));
  // A local iteration is pure compute: the first one after the warm-up takes exactly COMPUTE.
  for (const auto& row : post.rows)
    if (row.iteration == 2) CHECK(row.duration_s == doctest::Approx(COMPUTE).epsilon(1e-12));
}

TEST_CASE("gossip on a ring over a star: compute, then the model to both neighbours through one uplink") {
  TempDir tmp;
  for (const auto& [n, distinct] : {std::pair{2, false}, std::pair{2, true}, std::pair{3, false}, std::pair{3, true},
                                    std::pair{6, false}}) {
    CAPTURE(n);
    CAPTURE(distinct);
    const auto r = run(tmp, fmt::format("ring{}{}", n, distinct),
                       star(n, {{"name", "gossip"}, {"params", {{"distinct_neighbours", distinct}}}}, 3));
    // Left and right: two models per worker, also at N = 2 where both are the one other worker
    // (D-PSGD's code sends twice); with distinct_neighbours one there.
    const int peers = n == 2 && distinct ? 1 : 2;
    // Each worker's uplink carries `peers` flows and its downlink receives `peers`: each flow
    // gets BW / peers; path latency = two links.
    const double expected = COMPUTE + 2 * LAT + peers * MODEL / BW;
    for (const auto& row : r.rows) CHECK(row.duration_s == doctest::Approx(expected).epsilon(1e-9));
    CHECK(r.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(n * peers * MODEL).epsilon(1e-12));
    CHECK(r.summary["aggregation"] == "gossip");
    CHECK(r.summary["collective"] == "none");
    CHECK(r.summary["point_to_point_fidelity"] == "flow");
  }
}

TEST_CASE("gossip on an exponential graph of 16 workers sends log2(16) models per worker") {
  TempDir tmp;
  const auto r = run(tmp, "exp", star(16, {{"name", "gossip"}, {"params", {{"graph", "exponential"}}}}, 2));
  CHECK(r.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(16 * 4 * MODEL).epsilon(1e-12));
  for (const auto& row : r.rows) CHECK(row.duration_s == doctest::Approx(COMPUTE + 2 * LAT + 4 * MODEL / BW).epsilon(1e-9));
}

TEST_CASE("gossip reports the spectral gap of its ring's mixing matrix") {
  TempDir tmp;
  for (int n : {5, 6}) {
    const auto r = run(tmp, fmt::format("gap{}", n), star(n, {{"name", "gossip"}}, 1));
    double lambda2 = 0;
    for (int k = 1; k < n; ++k) lambda2 = std::max(lambda2, std::abs(1.0 / 3 + 2.0 / 3 * std::cos(2 * M_PI * k / n)));
    CHECK(r.summary["spectral_gap"].get<double>() == doctest::Approx(1 - lambda2).epsilon(1e-9));
    CHECK(r.summary["logical_graph"] == "ring");
  }
}

TEST_CASE("gossip: a slow rank's delay spreads at most one hop per iteration on a ring") {
  TempDir tmp;
  const int n = 8, iterations = 5;
  const auto base = run(tmp, "base", star(n, {{"name", "gossip"}}, iterations));
  const auto slow = run(tmp, "slow", with_slow_rank(star(n, {{"name", "gossip"}}, iterations), 0, 2.0));
  auto end_of = [](const Run& r, int w, int it) {
    for (const auto& row : r.rows)
      if (row.worker == w && row.iteration == it) return row.end_s;
    FAIL("no row");
    return 0.0;
  };
  for (int w = 0; w < n; ++w) {
    const int hops = std::min(w, n - w);
    const int first_delayed = std::max(hops - 1, 0);  // rank 0 itself at iteration 0
    for (int it = 0; it < iterations; ++it) {
      CAPTURE(w);
      CAPTURE(it);
      if (it < first_delayed)
        CHECK(end_of(slow, w, it) == doctest::Approx(end_of(base, w, it)).epsilon(1e-12));
      else if (it == first_delayed)
        CHECK(end_of(slow, w, it) > end_of(base, w, it) + 1e-3);
    }
  }
}

TEST_CASE("asynchronous gossip does not wait for neighbours and records how old their models were") {
  TempDir tmp;
  const auto r = run(tmp, "async", star(6, {{"name", "gossip"}, {"params", {{"variant", "asynchronous"}}}}, 4));
  // Compute (13 ms) exceeds sending the model to two neighbours (2 * 8 MB / 1.25 GB/s = 12.8 ms),
  // so no worker ever waits: every iteration is pure compute, and each neighbour's newest model
  // is from the previous iteration (the shared initial model counts as iteration -1).
  for (const auto& row : r.rows) CHECK(row.duration_s == doctest::Approx(COMPUTE).epsilon(1e-12));
  CHECK(r.summary["neighbour_staleness"]["count"] == 6 * 4 * 2);
  CHECK(r.summary["neighbour_staleness"]["histogram"] == json::array({{{"iterations", 1}, {"count", 6 * 4 * 2}}}));
  CHECK(r.summary["sync_settings"] ==
        json{{"graph", "ring"}, {"variant", "asynchronous"}, {"distinct_neighbours", false}});
}

TEST_CASE("gossip refuses a collective, and graphs its workers cannot form") {
  TempDir tmp;
  json s = star(4, {{"name", "gossip"}}, 1);
  s["training"]["collective"] = {{"name", "ring"}};
  auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("c.json", s.dump())));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /training/collective: sync model \"gossip\" exchanges models point to point with its "
                 "neighbours in its logical graph and runs no collective; remove \"collective\" (choose the graph "
                 "with \"params\": {\"graph\": ...})\n");
  json custom = star(4, {{"name", "gossip"}, {"params", {{"graph", "custom"}, {"edges", {{0, 1}, {1, 4}}}}}}, 1);
  r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("e.json", custom.dump())));
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("ddlsim: error: /training/sync/params/edges/1/1: ", 0) == 0);
  json torus = star(7, {{"name", "gossip"}, {"params", {{"graph", "torus2d"}}}}, 1);
  r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("t.json", torus.dump())));
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("ddlsim: error: /training/sync/params/graph: ", 0) == 0);
  CHECK(r.err.find("ring") != std::string::npos);
}

TEST_CASE("gossip follows the platform's routes: ring flows that cross a thin core link share it") {
  // Workers 0, 1 on switch s0 and 2, 3 on switch s1, the switches joined by one 2.5 Gbps link.
  // The ring 0-1-2-3-0 crosses the core with 1->2 and 0->3 one way and 2->1 and 3->0 the other:
  // two flows per direction, each at half the core's bandwidth; the model takes 2 M / B_core
  // after three links' latency, and the same-switch flows finish earlier.
  TempDir tmp;
  json nodes = json::array({{{"name", "w0"}, {"kind", "worker"}}, {{"name", "w1"}, {"kind", "worker"}},
                            {{"name", "w2"}, {"kind", "worker"}}, {{"name", "w3"}, {"kind", "worker"}},
                            {{"name", "s0"}, {"kind", "switch"}}, {{"name", "s1"}, {"kind", "switch"}}});
  json edges = json::array({{{"a", "w0"}, {"b", "s0"}}, {{"a", "w1"}, {"b", "s0"}}, {{"a", "w2"}, {"b", "s1"}},
                            {{"a", "w3"}, {"b", "s1"}}, {{"a", "s0"}, {"b", "s1"}, {"bandwidth", "2.5Gbps"}}});
  json s = star(4, {{"name", "gossip"}}, 2);
  s["platform"] = {{"topology", "custom"}, {"workers", 4}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}},
                   {"params", {{"nodes", nodes}, {"edges", edges}}}};
  const auto r = run(tmp, "core", s);
  const double core = 2.5e9 / 8;
  for (const auto& row : r.rows) CHECK(row.duration_s == doctest::Approx(COMPUTE + 3 * LAT + 2 * MODEL / core).epsilon(1e-9));
}

// ---- crossbow ----

namespace {

/// A multi-batch profile of LAYERS layers of GRAD bytes measured at batches 4, 8 and 16:
/// per layer forward f(b) and backward 2 f(b), with f = 1, 1.5, 2.5 ms (a GPU that is far from
/// full at small batches); io 0.1, 0.2, 0.4 ms; optimizer OPT at every batch.
json crossbow_profile() {
  const double f[] = {1e-3, 1.5e-3, 2.5e-3}, io[] = {0.1e-3, 0.2e-3, 0.4e-3};
  const int batches[] = {4, 8, 16};
  auto layers = [&](int i, bool top) {
    json out = json::array();
    for (int l = 0; l < LAYERS; ++l) {
      json layer = {{"name", fmt::format("layer{}", l)}, {"forward_s", f[i]}, {"backward_s", 2 * f[i]}};
      if (top) layer["grad_bytes"] = GRAD;
      out.push_back(layer);
    }
    return out;
  };
  json p = {{"model", "tiny"}, {"batch_size", batches[0]}, {"optimizer_s", OPT}, {"io_s", io[0]}, {"layers", layers(0, true)}};
  for (int i = 1; i < 3; ++i)
    p["batch_profiles"].push_back({{"batch_size", batches[i]}, {"io_s", io[i]}, {"optimizer_s", OPT}, {"layers", layers(i, false)}});
  return p;
}

json crossbow(int workers, int learners, const std::string& profile, std::int64_t batch, int iterations) {
  json s = star(workers, {{"name", "crossbow"}, {"params", {{"learners_per_gpu", learners},
                                                            {"device_memory_bandwidth", "100GBps"}}}}, iterations);
  s["workload"] = {{"profile", profile}, {"batch_size", batch}, {"iterations", iterations}};
  return s;
}

}  // namespace

TEST_CASE("crossbow with one learner per GPU costs what bsp without overlap costs, and the closed form") {
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json bsp = star(4, {{"name", "bsp"}}, 3);
    bsp["training"]["bucketing"]["overlap"] = false;
    bsp["network"]["fidelity"] = fidelity;
    json xbow = star(4, {{"name", "crossbow"}}, 3);
    xbow["network"]["fidelity"] = fidelity;
    const auto b = run(tmp, fmt::format("bsp-{}", fidelity), bsp);
    const auto c = run(tmp, fmt::format("crossbow-{}", fidelity), xbow);
    CHECK(c.summary["iteration_time_s"].get<double>() ==
          doctest::Approx(b.summary["iteration_time_s"].get<double>()).epsilon(1e-9));
    CHECK(c.summary["comm_bytes_per_iteration"] == b.summary["comm_bytes_per_iteration"]);
    CHECK(c.summary["throughput_samples_per_s"].get<double>() ==
          doctest::Approx(b.summary["throughput_samples_per_s"].get<double>()).epsilon(1e-9));
    CHECK(c.summary["sync_settings"]["learners_per_gpu"] == 1);
    CHECK(c.summary["sync_settings"]["combine_s"] == 0.0);
  }
  // One bucket, analytic: compute + call cost + ring 2 (N-1) alpha + 2 (N-1)/N M beta + optimizer,
  // alpha = two links' latency on the star.
  json one = star(4, {{"name", "crossbow"}}, 2);
  one["network"]["fidelity"] = "analytic";
  one["training"]["bucketing"]["bucket_bytes"] = "100MB";
  const auto r = run(tmp, "closed", one);
  const double n = 4, call = 10e-6;
  const double expected = COMPUTE + call + 2 * (n - 1) * 2 * LAT + 2 * (n - 1) / n * MODEL / BW;
  CHECK(r.summary["buckets_per_iteration"] == 1);
  for (const auto& row : r.rows) CHECK(row.duration_s == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("crossbow with k learners: the GPU computes the profile interpolated at k b plus the combine, and counts k b samples") {
  TempDir tmp;
  const std::string profile = tmp.write("tiny.json", crossbow_profile().dump());
  const int n = 4;
  const double bandwidth = 100e9;
  const auto one = run(tmp, "k1", crossbow(n, 1, profile, 4, 3));
  for (int k : {2, 3}) {
    CAPTURE(k);
    const auto r = run(tmp, fmt::format("k{}", k), crossbow(n, k, profile, 4, 3));
    // k b = 8 is measured, 12 lies between 8 and 16.
    const double kb = 4.0 * k;
    const double x = kb <= 8 ? (kb - 4) / 4 : (kb - 8) / 8;
    const double f = kb <= 8 ? 1e-3 + (1.5e-3 - 1e-3) * x : 1.5e-3 + (2.5e-3 - 1.5e-3) * x;
    const double io = kb <= 8 ? 0.1e-3 + 0.1e-3 * x : 0.2e-3 + 0.2e-3 * x;
    const double combine = (k - 1) * 3 * MODEL / bandwidth;
    const double compute = io + LAYERS * 3 * f + combine + k * OPT;
    CHECK(r.summary["compute_time_per_iteration_s"].get<double>() == doctest::Approx(compute).epsilon(1e-9));
    // Communication is k-independent: the same model all-reduced after the compute.
    const double comm = one.summary["iteration_time_s"].get<double>() - one.summary["compute_time_per_iteration_s"].get<double>();
    const double t = r.summary["iteration_time_s"].get<double>();
    CHECK(t == doctest::Approx(compute + comm).epsilon(1e-9));
    CHECK(r.summary["samples_per_worker_iteration"] == 4 * k);
    CHECK(r.summary["batch_size_per_worker"] == 4);
    CHECK(r.summary["throughput_samples_per_s"].get<double>() == doctest::Approx(n * kb / t).epsilon(1e-9));
    // Speedup against one GPU running the same k learners alone.
    CHECK(r.summary["single_worker_iteration_time_s"].get<double>() == doctest::Approx(compute).epsilon(1e-12));
    CHECK(r.summary["speedup"].get<double>() == doctest::Approx(n * compute / t).epsilon(1e-9));
    CHECK(r.summary["sync_settings"] == json{{"learners_per_gpu", k},
                                             {"device_memory_bandwidth_Bps", bandwidth},
                                             {"batch_size_per_learner", 4},
                                             {"samples_per_gpu_iteration", 4 * k},
                                             {"combine_s", combine},
                                             {"update_s", k * OPT}});
  }
}

TEST_CASE("crossbow refuses k > 1 on a profile measured at one batch, unless its times scale per sample") {
  TempDir tmp;
  json single = crossbow_profile();
  single.erase("batch_profiles");
  const std::string profile = tmp.write("single.json", single.dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("s.json", crossbow(2, 2, profile, 4, 1).dump())));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /training/sync/params/learners_per_gpu: 2 learners of batch 4 share a GPU as one "
                 "batch of 8, but the profile was measured at batch 4 only: give a multi-batch profile "
                 "(\"batch_profiles\", tools/profile_torch.py --batch-sizes) that covers 8, or \"batch_scaling\": "
                 "\"linear\" in the workload to scale its times per sample (then k learners take k times one "
                 "learner's time)\n");
  json linear = crossbow(2, 2, profile, 4, 2);
  linear["workload"]["batch_scaling"] = "linear";
  const auto l = run(tmp, "linear", linear);
  const double compute = 2 * (0.1e-3 + LAYERS * 3 * 1e-3) + 3 * MODEL / 100e9 + 2 * OPT;
  CHECK(l.summary["compute_time_per_iteration_s"].get<double>() == doctest::Approx(compute).epsilon(1e-9));
}
