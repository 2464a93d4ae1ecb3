// Results a paper could print: each expectation is derived here from first
// principles (link bandwidths, latencies and bytes), never copied from a run.
#include "tests/support/cli.hpp"

#include "models/units.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <filesystem>
#include <fstream>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

struct Row {
  int worker = 0;
  int iteration = 0;
  double duration_s = 0;
};

std::vector<Row> rows_of(const std::filesystem::path& file) {
  const auto csv = ddlsim::test::Csv::read(file);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < csv.size(); ++i)
    rows.push_back(Row{csv.integer(i, "worker"), csv.integer(i, "iteration"), csv.number(i, "duration_s")});
  return rows;
}

struct Result {
  json summary;
  std::vector<Row> rows;
};

Result run(const TempDir& tmp, const std::string& name, const json& scenario, const std::string& extra = "") {
  const std::string file = tmp.write(name + ".json", scenario.dump());
  auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet {}", file, tmp.file(name), extra));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Result{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")),
                rows_of(tmp.path() / name / "iterations.csv")};
}

// Three workers a, b, c and one server on a custom star: b on 4 Gbps, a and c
// on 10 Gbps, the server on 100 Gbps, every link 1 us; one 100 MB bucket, no
// compute, no overlap.
constexpr double LAT = 1e-6;
constexpr double ALPHA = 2 * LAT;  // host -> switch -> host
constexpr double M = 100e6;
constexpr double FAST = 10e9 / 8, SLOW = 4e9 / 8, SERVER = 100e9 / 8;

json heterogeneous_star(const std::string& sync, int iterations) {
  json nodes = json::array({{{"name", "a"}, {"kind", "worker"}}, {{"name", "b"}, {"kind", "worker"}},
                            {{"name", "c"}, {"kind", "worker"}}, {{"name", "ps"}, {"kind", "server"}},
                            {{"name", "sw"}, {"kind", "switch"}}});
  json edges = json::array({{{"a", "a"}, {"b", "sw"}}, {{"a", "b"}, {"b", "sw"}, {"bandwidth", "4Gbps"}},
                            {{"a", "c"}, {"b", "sw"}}, {{"a", "ps"}, {"b", "sw"}, {"bandwidth", "100Gbps"}}});
  json sync_spec = {{"name", sync}};
  if (sync == "bsp") sync_spec["params"] = {{"aggregation", "parameter_server"}};
  return json{{"name", "het"},
              {"platform", {{"topology", "custom"}, {"workers", 3}, {"parameter_servers", 1},
                            {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}},
                            {"params", {{"nodes", nodes}, {"edges", edges}}}}},
              {"workload", {{"synthetic", {{"layers", 1}, {"forward_s", 0}, {"backward_s", 0}, {"grad_bytes", "100MB"}}},
                            {"iterations", iterations}}},
              {"training", {{"sync", sync_spec}, {"bucketing", {{"bucket_bytes", "100MB"}, {"overlap", false}}}}},
              {"output", {{"timeline", false}}}};
}

}  // namespace

TEST_CASE("parameter server on heterogeneous links: pushes and pulls take the time their links allow") {
  // The three pushes flow at once (3 GB/s in all, below the server's 12.5 GB/s):
  // a and c arrive at alpha + M/FAST, b at alpha + M/SLOW. The server updates once
  // all three have arrived, then the pulls flow at once, each at its worker's link.
  static_assert(FAST + FAST + SLOW < SERVER);
  TempDir tmp;
  const auto r = run(tmp, "bsp", heterogeneous_star("bsp", 3));
  const double all_pushed_0 = ALPHA + M / SLOW;
  const double a0 = all_pushed_0 + ALPHA + M / FAST, b0 = all_pushed_0 + ALPHA + M / SLOW;
  // Next iterations: every worker pushes when its previous pull ended; b is
  // last again (pull then push, both on 4 Gbps), so the update waits for it.
  const double b_iteration = 2 * (ALPHA + M / SLOW);
  for (const auto& row : r.rows) {
    CAPTURE(row.worker);
    CAPTURE(row.iteration);
    if (row.iteration == 0) {
      CHECK(row.duration_s == doctest::Approx(row.worker == 1 ? b0 : a0).epsilon(1e-9));
    } else {
      // Iteration k >= 1 of a (or c) starts at a0 + (k-1) b_iteration and ends when
      // its pull after b's k-th push ends: b0 + (k-1) b_iteration + alpha + M/SLOW + alpha + M/FAST.
      CHECK(row.duration_s == doctest::Approx(b_iteration).epsilon(1e-9));
    }
  }
  CHECK(r.summary["makespan_s"].get<double>() == doctest::Approx(3 * b_iteration).epsilon(1e-9));
}

