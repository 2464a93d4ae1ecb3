// engine/fluid_ps.cpp: parameter-server pushes and pulls on the fluid links give SimGrid's own
// sharing. Each case runs twice, network.push_pull_solver "auto" (the fluid links) and "simgrid"
// (SimGrid's LMM, the straightforward path), and compares every worker's every iteration. The
// workers' compute has noise, so that no two flows end at the same instant: where they do
// (identical workers in lockstep), SimGrid orders them by its solver's rounding and the fluid
// links by their start (docs/engine.md, "Parameter-server traffic on the fluid links").
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <string>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

json platform_of(const std::string& topology, int workers, int servers) {
  if (topology == "fat_tree")
    return {{"topology", "fat_tree"}, {"workers", workers}, {"parameter_servers", servers},
            {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}, {"params", {{"k", 4}, {"oversubscription", 2}}}};
  if (topology == "uneven_star") {
    // one switch; every worker's link its own bandwidth and latency, the servers' their own
    json nodes = json::array({{{"name", "sw"}, {"kind", "switch"}}});
    json edges = json::array();
    for (int w = 0; w < workers; ++w) {
      nodes.push_back({{"name", fmt::format("w{}", w)}, {"kind", "worker"}});
      edges.push_back({{"a", fmt::format("w{}", w)}, {"b", "sw"}, {"bandwidth", fmt::format("{}Gbps", 2 + 3 * (w % 4))},
                       {"latency", fmt::format("{}us", 2 + 7 * (w % 3))}});
    }
    for (int s = 0; s < servers; ++s) {
      nodes.push_back({{"name", fmt::format("ps{}", s)}, {"kind", "server"}});
      edges.push_back({{"a", fmt::format("ps{}", s)}, {"b", "sw"}, {"bandwidth", fmt::format("{}Gbps", 10 + 5 * s)},
                       {"latency", "3us"}});
    }
    return {{"topology", "custom"}, {"workers", workers}, {"parameter_servers", servers},
            {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}, {"params", {{"nodes", nodes}, {"edges", edges}}}};
  }
  return {{"topology", "star"}, {"workers", workers}, {"parameter_servers", servers},
          {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}};
}

json scenario(const json& sync, const std::string& topology, const json& network, int workers, int servers) {
  return json{{"name", "fluid"},
              {"platform", platform_of(topology, workers, servers)},
              {"network", network},
              {"workload", {{"synthetic", {{"layers", 6}, {"forward_s", "1ms"}, {"backward_s", "2ms"},
                                           {"grad_bytes", "3MB"}, {"optimizer_s", "1ms"}}},
                            {"iterations", 6}}},
              {"training", {{"sync", sync},
                            {"bucketing", {{"bucket_bytes", "6MB"}, {"overlap", true}}},
                            {"stragglers", {{"distribution", "lognormal"}, {"sigma", 0.2}}}}},
              {"output", {{"timeline", false}}}};
}

struct Run {
  json summary;
  ddlsim::test::Csv rows;
};

Run run(const TempDir& tmp, const std::string& name, json sc, const std::string& solver) {
  sc["network"]["push_pull_solver"] = solver;
  const std::string file = tmp.write(name + ".json", sc.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Run{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")),
             ddlsim::test::Csv::read(tmp.path() / name / "iterations.csv")};
}

void check_same(const Run& fluid, const Run& lmm) {
  REQUIRE(fluid.rows.size() == lmm.rows.size());
  for (std::size_t i = 0; i < fluid.rows.size(); ++i)
    for (const char* column : {"start_s", "end_s", "duration_s", "exposed_comm_s", "comm_busy_s", "staleness_wait_s"}) {
      CAPTURE(i);
      CAPTURE(column);
      CHECK(fluid.rows.number(i, column) == doctest::Approx(lmm.rows.number(i, column)).epsilon(1e-4));
    }
  CHECK(fluid.summary["iteration_time_s"].get<double>() ==
        doctest::Approx(lmm.summary["iteration_time_s"].get<double>()).epsilon(1e-4));
}

}  // namespace

