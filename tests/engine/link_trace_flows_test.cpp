// Flows follow their links' traced bandwidth as it changes: rises and drops in the middle of a
// transfer, on a ring all-reduce, on parameter-server pushes and pulls and on gossip, at flow and
// analytic fidelity; periodic traces several periods deep. Every expectation is integrated here
// from the trace, the bytes and the links (docs/scenario.md, "link_traces"; engine/flow_bounds.hpp).
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <cmath>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

constexpr double M = 200e6;      // the model's gradient bytes
constexpr double CALL = 10e-6;   // network.collective_call_cost default
constexpr double GBPS = 1e9 / 8;  // bytes per second of 1 Gbps

/// A piecewise-constant bandwidth (bytes/s): `points` (t, value) from t on, `nominal` before the
/// first, repeated with `period` (> 0) as entry (t, v) at t + k period.
struct Trace {
  double nominal = 10 * GBPS;
  std::vector<std::pair<double, double>> points;
  double period = -1;

  /// The change points in [0, horizon], by index and cycle (no rounding of a time read back).
  [[nodiscard]] std::vector<std::pair<double, double>> changes(double horizon) const {
    std::vector<std::pair<double, double>> out;
    for (int k = 0;; ++k) {
      for (const auto& [t, v] : points) {
        const double at = t + k * std::max(period, 0.0);
        if (at > horizon) return out;
        out.emplace_back(at, v);
      }
      if (period <= 0) return out;
    }
  }
  /// When `bytes` sent from `t0` over links of this bandwidth end (no latency).
  [[nodiscard]] double finish(double t0, double bytes) const {
    const auto ch = changes(t0 + 1000);
    double bw = nominal, t = t0;
    for (const auto& [at, v] : ch) {
      if (at <= t) {
        bw = v;
        continue;
      }
      if (bytes <= (at - t) * bw) return t + bytes / bw;
      bytes -= (at - t) * bw;
      t = at;
      bw = v;
    }
    return t + bytes / bw;
  }
  [[nodiscard]] json to_json() const {
    json series = json::array();
    for (const auto& [t, v] : points) series.push_back(json::array({t, fmt::format("{}Gbps", v / GBPS)}));
    json out{{"bandwidth", series}};
    if (period > 0) out["period"] = period;
    return out;
  }
};

json scenario(const std::string& fidelity, const Trace& trace, const std::string& sync, double compute_s, int iterations) {
  const bool servers = sync == "ps";
  json s{{"name", "traced"},
         {"platform", {{"topology", "star"}, {"workers", servers ? 1 : 2}, {"parameter_servers", servers ? 1 : 0},
                       {"link", {{"bandwidth", "10Gbps"}, {"latency", "0s"}}}}},
         {"network", {{"fidelity", fidelity}, {"link_traces", json::array({trace.to_json()})}}},
         {"workload", {{"synthetic", {{"layers", 1}, {"forward_s", compute_s}, {"backward_s", 0}, {"grad_bytes", "200MB"}}},
                       {"iterations", iterations}}},
         {"output", {{"timeline", false}}}};
  if (servers) s["training"] = {{"sync", {{"name", "bsp"}, {"params", {{"aggregation", "parameter_server"}}}}}};
  else if (sync == "gossip") s["training"] = {{"sync", {{"name", "gossip"}}}};
  else s["training"] = {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}};
  return s;
}

/// Worker 0's iteration end times.
std::vector<double> ends(const TempDir& tmp, const std::string& name, const json& s) {
  const std::string file = tmp.write(name + ".json", s.dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto csv = ddlsim::test::Csv::read(tmp.path() / name / "iterations.csv");
  std::vector<double> out;
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.at(i, "worker") == "0") out.push_back(csv.number(i, "end_s"));
  return out;
}

/// One iteration from `start`: compute, then what `sync` sends (latency-free links).
double iteration_end(const Trace& trace, const std::string& sync, double start, double compute_s) {
  const double t = start + compute_s;
  if (sync == "ps") return trace.finish(trace.finish(t, M), M);       // push 200 MB, then pull 200 MB
  if (sync == "gossip") return trace.finish(t, 2 * M);  // the model to left and right: the one other worker, twice
  return trace.finish(trace.finish(t + CALL, M / 2), M / 2);          // ring, N = 2: two steps of M / N
}

void check_runs(const Trace& trace, const std::string& sync, double compute_s, int iterations) {
  TempDir tmp;
  std::vector<double> expected;
  double t = 0;
  for (int k = 0; k < iterations; ++k) expected.push_back(t = iteration_end(trace, sync, t, compute_s));
  for (const std::string fidelity : {"flow", "analytic"}) {
    CAPTURE(sync);
    CAPTURE(fidelity);
    const auto got = ends(tmp, fidelity, scenario(fidelity, trace, sync, compute_s, iterations));
    REQUIRE(got.size() == expected.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      CHECK(got[k] == doctest::Approx(expected[k]).epsilon(1e-7));
    }
  }
}

}  // namespace

