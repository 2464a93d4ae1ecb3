// gathered_auto: models/gathered_auto.cpp. "auto" under a gathering compressor picks, per call, the
// all-gather with the smallest closed form; under AR-Topk it follows seed 002's alpha-beta
// inequalities (models/artopk_choice.hpp) among AR-Topk's ring, its tree and the all-gather of
// every worker's top-k (Bruck's, 2 M_c bytes per worker).
#include "models/artopk_choice.hpp"
#include "models/gathered_auto.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace ddlsim;
using namespace ddlsim::models;
using nlohmann::json;

namespace {

std::unique_ptr<Collective> collective(const std::string& name) {
  return CollectiveRegistry::instance().create(name, json::object(), "", "", "");
}

std::unique_ptr<Collective> cheapest() {
  std::vector<std::pair<std::string, std::unique_ptr<Collective>>> candidates;
  candidates.emplace_back("ring_allgather", collective("ring_allgather"));
  candidates.emplace_back("bruck_allgather", collective("bruck_allgather"));
  return make_cheapest_allgather(std::move(candidates));
}

}  // namespace

TEST_CASE("gathered_auto: the cheapest all-gather is the candidate with the smallest closed form") {
  const auto all = cheapest();
  const auto ring = collective("ring_allgather");
  const auto bruck = collective("bruck_allgather");
  CHECK(all->operation() == "allgather");
  for (const int n : {2, 3, 8, 12, 64})
    for (const double bytes : {64.0, 1e6, 1e9})
      for (const AlphaBeta& ab : {AlphaBeta{1e-3, 1e-12}, AlphaBeta{1e-6, 1e-9}}) {
        const CollectiveGroup g(n);
        const double r = ring->analytic_time_s(g, bytes, ab), b = bruck->analytic_time_s(g, bytes, ab);
        const std::string want = b < r ? "bruck_allgather" : "ring_allgather";
        CHECK(resolved_name(*all, g, bytes, ab) == want);
        CHECK(&resolve(*all, g, bytes, ab) != all.get());
        CHECK(all->analytic_time_s(g, bytes, ab) == std::min(r, b));
        const auto c = choice(*all, g, bytes, ab);
        REQUIRE(c.has_value());
        CHECK(c->algorithm == want);
        CHECK(c->estimated_s == std::min(r, b));
        CHECK(c->basis == "closed form (all-gathers)");
      }
  // Latency-bound at 8 ranks: Bruck's log2(8) = 3 rounds beat the ring's 7 steps.
  CHECK(resolved_name(*all, CollectiveGroup(8), 64, AlphaBeta{1e-3, 1e-12}) == "bruck_allgather");
}

TEST_CASE("gathered_auto: under AR-Topk, auto follows seed 002's inequalities per call") {
  const auto all = make_artopk_auto();
  CHECK(all->operation() == "artopk");
  const auto bruck = collective("bruck_allgather");
  int seen[3] = {0, 0, 0};
  for (const int n : {2, 4, 8, 16, 32})
    for (const double mc : {4.0, 4e3, 4e6})
      for (const AlphaBeta& ab : {AlphaBeta{1e-3, 1e-11}, AlphaBeta{1e-5, 1e-9}, AlphaBeta{1e-7, 1e-8}}) {
        const CollectiveGroup g(n);
        const auto c = choose_artopk(n, ab.alpha_s, ab.beta_s_per_byte, mc);
        ++seen[static_cast<int>(c.fastest)];
        CHECK(resolved_name(*all, g, mc, ab) == to_string(c.fastest));
        const auto& runs = resolve(*all, g, mc, ab);
        CHECK(all->analytic_time_s(g, mc, ab) == runs.analytic_time_s(g, mc, ab));
        const auto picked = choice(*all, g, mc, ab);
        REQUIRE(picked.has_value());
        CHECK(picked->basis == "seed 002's alpha-beta inequalities");
        const double want_s = c.fastest == ArtopkCollective::ARTOPK_RING   ? c.costs.artopk_ring_s
                              : c.fastest == ArtopkCollective::ARTOPK_TREE ? c.costs.artopk_tree_s
                                                                           : c.costs.allgather_s;
        CHECK(picked->estimated_s == want_s);
        if (c.fastest == ArtopkCollective::ALLGATHER) {
          // Every worker's values and indices, 2 M_c each, all-gathered by Bruck's algorithm.
          CHECK(runs.analytic_time_s(g, mc, ab) == bruck->analytic_time_s(g, 2 * n * mc, ab));
          CHECK(runs.rank_schedule(1, g, mc).size() == bruck->rank_schedule(1, g, 2 * n * mc).size());
        }
      }
  // The grid reaches more than one of the three choices (the test would be weak otherwise).
  CHECK((seen[0] > 0) + (seen[1] > 0) + (seen[2] > 0) >= 2);
}
