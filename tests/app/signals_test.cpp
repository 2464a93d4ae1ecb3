// SIGINT and SIGTERM: `ddlsim run` stops after the current iteration, writes the outputs of the
// iterations every worker completed, marks summary.json incomplete and exits 128 + the signal;
// a second signal exits at once; the other commands exit at once. Each run is started in the
// background and signalled once it has streamed iteration rows (polled, not slept for); a
// `collectives` run shows nothing while it works, so that test waits 0.3 s.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <csignal>

using ddlsim::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int WORKERS = 4;

/// Long enough that no test waits for it to finish: BSP + ring, flow fidelity, 4 workers.
json long_run(int layers, int iterations) {
  return json{{"name", "long"},
              {"platform", {{"topology", "star"}, {"workers", WORKERS}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"workload",
               {{"synthetic", {{"layers", layers}, {"forward_s", "1ms"}, {"backward_s", "1ms"}, {"grad_bytes", "1MB"}}},
                {"iterations", iterations}}},
              {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}}}};
}

/// Iteration rows per worker in iterations.csv, and the iterations each covers (0..K-1 expected).
std::map<int, std::vector<int>> rows_by_worker(const std::filesystem::path& file) {
  std::map<int, std::vector<int>> rows;
  const auto csv = ddlsim::test::Csv::read(file);
  for (std::size_t i = 0; i < csv.size(); ++i) rows[csv.integer(i, "worker")].push_back(csv.integer(i, "iteration"));
  return rows;
}

/// Starts a long run, sends `sig` once some iterations have completed, and checks what it wrote.
void interrupt(int sig, const std::string& name) {
  TempDir tmp;
  const std::string scenario = tmp.write("long.json", long_run(2, 1'000'000).dump());
  const fs::path out = tmp.path() / "out";
  ddlsim::test::Background run({"run", scenario, "--out", out.string(), "--quiet", "--force"});
  // iterations.csv is streamed into the staging folder: rows there are completed iterations.
  REQUIRE(ddlsim::test::poll_until([&] {
    const auto dir = ddlsim::test::staging_folder(out);
    std::error_code ec;
    return dir && fs::file_size(*dir / "iterations.csv", ec) > 1000;
  }));
  run.signal(sig);
  const auto r = run.wait();
  CHECK(r.exit_code == 128 + sig);
  const json summary = json::parse(ddlsim::test::slurp(out / "summary.json"));
  CHECK(summary["complete"] == false);
  CHECK(summary["stopped_by"] == name);
  CHECK(summary["iterations"] == 1'000'000);
  const int k = summary["iterations_completed"].get<int>();
  CHECK(k >= 1);
  CHECK(k < 1'000'000);
  // Exactly K rows per worker: iterations 0 .. K-1.
  const auto rows = rows_by_worker(out / "iterations.csv");
  REQUIRE(rows.size() == WORKERS);
  std::vector<int> expected(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) expected[static_cast<std::size_t>(i)] = i;
  for (const auto& [worker, its] : rows) {
    CAPTURE(worker);
    CHECK(its == expected);
  }
  CHECK(json::accept(ddlsim::test::slurp(out / "timeline.json")));
  CHECK(fs::exists(out / "links.csv"));
  CHECK_FALSE(ddlsim::test::staging_folder(out));
  CHECK(r.err.find(fmt::format("ddlsim: stopped by {} after {} of 1000000 iterations", name, k)) != std::string::npos);
}

}  // namespace

TEST_CASE("SIGINT stops a run after the current iteration: exit 130, the completed iterations written, marked incomplete") {
  interrupt(SIGINT, "SIGINT");
}

TEST_CASE("SIGTERM stops a run the same way: exit 143") { interrupt(SIGTERM, "SIGTERM"); }

