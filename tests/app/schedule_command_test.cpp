// `ddlsim schedule` as tools/measure_collectives.py drives it: every rank's steps as JSON.
//
// Expectations come from the algorithms' definitions, not from the code: a ring all-reduce of
// M bytes on N ranks is 2(N-1) steps in which rank r sends M/N to r+1 and receives M/N from
// r-1; a parameter server pushes M/S to each of S servers and pulls it back. For every
// algorithm, what a rank sends to a peer must be, message by message, what that peer receives
// from it (messages between two ranks match in program order).
#include "tests/support/cli.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <map>
#include <utility>
#include <vector>

using nlohmann::json;

namespace {

constexpr double MIB = 1048576.0;

json schedule(const std::string& args) {
  const auto r = ddlsim::test::ddlsim("schedule " + args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(r.out);
}

/// Per ordered pair (from, to): the byte counts of the messages `from` sends, in program order,
/// and those `to` receives from `from`.
void check_pairing(const json& doc) {
  std::map<std::pair<int, int>, std::vector<double>> sent, received;
  const auto& ranks = doc.at("ranks");
  for (std::size_t rank = 0; rank < ranks.size(); ++rank)
    for (const auto& step : ranks[rank])
      for (const auto& op : step) {
        const int peer = op.at("peer").get<int>();
        REQUIRE(peer >= 0);
        REQUIRE(peer < static_cast<int>(ranks.size()));
        CHECK(peer != static_cast<int>(rank));
        const double bytes = op.at("bytes").get<double>();
        if (op.at("kind") == "send") sent[{static_cast<int>(rank), peer}].push_back(bytes);
        else received[{peer, static_cast<int>(rank)}].push_back(bytes);
      }
  CHECK(sent == received);
}

}  // namespace

TEST_CASE("schedule: ring on 4 ranks is 2(N-1) steps of M/N to the right neighbour, from the left") {
  const json doc = schedule("--algorithm ring --workers 4 --bytes 1MiB");
  CHECK(doc.at("algorithm") == "ring");
  CHECK(doc.at("runs") == "ring");
  CHECK(doc.at("operation") == "allreduce");
  CHECK(doc.at("workers") == 4);
  CHECK(doc.at("servers") == 0);
  CHECK(doc.at("granularity") == "stepwise");
  CHECK(doc.at("bytes").get<double>() == MIB);
  CHECK_FALSE(doc.contains("analytic_time_s"));
  const auto& ranks = doc.at("ranks");
  REQUIRE(ranks.size() == 4);
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    const auto& steps = ranks[static_cast<std::size_t>(r)];
    REQUIRE(steps.size() == 6);  // 2 (N - 1)
    double total = 0;
    for (const auto& step : steps) {
      REQUIRE(step.size() == 2);
      for (const auto& op : step) {
        CHECK(op.at("bytes").get<double>() == MIB / 4);
        if (op.at("kind") == "send") {
          CHECK(op.at("peer") == (r + 1) % 4);
          total += op.at("bytes").get<double>();
        } else {
          CHECK(op.at("kind") == "recv");
          CHECK(op.at("peer") == (r + 3) % 4);
        }
      }
    }
    CHECK(total == doctest::Approx(2.0 * 3 / 4 * MIB));  // 2 (N-1)/N M
    CHECK(doc.at("latency_steps")[static_cast<std::size_t>(r)] == json(std::vector<int>(6, 1)));
  }
  check_pairing(doc);
}

TEST_CASE("schedule: pipelined ring merges the 2(N-1) steps into one phase standing for all of them") {
  const json doc = schedule("--algorithm ring --workers 4 --bytes 1MiB --granularity pipelined");
  CHECK(doc.at("granularity") == "pipelined");
  for (std::size_t r = 0; r < 4; ++r) {
    REQUIRE(doc.at("ranks")[r].size() == 1);
    CHECK(doc.at("latency_steps")[r] == json::array({6}));
    for (const auto& op : doc.at("ranks")[r][0]) CHECK(op.at("bytes").get<double>() == doctest::Approx(1.5 * MIB));
  }
}

TEST_CASE("schedule: gloo_ring's steps say they keep two in flight, and lockstep algorithms have no window") {
  // 4 bytes on 2 ranks: S = 4 segments, P = 2, I = S - P + 2 = 4 iterations per phase, 8 steps;
  // only segment 0 is sent: 1 -> 0 in the reduce-scatter's first step, 0 -> 1 in the all-gather's.
  const json doc = schedule("--algorithm gloo_ring --workers 2 --bytes 4");
  REQUIRE(doc.contains("window"));
  for (const auto& rank : doc.at("window")) {
    REQUIRE(rank.size() == 8u);
    for (const auto& w : rank) CHECK(w.get<int>() == 2);
  }
  CHECK(doc.at("ranks")[1][0] == json::array({json{{"kind", "send"}, {"peer", 0}, {"bytes", 4.0}}}));
  CHECK(doc.at("ranks")[0][4] == json::array({json{{"kind", "send"}, {"peer", 1}, {"bytes", 4.0}}}));
  check_pairing(doc);
  CHECK_FALSE(schedule("--algorithm ring --workers 2 --bytes 4").contains("window"));
}

