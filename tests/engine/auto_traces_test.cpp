// "auto" under link traces: its contention estimate prices the links as the traces make them when
// it picks (per iteration at flow fidelity, per bucket at analytic fidelity: docs/scenario.md), so
// a traced latency gives the pick and the time of the same latency set statically.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using ddlsim::test::TempDir;
using nlohmann::json;

namespace {

struct Run {
  json summary;
  std::vector<std::string> collectives;  // worker 0's, per iteration
};

Run run(const TempDir& tmp, const std::string& name, const std::string& sets) {
  const auto r = ddlsim::test::ddlsim(fmt::format("run {}/scenarios/fat_tree_k4.json --set training.collective.name=auto {} "
                                                  "--out {} --quiet",
                                                  DDLSIM_SOURCE_DIR, sets, tmp.file(name)));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  Run out{json::parse(ddlsim::test::slurp(tmp.path() / name / "summary.json")), {}};
  const auto csv = ddlsim::test::Csv::read(tmp.path() / name / "iterations.csv");
  for (std::size_t i = 0; i < csv.size(); ++i)
    if (csv.at(i, "worker") == "0") out.collectives.push_back(csv.at(i, "collective"));
  return out;
}

}  // namespace

TEST_CASE("auto prices a traced latency as it prices the same latency set statically") {
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    const std::string f = fmt::format("--set network.fidelity={} --set workload.iterations=2", fidelity);
    const auto fast = run(tmp, "fast", f);
    const auto slow = run(tmp, "slow", f + " --set platform.link.latency=5ms");
    const auto traced = run(tmp, "traced", f + R"( --set 'network.link_traces=[{"latency":[[0,"5ms"]]}]')");
    REQUIRE(fast.collectives.front() != slow.collectives.front());  // the latency changes the pick
    CHECK(traced.collectives == slow.collectives);
    CHECK(traced.summary["iteration_time_s"].get<double>() ==
          doctest::Approx(slow.summary["iteration_time_s"].get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("auto changes its pick when a traced latency rises mid-run") {
  // 1 us links until 0.3 s, 5 ms after: iteration 0 (before the rise) runs what 1 us links pick;
  // from the first iteration that starts after the rise, what 5 ms links pick.
  TempDir tmp;
  for (const char* fidelity : {"flow", "analytic"}) {
    CAPTURE(fidelity);
    const std::string f = fmt::format("--set network.fidelity={} --set workload.iterations=5", fidelity);
    const auto fast = run(tmp, "fast", f);
    const auto slow = run(tmp, "slow", f + " --set platform.link.latency=5ms");
    const auto traced = run(tmp, "rise", f + R"( --set 'network.link_traces=[{"latency":[[0.3,"5ms"]]}]')");
    REQUIRE(traced.collectives.size() == 5);
    CHECK(traced.collectives.front() == fast.collectives.front());
    CHECK(traced.collectives.back() == slow.collectives.back());
    CHECK(traced.collectives[3] == slow.collectives[3]);
  }
}