TEST_CASE("ASP on heterogeneous links: each worker's iteration is its own push and pull") {
  // No worker waits for another: a and c push and pull 100 MB at 10 Gbps,
  // b at 4 Gbps; the server's NIC (12.5 GB/s) never saturates. A push that has
  // arrived is applied at once, even while a slower worker's push is still flowing.
  TempDir tmp;
  const auto r = run(tmp, "asp", heterogeneous_star("asp", 3));
  REQUIRE(r.rows.size() == 9);
  for (const auto& row : r.rows) {
    CAPTURE(row.worker);
    CAPTURE(row.iteration);
    const double link = row.worker == 1 ? SLOW : FAST;
    CHECK(row.duration_s == doctest::Approx(2 * (ALPHA + M / link)).epsilon(1e-9));
  }
}

namespace {

// Four workers on a 10 Gbps star, one 100 MB bucket all-reduced by the ring.
constexpr double BW10 = 10e9 / 8;
constexpr double CALL = 10e-6;  // network.collective_call_cost default

json ring4(const std::string& fidelity, const std::string& latency) {
  return json{{"name", "ring4"},
              {"platform", {{"topology", "star"}, {"workers", 4}, {"link", {{"bandwidth", "10Gbps"}, {"latency", latency}}}}},
              {"network", {{"fidelity", fidelity}}},
              {"workload", {{"synthetic", {{"layers", 1}, {"forward_s", 0}, {"backward_s", 0}, {"grad_bytes", "100MB"}}},
                            {"iterations", 1}}},
              {"training", {{"bucketing", {{"bucket_bytes", "100MB"}, {"overlap", false}}}}},
              {"output", {{"timeline", false}}}};
}

double iteration_s(const TempDir& tmp, const std::string& name, const json& scenario) {
  return run(tmp, name, scenario).summary["iteration_time_s"].get<double>();
}

}  // namespace

