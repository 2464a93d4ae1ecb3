// Compressors in the trace replay: what goes on the wire and what it costs, derived
// here from the collectives' closed forms on an uncontended star.
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr int N = 4, LAYERS = 4;
constexpr double LAT = 1e-6, ALPHA = 2 * LAT, BW = 10e9 / 8, BUCKET = 25e6, BWD = 2e-3, FWD = 1e-3;
constexpr double ENC = 1e-10, DEC = 2e-10;  // s per dense element (given in the scenario)

json scenario(const std::string& compressor, const std::string& collective, const json& params = json::object()) {
  json training = {{"sync", {{"name", "bsp"}}},
                   {"collective", {{"name", collective}}},
                   {"bucketing", {{"bucket_bytes", "25MB"}, {"overlap", false}}}};
  if (compressor != "none") {
    training["compressor"] = {{"name", compressor}, {"params", params}};
    training["compression_cost"] = {{"encode", {{"per_element_s", ENC}}}, {"decode", {{"per_element_s", DEC}}}};
  }
  return json{{"name", "c"},
              {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"network", {{"fidelity", "flow"}, {"collective_granularity", "pipelined"}, {"collective_call_cost", "0s"}}},
              {"workload", {{"synthetic", {{"layers", LAYERS}, {"forward_s", "1ms"}, {"backward_s", "2ms"}, {"grad_bytes", "25MB"}}},
                            {"iterations", 2}}},
              {"training", training},
              {"output", {{"timeline", true}}}};
}

struct Run {
  json summary, timeline;
};

Run run(const TempDir& tmp, const std::string& name, const json& s) {
  const auto file = tmp.write(name + ".json", s.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Run{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")),
             json::parse(ddlsim::test::slurp(tmp.path() / name / "timeline.json"))};
}

double ring(double bytes) { return 2.0 * (N - 1) * ALPHA + 2.0 * (N - 1) / N * bytes / BW; }

std::string refused(const json& s) {
  TempDir tmp;
  auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("s.json", s.dump())));
  CHECK(r.exit_code == 2);
  return r.err;
}

}  // namespace

TEST_CASE("fp16 halves the all-reduce's bytes and time, and its casts run on the compute stream") {
  TempDir tmp;
  const auto dense = run(tmp, "dense", scenario("none", "ring"));
  const auto half = run(tmp, "half", scenario("fp16", "ring"));
  CHECK(half.summary["comm_bytes_per_iteration"].get<double>() ==
        doctest::Approx(dense.summary["comm_bytes_per_iteration"].get<double>() / 2).epsilon(1e-12));
  // Without overlap: backward, then bucket by bucket: encode, all-reduce (the next encode runs
  // under it), then every decode. Encode and decode cost per_element_s * (25 MB / 4) each.
  const double n = BUCKET / 4, compute = LAYERS * (FWD + BWD);
  CHECK(dense.summary["iteration_time_s"].get<double>() == doctest::Approx(compute + LAYERS * ring(BUCKET)).epsilon(1e-9));
  CHECK(half.summary["iteration_time_s"].get<double>() ==
        doctest::Approx(compute + ENC * n + LAYERS * ring(BUCKET / 2) + LAYERS * DEC * n).epsilon(1e-9));
  CHECK(half.summary["compression"]["compression_ratio"].get<double>() == 0.5);
  CHECK(half.summary["compression"]["encode_time_per_iteration_s"].get<double>() == doctest::Approx(LAYERS * ENC * n));
  int encodes = 0, decodes = 0;
  for (const auto& e : half.timeline["traceEvents"]) {
    if (!e.contains("cat")) continue;
    if (e["cat"] == "encode") {
      ++encodes;
      CHECK(e["tid"] == 0);
      CHECK(e["dur"].get<double>() == doctest::Approx(ENC * n * 1e6));
    }
    if (e["cat"] == "decode") ++decodes;
  }
  CHECK(encodes == N * 2 * LAYERS);  // timeline: 4 workers (all shown), 2 iterations, 4 buckets
  CHECK(decodes == encodes);
}

