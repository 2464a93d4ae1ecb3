// First end-to-end simulation: BSP + ring all-reduce on a star.
//
// Expectation derived here, not read from the simulator: one BSP iteration is
//   t = t_io + t_fwd + t_bwd + t_opt + c + 2(N-1) alpha + 2(N-1)/N * M * beta
// (c: the fixed cost of one collective call, network.collective_call_cost,
// 10 us by default; none for N = 1, where there is nothing to all-reduce)
// where on a star every host-to-host path crosses two links, so
// alpha = 2 * link latency, and beta = 1 / link bandwidth (bytes/s).
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double BANDWIDTH_BPS = 10e9 / 8;  // 10 Gbps
constexpr double LATENCY_S = 5e-6;          // per link
constexpr int LAYERS = 7;
constexpr double FWD_S = 0.5e-3, BWD_S = 1.25e-3, OPT_S = 3e-3, IO_S = 1e-3;
constexpr double GRAD_BYTES_PER_LAYER = 1'234'567;  // deliberately not divisible by N

json scenario(int workers, const std::string& fidelity, const std::string& granularity) {
  return json{
      {"name", "e2e"},
      {"platform", {{"topology", "star"}, {"workers", workers}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "5us"}}}}},
      {"network", {{"fidelity", fidelity}, {"model", "ideal"}, {"collective_granularity", granularity}}},
      {"workload",
       {{"synthetic",
         {{"layers", LAYERS}, {"forward_s", FWD_S}, {"backward_s", BWD_S}, {"grad_bytes", GRAD_BYTES_PER_LAYER},
          {"optimizer_s", OPT_S}, {"io_s", IO_S}}},
        {"batch_size", 16},
        {"iterations", 3}}},
      {"training",
       {{"sync", {{"name", "bsp"}}},
        {"collective", {{"name", "ring"}}},
        {"bucketing", {{"bucket_bytes", "1TB"}, {"overlap", false}}}}}};
}

json run(const TempDir& tmp, int workers, const std::string& fidelity, const std::string& granularity) {
  const std::string name = fmt::format("s-{}-{}-{}", workers, fidelity, granularity);
  const std::string file = tmp.write(name + ".json", scenario(workers, fidelity, granularity).dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json"));
}

double closed_form(int n) {
  const double alpha = 2 * LATENCY_S;
  const double beta = 1.0 / BANDWIDTH_BPS;
  const double m = LAYERS * GRAD_BYTES_PER_LAYER;
  const double compute = IO_S + LAYERS * (FWD_S + BWD_S) + OPT_S;
  const double call = n > 1 ? 10e-6 : 0.0;
  return compute + call + 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * m * beta;
}

}  // namespace

TEST_CASE("BSP ring on a star: flow == analytic == closed form") {
  TempDir tmp;
  for (int n : {1, 2, 3, 4, 7, 8, 16}) {
    CAPTURE(n);
    const double expected = closed_form(n);
    const json flow = run(tmp, n, "flow", "stepwise");
    const json pipelined = run(tmp, n, "flow", "pipelined");
    const json analytic = run(tmp, n, "analytic", "stepwise");
    CHECK(flow["iteration_time_s"].get<double>() == doctest::Approx(expected).epsilon(1e-6));
    CHECK(pipelined["iteration_time_s"].get<double>() == doctest::Approx(expected).epsilon(1e-6));
    CHECK(analytic["iteration_time_s"].get<double>() == doctest::Approx(expected).epsilon(1e-6));
    CHECK(flow["fidelity"] == "flow");
    CHECK(flow["collective_granularity"] == "stepwise");
    CHECK(pipelined["collective_granularity"] == "pipelined");
    CHECK(analytic["fidelity"] == "analytic");
    CHECK(flow["network_model"] == "ideal");
    // Ring all-reduce puts 2(N-1)/N * M on the wire per rank.
    const double m = LAYERS * GRAD_BYTES_PER_LAYER;
    CHECK(flow["comm_bytes_per_iteration"].get<double>() == doctest::Approx(2.0 * (n - 1) * m).epsilon(1e-9));
    CHECK(analytic["comm_bytes_per_iteration"].get<double>() == doctest::Approx(2.0 * (n - 1) * m).epsilon(1e-9));
    CHECK(flow["messages_per_iteration"].get<double>() == doctest::Approx(2.0 * n * (n - 1)));
    // Throughput, speedup and efficiency follow from the iteration time.
    const double single = IO_S + LAYERS * (FWD_S + BWD_S) + OPT_S;
    CHECK(flow["throughput_samples_per_s"].get<double>() == doctest::Approx(n * 16 / expected).epsilon(1e-6));
    CHECK(flow["speedup"].get<double>() == doctest::Approx(n * single / expected).epsilon(1e-6));
    CHECK(flow["scaling_efficiency"].get<double>() == doctest::Approx(single / expected).epsilon(1e-6));
  }
}

TEST_CASE("same scenario and seed give byte-identical summaries") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", scenario(5, "flow", "stepwise").dump());
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file("a"))).exit_code == 0);
  REQUIRE(ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file("b"))).exit_code == 0);
  CHECK(ddlsim::test::slurp(tmp.path() / "a" / "summary.json") == ddlsim::test::slurp(tmp.path() / "b" / "summary.json"));
}
