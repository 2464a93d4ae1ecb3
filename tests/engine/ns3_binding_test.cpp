// engine/ns3_binding.cpp: packet fidelity's transport on SimGrid 3.32's ns-3 binding. A star of one
// router and split-duplex links of 10 Gbit/s (1.25e9 B/s) and 10 us a hop; every message rides the
// pair's one TCP connection of ns-3 3.37 (Cubic, timestamps on). On the wire a segment of S payload
// bytes is S + 52 (IPv4, TCP with timestamps) + 2 (PPP) bytes, so a transfer runs at most at
// S / (S + 54) of the link's rate, and one message of b bytes that finds its connection open and its
// window wide takes at least
//   2 x 10 us + b x (S + 54) / S / 1.25e9 + one segment's store-and-forward at the router
// (CM02, flow fidelity: 2 x 10 us + b / 1.25e9). The first message of a pair opens the connection
// (one round trip more) and starts in slow start (10 segments, doubling every round trip).
#include "engine/ns3_binding.hpp"

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;
namespace ns3b = ddlsim::sim::ns3_binding;

// Under AddressSanitizer actors run on threads, as engine/engine.cpp makes them (Debian's SimGrid
// switches stacks without telling the sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define NS3_TEST_THREADS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NS3_TEST_THREADS 1
#endif
#endif

namespace {

constexpr double BW_Bps = 1.25e9;
constexpr double LAT_s = 10e-6;

double wire_per_byte(const ddlsim::sim::PacketSettings& s) { return (s.segment_bytes + 54.0) / s.segment_bytes / BW_Bps; }

/// A SimGrid engine on `model` and a star of `count` hosts around one router, its ns-3 routes built.
struct Star {
  std::unique_ptr<sg4::Engine> engine;
  std::vector<sg4::Host*> hosts;