TEST_CASE("analytic fidelity applies the calibrated model's factors, like flow fidelity") {
  TempDir tmp;
  const double lf = 3, bf = 0.5, alpha = 2 * 1e-6, n = 4, m = 100e6;
  const double expected = CALL + 2 * (n - 1) * alpha * lf + 2 * (n - 1) / n * m / (BW10 * bf);
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "1us");
    s["network"]["model"] = "calibrated";
    s["network"]["latency_factor"] = lf;
    s["network"]["bandwidth_factor"] = bf;
    CHECK(iteration_s(tmp, fidelity, s) == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("analytic fidelity follows link traces: a bandwidth drop during the transfer") {
  // Latency-free links: the ring moves 2(N-1)/N M bytes through each NIC back to
  // back, at 10 Gbps until t = 50 ms and at 1 Gbps after it.
  TempDir tmp;
  const double n = 4, m = 100e6, drop = 0.05, bw_after = 1e9 / 8;
  const double bytes = 2 * (n - 1) / n * m;
  const double before = (drop - CALL) * BW10;
  const double expected = drop + (bytes - before) / bw_after;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "0us");
    s["network"]["link_traces"] = json::array({{{"bandwidth", json::array({json::array({drop, "1Gbps"})})}}});
    CHECK(iteration_s(tmp, fidelity, s) == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("analytic fidelity follows periodic link traces") {
  // 10 Gbps except [50 ms, 100 ms) + k 200 ms, at 1 Gbps.
  TempDir tmp;
  const double n = 4, m = 100e6, slow = 1e9 / 8;
  double remaining = 2 * (n - 1) / n * m;
  remaining -= (0.05 - CALL) * BW10 + 0.05 * slow;  // until t = 100 ms
  const double expected = 0.1 + remaining / BW10;
  REQUIRE(expected < 0.25);  // ends before the next slow window
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "0us");
    s["network"]["link_traces"] = json::array(
        {{{"bandwidth", json::array({json::array({0.05, "1Gbps"}), json::array({0.1, "10Gbps"})})}, {"period", "200ms"}}});
    CHECK(iteration_s(tmp, fidelity, s) == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("analytic fidelity follows a latency trace") {
  TempDir tmp;
  const double n = 4, m = 100e6, alpha = 2 * 20e-6;
  const double expected = CALL + 2 * (n - 1) * alpha + 2 * (n - 1) / n * m / BW10;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "1us");
    s["network"]["link_traces"] = json::array({{{"latency", json::array({json::array({0, "20us"})})}}});
    CHECK(iteration_s(tmp, fidelity, s) == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("tcp at analytic fidelity is refused and so is a trace period shorter than the trace") {
  TempDir tmp;
  json s = ring4("analytic", "1us");
  s["network"]["model"] = "tcp";
  auto r = ddlsim::test::ddlsim("validate " + tmp.write("tcp.json", s.dump()));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "ddlsim: error: /network/model: \"tcp\" (SimGrid LV08: TCP window, cross traffic and RTT-weighted sharing) is "
        "a flow-level model that closed forms cannot honour; at analytic fidelity use \"ideal\" or \"calibrated\" "
        "(latency_factor 13.01 and bandwidth_factor 0.97 are LV08's factors without window and cross traffic), or "
        "\"fidelity\": \"flow\"\n");
  json p = ring4("flow", "1us");
  p["network"]["link_traces"] = json::array(
      {{{"bandwidth", json::array({json::array({0, "1Gbps"}), json::array({0.5, "10Gbps"})})}, {"period", "100ms"}}});
  r = ddlsim::test::ddlsim("validate " + tmp.write("period.json", p.dump()));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /network/link_traces/0/period: the period must be longer than the trace's last time "
                 "(0.5 s), got 0.1 s\n");
}

TEST_CASE("every collective call pays its fixed cost at both fidelities and one worker pays nothing") {
  TempDir tmp;
  const double n = 4, m = 100e6, alpha = 2 * 1e-6, call = 250e-6;
  const double expected = call + 2 * (n - 1) * alpha + 2 * (n - 1) / n * m / BW10;
  for (const std::string fidelity : {"analytic", "flow"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "1us");
    s["network"]["collective_call_cost"] = "250us";
    CHECK(iteration_s(tmp, fidelity + "-4", s) == doctest::Approx(expected).epsilon(1e-9));
    s["platform"]["workers"] = 1;
    s["workload"]["synthetic"]["forward_s"] = "1ms";
    CHECK(iteration_s(tmp, fidelity + "-1", s) == doctest::Approx(1e-3).epsilon(1e-12));
  }
}

TEST_CASE("tensor fusion pays at scale and MG-WFBP beats every fixed cap") {
  // ResNet-50 (54 gradient layers) on 256 workers, ring, 25 Gbps: each of the 54
  // per-layer calls pays 10 us + 2 x 255 alpha, so fusing into buckets wins; the
  // MG-WFBP grouping is optimal for this cost model, so no cap beats it.
  TempDir tmp;
  auto resnet = [](const json& bucketing) {
    json s = json::parse(ddlsim::test::slurp(std::string(DDLSIM_SOURCE_DIR) + "/scenarios/resnet50_bsp_ring_25gbps.json"));
    s["workload"]["profile"] = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/profiles/resnet50.json";
    s["workload"]["iterations"] = 3;
    s["platform"]["workers"] = 256;
    s["network"]["fidelity"] = "analytic";
    s["training"]["bucketing"] = bucketing;
    s["output"] = {{"timeline", false}};
    return s;
  };
  const double per_layer = iteration_s(tmp, "layer", resnet({{"bucket_bytes", 0}}));
  const double mgwfbp = iteration_s(tmp, "mgwfbp", resnet({{"policy", "mgwfbp"}}));
  double best_cap = per_layer;
  for (const char* cap : {"1MB", "5MB", "25MB", "100MB", "1GB"}) {
    CAPTURE(cap);
    const double t = iteration_s(tmp, cap, resnet({{"bucket_bytes", cap}}));
    best_cap = std::min(best_cap, t);
    CHECK(mgwfbp <= t * (1 + 1e-12));
  }
  CHECK(best_cap < per_layer);
  const auto r = ddlsim::test::ddlsim("validate " + tmp.write("bad.json", resnet({{"policy", "mgwfbp"}, {"bucket_bytes", "25MB"}}).dump()));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /training/bucketing/bucket_bytes: only with \"policy\": \"size\" or \"ddp\", not "
                 "\"mgwfbp\"\n");
}

TEST_CASE("more workers than the process can hold stack mappings for: heap stacks, or a refusal up front") {
  // Every worker is two SimGrid actors, each with a stack mapping; a process may hold
  // vm.max_map_count mappings. Ask for as many workers as that limit: the stacks are carved from
  // the heap instead (engine/engine.cpp), so what refuses this run is its work estimate (a ring of
  // 65,530 ranks at flow fidelity: hours), as one line; a build under AddressSanitizer runs actors
  // on threads, whose stacks are mappings, and refuses the workers, naming the limit.
  long limit = 65530;
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  if (limit > 1'000'000) {
    MESSAGE("vm.max_map_count = " << limit << " holds every allowed worker count; nothing to refuse here");
    return;
  }
  TempDir tmp;
  json s = ring4("flow", "1us");
  s["platform"]["workers"] = limit;
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", tmp.write("big.json", s.dump()), tmp.file("out")));
  CHECK(r.exit_code == 2);
  if (r.err.find("vm.max_map_count") == std::string::npos) {
    CHECK(r.err.rfind("ddlsim: error: /training/collective: this run is estimated at ", 0) == 0);
    CHECK(r.err.find(" of wall time, above the limit of 60 min (most of it for the collective flows") !=
          std::string::npos);
  } else {
    CHECK(r.err.rfind(fmt::format("ddlsim: error: /platform/workers: {} workers need {} SimGrid actors, one stack "
                                  "mapping each, but a process may hold {} memory mappings here (vm.max_map_count): at "
                                  "most ",
                                  limit, 2 * limit, limit),
                      0) == 0);
    CHECK(r.err.find("workers fit on SimGrid actors (analytic fidelity runs any count without them when workers only "
                     "compute and all-reduce); raise the limit as root with `sysctl -w vm.max_map_count=") !=
          std::string::npos);
  }
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(tmp.file("out")));
  // Analytic fidelity runs the same worker count on the fiber lane (engine/fiber_lane.hpp): no actors.
  s["network"]["fidelity"] = "analytic";
  const auto ok = run(tmp, "big_analytic", s);
  CHECK(ok.summary["workers"] == limit);
  CHECK(ok.summary["complete"] == true);
}

