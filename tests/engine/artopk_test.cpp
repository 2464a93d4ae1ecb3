// AR-Topk (seed 002, Tyagi & Swany 2023) through `ddlsim collectives`: on the
// uncontended star (ideal network, no call cost) the simulated artopk_ring and
// artopk_tree equal the seed's closed forms, and the collective the seed's
// inequalities pick (models/artopk_choice.hpp) is the fastest simulated one on
// both sides of each crossover. -m is M_c (one worker's top-k values) for the
// AR-Topk collectives and 2 N M_c (every worker's values + indices) for the
// all-gather. On the star a message costs alpha = 2 l (two host links) plus its
// bytes times beta = 1 / B.
#include "models/artopk_choice.hpp"
#include "tests/support/cli.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <string>

namespace {

struct Point {
  int n;
  double mc_bytes;
  double bandwidth_gbps;
  double latency_us;
};

double ceil_log2_of(int n) {
  double l = 0;
  for (long p = 1; p < n; p *= 2) ++l;
  return l;
}

struct Simulated {
  double ring_s, tree_s, allgather_s;
};

Simulated simulate(const Point& p, const std::string& extra = "") {
  const std::string link = fmt::format("-b {}Gbps -l {}us", p.bandwidth_gbps, p.latency_us);
  auto ar = ddlsim::test::collectives_csv(
      fmt::format("--call-cost 0 -n {} -m {} {} --algorithms artopk_ring,artopk_tree {}", p.n, p.mc_bytes, link,
                  extra));
  auto ag = ddlsim::test::collectives_csv(
      fmt::format("--call-cost 0 -n {} -m {} {} --algorithms bruck_allgather", p.n, 2.0 * p.n * p.mc_bytes, link));
  CHECK(ar["artopk_ring"].operation == "artopk");
  CHECK(ar["artopk_tree"].operation == "artopk");
  return Simulated{ar["artopk_ring"].simulated_s, ar["artopk_tree"].simulated_s, ag["bruck_allgather"].simulated_s};
}

std::string fastest(const Simulated& s) {
  if (s.ring_s < s.tree_s && s.ring_s < s.allgather_s) return "artopk_ring";
  if (s.tree_s < s.allgather_s && s.tree_s < s.ring_s) return "artopk_tree";
  return "allgather";
}

void check_pick(const Point& p, const std::string& expected) {
  CAPTURE(p.n);
  CAPTURE(p.mc_bytes);
  CAPTURE(p.bandwidth_gbps);
  CAPTURE(p.latency_us);
  const double alpha = 2 * p.latency_us * 1e-6, beta = 8 / (p.bandwidth_gbps * 1e9);
  const auto choice = ddlsim::models::choose_artopk(p.n, alpha, beta, p.mc_bytes);
  CHECK(to_string(choice.fastest) == expected);
  CHECK(fastest(simulate(p)) == expected);
}

}  // namespace

TEST_CASE("artopk: simulated = the seed's closed forms on the star, N powers of two and not") {
  for (int n : {2, 5, 8, 16}) {
    for (double mc : {1000.0, 1048576.0}) {
      const Point p{n, mc, 10, 5};
      CAPTURE(n);
      CAPTURE(mc);
      const double a = 10e-6, b = 8e-10, l = ceil_log2_of(n);
      const Simulated s = simulate(p);
      CHECK(s.ring_s == doctest::Approx(a * (2.0 * (n - 1) + l) + mc * b * (2.0 * (n - 1) / n + l)).epsilon(1e-6));
      CHECK(s.tree_s == doctest::Approx(3 * a * l + 3 * mc * b * l).epsilon(1e-6));
      CHECK(s.allgather_s == doctest::Approx(a * l + 2.0 * (n - 1) * mc * b).epsilon(1e-6));
    }
  }
  // Any root, pipelined too.
  const double a = 10e-6, b = 8e-10, mc = 65536;
  const Simulated rooted =
      simulate(Point{7, mc, 10, 5},
               "--granularity pipelined --params '{\"artopk_ring\": {\"root\": 5}, \"artopk_tree\": {\"root\": 6}}'");
  CHECK(rooted.ring_s == doctest::Approx(a * (12 + 3) + mc * b * (12.0 / 7 + 3)).epsilon(1e-6));
  CHECK(rooted.tree_s == doctest::Approx(9 * (a + mc * b)).epsilon(1e-6));
}

TEST_CASE("artopk: the seed's pick is the fastest simulated, on both sides of each crossover") {
  // M_c across the crossovers, N = 8, 10 Gbps, 5 us (alpha/beta = 12500 B): all-gather below
  // 12500 / (7/3 - 3/2) = 15000 B, the tree up to 12500 / 0.53125 = 23529 B, the ring above.
  check_pick(Point{8, 13500, 10, 5}, "allgather");
  check_pick(Point{8, 16500, 10, 5}, "artopk_tree");
  check_pick(Point{8, 21000, 10, 5}, "artopk_tree");
  check_pick(Point{8, 26000, 10, 5}, "artopk_ring");
  // N = 4, 100 Gbps, 2 us (alpha/beta = 50000 B): the tree never beats the all-gather
  // ((N-1)/L - 3/2 = 0); the ring does above 50000 / (1 - 1/4 - 2/6) = 120000 B.
  check_pick(Point{4, 108000, 100, 2}, "allgather");
  check_pick(Point{4, 132000, 100, 2}, "artopk_ring");
  // Latency across the ring/tree crossover, N = 64, M_c = 100 kB, 10 Gbps:
  // alpha* = (6 - 63/64) / 57 * M_c beta = 7.04 us, i.e. l* = 3.52 us.
  check_pick(Point{64, 100000, 10, 3}, "artopk_ring");
  check_pick(Point{64, 100000, 10, 4}, "artopk_tree");
  // Bandwidth across it, N = 8, M_c = 20 kB, 5 us: ring/tree tie at alpha/beta = 0.53125 M_c
  // = 10625 B, i.e. B* = 10625 B / 10 us = 8.5 Gbps.
  check_pick(Point{8, 20000, 8, 5}, "artopk_ring");
  check_pick(Point{8, 20000, 9, 5}, "artopk_tree");
}