  Star(const std::string& model, int count, const ddlsim::sim::PacketSettings& settings = {}) {
    static char name[] = "ns3_binding_test";
#ifdef NS3_TEST_THREADS
    static char threads[] = "--cfg=contexts/factory:thread";
    static char* argv[] = {name, threads, nullptr};
    int argc = 2;
#else
    static char* argv[] = {name, nullptr};
    int argc = 1;
#endif
    engine = std::make_unique<sg4::Engine>(&argc, argv);
    engine->set_config("network/model:" + model);
    auto* zone = sg4::create_dijkstra_zone("star", true);
    auto* router = zone->create_router("switch");
    for (int i = 0; i < count; ++i) {
      auto* host = zone->create_host("h" + std::to_string(i), 1e9)->seal();
      auto* link = zone->create_split_duplex_link("l" + std::to_string(i), BW_Bps)->set_latency(LAT_s)->seal();
      zone->add_route(host->get_netpoint(), router, nullptr, nullptr,
                      {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
      hosts.push_back(host);
    }
    zone->seal();
    if (model == "ns-3") ns3b::platform_created(settings);
  }
};

/// `senders` hosts each send `bytes` to host 0 at time 0; returns when the last message arrived.
double incast(const std::string& model, double bytes, int senders, const ddlsim::sim::PacketSettings& settings = {}) {
  Star star(model, senders + 1, settings);
  const auto& hosts = star.hosts;
  static int token = 0;
  for (int s = 1; s <= senders; ++s)
    sg4::Actor::create("sender", hosts[static_cast<std::size_t>(s)], [bytes, s] {
      sg4::Mailbox::by_name("m" + std::to_string(s))->put(&token, static_cast<std::uint64_t>(bytes));
    });
  sg4::Actor::create("receiver", hosts[0], [senders] {
    std::vector<sg4::CommPtr> comms;
    std::vector<int*> got(static_cast<std::size_t>(senders), nullptr);
    for (int s = 1; s <= senders; ++s)
      comms.push_back(sg4::Mailbox::by_name("m" + std::to_string(s))->get_async<int>(&got[static_cast<std::size_t>(s - 1)]));
    sg4::Comm::wait_all(comms);
  });
  star.engine->run();
  return sg4::Engine::get_clock();
}

/// Host 1 sends `sizes` to host 0 one after the other (each waits for the previous); the end of each.
std::vector<double> in_a_row(const std::vector<double>& sizes, const ddlsim::sim::PacketSettings& settings = {}) {
  Star star("ns-3", 2, settings);
  static int token = 0;
  std::vector<double> ends;
  sg4::Actor::create("sender", star.hosts[1], [&sizes] {
    for (const double bytes : sizes) sg4::Mailbox::by_name("box")->put(&token, static_cast<std::uint64_t>(bytes));
  });
  sg4::Actor::create("receiver", star.hosts[0], [&sizes, &ends] {
    for (std::size_t m = 0; m < sizes.size(); ++m) {
      sg4::Mailbox::by_name("box")->get<int>();
      ends.push_back(sg4::Engine::get_clock());
    }
  });
  star.engine->run();
  return ends;
}

}  // namespace

TEST_CASE("ns-3 transport: a 1 MB message opens its connection and ends in slow start") {
  const ddlsim::sim::PacketSettings s;
  const double t = incast("ns-3", 1e6, 1);
  CHECK(ns3b::flows_taken() == 1);
  CHECK(ns3b::connections_opened() == 1);
  CHECK(ns3b::packets_dropped() == 0);
  const double rtt = 4 * LAT_s;
  const double bound = 2 * LAT_s + 1e6 * wire_per_byte(s);
  CHECK(t > bound + rtt);  // the handshake's round trip, then the data
  // Slow start: 10 segments in the first round trip, doubling: 1 MB (691 segments) within 7 rounds.
  CHECK(t < bound + 8 * rtt + 1e6 * wire_per_byte(s));
}

TEST_CASE("ns-3 transport: a second message finds its connection open and its window grown") {
  const ddlsim::sim::PacketSettings s;
  const auto ends = in_a_row({1e6, 1e6, 1e6});
  REQUIRE(ends.size() == 3);
  CHECK(ns3b::connections_opened() == 1);
  const double bound = 2 * LAT_s + 1e6 * wire_per_byte(s);
  CHECK(ends[2] - ends[1] < ends[0]);
  CHECK(ends[2] - ends[1] > bound);
}

TEST_CASE("ns-3 transport: a 100 MB transfer with jumbo frames is within 1 % of the wire") {
  ddlsim::sim::PacketSettings s;
  s.segment_bytes = 8948;  // MTU 9000
  const double t = incast("ns-3", 1e8, 1, s);
  const double wire = 2 * LAT_s + 1e8 * wire_per_byte(s);
  CHECK(t > wire);
  CHECK(t < wire * 1.01);
}

TEST_CASE("ns-3 transport: zero-byte messages end in order behind the pair's earlier bytes") {
  const ddlsim::sim::PacketSettings s;
  const auto ends = in_a_row({0, 1e5, 0});
  REQUIRE(ends.size() == 3);
  CHECK(ends[0] == doctest::Approx(0).epsilon(1e-12));
  CHECK(ends[2] == doctest::Approx(ends[1]).epsilon(1e-12));
}

TEST_CASE("ns-3 transport: 8 senders into one receiver share its link without loss in a deep queue") {
  const ddlsim::sim::PacketSettings s;
  const double t = incast("ns-3", 1e6, 8);
  CHECK(ns3b::flows_taken() == 8);
  CHECK(ns3b::packets_dropped() == 0);
  CHECK(t > 2 * LAT_s + 8e6 * wire_per_byte(s));
  CHECK(t < 1.2 * (2 * LAT_s + 8e6 * wire_per_byte(s)));
}

TEST_CASE("ns-3 transport: 8 senders into a 20-packet switch port lose packets and wait for timeouts") {
  ddlsim::sim::PacketSettings s;
  s.queue_packets = 20;
  const double t = incast("ns-3", 1e6, 8, s);
  CHECK(ns3b::packets_dropped() > 0);
  CHECK(t > s.min_rto_s);
}

TEST_CASE("ns-3 transport: a no-op under CM02") {
  const double t = incast("CM02", 1e6, 2);
  CHECK(ns3b::flows_taken() == 0);
  CHECK(t == doctest::Approx(2 * LAT_s + 2e6 / BW_Bps).epsilon(1e-9));
}

TEST_CASE("ns-3 transport: 300 messages in a row on one connection each arrive once and in order") {
  const ddlsim::sim::PacketSettings s;
  std::vector<double> sizes;
  for (int m = 0; m < 300; ++m) sizes.push_back(10000 + 1000 * (m % 7));
  const auto ends = in_a_row(sizes);
  CHECK(ns3b::flows_taken() == 300);
  CHECK(ns3b::connections_opened() == 1);
  REQUIRE(ends.size() == sizes.size());
  double previous = 0;
  bool ordered = true;
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    ordered = ordered && ends[m] - previous > 2 * LAT_s + sizes[m] * wire_per_byte(s);
    previous = ends[m];
  }
  CHECK(ordered);
}

TEST_CASE("ns-3 transport: FQ-CoDel with ECN shares the receiver's port among 8 senders") {
  ddlsim::sim::PacketSettings s;
  s.queue = ddlsim::sim::QueueDiscipline::FQ_CODEL;
  s.ecn = true;
  const double t = incast("ns-3", 1e6, 8, s);
  CHECK(t > 2 * LAT_s + 8e6 * wire_per_byte(s));
  CHECK(t < 1.2 * (2 * LAT_s + 8e6 * wire_per_byte(s)));
}
