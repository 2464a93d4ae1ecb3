// Collectives in flight at once (models/concurrent_collectives.cpp): in-order starts,
// at most K running, latency terms alone, transfer terms shared equally. Every span
// below is worked out by hand from those rules.
#include "models/concurrent_collectives.hpp"

#include <doctest/doctest.h>
#include <stdexcept>
#include <vector>

using namespace ddlsim::models;

namespace {

/// Spans with collective j costing latency[j] and transfer[j].
std::vector<ConcurrentSpan> run(const std::vector<double>& ready, int k, const std::vector<double>& latency,
                                const std::vector<double>& transfer) {
  return schedule_concurrent(ready, k, [&](std::size_t j, double) { return ConcurrentCost{latency[j], transfer[j]}; });
}

}  // namespace

TEST_CASE("concurrent collectives: one at a time is the sequential stream") {
  const auto s = run({0, 0, 7}, 1, {1, 1, 1}, {2, 2, 2});
  REQUIRE(s.size() == 3);
  CHECK(s[0].start_s == 0);
  CHECK(s[0].end_s == doctest::Approx(3));
  CHECK(s[1].start_s == doctest::Approx(3));  // after the first ends
  CHECK(s[1].end_s == doctest::Approx(6));
  CHECK(s[2].start_s == doctest::Approx(7));  // its own readiness
  CHECK(s[2].end_s == doctest::Approx(10));
  CHECK(s[1].admit_s == doctest::Approx(3));
  CHECK(s[2].admit_s == doctest::Approx(6));
}

TEST_CASE("concurrent collectives: two equal ones started together pay their latency once and share the transfer") {
  // Both pay L = 1 alone, then each transfers T = 2 at half rate: L + 2T = 5 (one at a time: 3, then 6).
  const auto s = run({0, 0}, 2, {1, 1}, {2, 2});
  CHECK(s[0].end_s == doctest::Approx(5));
  CHECK(s[1].end_s == doctest::Approx(5));
  CHECK(s[1].start_s == 0);
  CHECK(s[1].admit_s == 0);  // fewer than K before it
}

TEST_CASE("concurrent collectives: staggered transfers share the network while both transfer") {
  // A (T = 4) alone on [0, 1): 3 left; B (T = 1) from 1, both at half rate: B ends at 3,
  // A has 2 left, alone: ends at 5.
  const auto s = run({0, 1}, 2, {0, 0}, {4, 1});
  CHECK(s[0].end_s == doctest::Approx(5));
  CHECK(s[1].start_s == doctest::Approx(1));
  CHECK(s[1].end_s == doctest::Approx(3));
  // A latency phase takes no share: B in its latency [1, 2) leaves A at full rate until 2
  // (2 left), then both share: B's 1 ends at 4, A's 2 - 1 = 1 left, alone until 5.
  const auto lat = run({0, 1}, 2, {0, 1}, {4, 1});
  CHECK(lat[1].end_s == doctest::Approx(4));
  CHECK(lat[0].end_s == doctest::Approx(5));
}

TEST_CASE("concurrent collectives: a third waits until fewer than K run, and starts in order") {
  // K = 2, all ready at 0, T = 4, 1, 1: A and B share; B ends at 2 (A has 3 left); C starts at
  // 2 and shares with A: C ends at 4, A has 2 left and ends alone at 6.
  const auto s = run({0, 0, 0}, 2, {0, 0, 0}, {4, 1, 1});
  CHECK(s[1].end_s == doctest::Approx(2));
  CHECK(s[2].start_s == doctest::Approx(2));
  CHECK(s[2].admit_s == doctest::Approx(2));  // the 2nd largest end of A (6) and B (2)
  CHECK(s[2].end_s == doctest::Approx(4));
  CHECK(s[0].end_s == doctest::Approx(6));
  // The cost is asked at each start.
  std::vector<double> asked;
  (void)schedule_concurrent({0, 0, 0}, 2, [&](std::size_t, double start) {
    asked.push_back(start);
    return ConcurrentCost{0, asked.size() == 1 ? 4.0 : 1.0};
  });
  CHECK(asked.size() == 3);
  CHECK(asked[2] == doctest::Approx(2));
  CHECK_THROWS_AS(run({0}, 0, {0}, {1}), std::invalid_argument);
}