TEST_CASE("top-k runs as an all-gather of every worker's values and indices") {
  TempDir tmp;
  const auto r = run(tmp, "topk", scenario("topk", "ring_allgather", {{"ratio", 0.01}}));
  const double n = BUCKET / 4, k = 0.01 * n, wire = 8 * k;
  // All-gather of N encodings of `wire` bytes: (N-1) alpha + (N-1) wire beta; decode all N.
  const double gather = (N - 1) * ALPHA + (N - 1) * wire / BW;
  const double expected = LAYERS * (FWD + BWD) + ENC * n + (LAYERS - 1) * std::max(gather, ENC * n) + gather +
                          LAYERS * N * DEC * n;
  CHECK(r.summary["iteration_time_s"].get<double>() == doctest::Approx(expected).epsilon(1e-9));
  CHECK(r.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(N * LAYERS * (N - 1) * wire).epsilon(1e-12));
  CHECK(r.summary["compression"]["wire_bytes_per_worker_iteration"].get<double>() == LAYERS * wire);
  CHECK(r.summary["compression"]["aggregation"] == "gather");
  CHECK(r.summary["compression"]["error_feedback_memory_bytes"].get<double>() == LAYERS * BUCKET);
  // "auto" takes the cheaper all-gather: Bruck's, log2(N) = 2 latencies against the ring's N - 1 = 3.
  const auto bruck = run(tmp, "bruck", scenario("topk", "bruck_allgather", {{"ratio", 0.01}}));
  CHECK(bruck.summary["iteration_time_s"].get<double>() ==
        doctest::Approx(r.summary["iteration_time_s"].get<double>() - LAYERS * ALPHA).epsilon(1e-9));
  const auto a = run(tmp, "auto", scenario("topk", "auto", {{"ratio", 0.01}}));
  CHECK(a.summary["collective"] == "auto");
  CHECK(a.summary["collective_choices"][0]["algorithm"] == "bruck_allgather");
  CHECK(a.summary["iteration_time_s"] == bruck.summary["iteration_time_s"]);
}

TEST_CASE("compressors refuse what they cannot be used with, naming the alternatives") {
  CHECK(refused(scenario("topk", "ring")) ==
        "ddlsim: error: /training/collective/name: compressor \"topk\" sends every worker's own encoding (int32 index + "
        "fp32 value per kept element), which cannot be summed in transit; \"ring\" is an allreduce algorithm: use an "
        "all-gather (bruck_allgather, ring_allgather) or \"auto\"\n");
  CHECK(refused(scenario("fp16", "ring_allgather")) ==
        "ddlsim: error: /training/collective/name: compressor \"fp16\" is summed in transit: use an all-reduce "
        "algorithm, not the allgather algorithm \"ring_allgather\"\n");
  json no_cost = scenario("fp16", "ring");
  no_cost["training"].erase("compression_cost");
  CHECK(refused(no_cost).rfind("ddlsim: error: /training/compression_cost: compressor \"fp16\" needs its encode and "
                               "decode costs: ",
                               0) == 0);
  json gossip = scenario("fp16", "ring");
  gossip["training"]["sync"] = {{"name", "gossip"}};
  gossip["training"].erase("collective");
  CHECK(refused(gossip) == "ddlsim: error: /training/compressor/name: sync model \"gossip\" does not compress what it "
                           "sends yet; compressors apply to the gradient buckets of \"bsp\", \"asp\" and \"ssp\"\n");
  json table = scenario("powersgd", "ring");
  table["training"]["compression_cost"] = {{"table", std::string(DDLSIM_SOURCE_DIR) + "/scenarios/compressor_costs/v100_gravac.json"}};
  CHECK(refused(table).find("has no costs for compressor \"powersgd\"; it has: dgc, randomk, redsync, topk") !=
        std::string::npos);
}

