// gloo_ring: models/collectives/gloo_ring.cpp. Its layout and program follow gloo/allreduce.cc
// (`ring`); every expectation here is derived by hand from them (the header comment's cases).
#include "tests/models/collective_oracle.hpp"

#include "models/error.hpp"

#include <set>
#include <stdexcept>

#include <doctest/doctest.h>
#include <memory>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

namespace {

constexpr double ALPHA = 1e-3, BETA = 1e-9;

AlphaBeta with_software(const char* preset, double o_send, double o_recv) {
  AlphaBeta ab(ALPHA, BETA);
  auto sw = *software_preset(preset);
  sw.send_overhead_s = o_send;
  sw.recv_overhead_s = o_recv;
  ab.software = std::make_shared<const SoftwareCost>(sw);
  return ab;
}

double time_of(int n, double bytes, const AlphaBeta& ab) { return make("gloo_ring")->analytic_time_s(CollectiveGroup{n, 0}, bytes, ab); }

/// Steps (index) in which `rank` sends and receives, with their peers and bytes.
struct Posted {
  std::int64_t step;
  RankOp op;
};
std::vector<Posted> posted(int rank, int n, double bytes) {
  std::vector<Posted> out;
  const auto steps = make("gloo_ring")->rank_schedule(rank, CollectiveGroup{n, 0}, bytes);
  for (std::size_t j = 0; j < steps.size(); ++j)
    for (const auto& op : steps[j].ops) out.push_back({static_cast<std::int64_t>(j), op});
  return out;
}

}  // namespace

TEST_CASE("gloo_ring: 4 bytes on 3 ranks is one segment, 2 -> 1 -> 0 then 0 -> 2 -> 1") {
  // S = roundUp(max(1, 6), 3) = 6, P = 2, s = 4: segment 0 only. I = S - P + 2 = 6 iterations per phase.
  // Reduce-scatter: r sends ((r+1)P + i) mod 6 = 0 at i = 0 (r = 2) and i = 2 (r = 1); all-gather:
  // r sends (rP + i) mod 6 = 0 at i = 0 (r = 0) and i = 2 (r = 2), i.e. steps 6 and 8.
  for (int r = 0; r < 3; ++r) {
    const auto steps = make("gloo_ring")->rank_schedule(r, CollectiveGroup{3, 0}, 4);
    REQUIRE(steps.size() == 12u);
    for (const auto& s : steps) CHECK(s.window == 2);
  }
  const auto p0 = posted(0, 3, 4), p1 = posted(1, 3, 4), p2 = posted(2, 3, 4);
  REQUIRE(p0.size() == 2u);
  CHECK(p0[0].step == 2);  // receives from 1
  CHECK((p0[0].op.kind == RankOp::Kind::RECV && p0[0].op.peer == 1 && p0[0].op.bytes == 4));
  CHECK(p0[1].step == 6);  // sends to 2
  CHECK((p0[1].op.kind == RankOp::Kind::SEND && p0[1].op.peer == 2));
  REQUIRE(p1.size() == 3u);
  CHECK((p1[0].step == 0 && p1[0].op.kind == RankOp::Kind::RECV && p1[0].op.peer == 2));
  CHECK((p1[1].step == 2 && p1[1].op.kind == RankOp::Kind::SEND && p1[1].op.peer == 0));
  CHECK((p1[2].step == 8 && p1[2].op.kind == RankOp::Kind::RECV && p1[2].op.peer == 2));
  REQUIRE(p2.size() == 3u);
  CHECK((p2[0].step == 0 && p2[0].op.kind == RankOp::Kind::SEND && p2[0].op.peer == 1));
  CHECK((p2[1].step == 6 && p2[1].op.kind == RankOp::Kind::RECV && p2[1].op.peer == 0));
  CHECK((p2[2].step == 8 && p2[2].op.kind == RankOp::Kind::SEND && p2[2].op.peer == 1));
}

TEST_CASE("gloo_ring: segments of roundUp(ceil(M/S), 4) bytes, the last one short, every byte sent N-1 times per phase") {
  // 1 KiB on 3 ranks: S = 6, s = roundUp(171, 4) = 172, segment 5 holds 1024 - 5 x 172 = 164.
  const CollectiveGroup g{3, 0};
  Schedules steps;
  for (int r = 0; r < 3; ++r) steps.push_back(make("gloo_ring")->rank_schedule(r, g, 1024));
  const auto totals = check_matching(steps);
  double all = 0;
  for (const auto& [pair, bytes] : totals) {
    CHECK((pair.second + 1) % 3 == pair.first);  // r sends to r - 1 only
    all += bytes;
  }
  CHECK(all == doctest::Approx(2 * 2 * 1024.0).epsilon(1e-12));  // 2 (N - 1) M
  std::set<double> sizes;
  for (const auto& rank : steps)
    for (const auto& s : rank)
      for (const auto& op : s.ops) sizes.insert(op.bytes);
  CHECK(sizes == std::set<double>{164.0, 172.0});
  // 10 MiB on 2 ranks: S = roundUp(max(10, 4), 2) = 10 segments of 1 MiB, 5 per rank: 5 sends per phase.
  CHECK(posted(0, 2, 10 * 1048576.0).size() == 20u);
}

