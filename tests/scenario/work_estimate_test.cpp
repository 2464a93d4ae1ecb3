// The work estimate of `ddlsim run` (scenario/work_estimate.cpp): a run estimated above the wall-time
// or memory limit is refused before anything is built (exit 2, one line giving the estimate and
// naming the JSON path that makes it big), --force runs it anyway, --estimate prints it. The
// engine events are counted by the model's definition: per worker and iteration, 2 compute calls
// per layer, 2 per bucket and 6 others; plus every flow (a ring all-reduce: 2(N-1) sends per rank
// and bucket).
#include "tests/support/cli.hpp"

#include "app/progress.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int N = 8, LAYERS = 10, BUCKETS = 2;

/// 8 workers, 10 layers of 5 MB (two 25 MB buckets), BSP + ring at flow fidelity.
json scenario() {
  return json{{"name", "estimate"},
              {"platform", {{"topology", "star"}, {"workers", N}, {"link", {{"bandwidth", "10Gbps"}, {"latency", "1us"}}}}},
              {"workload",
               {{"synthetic", {{"layers", LAYERS}, {"forward_s", "1ms"}, {"backward_s", "1ms"}, {"grad_bytes", "5MB"}}},
                {"iterations", 10}}},
              {"training", {{"sync", {{"name", "bsp"}}}, {"collective", {{"name", "ring"}}}}}};
}

double events_per_iteration() {
  const double calls = 2 * LAYERS + 2 * BUCKETS + 6;
  const double flows = N * 2.0 * (N - 1) * BUCKETS;
  return N * calls + flows;
}

}  // namespace

TEST_CASE("a run estimated above --max-time is refused with the estimate, naming the iterations") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", scenario().dump());
  for (const int iterations : {100'000, 200'000}) {
    CAPTURE(iterations);
    const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --set workload.iterations={} --max-time 1s", file,
                                                    tmp.file("out"), iterations));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(tmp.path() / "out"));
    CHECK(r.err.starts_with("ddlsim: error: /workload/iterations: this run is estimated at "));
    CHECK(r.err.find(fmt::format("above the --max-time limit of 1 s ({} iterations of ", iterations)) != std::string::npos);
    CHECK(r.err.find(fmt::format("; {:.3g} engine events over {} iterations, ", iterations * events_per_iteration(),
                                 iterations)) != std::string::npos);
    CHECK(r.err.ends_with("make the run smaller, or pass --force to run it anyway (docs/reliability.md)\n"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("a run whose one iteration is too long names what makes it so") {
  TempDir tmp;
  json sc = scenario();
  sc["training"]["collective"] = {{"name", "tree"}, {"params", {{"segments", 1 << 20}}}};
  const auto r = ddlsim::test::ddlsim(
      fmt::format("run {} --out {} --max-time 10s", tmp.write("s.json", sc.dump()), tmp.file("out")));
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("ddlsim: error: /training/collective/params: this run is estimated at "));
  CHECK(r.err.find("above the --max-time limit of 10 s (most of it for the collective flows; ") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "out"));
}

TEST_CASE("a run estimated above --max-memory is refused, and --force runs it anyway") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", scenario().dump());
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --max-memory 1MB", file, tmp.file("out")));
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("ddlsim: error: /platform/workers: this run is estimated at "));
  CHECK(r.err.find("of memory, more than the --max-memory limit of 1 MB (most of it for the platform hosts and actors; "
                   "") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "out"));
  const auto forced =
      ddlsim::test::ddlsim(fmt::format("run {} --out {} --max-memory 1MB --force --quiet", file, tmp.file("out")));
  CHECK(forced.exit_code == 0);
  CHECK(fs::exists(tmp.path() / "out" / "summary.json"));
}