TEST_CASE("a workload that takes no time has undefined throughput and speedup, not 0") {
  TempDir tmp;
  json s = ring4("flow", "1us");
  s["platform"]["workers"] = 1;
  const auto r = run(tmp, "zero", s);
  CHECK(r.summary["throughput_samples_per_s"].is_null());
  CHECK(r.summary["updates_per_s"].is_null());
  CHECK(r.summary["speedup"].is_null());
  CHECK(r.summary["scaling_efficiency"].is_null());
  const auto table = ddlsim::test::ddlsim("run " + tmp.write("zero2.json", s.dump()) + " --out " + tmp.file("z2"));
  CHECK(table.out.find("throughput_samples_per_s         undefined (the iteration takes no time: no compute, no "
                       "communication)") != std::string::npos);
}

TEST_CASE("settings that would be silently ignored are refused") {
  TempDir tmp;
  auto refused = [&](const json& s) {
    const auto r = ddlsim::test::ddlsim("validate " + tmp.write("s.json", s.dump()));
    CHECK(r.exit_code == 2);
    return r.err;
  };
  json asp = heterogeneous_star("asp", 1);
  asp["training"]["collective"] = {{"name", "tree"}};
  CHECK(refused(asp) == "ddlsim: error: /training/collective: sync model \"asp\" aggregates through parameter servers "
                        "and runs no collective; remove \"collective\" (or use \"bsp\" with \"aggregation\": "
                        "\"allreduce\")\n");
  json idle = ring4("flow", "1us");
  idle["platform"]["parameter_servers"] = 2;
  CHECK(refused(idle) == "ddlsim: error: /platform/parameter_servers: 2 parameter servers would sit idle: sync model "
                         "\"bsp\" with collective \"ring\" uses none; set it to 0, or use a parameter-server sync model "
                         "or collective\n");
  json noise = ring4("flow", "1us");
  noise["training"]["stragglers"] = {{"distribution", "normal"}};
  CHECK(refused(noise) == "ddlsim: error: /training/stragglers/sigma: missing: distribution \"normal\" needs its "
                          "\"sigma\" (a number > 0)\n");
  json call = ring4("flow", "1us");
  call["network"]["collective_call_cost"] = "2s";
  CHECK(refused(call) == "ddlsim: error: /network/collective_call_cost: a collective call's fixed cost must be in [0, 1 "
                         "s] (real ones are microseconds to milliseconds), got 2 s\n");
  const auto cli = ddlsim::test::ddlsim("collectives -n 4 --call-cost 2 --algorithms ring");
  CHECK(cli.exit_code == 2);
  CHECK(cli.err == "ddlsim: error: --call-cost: a collective call's fixed cost must be in [0, 1 s] (real ones are "
                   "microseconds to milliseconds), got 2 s\n");
  // Beyond any time's range, the range is what the message states.
  CHECK(ddlsim::test::bad_input("collectives -n 4 --call-cost 1e300 --algorithms ring") ==
        fmt::format("ddlsim: error: --call-cost: time out of range: expected {}, got \"1e300\"\n",
                    ddlsim::units::time_range()));
  noise["training"]["stragglers"]["sigma"] = 0;
  CHECK(refused(noise) == "ddlsim: error: /training/stragglers/sigma: sigma 0 makes distribution \"normal\" draw no "
                          "noise; give sigma > 0, or \"distribution\": \"none\"\n");
}