TEST_CASE("gloo_ring: closed forms by hand") {
  const AlphaBeta ideal(ALPHA, BETA);
  // Every segment full, P = 2: iterations pair up, two sends share the path: (N-1) rounds of
  // alpha + 2 s beta per phase, 2 s = M / N. N = 4, M = 32000: S = 8, s = 4000.
  CHECK(time_of(4, 32000, ideal) == doctest::Approx(6 * (ALPHA + 8000 * BETA)).epsilon(1e-12));
  // The same with gloo's notices and no overheads: each round waits one more alpha.
  const AlphaBeta gloo0 = with_software("gloo", 0, 0);
  const double wire = BETA / gloo0.software->protocol_efficiency;
  CHECK(time_of(4, 32000, gloo0) == doctest::Approx(6 * (2 * ALPHA + 8000 * wire)).epsilon(1e-12));
  // 4 bytes: 3 ranks, only the first of the chain's four messages waits for its notice.
  CHECK(time_of(3, 4, gloo0) == doctest::Approx(5 * ALPHA + 4 * 4 * wire).epsilon(1e-12));
  // 2 ranks: 1 -> 0 leaves at alpha (its send then completes), arrives at 2 alpha; rank 1's
  // all-gather receive, posted at alpha, has its notice at rank 0 by 2 alpha: 3 alpha.
  CHECK(time_of(2, 4, gloo0) == doctest::Approx(3 * ALPHA + 2 * 4 * wire).epsilon(1e-12));
  // With the preset's overheads: rank 0 pays o_recv then o_send before forwarding, rank 1 o_recv
  // at the end; rank 1's first o_send hides behind the notice.
  const AlphaBeta gloo = with_software("gloo", 15e-6, 15e-6);
  CHECK(time_of(2, 4, gloo) == doctest::Approx(3 * ALPHA + 2 * 4 * wire + 3 * 15e-6).epsilon(1e-12));
  // 10 MiB on 2 ranks, ideal: P = 5, posting iterations 0-4 go in pairs (0,1), (2,3), (4): per
  // phase 3 alpha + 5 s beta.
  const double m = 10 * 1048576.0;
  CHECK(time_of(2, m, ideal) == doctest::Approx(6 * ALPHA + m * BETA).epsilon(1e-12));
  CHECK(time_of(1, m, ideal) == 0.0);
  CHECK(time_of(3, 0, ideal) == 0.0);
}

TEST_CASE("gloo_ring: the closed form splits into latency and transfer terms along its critical path") {
  const AlphaBeta gloo = with_software("gloo", 15e-6, 15e-6);
  for (double m : {4.0, 1024.0, 32000.0, 3e6}) {
    CAPTURE(m);
    const double all = time_of(4, m, gloo);
    const double lat = time_of(4, m, gloo.only(AlphaBeta::Part::LATENCY));
    const double xfer = time_of(4, m, gloo.only(AlphaBeta::Part::TRANSFER));
    CHECK(lat + xfer == doctest::Approx(all).epsilon(1e-12));
    CHECK(lat > 0);
    CHECK(xfer > 0);
  }
  const AlphaBeta ideal(ALPHA, BETA);
  CHECK(time_of(4, 32000, ideal.only(AlphaBeta::Part::LATENCY)) == doctest::Approx(6 * ALPHA).epsilon(1e-12));
}

TEST_CASE("gloo_ring: its phases are its steps, given one at a time") {
  const auto c = make("gloo_ring");
  const CollectiveGroup g{3, 0};
  const auto steps = c->rank_schedule(1, g, 1024);
  const auto phases = c->rank_phases(1, g, 1024);
  REQUIRE(phases.size() == steps.size());
  auto source = c->rank_steps(1, g, 1024);
  CHECK(source->held() == 1u);
  std::size_t i = 0;
  for (RankStep s; source->next(s); ++i) {
    REQUIRE(i < steps.size());
    CHECK(s.ops.size() == steps[i].ops.size());
    CHECK(phases[i].ops.size() == steps[i].ops.size());
  }
  CHECK(i == steps.size());
}

TEST_CASE("gloo_ring: parameter errors and its limit name the JSON path") {
  CHECK_THROWS_WITH_AS(make("gloo_ring", json{{"segment_bytes", 2}}),
                       "/training/collective/params/segment_bytes: unknown key \"segment_bytes\"; valid keys are: "
                       "element_bytes, max_segment_bytes",
                       ConfigError);
  CHECK_THROWS_WITH_AS(make("gloo_ring", json{{"element_bytes", 0}}),
                       "/training/collective/params/element_bytes: expected an integer in [1, 1048576], got 0", ConfigError);
  // A hostile size: refused by the same limit, no overflow on the way.
  CHECK_THROWS_AS(time_of(2, 1e300, AlphaBeta(ALPHA, BETA)), std::invalid_argument);
  // 4,000 ranks: S = 8,000 segments, 2 N (S - P) = 63,984,000 messages.
  // (std::invalid_argument: the scenario reports it at /training/collective/params, `collectives` at
  // --algorithms, or leaves the algorithm out with a note when it compares them all.)
  CHECK_THROWS_WITH_AS(time_of(4000, 4, AlphaBeta(ALPHA, BETA)),
                       "gloo_ring runs every segment of every rank: 4000 ranks x 8000 segments is "
                       "6.4e+07 messages, over its limit of 5e+07; use \"ring\" with the gloo software preset",
                       std::invalid_argument);
}