TEST_CASE("a second signal exits at once and writes nothing") {
  TempDir tmp;
  // One long iteration: a 100 MB bucket through a tree of 65,536 segments, every step a flow.
  json sc = long_run(1, 3);
  sc["workload"]["synthetic"]["grad_bytes"] = "100MB";
  sc["training"]["collective"] = {{"name", "tree"}, {"params", {{"segments", 65536}}}};
  const std::string scenario = tmp.write("long.json", sc.dump());
  const fs::path out = tmp.path() / "out";
  ddlsim::test::Background run({"run", scenario, "--out", out.string(), "--quiet", "--force"});
  // The timeline is streamed from the first compute on: the staging folder shows the run started.
  REQUIRE(ddlsim::test::poll_until([&] { return ddlsim::test::staging_folder(out).has_value(); }));
  run.signal(SIGINT);
  REQUIRE(ddlsim::test::poll_until([&] { return run.err().find("stopping after the current iteration") != std::string::npos; }));
  run.signal(SIGINT);
  const auto r = run.wait();
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("ddlsim: second signal: exiting at once, nothing written") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("collectives exits at once with 143 on SIGTERM, printing nothing") {
  // Stepwise ring on 1,024 ranks: about two million messages, seconds of work.
  ddlsim::test::Background run({"collectives", "-n", "1024", "--algorithms", "ring", "--granularity", "stepwise"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  run.signal(SIGTERM);
  const auto r = run.wait();
  CHECK(r.exit_code == 143);
  CHECK(r.out.empty());
}

TEST_CASE("one signal stops a run within an iteration that outlasts the grace: exit 143, nothing to write") {
  TempDir tmp;
  // Iterations of about 9 s each (a 400 MB bucket through a tree of 262,144 segments, every step a
  // flow): the first cannot complete within the grace, so the run stops inside it.
  json sc = long_run(1, 3);
  sc["workload"]["synthetic"]["grad_bytes"] = "400MB";
  sc["training"]["collective"] = {{"name", "tree"}, {"params", {{"segments", 262144}}}};
  const std::string scenario = tmp.write("long.json", sc.dump());
  const fs::path out = tmp.path() / "out";
  ddlsim::test::Background run({"run", scenario, "--out", out.string(), "--quiet", "--force"});
  REQUIRE(ddlsim::test::poll_until([&] { return ddlsim::test::staging_folder(out).has_value(); }));
  run.signal(SIGTERM);
  const auto r = run.wait();
  CHECK(r.exit_code == 143);
  CHECK(r.err.find("ddlsim: SIGTERM: stopping after the current iteration, or within it after 2 s") != std::string::npos);
  CHECK(r.err.find("ddlsim: SIGTERM before any iteration completed: nothing written") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(ddlsim::test::staging_folder(out));
}

TEST_CASE("one signal stops a run whose every actor waits on one endless transfer") {
  TempDir tmp;
  // 500 TB per worker over links that a trace holds at 1 bps but for 1 ms of every second at 8 Mbps
  // (1 kB per period): one ring step takes about 10^11 simulated seconds of trace replay, with no
  // actor waking meanwhile. The work estimate refuses it; --force runs it, and the signal must
  // still stop it.
  json sc = long_run(2, 3);
  sc["workload"]["synthetic"]["grad_bytes"] = "500TB";
  sc["network"] = {{"link_traces", json::array({{{"bandwidth", json::array({json::array({0, "1bps"}),
                                                                              json::array({0.999, "8Mbps"})})},
                                                 {"period", "1s"}}})}};
  const std::string scenario = tmp.write("endless.json", sc.dump());
  const fs::path out = tmp.path() / "out";
  const auto refused = ddlsim::test::ddlsim(fmt::format("run {} --out {}", scenario, out.string()));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.starts_with("ddlsim: error: /network/link_traces/0/period: this run is estimated at "));
  ddlsim::test::Background run({"run", scenario, "--out", out.string(), "--quiet", "--force"});
  REQUIRE(ddlsim::test::poll_until([&] { return ddlsim::test::staging_folder(out).has_value(); }));
  run.signal(SIGINT);
  const auto r = run.wait();
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("ddlsim: SIGINT before any iteration completed: nothing written") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}