TEST_CASE("custom topologies keep the user's node names, in link traces and links.csv") {
  // Slow worker b's link to 1 Gbps from t = 0 by its own name: its push and pull
  // (the ASP iteration) take alpha + M / 1 Gbps each.
  TempDir tmp;
  json s = heterogeneous_star("asp", 1);
  s["network"]["link_traces"] = json::array({{{"links", {"b<->sw"}}, {"bandwidth", json::array({json::array({0, "1Gbps"})})}}});
  const auto r = run(tmp, "names", s);
  for (const auto& row : r.rows)
    CHECK(row.duration_s == doctest::Approx(2 * (ALPHA + M / (row.worker == 1 ? 1e9 / 8 : FAST))).epsilon(1e-9));
  const auto links = ddlsim::test::Csv::read(tmp.path() / "names" / "links.csv");
  for (const char* name : {"a>sw", "b>sw", "sw>b", "ps>sw", "sw>c"}) CHECK_MESSAGE(links.find("link", name).has_value(), name);
}

TEST_CASE("a batch other than the profile's needs a scaling rule and scales compute linearly") {
  TempDir tmp;
  const std::string profile = std::string(DDLSIM_SOURCE_DIR) + "/scenarios/profiles/resnet50.json";
  const json p = json::parse(ddlsim::test::slurp(profile));
  const auto batch = p["batch_size"].get<std::int64_t>();
  double fwd_bwd = 0;
  for (const auto& layer : p["layers"]) fwd_bwd += layer["forward_s"].get<double>() + layer["backward_s"].get<double>();
  const double io = p.value("io_s", 0.0), opt = p.value("optimizer_s", 0.0);
  json s = ring4("analytic", "1us");
  s["platform"]["workers"] = 1;
  s["workload"] = {{"profile", profile}, {"iterations", 1}, {"batch_size", 2 * batch}};
  s.erase("training");
  const auto r = ddlsim::test::ddlsim("validate " + tmp.write("b.json", s.dump()));
  CHECK(r.exit_code == 2);
  CHECK(r.err == fmt::format("ddlsim: error: /workload/batch_size: the profile was measured with batch {} per worker, "
                             "not {}; add \"batch_scaling\": \"linear\" to scale forward, backward and I/O times with "
                             "the batch (the optimizer step and the gradient bytes stay), or profile that batch\n",
                             batch, 2 * batch));
  s["workload"]["batch_scaling"] = "linear";
  const auto summary = run(tmp, "linear", s).summary;
  CHECK(summary["batch_scaling"] == "linear");
  CHECK(summary["compute_time_per_iteration_s"].get<double>() == doctest::Approx(2 * (fwd_bwd + io) + opt).epsilon(1e-9));
  CHECK(summary["throughput_samples_per_s"].get<double>() ==
        doctest::Approx(2.0 * batch / (2 * (fwd_bwd + io) + opt)).epsilon(1e-9));
}