TEST_CASE("pushes and pulls on the fluid links end when SimGrid's LMM ends them: every server model, topology, network model and library") {
  const std::string trace = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/traces/eventgrad_cnn_selsync_4w.json";
  const json syncs = json::array({
      {{"name", "asp"}},
      {{"name", "ssp"}, {"params", {{"staleness_bound", 1}}}},
      {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}},
      {{"name", "ordered_gradients"}, {"params", {{"decisions", "surrogate"}, {"m", 2}}}},
  });
  const json networks = json::array({
      {{"fidelity", "flow"}},
      {{"fidelity", "analytic"}, {"model", "calibrated"}, {"latency_factor", 1.7}, {"bandwidth_factor", 0.8}},
      {{"fidelity", "flow"}, {"software", "gloo"}},
      {{"fidelity", "flow"}, {"software", "nccl_ll"}},  // a credit protocol: every flow has its own rate cap
  });
  TempDir tmp;
  int n = 0;
  for (const auto& sync : syncs)
    for (const std::string topology : {"star", "uneven_star", "fat_tree"})
      for (std::size_t k = 0; k < 2; ++k) {
        const json& network = networks[(static_cast<std::size_t>(n) + k) % networks.size()];
        const int workers = topology == "fat_tree" ? 12 : 4 + 3 * (n % 3);
        const int servers = 1 + n % 3;
        const json sc = scenario(sync, topology, network, workers, servers);
        CAPTURE(sc.dump());
        const Run fluid = run(tmp, fmt::format("f{}", n), sc, "auto");
        const Run lmm = run(tmp, fmt::format("s{}", n), sc, "simgrid");
        CHECK(fluid.summary["push_pull_solver"] == "fluid");
        CHECK_FALSE(fluid.summary.contains("push_pull_solver_reason"));
        CHECK(lmm.summary["push_pull_solver"] == "simgrid");
        CHECK(lmm.summary["push_pull_solver_reason"] == "network.push_pull_solver is \"simgrid\"");
        check_same(fluid, lmm);
        ++n;
      }
}

TEST_CASE("the fluid links are left to SimGrid where they would not share as it does, and summary.json says why") {
  const json ssp = {{"name", "ssp"}, {"params", {{"staleness_bound", 1}}}};
  TempDir tmp;
  struct Case {
    json network;
    std::string extra;
    std::string reason;
  };
  const Case cases[] = {
      {{{"model", "tcp"}}, "", "network.model \"tcp\" (LV08 weighs flows by their links' bandwidths and adds cross traffic)"},
      {{{"link_traces", json::array({{{"links", {"worker-0<->switch-0"}},
                                      {"bandwidth", json::array({json::array({0, "10Gbps"}), json::array({0.005, "1Gbps"})})}}})}},
       "",
       "link traces"},
      {json::object(), "--cfg=network/crosstraffic:1", "SimGrid option --cfg=network/crosstraffic:1"},
  };
  int i = 0;
  for (const auto& c : cases) {
    json sc = scenario(ssp, "star", c.network, 4, 2);
    sc["network"]["push_pull_solver"] = "auto";
    const std::string file = tmp.write(fmt::format("c{}.json", i), sc.dump());
    auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet {}", file, tmp.file(fmt::format("c{}", i)), c.extra));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const json summary = json::parse(ddlsim::test::slurp(tmp.path() / fmt::format("c{}", i) / "summary.json"));
    CHECK(summary["push_pull_solver"] == "simgrid");
    CHECK(summary["push_pull_solver_reason"] == c.reason);
    ++i;
  }
}

TEST_CASE("a server's NIC shared by N identical pushes: each ends at N x shard / bandwidth after the latency") {
  // bsp on one server, no overlap, one bucket: all N pushes start together and share the
  // server's down link; then the N pulls share its up link. First principles, no SimGrid.
  constexpr int N = 16;
  constexpr double LAT = 5e-6, BW = 10e9 / 8, GRAD = 6 * 3e6;
  json sc = scenario({{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}}, "star", {{"fidelity", "flow"}}, N, 1);
  sc["training"].erase("stragglers");
  sc["training"]["bucketing"] = {{"bucket_bytes", "100MB"}, {"overlap", false}};
  sc["workload"]["iterations"] = 2;
  TempDir tmp;
  const Run fluid = run(tmp, "f", sc, "auto");
  const double compute = 6 * (1e-3 + 2e-3);
  const double optimizer = 1e-3;  // the model's optimizer step, on the server
  // push: 2 latencies (worker's link, server's link) + N x GRAD / BW; the server's update; pull: the same
  const double transfer = 2 * LAT + N * GRAD / BW;
  for (std::size_t i = 0; i < fluid.rows.size(); ++i) {
    if (fluid.rows.integer(i, "iteration") != 1) continue;
    CHECK(fluid.rows.number(i, "duration_s") == doctest::Approx(compute + transfer + optimizer + transfer).epsilon(1e-9));
  }
  CHECK(fluid.summary["push_pull_solver"] == "fluid");
}