TEST_CASE("artopk runs the seed's AR-Topk collectives, rotating the selecting worker") {
  TempDir tmp;
  const double n = BUCKET / 4, k = 0.01 * n, mc = 4 * k;  // M_c: one worker's k fp32 values
  const int L = 2;                                        // log2 N
  const double t_ring = ALPHA * (2 * (N - 1) + L) + mc / BW * (2.0 * (N - 1) / N + L);
  const double t_tree = 3 * ALPHA * L + 3 * mc / BW * L;
  const double compute = LAYERS * (FWD + BWD), enc = ENC * n, dec = LAYERS * DEC * n;  // one decode per bucket
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json ring = scenario("artopk", "artopk_ring", {{"ratio", 0.01}});
    ring["network"]["fidelity"] = fidelity;
    const auto r = run(tmp, std::string("ring-") + fidelity, ring);
    CHECK(r.summary["iteration_time_s"].get<double>() ==
          doctest::Approx(compute + enc + LAYERS * std::max(t_ring, enc) + dec).epsilon(1e-9));
  }
  json tree = scenario("artopk", "artopk_tree", {{"ratio", 0.01}, {"selection", "var"}});
  const auto t = run(tmp, "tree", tree);
  CHECK(t.summary["iteration_time_s"].get<double>() ==
        doctest::Approx(compute + enc + LAYERS * std::max(t_tree, enc) + dec).epsilon(1e-9));
  // "auto" follows the seed's inequalities: here the ring (t_ring < t_tree and < the all-gather).
  const auto a = run(tmp, "auto", scenario("artopk", "auto", {{"ratio", 0.01}}));
  CHECK(a.summary["collective_choices"][0]["algorithm"] == "artopk_ring");
  CHECK(a.summary["collective_choices"][0]["estimated_s"].get<double>() == doctest::Approx(t_ring).epsilon(1e-12));
  // Bytes: per bucket, the index broadcast's (N - 1) M_c plus the ring's 2 (N - 1) / N M_c per worker,
  // whichever worker selects (STAR rotates it every iteration).
  CHECK(a.summary["comm_bytes_per_iteration"].get<double>() ==
        doctest::Approx(LAYERS * ((N - 1) * mc + N * 2.0 * (N - 1) / N * mc)).epsilon(1e-12));
}

TEST_CASE("artopk STAR selection rotates the broadcaster: a slow worker costs most when it selects") {
  // Worker 0 on a 1 Gbps link, the others on 10 Gbps: when worker 0 selects (iterations 0 and 4),
  // its uplink carries the index broadcast's first and second messages; when another selects,
  // worker 0 receives the indices once.
  TempDir tmp;
  json s = scenario("artopk", "artopk_ring", {{"ratio", 0.01}});
  json nodes = json::array(), edges = json::array();
  for (int i = 0; i < N; ++i) {
    nodes.push_back({{"name", fmt::format("w{}", i)}, {"kind", "worker"}});
    json e = {{"a", fmt::format("w{}", i)}, {"b", "sw"}};
    if (i == 0) e["bandwidth"] = "1Gbps";
    edges.push_back(e);
  }
  nodes.push_back({{"name", "sw"}, {"kind", "switch"}});
  s["platform"] = {{"topology", "custom"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}},
                   {"params", {{"nodes", nodes}, {"edges", edges}}}};
  s["workload"]["iterations"] = 5;
  const auto file = tmp.write("het.json", s.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file("het")));
  REQUIRE(r.exit_code == 0);
  std::map<int, double> worker1;  // iteration -> duration of worker 1
  const auto csv = ddlsim::test::Csv::read(tmp.path() / "het" / "iterations.csv");
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.at(i, "worker") == "1") worker1[csv.integer(i, "iteration")] = csv.number(i, "duration_s");
  CHECK(worker1[0] > worker1[1] * 1.05);
  CHECK(worker1[0] == doctest::Approx(worker1[4]).epsilon(1e-12));  // period N
  CHECK(worker1[1] == doctest::Approx(worker1[2]).epsilon(1e-12));
}

TEST_CASE("parameter servers take compressed pushes, decode each one and answer with dense parameters") {
  // One 25 MB bucket, one server on the star, no overlap. Pushes share the server's link, so
  // fp16 saves N (M - M/2) / B there; each worker encodes (n ENC) before pushing; the server
  // decodes the N pushes one after another (n DEC each); the pulls stay dense.
  TempDir tmp;
  const double m = 25e6, n = m / 4;
  auto ps = [](const json& compressor, const std::string& sync) {
    json s = scenario("none", "ring");
    s["workload"]["synthetic"]["layers"] = 1;
    s["platform"]["parameter_servers"] = 1;
    s["training"].erase("collective");
    s["training"]["sync"] = sync == "bsp" ? json{{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}}
                                          : json{{"name", sync}};
    if (!compressor.is_null()) {
      s["training"]["compressor"] = compressor;
      s["training"]["compression_cost"] = {{"encode", {{"per_element_s", ENC}}}, {"decode", {{"per_element_s", DEC}}}};
    }
    return s;
  };
  const auto dense = run(tmp, "ps-dense", ps(nullptr, "bsp")).summary;
  const auto half = run(tmp, "ps-fp16", ps({{"name", "fp16"}}, "bsp")).summary;
  CHECK(half["iteration_time_s"].get<double>() ==
        doctest::Approx(dense["iteration_time_s"].get<double>() + ENC * n + N * DEC * n - N * (m / 2) / BW).epsilon(1e-9));
  CHECK(dense["comm_bytes_per_iteration"].get<double>() == doctest::Approx(N * m + N * m).epsilon(1e-12));
  CHECK(half["comm_bytes_per_iteration"].get<double>() == doctest::Approx(N * m / 2 + N * m).epsilon(1e-12));
  CHECK(half["compression"]["aggregation"] == "push");
  // asp with top-k at 1 %: each worker pushes k values and indices, and pulls the dense shard.
  const auto asp = run(tmp, "asp-topk", ps({{"name", "topk"}, {"params", {{"ratio", 0.01}}}}, "asp")).summary;
  CHECK(asp["comm_bytes_per_iteration"].get<double>() == doctest::Approx(N * 8 * (0.01 * n) + N * m).epsilon(1e-12));
  CHECK(refused(ps({{"name", "artopk"}}, "ssp")).find(
            "/training/compressor/name: compressor \"artopk\" all-reduces every worker's values at one worker's top-k "
            "indices; sync model \"ssp\" pushes to parameter servers: use \"topk\"") != std::string::npos);
}