TEST_CASE("a synchronous run reports its global steps: the time between consecutive model updates") {
  // One iteration: a and c end at a0, b at b0 > a0. The model is updated once, when b's push has
  // arrived, and the step is over when the last pull (b's) ends: 1 / b0 updates per second, not the
  // mean of the workers' durations (2 a0 + b0) / 3, which summary.json keeps as the per-worker view.
  TempDir tmp;
  const double all_pushed = ALPHA + M / SLOW;
  const double a0 = all_pushed + ALPHA + M / FAST, b0 = all_pushed + ALPHA + M / SLOW;
  const auto one = run(tmp, "one", heterogeneous_star("bsp", 1));
  CHECK(one.summary["iteration_time_s"].get<double>() == doctest::Approx(b0).epsilon(1e-9));
  CHECK(one.summary["iteration_time_median_s"].get<double>() == doctest::Approx(b0).epsilon(1e-9));
  CHECK(one.summary["updates_per_s"].get<double>() == doctest::Approx(1 / b0).epsilon(1e-9));
  CHECK(one.summary["throughput_samples_per_s"].get<double>() ==
        doctest::Approx(3 * one.summary["samples_per_worker_iteration"].get<double>() / b0).epsilon(1e-9));
  CHECK(one.summary["worker_iteration_time_s"].get<double>() == doctest::Approx((2 * a0 + b0) / 3).epsilon(1e-9));
  CHECK(one.summary["iteration_time_basis"] == "global_step");
  // Three iterations: the steps are b0, then b's pull and push each time; their mean is the makespan / 3.
  const auto three = run(tmp, "three", heterogeneous_star("bsp", 3));
  const double b_iteration = 2 * (ALPHA + M / SLOW);
  CHECK(three.summary["iteration_time_s"].get<double>() == doctest::Approx((b0 + 2 * b_iteration) / 3).epsilon(1e-9));
  CHECK(three.summary["iteration_time_median_s"].get<double>() == doctest::Approx(b_iteration).epsilon(1e-9));
  CHECK(three.summary["iteration_time_p95_s"].get<double>() ==
        doctest::Approx(b_iteration + 0.9 * (b0 - b_iteration)).epsilon(1e-9));  // numpy's linear rule, 3 values
  // An asynchronous model keeps the mean over workers and iterations.
  const auto asp = run(tmp, "asp", heterogeneous_star("asp", 1));
  CHECK(asp.summary["iteration_time_basis"] == "worker_mean");
  CHECK(asp.summary["iteration_time_s"].get<double>() ==
        doctest::Approx((4 * (ALPHA + M / FAST) + 2 * (ALPHA + M / SLOW)) / 3).epsilon(1e-9));
}

