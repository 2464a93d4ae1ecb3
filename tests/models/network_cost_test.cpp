// The contention-aware schedule cost (models/network_cost.hpp) on hand-built
// networks: on the uniform one-switch star it must equal the closed forms
// (derived here for ring and direct, checked for every algorithm); its limits
// give up instead of running long, and "auto" then says it used the closed forms.
#include "models/collective.hpp"
#include "models/network_cost.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

std::unique_ptr<Collective> make(const std::string& name, const json& params = json::object()) {
  return CollectiveRegistry::instance().create(name, params, "/training/collective/name", "/training/collective/params",
                                               "collective");
}

/// A one-switch star of `ranks` hosts: link 2h is host h's uplink, 2h+1 its downlink;
/// every link has bandwidth `bw` and latency `lat`, so alpha = 2 lat and beta = 1 / bw.
NetworkPaths star(int ranks, double bw, double lat) {
  NetworkPaths p;
  p.ranks = ranks;
  p.bandwidth_Bps.assign(static_cast<std::size_t>(2 * ranks), bw);
  p.latency_s.assign(static_cast<std::size_t>(2 * ranks), lat);
  p.route = [](int a, int b) { return std::vector<int>{2 * a, 2 * b + 1}; };
  return p;
}

CollectiveGroup with_cost(int workers, int servers, std::shared_ptr<const NetworkCost> cost) {
  CollectiveGroup g(workers, servers);
  g.network_cost = std::move(cost);
  return g;
}

}  // namespace

TEST_CASE("network cost on the uniform star: ring and direct equal their derived closed forms") {
  // Ring: 2(N-1) rounds; in each every rank sends M/N to its right neighbour, so
  // every uplink and downlink carries one flow: a step costs 2 lat + (M/N)/bw.
  // Direct: two rounds (reduce-scatter, all-gather); in each every rank sends
  // M/N to each of the N-1 others, so its uplink carries N-1 flows and the
  // transfer's worst link gives 2 lat + (N-1)(M/N)/bw per round.
  const double bw = 3.125e9, lat = 1e-6;
  for (int n : {2, 3, 8, 16}) {
    for (double m : {1024.0, 104857600.0}) {
      CAPTURE(n);
      CAPTURE(m);
      const ContentionCost cost(star(n, bw, lat));
      const CollectiveGroup g(n, 0);
      const double ring = 2.0 * (n - 1) * (2 * lat + m / n / bw);
      const double direct = 2.0 * (2 * lat + (n - 1) * (m / n) / bw);
      CHECK(*cost.evaluate(*make("ring"), g, m) == doctest::Approx(ring).epsilon(1e-12));
      CHECK(*cost.evaluate(*make("direct"), g, m) == doctest::Approx(direct).epsilon(1e-12));
      // ... which are the closed forms at alpha = 2 lat, beta = 1 / bw.
      const AlphaBeta ab{2 * lat, 1 / bw};
      CHECK(ring == doctest::Approx(make("ring")->analytic_time_s(g, m, ab)).epsilon(1e-12));
      CHECK(direct == doctest::Approx(make("direct")->analytic_time_s(g, m, ab)).epsilon(1e-12));
    }
  }
}

TEST_CASE("network cost on the uniform star equals every algorithm's closed form, stepwise and pipelined") {
  // Except the binary tree on a heap that is not perfect (N = 8, 16, 33 here): there a
  // node's two children finish their subtrees at different times and their transfers
  // into its downlink fall in different rounds, so the estimate does not charge their
  // partial overlap (tree.cpp's max(x + tau, y + c)) and is lower, by up to 11% here.
  const double bw = 3.125e9, lat = 1e-6;
  const AlphaBeta ab{2 * lat, 1 / bw};
  for (const auto& name : CollectiveRegistry::instance().names()) {
    if (name == "auto") continue;
    auto c = make(name);
    if (name == "gloo_ring") {  // windowed steps: no estimate, the caller uses the closed form
      const ContentionCost cost(star(4, bw, lat), ContentionLimits{}, ScheduleForm::STEPWISE);
      CHECK_FALSE(cost.evaluate(*c, CollectiveGroup(4, 0), 1048576.0).has_value());
      continue;
    }
    for (int n : {1, 2, 3, 4, 7, 8, 16, 33}) {
      for (int servers : c->uses_servers() ? std::vector<int>{1, 4} : std::vector<int>{0}) {
       for (const auto form : {ScheduleForm::STEPWISE, ScheduleForm::PIPELINED}) {
        const ContentionCost cost(star(n + servers, bw, lat), ContentionLimits{}, form);
        for (double m : {1024.0, 1048576.0, 104857600.0}) {
          CAPTURE(name);
          CAPTURE(form == ScheduleForm::PIPELINED);
          CAPTURE(n);
          CAPTURE(servers);
          CAPTURE(m);
          const CollectiveGroup g(n, servers);
          const double estimate = *cost.evaluate(*c, g, m), closed = c->analytic_time_s(g, m, ab);
          if (name == "tree" && (n == 8 || n == 16 || n == 33)) {
            CHECK(estimate < closed);
            CHECK(estimate > 0.85 * closed);
          } else {
            CHECK(estimate == doctest::Approx(closed).epsilon(1e-9));
          }
        }
       }
      }
    }
  }
}

