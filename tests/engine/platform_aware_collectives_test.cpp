// Collectives that read the platform: hierarchical's G and link classes on a
// hierarchical platform (flow == analytic == the closed form derived here), its
// load-time check, and auto choosing by the contention estimate on a fat tree.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

// 2 nodes x 4 GPUs: intra-node links 2400 Gbps / 1 us, node NICs 100 Gbps / 1 us.
constexpr double INTRA_BPS = 2400e9 / 8, INTER_BPS = 100e9 / 8, LAT = 1e-6;
const char* const HIER_PARAMS = R"({"gpus_per_node":4,"intra_link":{"bandwidth":"2400Gbps","latency":"1us"}})";

/// Hierarchical all-reduce of m bytes on that platform, derived from its paths:
/// phases 1 and 3 stay in a node (2 intra links, the leader's link shared by its
/// 3 members: alpha_l + 3 M / B_intra); the leaders' ring of L = 2 crosses intra,
/// NIC, NIC, intra (alpha = 4 LAT) with one flow per link direction, 2(L-1) steps
/// of M/L over the 100 Gbps bottleneck.
/// `call`: the fixed cost of the collective call (network.collective_call_cost, 10 us by default).
double hierarchical_s(double m, double call = 10e-6) {
  const double alpha_local = 2 * LAT, alpha = 4 * LAT;
  return call + 2 * (alpha_local + 3 * m / INTRA_BPS) + 2 * (alpha + m / 2 / INTER_BPS);
}

json hierarchical_scenario(const std::string& fidelity, const json& collective_params) {
  json collective{{"name", "hierarchical"}};
  if (!collective_params.is_null()) collective["params"] = collective_params;
  return json{
      {"name", "hier"},
      {"platform",
       {{"topology", "hierarchical"},
        {"workers", 8},
        {"params", json::parse(HIER_PARAMS)},
        {"link", {{"bandwidth", "100Gbps"}, {"latency", "1us"}}}}},
      {"network", {{"fidelity", fidelity}, {"model", "ideal"}}},
      {"workload",
       {{"synthetic", {{"layers", 2}, {"forward_s", 1e-3}, {"backward_s", 2e-3}, {"grad_bytes", 50e6}, {"optimizer_s", 0}}},
        {"iterations", 2}}},
      {"training", {{"sync", {{"name", "bsp"}}}, {"collective", collective}, {"bucketing", {{"bucket_bytes", "1TB"}, {"overlap", false}}}}}};
}

json run_summary(const TempDir& tmp, const std::string& name, const json& doc, const std::string& extra = "") {
  const std::string file = tmp.write(name + ".json", doc.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet {}", file, tmp.file(name), extra));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

}  // namespace

TEST_CASE("hierarchical on a 2 x 4 GPU platform: G from the platform, flow == analytic == closed form") {
  const double m = 100.0 * 1024 * 1024;
  for (const char* granularity : {"stepwise", "pipelined"}) {
    CAPTURE(granularity);
    auto r = ddlsim::test::ddlsim(fmt::format("collectives --csv -n 8 -m 100MiB -b 100Gbps -l 1us -t hierarchical "
                                              "--topology-params '{}' --servers 0 --algorithms hierarchical --granularity {}",
                                              HIER_PARAMS, granularity));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto csv = ddlsim::test::Csv::parse(r.out);
    REQUIRE(!csv.rows.empty());
    REQUIRE(csv.rows[0].size() == 9);
    CHECK(csv.at(0, "algorithm") == "hierarchical");
    CHECK(csv.number(0, "analytic_time_s") == doctest::Approx(hierarchical_s(m)).epsilon(1e-6));
    CHECK(csv.number(0, "simulated_time_s") == doctest::Approx(hierarchical_s(m)).epsilon(1e-6));
  }

  // A training run: one 100 MB bucket, no overlap: iteration = compute + T_hier, both fidelities.
  TempDir tmp;
  const double compute = 2 * (1e-3 + 2e-3);
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    const json s = run_summary(tmp, fidelity, hierarchical_scenario(fidelity, nullptr));
    CHECK(s["iteration_time_s"].get<double>() == doctest::Approx(compute + hierarchical_s(100e6)).epsilon(1e-6));
    CHECK(s["analytic_local_alpha_s"].get<double>() == doctest::Approx(2 * LAT));
    CHECK(s["analytic_local_beta_s_per_byte"].get<double>() == doctest::Approx(1 / INTRA_BPS));
    CHECK(s["analytic_alpha_s"].get<double>() == doctest::Approx(4 * LAT));
    CHECK(s["analytic_beta_s_per_byte"].get<double>() == doctest::Approx(1 / INTER_BPS));
    CHECK_FALSE(s.contains("collective_choices"));  // hierarchical is not a meta-algorithm
  }
  // The param may repeat the platform's G.
  const json same = run_summary(tmp, "same", hierarchical_scenario("analytic", json{{"gpus_per_node", 4}}));
  CHECK(same["iteration_time_s"].get<double>() == doctest::Approx(compute + hierarchical_s(100e6)).epsilon(1e-6));
}

