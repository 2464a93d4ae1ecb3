// protocol_choice: models/protocol_choice.cpp. The `nccl` preset runs each collective call with the
// protocol of least call cost + closed form, as NCCL's tuner picks (src/graph/tuning.cc).
#include "models/protocol_choice.hpp"

#include "models/error.hpp"
#include "tests/models/collective_oracle.hpp"

#include <doctest/doctest.h>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::test;

namespace {

constexpr double ALPHA = 2e-6, BETA = 8.0 / 100e9;  // 100 Gbit/s links, 2 us paths

AlphaBeta network(const char* preset) {
  AlphaBeta ab(ALPHA, BETA);
  ab.software = std::make_shared<const SoftwareCost>(*software_preset(preset));
  return ab;
}

/// The ring's closed form under one preset, plus that preset's call cost.
double with_call(const Collective& ring, int n, double bytes, const char* preset) {
  return *software_preset(preset)->call_cost_s + ring.analytic_time_s(CollectiveGroup{n, 0}, bytes, network(preset));
}

}  // namespace

TEST_CASE("protocol choice: a 4-byte ring runs LL, its call and per-step costs the least") {
  // 8 ranks, 14 steps of 0.5 bytes: LL 6.6 + 14 (0.9 + 2) = 47.2 us, LL128 14 + 14 (2.5 + 2) = 77 us,
  // Simple 8.4 + 14 (6.6 + 2) = 128.8 us, each plus under a nanosecond of transfer.
  const auto ring = make("ring");
  const auto call = call_protocol(*ring, CollectiveGroup{8, 0}, 4, network("nccl"), 10e-6, false);
  REQUIRE(call.software);
  CHECK(call.software->preset == "nccl_ll");
  CHECK(call.call_cost_s == 6.6e-6);
  CHECK(with_call(*ring, 8, 4, "nccl_ll") == doctest::Approx(47.2e-6).epsilon(1e-4));
  CHECK(with_call(*ring, 8, 4, "nccl_ll128") == doctest::Approx(77e-6).epsilon(1e-4));
  CHECK(with_call(*ring, 8, 4, "nccl_simple") == doctest::Approx(128.8e-6).epsilon(1e-4));
}

TEST_CASE("protocol choice: the least of the three at every size, LL128 in the middle and Simple for large calls") {
  const auto ring = make("ring");
  const CollectiveGroup g{8, 0};
  for (double bytes : {4.0, 65536.0, 1e6, 8e6, 1e8, 1e9}) {
    CAPTURE(bytes);
    const auto call = call_protocol(*ring, g, bytes, network("nccl"), 10e-6, false);
    const double chosen = call.call_cost_s + ring->analytic_time_s(g, bytes, with_software(network("nccl"), call.software));
    for (const char* p : {"nccl_ll", "nccl_ll128", "nccl_simple"}) CHECK(chosen <= with_call(*ring, 8, bytes, p));
  }
  CHECK(call_protocol(*ring, g, 1e6, network("nccl"), 10e-6, false).software->preset == "nccl_ll128");
  // 1 GB: LL moves 2 wire bytes per byte, LL128 128/120; Simple's eta of 1 wins.
  CHECK(call_protocol(*ring, g, 1e9, network("nccl"), 10e-6, false).software->preset == "nccl_simple");
}

TEST_CASE("protocol choice: a given call cost applies to every protocol, other presets are themselves") {
  const auto ring = make("ring");
  const CollectiveGroup g{8, 0};
  const auto given = call_protocol(*ring, g, 4, network("nccl"), 1e-3, true);
  CHECK(given.call_cost_s == 1e-3);
  CHECK(given.software->preset == "nccl_ll");  // the closed forms alone still favour LL
  const auto gloo = call_protocol(*ring, g, 4, network("gloo"), 50e-6, false);
  CHECK(gloo.software->preset == "gloo");
  CHECK(gloo.call_cost_s == 50e-6);
  const auto ideal = call_protocol(*ring, g, 4, AlphaBeta(ALPHA, BETA), 10e-6, false);
  CHECK_FALSE(ideal.software);
  CHECK(ideal.call_cost_s == 10e-6);
}

TEST_CASE("protocol choice: nccl takes no field of its own") {
  CHECK_THROWS_WITH_AS((void)read_software(json{{"preset", "nccl"}, {"send_overhead", "1us"}}, "/network/software"),
                       "/network/software/send_overhead: \"nccl\" picks one of its protocols per call and takes no "
                       "field of its own; set a protocol's with \"nccl_ll\", \"nccl_ll128\" or \"nccl_simple\"",
                       ConfigError);
  CHECK(read_software(json{{"preset", "nccl"}}, "/network/software").protocols.size() == 3u);
}