TEST_CASE("no model beats the wire: a bandwidth factor above 1 is refused") {
  TempDir tmp;
  json s = ring4("flow", "1us");
  s["network"]["model"] = "calibrated";
  s["network"]["bandwidth_factor"] = 1.04;
  const auto r = ddlsim::test::ddlsim(fmt::format("validate {}", tmp.write("bf.json", s.dump())));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ddlsim: error: /network/bandwidth_factor: must be at most 1 (a factor of 1.04 would move bytes "
                 "faster than the link: no model may beat the wire); protocol overheads go in "
                 "software.protocol_efficiency\n");
  // The shipped calibration reads (its fit is bounded at 1).
  const auto cal = ddlsim::test::ddlsim(fmt::format(
      "validate {} --set 'network.calibration=\"{}/docs/data/lab_calibration_library.json\"'",
      tmp.write("ring4.json", ring4("flow", "1us").dump()), DDLSIM_SOURCE_DIR));
  CHECK_MESSAGE(cal.exit_code == 0, cal.err);
}

TEST_CASE("links.csv counts bytes, whatever the bandwidth factor") {
  // The ring sends 2 (N - 1) / N x M through each worker's link, in each direction.
  TempDir tmp;
  const double n = 4, m = 100e6;
  for (double bf : {0.5, 1.0}) {
    CAPTURE(bf);
    json s = ring4("flow", "1us");
    s["network"]["model"] = "calibrated";
    s["network"]["bandwidth_factor"] = bf;
    const std::string name = fmt::format("bf{}", bf);
    const auto result = run(tmp, name, s);
    const auto links = ddlsim::test::Csv::read(tmp.path() / name / "links.csv");
    int rows = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const std::string line = links.line(i);
      CAPTURE(line);
      CHECK(links.number(i, "bytes") == doctest::Approx(2 * (n - 1) / n * m).epsilon(1e-6));
      CHECK(links.number(i, "utilization") ==
            doctest::Approx(2 * (n - 1) / n * m / (BW10 * result.summary["makespan_s"].get<double>())).epsilon(1e-6));
      ++rows;
    }
    CHECK(rows == 8);
  }
}

TEST_CASE("parameter-server pushes and pulls pay the library: header bytes, and each side's CPU per message") {
  // ASP on the heterogeneous star with gloo's software: every push and pull puts M / eta bytes on
  // the wire (TCP over Ethernet: eta = 1448 / 1538); the worker pays o_send before its push and
  // o_recv after its pull, the server o_recv per push taken in and o_send per reply, one message at
  // a time. Workers 0 and 2 (10 Gbit/s) push at once and their pushes end together: the server takes
  // one of them first (and replies), so the other also waits for that o_recv + o_send. Worker 1
  // (4 Gbit/s) arrives when the server is idle.
  TempDir tmp;
  const double eta = 1448.0 / 1538.0, o = 15e-6;  // gloo: o_send = o_recv = 15 us
  json s = heterogeneous_star("asp", 1);
  s["network"] = {{"software", "gloo"}};
  const auto r = run(tmp, "gloo", s);
  REQUIRE(r.rows.size() == 3);
  std::vector<double> fast;
  for (const auto& row : r.rows) {
    CAPTURE(row.worker);
    if (row.worker == 1)
      CHECK(row.duration_s == doctest::Approx(2 * (ALPHA + M / (SLOW * eta)) + 4 * o).epsilon(1e-9));
    else
      fast.push_back(row.duration_s);
  }
  REQUIRE(fast.size() == 2);
  std::sort(fast.begin(), fast.end());
  const double own = 2 * (ALPHA + M / (FAST * eta)) + 4 * o;
  CHECK(fast[0] == doctest::Approx(own).epsilon(1e-9));          // served first
  CHECK(fast[1] == doctest::Approx(own + 2 * o).epsilon(1e-9));  // behind the other's push and reply
}

namespace {
std::map<std::string, double> link_bytes(const std::filesystem::path& file) {
  const auto csv = ddlsim::test::Csv::read(file);
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < csv.size(); ++i) out[csv.at(i, "link")] = csv.number(i, "bytes");
  return out;
}
}  // namespace