TEST_CASE("--estimate prints the estimate as JSON and runs nothing") {
  TempDir tmp;
  const auto r = ddlsim::test::ddlsim(
      fmt::format("run {} --out {} --estimate", tmp.write("s.json", scenario().dump()), tmp.file("out")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json e = json::parse(r.out);
  CHECK(e["iterations"] == 10);
  CHECK(e["events"].get<double>() == doctest::Approx(10 * events_per_iteration()));
  CHECK(e["flows"].get<double>() == doctest::Approx(10 * N * 2.0 * (N - 1) * BUCKETS));
  CHECK(e["wall_s"].get<double>() > 0);
  CHECK(e["memory_bytes"].get<double>() > 0);
  CHECK(e["refused"].is_null());
  CHECK_FALSE(fs::exists(tmp.path() / "out"));
}

TEST_CASE("progress: a bar on request, nothing for a short run in a log, a bad style refused") {
  TempDir tmp;
  const std::string file = tmp.write("s.json", scenario().dump());
  const auto bar = ddlsim::test::ddlsim(fmt::format("run {} --out {} --quiet --progress bar", file, tmp.file("a")));
  CHECK(bar.exit_code == 0);
  CHECK(bar.err.find("] 100.0%  10/10 iterations  simulated ") != std::string::npos);
  // stderr is a file here: "auto" prints a line every 10 s, and this run is shorter.
  const auto log = ddlsim::test::ddlsim(fmt::format("run {} --out {} --progress auto", file, tmp.file("b")));
  CHECK(log.exit_code == 0);
  CHECK(log.err.empty());
  const auto bad = ddlsim::test::ddlsim(fmt::format("run {} --out {} --progress sometimes", file, tmp.file("c")));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "ddlsim: error: --progress: expected auto, bar, lines or none, got \"sometimes\"\n");
}

TEST_CASE("link traces: every period replays every entry on every traced link, and a fast one is refused") {
  TempDir tmp;
  json sc = scenario();
  // 10 layers of 100 s forward and backward: 2,000 s of compute per iteration, far above the all-reduces.
  sc["workload"]["synthetic"]["forward_s"] = "100s";
  sc["workload"]["synthetic"]["backward_s"] = "100s";
  sc["network"] = {{"link_traces", json::array({{{"bandwidth", json::array({json::array({0, "10Gbps"}),
                                                                              json::array({0.0005, "5Gbps"})})},
                                                 {"period", "1ms"}}})}};
  const std::string file = tmp.write("s.json", sc.dump());
  // Two entries per 1 ms period over 10 x 2,000 s, plus the first period's, on each of the star's 8
  // links. (The simulated time bound adds the all-reduces at the trace's slowest 5 Gbps: two 25 MB
  // ring all-reduces among 8, 0.14 s, less than 1e-4 of the compute.)
  const double trace_events = (10 * 2 * 2000.0 / 1e-3 + 2) * N;
  const auto estimate = ddlsim::test::ddlsim(fmt::format("run {} --estimate", file));
  REQUIRE(estimate.exit_code == 0);
  const json e = json::parse(estimate.out);
  CHECK(e["trace_events"].get<double>() == doctest::Approx(trace_events).epsilon(1e-4));
  CHECK(e["trace_events"].get<double>() > trace_events);
  CHECK(e["events"].get<double>() - e["trace_events"].get<double>() == doctest::Approx(10 * events_per_iteration()));
  const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --max-time 60s", file, tmp.file("out")));
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path() / "out"));
  CHECK(r.err.starts_with("ddlsim: error: /network/link_traces/0/period: this run is estimated at "));
  CHECK(r.err.find("(most of it for the link-trace events; ") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  // The same trace without a period replays its two entries once.
  sc["network"]["link_traces"][0].erase("period");
  const std::string once = tmp.write("once.json", sc.dump());
  const json e1 = json::parse(ddlsim::test::ddlsim(fmt::format("run {} --estimate", once)).out);
  CHECK(e1["trace_events"].get<double>() == 2.0 * N);
}

TEST_CASE("progress: until the simulation starts, the line says what the run is doing") {
  using ddlsim::sim::Progress;
  Progress lines(ddlsim::sim::ProgressStyle::LINES, 10);
  lines.phase("building the platform");
  CHECK(lines.line(30) == "ddlsim: building the platform: elapsed 0:30, ETA ?");
  lines.phase(nullptr);
  CHECK(lines.line(30) == "ddlsim: progress: 0/10 iterations (0.0 %), simulated 0 s, elapsed 0:30, ETA ?");
  Progress bar(ddlsim::sim::ProgressStyle::BAR, 10);
  bar.phase("building the platform");
  CHECK(bar.line(75) == "ddlsim: building the platform... elapsed 1:15, ETA ?");
  bar.update(1, 2.5);  // an iteration completed: the count again, whatever the phase
  CHECK(bar.line(75).starts_with("ddlsim: [##..................]  10.0%  1/10 iterations  simulated 2.5 s"));
}

TEST_CASE("--estimate: the workers simulated one by one (classes of identical workers on the fiber lane)") {
  TempDir tmp;
  json sc = scenario();
  sc["platform"]["workers"] = 64;
  const std::string file = tmp.write("s.json", sc.dump());
  auto simulated = [&](const std::string& sets) {
    const auto r = ddlsim::test::ddlsim(fmt::format("run {} --out {} --estimate {}", file, tmp.file("out"), sets));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return json::parse(r.out)["simulated_workers"].get<double>();
  };
  CHECK(simulated("") == 64);                                                              // flow: every worker
  CHECK(simulated("--set network.fidelity=analytic") == 8);                                // rank 0 + the timeline's 0-7
  CHECK(simulated("--set network.fidelity=analytic --set output.timeline=false") == 1);    // one class
  CHECK(simulated("--set network.fidelity=analytic --set output.timeline=false "
                  "--set 'training.stragglers.slow=[{\"rank\":9,\"factor\":2}]'") == 2);  // two speeds
  CHECK(simulated("--set network.fidelity=analytic --set output.timeline=false "
                  "--set 'training.stragglers={\"distribution\":\"normal\",\"sigma\":0.1}'") == 64);  // noise
}
