// Results a paper could print: each expectation is derived here from first
// principles (link bandwidths, latencies and bytes), never copied from a run.
#include "tests/sim/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sstream>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

struct Row {
  int worker = 0;
  int iteration = 0;
  double duration_s = 0;
};

std::vector<Row> rows_of(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) f.push_back(c);
    rows.push_back(Row{std::stoi(f[0]), std::stoi(f[1]), std::stod(f[4])});
  }
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
                rows_of(ddlsim::test::slurp(tmp.path() / name / "iterations.csv"))};
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
