// The software cost of a communication library (models/software_cost.cpp): each rendezvous
// protocol's latency and per-byte time against the closed forms of models/software_cost.hpp,
// derived here segment by segment; the presets as their sources state them; network.software
// read with every refusal at its JSON path. (tests/engine/software_cost_test.cpp checks that the
// simulated runs equal these closed forms.)
#include "models/error.hpp"
#include "models/software_cost.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <string>

using namespace ddlsim;
using namespace ddlsim::models;
using nlohmann::json;

namespace {

constexpr double ALPHA = 1e-3, BETA = 1e-6;  // 1 ms per message, 1 MB/s

SoftwareCost with(Rendezvous r, double segment_bytes, int in_flight, double eager = 0) {
  SoftwareCost c;
  c.preset = "test";
  c.rendezvous = r;
  c.segment_bytes = segment_bytes;
  c.segments_in_flight = in_flight;
  c.eager_limit_bytes = eager;
  return c;
}

std::string refusal(const json& value) {
  try {
    (void)read_software(value, "/network/software");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("software cost: ideal software is alpha-beta, overheads once per step, efficiency on every byte") {
  const SoftwareCost ideal;
  CHECK(ideal.ideal());
  const auto m = ideal.message(5000, ALPHA, BETA);
  CHECK(m.latency_s == ALPHA);
  CHECK(m.per_byte_s == BETA);
  CHECK(m.wire_per_byte_s == BETA);
  CHECK(ideal.step_s(5000, 3, ALPHA, BETA) == doctest::Approx(ALPHA + 3 * 5000 * BETA).epsilon(1e-15));

  SoftwareCost tcp;
  tcp.send_overhead_s = 2e-6;
  tcp.recv_overhead_s = 3e-6;
  tcp.protocol_efficiency = 0.5;  // every payload byte puts two on the wire
  CHECK_FALSE(tcp.ideal());
  // c messages share the NIC at beta / eta each; one message alone is bound by its own wire rate.
  CHECK(tcp.step_s(5000, 3, ALPHA, BETA) == doctest::Approx(5e-6 + ALPHA + 5000 * 3 * 2 * BETA).epsilon(1e-12));
  CHECK(tcp.step_s(5000, 1, ALPHA, BETA) == doctest::Approx(5e-6 + ALPHA + 5000 * 2 * BETA).epsilon(1e-12));
}

TEST_CASE("software cost: a message handshake costs one more path latency, above the eager limit only") {
  const SoftwareCost mpi = with(Rendezvous::MESSAGE, 0, 2, 1000);
  CHECK(mpi.message(1000, ALPHA, BETA).latency_s == ALPHA);      // at the eager limit: eager
  CHECK(mpi.message(1001, ALPHA, BETA).latency_s == 2 * ALPHA);  // above it: the receiver's "ready" first
  CHECK(mpi.message(1001, ALPHA, BETA).per_byte_s == BETA);
  CHECK(with(Rendezvous::MESSAGE, 0, 2, 0).message(0, ALPHA, BETA).latency_s == ALPHA);  // nothing to send
  // rendezvous = segment without a segment size is a message handshake.
  CHECK(with(Rendezvous::SEGMENT, 0, 2).message(500, ALPHA, BETA).latency_s == 2 * ALPHA);
}

TEST_CASE("software cost: segments with their own handshake, k in flight: the last one leaves (n - 1) p after the first") {
  // 2500 B in segments of at most 1000 B: n = 3 segments of s = 2500 / 3 B. Each needs a "ready"
  // (a round trip, 2 alpha) and k = 2 are posted ahead, so one leaves every
  // p = max(s B, (2 alpha + s B) / k); the first arrives at 2 alpha + s B, the last (n - 1) p later.
  const SoftwareCost gloo = with(Rendezvous::SEGMENT, 1000, 2);
  const double n = 3, s = 2500 / n;
  const double p = std::max(s * BETA, (2 * ALPHA + s * BETA) / 2);
  CHECK(p == doctest::Approx((2 * ALPHA + s * BETA) / 2).epsilon(1e-15));  // latency-bound here
  CHECK(gloo.step_s(2500, 1, ALPHA, BETA) == doctest::Approx(2 * ALPHA + s * BETA + (n - 1) * p).epsilon(1e-12));
  const auto m = gloo.message(2500, ALPHA, BETA);
  CHECK(m.per_byte_s == doctest::Approx(p / s).epsilon(1e-12));
  CHECK(m.latency_s == doctest::Approx(2 * ALPHA + s * BETA - p).epsilon(1e-12));
  // With a short path the segments are bandwidth-bound: p = s B, and the message costs 2 alpha + m B.
  const double short_alpha = 1e-7;
  CHECK(gloo.step_s(2500, 1, short_alpha, BETA) == doctest::Approx(2 * short_alpha + 2500 * BETA).epsilon(1e-12));
  // Sharing the NIC with 4 others: the shared rate 5 B binds, not the window.
  CHECK(gloo.step_s(2500, 5, short_alpha, BETA) == doctest::Approx(2 * short_alpha + 5 * 2500 * BETA).epsilon(1e-12));
}

TEST_CASE("software cost: credits posted up front, so only segments beyond the k-th wait") {
  const SoftwareCost nccl = with(Rendezvous::CREDIT, 100, 2);
  // n = 2 <= k: no wait at all.
  const auto few = nccl.message(200, ALPHA, BETA);
  CHECK(few.latency_s == ALPHA);
  CHECK(few.per_byte_s == BETA);
  // n = 5 segments of 100 B: the first leaves at once, then one every p = max(s B, (2 alpha + s B) / k).
  const double s = 100, p = std::max(s * BETA, (2 * ALPHA + s * BETA) / 2);
  const auto many = nccl.message(500, ALPHA, BETA);
  CHECK(many.latency_s == ALPHA);
  CHECK(many.per_byte_s == doctest::Approx((s * BETA + 4 * p) / 500).epsilon(1e-12));
  CHECK(nccl.step_s(500, 1, ALPHA, BETA) == doctest::Approx(ALPHA + s * BETA + 4 * p).epsilon(1e-12));
}

TEST_CASE("software presets: the values their sources give") {
  const auto gloo = software_preset("gloo");
  REQUIRE(gloo.has_value());
  CHECK(gloo->send_overhead_s == 15e-6);
  CHECK(gloo->recv_overhead_s == 15e-6);
  CHECK(gloo->protocol_efficiency == 1448.0 / 1538.0);  // TCP payload per Ethernet frame on the wire
  CHECK(gloo->rendezvous == Rendezvous::SEGMENT);
  CHECK(gloo->segment_bytes == 1 << 20);
  CHECK(gloo->segments_in_flight == 2);
  CHECK(gloo->call_cost_s == 50e-6);
  const auto mpi = software_preset("mpi");
  REQUIRE(mpi.has_value());
  CHECK(mpi->rendezvous == Rendezvous::MESSAGE);
  CHECK(mpi->eager_limit_bytes == 64 * 1024);
  const auto ll = software_preset("nccl_ll");
  REQUIRE(ll.has_value());
  CHECK(ll->protocol_efficiency == 0.5);   // half of each LL line is flags
  CHECK(ll->segment_bytes == 524288.0 / 8);  // NCCL_BUFFSIZE / NCCL_STEPS
  CHECK(ll->segments_in_flight == 8);
  CHECK(ll->rendezvous == Rendezvous::CREDIT);
  CHECK(software_preset("nccl_ll128")->protocol_efficiency == 120.0 / 128.0);
  CHECK(software_preset("nccl_simple")->segment_bytes == 4194304.0 / 8);
  CHECK(software_preset("ideal")->ideal());
  CHECK_FALSE(software_preset("ideal")->call_cost_s.has_value());
  CHECK_FALSE(software_preset("tcp").has_value());
  CHECK(std::string(software_preset_names()) == "ideal, gloo, mpi, nccl_simple, nccl_ll, nccl_ll128, nccl");
}

TEST_CASE("network.software: a preset name or an object overriding it, refused at the key's path") {
  CHECK(read_software(json("mpi"), "/n").eager_limit_bytes == 64 * 1024);
  const SoftwareCost c = read_software(json::parse(R"({"preset": "gloo", "send_overhead": "1us", "eager_limit": "4KiB",
      "rendezvous": "message", "call_cost": "20us"})"), "/n");
  CHECK(c.preset == "gloo");
  CHECK(c.send_overhead_s == doctest::Approx(1e-6).epsilon(1e-15));
  CHECK(c.recv_overhead_s == 15e-6);  // gloo's
  CHECK(c.eager_limit_bytes == 4096);
  CHECK(c.rendezvous == Rendezvous::MESSAGE);
  CHECK(*c.call_cost_s == doctest::Approx(20e-6).epsilon(1e-15));
  CHECK(read_software(json::object(), "/n").ideal());

  CHECK(refusal(json("tcp")) ==
        "/network/software: unknown software preset \"tcp\"; valid presets are: ideal, gloo, mpi, nccl_simple, nccl_ll, "
        "nccl_ll128, nccl");
  CHECK(refusal(json{{"preset", "tcp"}}).rfind("/network/software/preset: unknown software preset \"tcp\"", 0) == 0);
  CHECK(refusal(json{{"send_overhead", "2s"}}) ==
        "/network/software/send_overhead: a per-message overhead (s) must be in [0, 1], got 2");
  CHECK(refusal(json{{"rendezvous", "segment"}}) ==
        "/network/software/segment_bytes: with \"rendezvous\": \"segment\", the segment size (bytes) must be in [1, "
        "1e+12], got 0");
  CHECK(refusal(json{{"segments_in_flight", 1}}) ==
        "/network/software/segments_in_flight: expected an integer in [2, 1024], got 1");
  CHECK(refusal(json{{"protocol_efficiency", 0}}) ==
        "/network/software/protocol_efficiency: expected a number in [0.001, 1], got 0");
  CHECK(refusal(json{{"call_cost", "2s"}}) == "/network/software/call_cost: the call cost (s) must be in [0, 1], got 2");
  CHECK(refusal(json{{"rendezvous", "handshake"}}) ==
        "/network/software/rendezvous: unknown value \"handshake\"; valid values are: none, message, segment, credit");
  CHECK(refusal(json{{"overhead", "1us"}}).rfind("/network/software/overhead: unknown key \"overhead\"", 0) == 0);
}

TEST_CASE("software cost as JSON: every field in its unit, and the scenario form read back to the same values") {
  SoftwareCost c = *software_preset("gloo");
  c.eager_limit_bytes = 512;
  const json j = to_json(c);
  CHECK(j["preset"] == "gloo");
  CHECK(j["rendezvous"] == "segment");
  CHECK(j["segment_bytes"] == 1048576.0);
  CHECK(j["eager_limit_bytes"] == 512.0);
  CHECK(j["send_overhead_s"] == 15e-6);
  const json scenario = to_scenario_json(c);
  CHECK_FALSE(scenario.contains("send_overhead_s"));
  CHECK(scenario["send_overhead"] == 15e-6);
  CHECK(scenario["eager_limit"] == 512.0);
  const SoftwareCost back = read_software(scenario, "/n");
  CHECK(back.preset == c.preset);
  CHECK(back.send_overhead_s == c.send_overhead_s);
  CHECK(back.recv_overhead_s == c.recv_overhead_s);
  CHECK(back.protocol_efficiency == c.protocol_efficiency);
  CHECK(back.rendezvous == c.rendezvous);
  CHECK(back.eager_limit_bytes == c.eager_limit_bytes);
  CHECK(back.segment_bytes == c.segment_bytes);
  CHECK(back.segments_in_flight == c.segments_in_flight);
}
