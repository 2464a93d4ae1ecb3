// Every collective has two faces: simulated (SimGrid, ideal network model,
// uncontended star) must equal its closed form. `ddlsim collectives --csv`
// runs every registered algorithm in one engine, one after another, so one
// process covers all algorithms for one (N, M).
//
// Stepwise: within 1e-6 relative (SimGrid's timing precision and the 1/1024
// byte quantisation are far below that).
// Pipelined: consecutive steps with the same peers become one flow plus the
// skipped latencies. On the uncontended star a merged phase moves the same
// bytes through the same NICs, so it also matches within 1e-6 relative; the
// test holds pipelined to PIPELINED_TOLERANCE and docs/engine.md ("Pipelined granularity") says why
// the two can differ under contention.
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>
#include <sstream>

namespace {

constexpr double STEPWISE_TOLERANCE = 1e-6;
constexpr double PIPELINED_TOLERANCE = 1e-6;

using Row = ddlsim::test::CollectiveRow;

std::map<std::string, Row> run_csv(const std::string& args) {
  // --call-cost 0: the identities are about the algorithms' alpha-beta forms.
  return ddlsim::test::collectives_csv("--call-cost 0 " + args);
}

void check_identity(int n) {
  for (const char* m : {"1KiB", "1MiB", "100MiB"}) {
    for (const char* granularity : {"stepwise", "pipelined"}) {
      for (int servers : {1, 4}) {
        const auto rows = run_csv(fmt::format("-n {} -m {} -b 25Gbps -l 1us --servers {} --granularity {}", n, m,
                                              servers, granularity));
        CHECK(rows.size() >= 1);
        for (const auto& [name, row] : rows) {
          CAPTURE(name);
          CAPTURE(m);
          CAPTURE(granularity);
          CAPTURE(servers);
          const double tol = std::string(granularity) == "stepwise" ? STEPWISE_TOLERANCE : PIPELINED_TOLERANCE;
          CHECK(row.simulated_s == doctest::Approx(row.analytic_s).epsilon(tol));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("collective identity N=2") { check_identity(2); }
TEST_CASE("collective identity N=3") { check_identity(3); }
TEST_CASE("collective identity N=4") { check_identity(4); }
TEST_CASE("collective identity N=7") { check_identity(7); }
TEST_CASE("collective identity N=8") { check_identity(8); }
TEST_CASE("collective identity N=16") { check_identity(16); }
TEST_CASE("collective identity N=64") { check_identity(64); }

TEST_CASE("contention: ring all-reduce on a k=4 fat tree, 4:1 oversubscribed vs full bisection") {
  // 16 hosts, 2 per edge switch. Ring neighbour r -> r+1 stays under one edge
  // switch for even r, and climbs to the aggregation (same pod) or core layer
  // (next pod) for odd r: at most one ring flow per direction of any switch
  // link, so every step is gated by the longest flow, the one that crosses
  // the core: 6 links of latency l, and with 4:1 oversubscription its
  // switch-to-switch links run at B/4. Per step: 6 l + (M/N) / B_bottleneck.
  const int n = 16;
  const double m = 100.0 * 1024 * 1024;
  const double bw = 10e9 / 8, lat = 1e-6;
  auto full = run_csv("-n 16 -m 100MiB -b 10Gbps -l 1us -t fat_tree --servers 0 --algorithms ring "
                      "--topology-params '{\"k\":4,\"oversubscription\":1}'");
  auto over = run_csv("-n 16 -m 100MiB -b 10Gbps -l 1us -t fat_tree --servers 0 --algorithms ring "
                      "--topology-params '{\"k\":4,\"oversubscription\":4}'");
  const double t_full = 2.0 * (n - 1) * (6 * lat + m / n / bw);
  const double t_over = 2.0 * (n - 1) * (6 * lat + m / n / (bw / 4));
  CHECK(full["ring"].simulated_s == doctest::Approx(t_full).epsilon(1e-6));
  CHECK(over["ring"].simulated_s == doctest::Approx(t_over).epsilon(1e-6));
  CHECK(over["ring"].simulated_s / full["ring"].simulated_s == doctest::Approx(t_over / t_full).epsilon(1e-6));
  CHECK(t_over / t_full > 3.99);
}

TEST_CASE("topology-aware MultiTree on a 4x4 torus: every message crosses one link, none share one") {
  // Trees grow over direct links only and every rank sends and receives at most
  // one message per tick, so each tick costs exactly one link latency plus
  // (M/K) beta. The closed form charges the analytic alpha (the worst path from
  // worker 0: 4 hops) per tick, which gives the tick count.
  const double lat = 1e-6, beta = 8.0 / 25e9, m = 16.0 * 1024 * 1024, k = 4;
  auto rows = run_csv("-n 16 -m 16MiB -b 25Gbps -l 1us -t torus --servers 0 --algorithms multitree "
                      "--topology-params '{\"dims\":[4,4]}'");
  const double ticks = rows["multitree"].analytic_s / (4 * lat + m / k * beta);
  CHECK(ticks == doctest::Approx(std::round(ticks)).epsilon(1e-9));
  CHECK(rows["multitree"].simulated_s == doctest::Approx(std::round(ticks) * (lat + m / k * beta)).epsilon(1e-6));
}