TEST_CASE("hierarchical: a gpus_per_node that contradicts the platform is refused at load time") {
  TempDir tmp;
  const std::string file = tmp.write("bad.json", hierarchical_scenario("flow", json{{"gpus_per_node", 8}}).dump());
  for (const std::string& command : {"validate " + file, "run " + file + " --quiet --out " + tmp.file("out")}) {
    auto r = ddlsim::test::ddlsim(command);
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "ddlsim: error: /training/collective/params/gpus_per_node: gpus_per_node = 8 contradicts the platform's 4 "
          "GPUs per node (the hierarchical topology's gpus_per_node); leave it out to use the platform's\n");
  }
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "out"));
}

TEST_CASE("auto on a k = 6 fat tree, 32 workers, ResNet-50: picks by contention, at least as fast as ring") {
  TempDir tmp;
  const std::string scenario = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/resnet50_bsp_ring_25gbps.json";
  auto run = [&](const std::string& collective, const std::string& routing) {
    const std::string name = collective + "-" + routing;
    auto r = ddlsim::test::ddlsim(fmt::format(
        "run {} --set platform.topology=fat_tree --set platform.params='{{\"k\":6}}' --set platform.workers=32 "
        "--set platform.routing={} --set workload.iterations=5 --set training.collective.name={} --out {} --quiet",
        scenario, routing, collective, tmp.file(name)));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
  };
  // With one shortest path per pair, direct's all-to-all collides on the core (the issue's case);
  // with ECMP it spreads. Either way auto must price what the platform does.
  json automatic, ring;
  for (const std::string routing : {"ecmp", "shortest"}) {  // ends with the issue's case, checked below
    CAPTURE(routing);
    const json direct = run("direct", routing);
    ring = run("ring", routing);
    automatic = run("auto", routing);
    const double s_ring = ring["speedup"].get<double>(), s_auto = automatic["speedup"].get<double>(),
                 s_direct = direct["speedup"].get<double>();
    MESSAGE(fmt::format("speedup on a k=6 fat tree, 32 workers, {} routing: ring {:.4g}, auto {:.4g}, direct {:.4g}",
                        routing, s_ring, s_auto, s_direct));
    CHECK(s_auto >= std::max(s_ring, s_direct) * 0.99);
    if (routing == "shortest") CHECK(s_auto > 2 * s_direct);
  }
  REQUIRE(automatic.contains("collective_choices"));
  const auto& choices = automatic["collective_choices"];
  CHECK(choices.size() >= 1);
  double previous = 0;
  for (const auto& c : choices) {
    CAPTURE(c.dump());
    CHECK(c["algorithm"] != "direct");
    CHECK(c["basis"] == "contention estimate");
    CHECK(c["estimated_s"].get<double>() > 0);
    CHECK(c["bucket_bytes"].get<double>() > previous);  // distinct sizes, ascending
    previous = c["bucket_bytes"].get<double>();
  }
  CHECK_FALSE(ring.contains("collective_choices"));
}

TEST_CASE("auto on the uniform star keeps the closed forms and records that basis") {
  TempDir tmp;
  const std::string scenario = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/resnet50_bsp_ring_25gbps.json";
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --set workload.iterations=2 --set training.collective.name=auto "
                                            "--out {} --quiet",
                                            scenario, tmp.file("star")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json s = json::parse(ddlsim::test::slurp(tmp.path() / "star" / "summary.json"));
  REQUIRE(s.contains("collective_choices"));
  for (const auto& c : s["collective_choices"]) {
    CHECK(c["algorithm"] == "direct");  // the ideal star's winner for N >= 3 (docs/collectives.md)
    CHECK(c["basis"] == "closed form");
  }
}

TEST_CASE("hierarchical with node_phase chain and leaders halving_doubling on 4 x 4 GPUs: flow == analytic == closed form") {
  // 4 nodes of 4. Chain phases: k = 100e6 / 25e6 = 4 chunks, (G - 1 + k - 1) = 6 slots, each one
  // member-to-member flow over two intra links (alpha_l = 2 LAT); every intra link direction carries
  // one flow per slot. Leaders: halving/doubling over L = 4, levels M/2 and M/4, each twice, over
  // intra, NIC, NIC, intra (alpha = 4 LAT), one flow per NIC direction.
  const double m = 100e6, compute = 2 * (1e-3 + 2e-3), call = 10e-6;
  const double chain = 6 * (2 * LAT + m / 4 / INTRA_BPS);
  const double leaders = 2 * (4 * LAT + m / 2 / INTER_BPS) + 2 * (4 * LAT + m / 4 / INTER_BPS);
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json doc = hierarchical_scenario(
        fidelity, json{{"node_phase", "chain"}, {"node_chunk_bytes", 25e6}, {"leaders", "halving_doubling"}});
    doc["platform"]["workers"] = 16;
    const json s = run_summary(tmp, fidelity, doc);
    CHECK(s["iteration_time_s"].get<double>() == doctest::Approx(compute + call + 2 * chain + leaders).epsilon(1e-6));
  }
}
