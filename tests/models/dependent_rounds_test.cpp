// dependent_rounds: models/dependent_rounds.cpp. A bucket sent in dependent rounds (PowerSGD's P,
// then Q) runs the all-reduce once per round: the closed form is the sum of the rounds' closed
// forms, a rank's schedule its schedule of each round in turn, one library call per round; around
// a meta-collective ("auto") each round runs what "auto" picks for that round's bytes.
#include "models/dependent_rounds.hpp"
#include "tests/models/plugin_util.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;
using nlohmann::json;

namespace {

std::shared_ptr<const Collective> collective(const std::string& name) {
  return CollectiveRegistry::instance().create(name, json::object(), "", "", "");
}

/// PowerSGD of rank 4 on a 1000 x 1000 bucket: P is 4 * 4 * 1000 bytes, Q the same.
constexpr double DENSE_BYTES = 4e6;

}  // namespace

TEST_CASE("dependent_rounds: the closed form is the ring's closed form of each round, summed") {
  const std::shared_ptr<const Compressor> psgd = make_compressor("powersgd", {{"rank", 4}});
  const double wire = psgd->encode(DENSE_BYTES).wire_bytes;
  const auto rounds = psgd->rounds(wire);
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0] + rounds[1] == wire);
  const auto ring = collective("ring");
  const DependentRounds both(ring, psgd);
  const CollectiveGroup g(8);
  const AlphaBeta ab{1e-5, 1e-9};
  // The ring all-reduce: 2 (N - 1) steps of alpha + bytes / N beta each.
  auto ring_s = [&](double bytes) { return 2 * (g.workers - 1) * (ab.alpha_s + bytes / g.workers * ab.beta_s_per_byte); };
  CHECK(both.analytic_time_s(g, wire, ab) == doctest::Approx(ring_s(rounds[0]) + ring_s(rounds[1])).epsilon(1e-12));
  // Two latency terms, not one: more than a single ring all-reduce of the same bytes.
  CHECK(both.analytic_time_s(g, wire, ab) - ring_s(wire) == doctest::Approx(2 * (g.workers - 1) * ab.alpha_s));
  CHECK(collective_calls(both, wire) == 2);
  CHECK(collective_calls(*ring, wire) == 1);
}

TEST_CASE("dependent_rounds: a rank's schedule is round 1's schedule, then round 2's, unmerged") {
  const std::shared_ptr<const Compressor> psgd = make_compressor("powersgd", {{"rank", 4}});
  const double wire = psgd->encode(DENSE_BYTES).wire_bytes;
  const auto rounds = psgd->rounds(wire);
  const auto ring = collective("ring");
  const DependentRounds both(ring, psgd);
  const CollectiveGroup g(4);
  for (int rank = 0; rank < g.workers; ++rank) {
    const auto steps = both.rank_schedule(rank, g, wire);
    const auto first = ring->rank_schedule(rank, g, rounds[0]);
    const auto second = ring->rank_schedule(rank, g, rounds[1]);
    REQUIRE(steps.size() == first.size() + second.size());
    double sent = 0, expected = 0;
    for (const auto& s : steps)
      for (const auto& op : s.ops) sent += op.kind == RankOp::Kind::SEND ? op.bytes : 0.0;
    for (const auto* part : {&first, &second})
      for (const auto& s : *part)
        for (const auto& op : s.ops) expected += op.kind == RankOp::Kind::SEND ? op.bytes : 0.0;
    CHECK(sent == doctest::Approx(expected));
    // Pipelined: each round's phases merged within the round, never across the two rounds.
    const auto phases = both.rank_phases(rank, g, wire);
    CHECK(phases.size() == ring->rank_phases(rank, g, rounds[0]).size() + ring->rank_phases(rank, g, rounds[1]).size());
    // One step at a time: the same steps.
    auto source = both.rank_steps(rank, g, wire);
    std::size_t n = 0;
    RankStep step;
    while (source->next(step)) ++n;
    CHECK(n == steps.size());
  }
}

TEST_CASE("dependent_rounds: around a plain algorithm it runs itself, around auto each round's pick") {
  const std::shared_ptr<const Compressor> psgd = make_compressor("powersgd", {{"rank", 4}});
  const double wire = psgd->encode(DENSE_BYTES).wire_bytes;
  const auto rounds = psgd->rounds(wire);
  const CollectiveGroup g(16);
  const AlphaBeta ab{1e-5, 1e-9};

  const DependentRounds plain(collective("ring"), psgd);
  CHECK(&resolve(plain, g, wire, ab) == &plain);
  CHECK(resolved_name(plain, g, wire, ab).empty());
  CHECK_FALSE(choice(plain, g, wire, ab).has_value());

  const auto all = collective("auto");
  const DependentRounds picked(all, psgd);
  const auto& runs = resolve(picked, g, wire, ab);
  double expected_s = 0;
  std::vector<std::string> names;
  for (const double b : rounds) {
    expected_s += resolve(*all, g, b, ab).analytic_time_s(g, b, ab);
    names.push_back(resolved_name(*all, g, b, ab));
  }
  CHECK(runs.analytic_time_s(g, wire, ab) == doctest::Approx(expected_s).epsilon(1e-12));
  CHECK(&resolve(picked, g, wire, ab) == &runs);  // resolved once per set of picks, then reused
  CHECK(collective_calls(runs, wire) == 2);
  const std::string want = names[0] == names[1] ? names[0] : names[0] + ", then " + names[1];
  CHECK(resolved_name(picked, g, wire, ab) == want);
  const auto c = choice(picked, g, wire, ab);
  REQUIRE(c.has_value());
  CHECK(c->algorithm == want);
  CHECK(c->estimated_s == doctest::Approx(choice(*all, g, rounds[0], ab)->estimated_s +
                                          choice(*all, g, rounds[1], ab)->estimated_s));
  CHECK(c->basis == choice(*all, g, rounds[0], ab)->basis + " (per dependent round)");
}