TEST_CASE("a flow started while a traced link is slow speeds up when the link does") {
  // 1 Gbps until 0.1 s, then 10 Gbps: the ring's first step moves 12.5 MB in the first 0.1 s and
  // the rest of its 100 MB at 10 Gbps (0.25 s in all; a flow kept at its start's rate took 0.88 s).
  const Trace rise{10 * GBPS, {{0, GBPS}, {0.1, 10 * GBPS}}};
  CHECK(iteration_end(rise, "ring", 0, 0) == doctest::Approx(0.25).epsilon(1e-4));
  CHECK(iteration_end(rise, "ps", 0, 0) == doctest::Approx(0.41).epsilon(1e-9));
  for (const char* sync : {"ring", "ps", "gossip"}) check_runs(rise, sync, 0, 1);
}

TEST_CASE("flows slow down and speed up again mid-transfer") {
  // A drop at 50 ms during the first transfer, a rise at 0.6 s during a later one.
  const Trace drop_rise{10 * GBPS, {{0.05, GBPS}, {0.6, 10 * GBPS}}};
  for (const char* sync : {"ring", "ps", "gossip"}) check_runs(drop_rise, sync, 0, 2);
  // Three levels, the first transfer crossing two changes.
  const Trace steps{10 * GBPS, {{0.01, 2 * GBPS}, {0.05, 25 * GBPS}, {0.2, GBPS}}};
  for (const char* sync : {"ring", "ps", "gossip"}) check_runs(steps, sync, 0.02, 3);
}

TEST_CASE("periodic link traces repeat at every period, at both fidelities") {
  // 10 Gbps on [0.3, 0.5) + k, 1 Gbps on [0.5, 0.9) + k, 10 Gbps from 0.9 + k: six iterations of
  // 1.45 s of compute and a ring run into the trace's seventh period. Before the fix, analytic
  // fidelity read the 1 Gbps entry at 1.9 s (1.9 - 1 < 0.9 in binary) and ended iteration 0 at 2.33 s.
  const Trace periodic{10 * GBPS, {{0.3, 10 * GBPS}, {0.5, GBPS}, {0.9, 10 * GBPS}}, 1.0};
  CHECK(iteration_end(periodic, "ring", 0, 1.45) == doctest::Approx(1.97001).epsilon(1e-9));
  check_runs(periodic, "ring", 1.45, 6);
  const Trace shifted{10 * GBPS, {{0.1, 10 * GBPS}, {0.3, 2 * GBPS}, {0.7, 5 * GBPS}}, 1.0};
  check_runs(shifted, "ring", 1.45, 6);
  check_runs(shifted, "ps", 0.2, 4);
}

TEST_CASE("a periodic trace gives what the same trace written out as a list gives") {
  const Trace periodic{10 * GBPS, {{0, 10 * GBPS}, {0.4, GBPS}, {0.7, 10 * GBPS}}, 1.0};
  Trace listed{10 * GBPS, periodic.changes(20)};
  TempDir tmp;
  for (const std::string fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    CHECK(ends(tmp, fidelity + "p", scenario(fidelity, periodic, "ring", 1.45, 6)) ==
          ends(tmp, fidelity + "l", scenario(fidelity, listed, "ring", 1.45, 6)));
  }
}

TEST_CASE("bandwidth traces with the tcp network model are refused") {
  TempDir tmp;
  json s = scenario("flow", Trace{10 * GBPS, {{0, GBPS}}}, "ring", 0, 1);
  s["network"]["model"] = "tcp";
  const std::string file = tmp.write("tcp.json", s.dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("validate {}", file));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "ddlsim: error: /network/link_traces: bandwidth traces with network.model \"tcp\": SimGrid's LV08 bounds each "
        "flow by its TCP window from the latency at its start and by the route's bandwidth at its start, which a later "
        "bandwidth change does not lift; use \"ideal\" or \"calibrated\"\n");
}

TEST_CASE("two trace entries on one link: the later one holds, at both fidelities (SimGrid takes one profile)") {
  // Every link at 1 Gbps, then both links named at 5 Gbps; latency 1 ms, then 2 ms on every link:
  // the later entries hold (alpha = 4 ms), so the ring's two steps of 100 MB take 4 ms + 0.16 s each.
  TempDir tmp;
  for (const std::string fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json s = scenario(fidelity, Trace{}, "ring", 0, 1);
    s["network"]["link_traces"] = json::parse(R"([
      {"bandwidth": [[0, "1Gbps"]]},
      {"links": ["worker-0<->switch-0", "worker-1<->switch-0"], "bandwidth": [[0, "5Gbps"]]},
      {"latency": [[0, "1ms"]]},
      {"latency": [[0, "2ms"]]}])");
    const std::string file = tmp.write(fidelity + ".json", s.dump());
    const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file(fidelity)));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto summary = json::parse(ddlsim::test::slurp(tmp.path() / fidelity / "summary.json"));
    CHECK(summary["iteration_time_s"].get<double>() == doctest::Approx(CALL + 2 * (4e-3 + M / 2 / (5 * GBPS))).epsilon(1e-9));
  }
}