TEST_CASE("schedule: ps pushes M/S to every server and pulls it back, servers being ranks N..N+S-1") {
  const json doc = schedule("--algorithm ps --workers 3 --servers 2 --bytes 4096");
  CHECK(doc.at("servers") == 2);
  const auto& ranks = doc.at("ranks");
  REQUIRE(ranks.size() == 5);
  for (std::size_t w = 0; w < 3; ++w) {
    REQUIRE(ranks[w].size() == 2);
    for (std::size_t t = 0; t < 2; ++t) {
      REQUIRE(ranks[w][t].size() == 2);
      for (std::size_t s = 0; s < 2; ++s) {
        CHECK(ranks[w][t][s].at("kind") == (t == 0 ? "send" : "recv"));
        CHECK(ranks[w][t][s].at("peer") == 3 + static_cast<int>(s));
        CHECK(ranks[w][t][s].at("bytes").get<double>() == 2048);
      }
    }
  }
  for (std::size_t s = 3; s < 5; ++s) {
    REQUIRE(ranks[s].size() == 2);
    CHECK(ranks[s][0].size() == 3);
    CHECK(ranks[s][1].size() == 3);
  }
  check_pairing(doc);
  // One server by default.
  CHECK(schedule("--algorithm ps --workers 2 --bytes 4096").at("servers") == 1);
}

TEST_CASE("schedule: every message a rank sends is the message its peer receives, for every algorithm") {
  for (const char* algorithm : {"ring", "tree", "direct", "halving_doubling", "recursive_doubling",
                                "double_binary_tree", "multitree", "master_worker", "binomial_broadcast",
                                "ring_allgather", "ring_reduce_scatter", "bruck_allgather"})
    for (int n : {2, 3, 5, 8}) {
      CAPTURE(algorithm);
      CAPTURE(n);
      check_pairing(schedule(fmt::format("--algorithm {} --workers {} --bytes 100000", algorithm, n)));
    }
  check_pairing(schedule("--algorithm tree --workers 7 --bytes 1MiB --params '{\"segments\": 3}'"));
  check_pairing(schedule("--algorithm ps --workers 4 --servers 3 --bytes 1MiB"));
}

TEST_CASE("schedule: with a network it adds the closed form, and auto names the algorithm it runs") {
  // Ring, N = 4, M = 1 MiB, 100 Mbit/s, 1 ms: 2(N-1) alpha + 2(N-1)/N M beta.
  const json ring = schedule("--algorithm ring --workers 4 --bytes 1MiB --bandwidth 100Mbps --latency 1ms");
  CHECK(ring.at("analytic_time_s").get<double>() == doctest::Approx(6e-3 + 1.5 * MIB * 8 / 1e8).epsilon(1e-12));
  const json picked = schedule("--algorithm auto --workers 4 --bytes 1MiB --bandwidth 100Mbps --latency 1ms");
  CHECK(picked.at("algorithm") == "auto");
  CHECK(picked.at("runs") != "auto");
  check_pairing(picked);
}

TEST_CASE("schedule: bad input is refused with exit 2 and names the option") {
  auto r = ddlsim::test::ddlsim("schedule --algorithm ring --workers 3 --servers 1 --bytes 1KiB");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--servers: \"ring\" uses no parameter servers") != std::string::npos);
  r = ddlsim::test::ddlsim("schedule --algorithm ps --workers 3 --servers 0 --bytes 1KiB");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("needs at least one parameter server") != std::string::npos);
  r = ddlsim::test::ddlsim("schedule --algorithm nope --workers 3 --bytes 1KiB");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown collective \"nope\"; valid names are:") != std::string::npos);
  r = ddlsim::test::ddlsim("schedule --algorithm ring --workers 3 --bytes 1KiB --bandwidth 1Gbps");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--bandwidth and --latency go together") != std::string::npos);
  r = ddlsim::test::ddlsim("schedule --algorithm ring --workers 0 --bytes 1KiB");
  CHECK(r.exit_code == 2);
  r = ddlsim::test::ddlsim("schedule --algorithm ring --workers 3 --bytes 1KiB --granularity chunky");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--granularity") != std::string::npos);
  r = ddlsim::test::ddlsim("schedule --algorithm ring --workers 3 --bytes 1KiB --params '{\"segmentz\": 2}'");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("segmentz") != std::string::npos);
}