TEST_CASE("network cost: a dumbbell, where direct's flows share the trunk") {
  // Ranks 0, 1 on switch A, ranks 2, 3 on switch B, A and B joined by a trunk.
  // Links: 2h = host h's uplink, 2h+1 its downlink, 8 = trunk A -> B, 9 = trunk B -> A;
  // every link has bandwidth bw; host links latency lat, the trunk latency trunk_lat.
  const double bw = 1e9, lat = 1e-6, trunk_lat = 5e-6, m = 4e6;
  NetworkPaths p;
  p.ranks = 4;
  p.bandwidth_Bps.assign(10, bw);
  p.latency_s.assign(10, lat);
  p.latency_s[8] = p.latency_s[9] = trunk_lat;
  p.route = [](int a, int b) {
    if (a / 2 == b / 2) return std::vector<int>{2 * a, 2 * b + 1};
    return std::vector<int>{2 * a, a < 2 ? 8 : 9, 2 * b + 1};
  };
  const ContentionCost cost(p);
  const CollectiveGroup g(4, 0);
  // Ring 0 -> 1 -> 2 -> 3 -> 0: 1 -> 2 and 3 -> 0 cross the trunk, one flow per direction;
  // every step is gated by a crossing: 2 lat + trunk_lat + (M/4)/bw, 2(N-1) = 6 steps.
  CHECK(*cost.evaluate(*make("ring"), g, m) == doctest::Approx(6 * (2 * lat + trunk_lat + m / 4 / bw)).epsilon(1e-12));
  // Direct: per round every rank sends M/4 to the 3 others; 0 and 1 each send to 2 and 3,
  // so the trunk carries 4 flows per direction (hosts' uplinks only 3): a crossing costs
  // 2 lat + trunk_lat + 4 (M/4)/bw, two rounds.
  CHECK(*cost.evaluate(*make("direct"), g, m) == doctest::Approx(2 * (2 * lat + trunk_lat + m / bw)).epsilon(1e-12));
  // The closed form at the worst path (alpha = 2 lat + trunk_lat) misses the trunk's sharing.
  const AlphaBeta ab{2 * lat + trunk_lat, 1 / bw};
  CHECK(make("direct")->analytic_time_s(g, m, ab) == doctest::Approx(2 * (2 * lat + trunk_lat + 0.75 * m / bw)));
}

TEST_CASE("network cost: limits give up, auto falls back to the closed forms and says so") {
  const double bw = 3.125e9, lat = 1e-6;
  const AlphaBeta ab{2 * lat, 1 / bw};
  const CollectiveGroup plain(16, 0);
  auto all = make("auto");

  // Too many ranks: no estimate at all.
  auto tiny = std::make_shared<const ContentionCost>(star(16, bw, lat), ContentionLimits{8, 10'000'000});
  CHECK_FALSE(tiny->time_s(*make("ring"), plain, 1e6).has_value());
  const auto fallback = models::choice(*all, with_cost(16, 0, tiny), 1e8, ab);
  REQUIRE(fallback.has_value());
  CHECK(fallback->basis == "closed form (platform too large for the contention estimate)");
  CHECK(fallback->algorithm == models::choice(*all, plain, 1e8, ab)->algorithm);
  CHECK(fallback->estimated_s == all->analytic_time_s(plain, 1e8, ab));

  // A flow-hop budget of 500: direct (2 N (N-1) = 480 transfers of 2 links each) and the ring
  // (2 (N-1) N = 480 transfers too) exceed it, recursive doubling (N log2 N = 64 transfers,
  // 128 link crossings) does not: ring and direct are left out, and the basis names them.
  auto budget = std::make_shared<const ContentionCost>(star(16, bw, lat), ContentionLimits{1024, 500});
  CHECK_FALSE(budget->time_s(*make("direct"), plain, 1e6).has_value());
  CHECK_FALSE(budget->time_s(*make("ring"), plain, 1e6).has_value());
  CHECK(budget->time_s(*make("recursive_doubling"), plain, 1e6).has_value());
  const auto partial = models::choice(*all, with_cost(16, 0, budget), 1e8, ab);
  REQUIRE(partial.has_value());
  CHECK(partial->basis.rfind("contention estimate (", 0) == 0);
  CHECK(partial->basis.find("direct") != std::string::npos);
  CHECK(partial->basis.find("ring") != std::string::npos);
  CHECK(partial->algorithm != "direct");
  CHECK(partial->algorithm != "ring");

  // Without a cost: the closed forms, as before.
  CHECK(models::choice(*all, plain, 1e8, ab)->basis == "closed form");
  CHECK(models::choice(*all, plain, 1e8, ab)->algorithm == "direct");
  CHECK_FALSE(models::choice(*make("ring"), plain, 1e8, ab).has_value());
}

TEST_CASE("network cost: memoised per algorithm, group and size and auto's pick and cost come from it") {
  const double bw = 3.125e9, lat = 1e-6;
  auto cost = std::make_shared<const ContentionCost>(star(8, bw, lat));
  auto ring = make("ring");
  const CollectiveGroup g = with_cost(8, 0, cost);
  const auto first = cost->time_s(*ring, g, 1e6);
  CHECK(first == cost->time_s(*ring, g, 1e6));
  CHECK(*first == doctest::Approx(14 * (2e-6 + 1e6 / 8 / bw)).epsilon(1e-12));
  // On the uniform star the estimate is the closed form, so auto picks as before.
  auto all = make("auto");
  const AlphaBeta ab{2 * lat, 1 / bw};
  const auto c = models::choice(*all, g, 1e8, ab);
  REQUIRE(c.has_value());
  CHECK(c->basis == "contention estimate");
  CHECK(c->algorithm == "direct");
  CHECK(c->estimated_s == doctest::Approx(all->analytic_time_s(CollectiveGroup(8, 0), 1e8, ab)).epsilon(1e-9));
  CHECK(models::resolved_name(*all, g, 1e8, ab) == "direct");
}