TEST_CASE("powersgd all-reduces P and then Q: two dependent rounds, each with its latency terms") {
  // 16 ranks on a star of 1 ms links (alpha = 2 ms), one 4 MB bucket: n = 10^6 elements as a
  // 1000 x 1000 matrix, rank 4: P and Q are 16,000 bytes each. The ring runs once per factor:
  // 2 x 2 (N - 1) alpha of latency (120 ms, not 60) and 2 x 2 (N - 1) messages per rank (960 in all).
  TempDir tmp;
  const int n = 16;
  const double alpha = 2e-3, p = 4.0 * 4 * 1000, q = p;
  auto ring16 = [&](double bytes) { return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / BW; };
  for (const char* fidelity : {"flow", "analytic"})
    for (const char* granularity : {"stepwise", "pipelined"}) {
      CAPTURE(fidelity);
      CAPTURE(granularity);
      json s = scenario("powersgd", "ring", {{"rank", 4}});
      s["platform"]["workers"] = n;
      s["platform"]["link"]["latency"] = "1ms";
      s["network"]["fidelity"] = fidelity;
      s["network"]["collective_granularity"] = granularity;
      s["workload"] = {{"synthetic", {{"layers", 1}, {"forward_s", 0}, {"backward_s", 0}, {"grad_bytes", "4MB"}}},
                       {"iterations", 1}};
      s["training"]["bucketing"] = {{"bucket_bytes", "4MB"}, {"overlap", false}};
      s["training"]["compression_cost"] = {{"encode", json::object()}, {"decode", json::object()}};
      const auto r = run(tmp, std::string(fidelity) + granularity, s);
      CHECK(r.summary["iteration_time_s"].get<double>() == doctest::Approx(ring16(p) + ring16(q)).epsilon(1e-9));
      CHECK(r.summary["comm_bytes_per_iteration"].get<double>() ==
            doctest::Approx(n * 2.0 * (n - 1) / n * (p + q)).epsilon(1e-12));
      if (std::string(granularity) == "stepwise")
        CHECK(r.summary["messages_per_iteration"].get<double>() == doctest::Approx(n * 2.0 * 2 * (n - 1)));
      // Each round is an all-reduce call of its own: two launches.
      s["network"]["collective_call_cost"] = "20us";
      const auto called = run(tmp, std::string(fidelity) + granularity + "call", s);
      CHECK(called.summary["iteration_time_s"].get<double>() ==
            doctest::Approx(2 * 20e-6 + ring16(p) + ring16(q)).epsilon(1e-9));
    }
}

TEST_CASE("powersgd with parameter servers is refused: its rounds are modelled on all-reduce") {
  json s = scenario("powersgd", "ring");
  s["training"].erase("collective");
  s["training"]["sync"] = {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}};
  s["platform"]["parameter_servers"] = 1;
  CHECK(refused(s) ==
        "ddlsim: error: /training/compressor/name: compressor \"powersgd\" sends each bucket in dependent rounds "
        "(PowerSGD: P, then Q computed from the reduced P), modelled on all-reduce only; sync model \"bsp\" pushes to "
        "parameter servers: use \"bsp\" with \"aggregation\": \"allreduce\"\n");
}