TEST_CASE("links.csv at analytic fidelity counts the collectives' bytes on the links they cross") {
  TempDir tmp;
  // The star: the ring sends 2 (N - 1) / N x M through every worker's link in each direction.
  const auto r = run(tmp, "star", ring4("analytic", "1us"));
  const auto star = link_bytes(tmp.path() / "star" / "links.csv");
  REQUIRE(star.size() == 8);
  for (const auto& [name, bytes] : star) {
    CAPTURE(name);
    CHECK(bytes == doctest::Approx(2 * 3.0 / 4 * 100e6).epsilon(1e-12));
  }
  CHECK(r.summary["comm_bytes_per_iteration"].get<double>() == doctest::Approx(4 * 2 * 3.0 / 4 * 100e6));
  // A k = 4 fat tree under D-mod-k, with AR-Topk's rotating roots: each link as flow fidelity counts it.
  for (const char* sc : {"fat_tree_k4", "resnet50_artopk_fluctuating_10gbps"}) {
    CAPTURE(sc);
    for (const char* fidelity : {"flow", "analytic"}) {
      const auto res = ddlsim::test::ddlsim(fmt::format("run {}/scenarios/{}.json --set network.fidelity={} --set "
                                                        "workload.iterations=2 --out {} --quiet",
                                                        DDLSIM_SOURCE_DIR, sc, fidelity, tmp.file(fidelity)));
      REQUIRE_MESSAGE(res.exit_code == 0, res.err);
    }
    const auto flow = link_bytes(tmp.path() / "flow" / "links.csv");
    const auto analytic = link_bytes(tmp.path() / "analytic" / "links.csv");
    REQUIRE(flow.size() == analytic.size());
    double total = 0;
    for (const auto& [name, bytes] : flow) {
      CAPTURE(name);
      CHECK(analytic.at(name) == doctest::Approx(bytes).epsilon(1e-9));
      total += bytes;
    }
    CHECK(total > 0);
  }
  // Beyond AnalyticLinks::MAX_RANKS the file is left out, and the run says why.
  json big = ring4("analytic", "1us");
  big["platform"]["workers"] = 4097;
  const auto file = tmp.write("big.json", big.dump());
  const auto res = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet", file, tmp.file("big")));
  REQUIRE_MESSAGE(res.exit_code == 0, res.err);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "big" / "links.csv"));
  CHECK(res.err.find("links.csv left out: at analytic fidelity the collectives' bytes are routed on the platform for "
                     "groups of at most 4096 ranks (this one has 4097); use flow fidelity for per-link traffic") !=
        std::string::npos);
}

TEST_CASE("analytic alpha is the worst path between any two hosts, not only worker 0's") {
  // Workers a, b, c, d; a and b on switch s1 with c, d on s2; a also reaches s2 directly, so every
  // path from a is two 1 us links, while c -> d crosses the 10 ms link s1 - s2. The ring a > b > c >
  // d > a pays that hop at every step (its sender's own sends chain through it): 2 (N - 1) steps of
  // 10.002 ms plus M / N at 10 Gbps, at both fidelities (analytic said 2 us per step before).
  json nodes = json::array();
  for (const char* w : {"a", "b", "c", "d"}) nodes.push_back({{"name", w}, {"kind", "worker"}});
  for (const char* sw : {"s1", "s2"}) nodes.push_back({{"name", sw}, {"kind", "switch"}});
  json edges = json::array({{{"a", "a"}, {"b", "s1"}}, {{"a", "b"}, {"b", "s1"}}, {{"a", "c"}, {"b", "s1"}},
                            {{"a", "d"}, {"b", "s2"}}, {{"a", "a"}, {"b", "s2"}},
                            {{"a", "s1"}, {"b", "s2"}, {"latency", "10ms"}}});
  TempDir tmp;
  const double n = 4, m = 1e6, alpha = 10e-3 + 2e-6;
  for (const std::string fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    json s = ring4(fidelity, "1us");
    s["platform"] = {{"topology", "custom"}, {"workers", 4}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}},
                     {"params", {{"nodes", nodes}, {"edges", edges}}}};
    s["workload"]["synthetic"]["grad_bytes"] = "1MB";
    s["training"]["bucketing"] = {{"bucket_bytes", "1MB"}, {"overlap", false}};
    const auto r = run(tmp, fidelity, s);
    CHECK(r.summary["iteration_time_s"].get<double>() ==
          doctest::Approx(CALL + 2 * (n - 1) * (alpha + m / n / BW10)).epsilon(1e-9));
  }
}
