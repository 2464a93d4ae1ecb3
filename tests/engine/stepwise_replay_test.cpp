// The stepwise replay (engine/stepwise_replay.hpp): `ddlsim collectives` replays a lockstep schedule
// whose transfers never share a link without SimGrid's actors. Where it does, its times equal
// SimGrid's (--solver simgrid) for every collective, both granularities, the ideal and calibrated
// models and a library's software costs; where transfers share a link, a schedule is windowed or the
// model has a TCP window, SimGrid runs it, and the table says which rows were replayed.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace {

using ddlsim::test::collectives_csv;


/// The algorithms the table's last line names as replayed ("" when none was).
std::string replayed_line(const std::string& args) {
  const auto r = ddlsim::test::ddlsim("collectives " + args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string key = "replayed without SimGrid's actors";
  const auto at = r.out.find(key);
  if (at == std::string::npos) return "";
  const auto colon = r.out.find(": ", at);
  return r.out.substr(colon + 2, r.out.find('\n', colon) - colon - 2);
}

/// Every row's simulated time with the replay equals SimGrid's (9 significant digits printed).
void check_same_times(const std::string& args) {
  CHECK(replayed_line(args).find("ring") != std::string::npos);  // the replay ran (the ring at least)
  const auto replay = collectives_csv(args);
  const auto simgrid = collectives_csv(args + " --solver simgrid");
  REQUIRE(replay.size() == simgrid.size());
  for (const auto& [name, row] : replay) {
    CAPTURE(name);
    CAPTURE(args);
    REQUIRE(simgrid.count(name) == 1);
    const double expected = simgrid.at(name).simulated_s;
    REQUIRE(expected > 0);
    CHECK(std::abs(row.simulated_s - expected) <= 1e-8 * expected);
  }
}

}  // namespace

TEST_CASE("the stepwise replay equals SimGrid for every collective, granularity, model and software") {
  for (const char* granularity : {"stepwise", "pipelined"})
    for (const char* model : {"--model ideal", "--model calibrated --latency-factor 2.5 --bandwidth-factor 0.8"})
      for (const char* software : {"", "--software nccl", "--software gloo"})
        check_same_times(fmt::format("-n 8 -m 4MiB -b 10Gbps -l 2us --servers 2 --granularity {} {} {}", granularity,
                                     model, software));
  // A fat tree's shortest routes, a hierarchical schedule, rate caps below the links' (a 5 ms window).
  check_same_times("-n 16 -t fat_tree --topology-params '{\"k\": 4}' -m 1MiB -b 1Gbps -l 5us --software nccl");
}

TEST_CASE("the replay takes the rows whose transfers never share a link and leaves the rest to SimGrid") {
  // On the star every link is a host's own: the ring's sends go one at a time through each.
  const std::string ring = replayed_line("-n 8 -m 1MiB --algorithms ring,direct");
  CHECK(ring == "ring");  // direct's sends leave a host together: its NIC is shared, so SimGrid
  // Windowed steps (gloo's ring) and the TCP model's window are SimGrid's.
  CHECK(replayed_line("-n 8 -m 1MiB --algorithms gloo_ring,ring") == "ring");
  CHECK(replayed_line("-n 8 -m 1MiB --algorithms ring --model tcp").empty());
  CHECK(replayed_line("-n 8 -m 1MiB --algorithms ring --solver simgrid").empty());
  // The analytic closed form of an uncontended ring: 2 (N-1) (alpha + M/N beta) + the call cost.
  const double n = 64, m = 1 << 26, alpha = 1e-6, beta = 8.0 / 25e9, call = 10e-6;
  const auto rows = collectives_csv(fmt::format("-n {} -m 64MiB -b 25Gbps -l 1us --algorithms ring", n));
  CHECK(rows.at("ring").simulated_s == doctest::Approx(call + 2 * (n - 1) * (2 * alpha + m / n * beta)).epsilon(1e-8));
}

TEST_CASE("the solver option names its choices") {
  const auto r = ddlsim::test::ddlsim("collectives -n 4 --solver lmm");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--solver") != std::string::npos);
  CHECK(r.err.find("auto") != std::string::npos);
  CHECK(r.err.find("simgrid") != std::string::npos);
}
