#include "engine/ns3_binding.hpp"

#include <ns3/application-container.h>
#include <ns3/callback.h>
#include <ns3/inet-socket-address.h>
#include <ns3/ipv4-address.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/packet-sink-helper.h>
#include <ns3/packet-sink.h>
#include <ns3/socket.h>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

// SimGrid 3.32's map from a flow's sending socket to the receiver's sink (src/surf/ns3/
// ns3_simulator.cpp; exported by libsimgrid.so.3.32, declared in a header it does not install).
extern std::map<std::string, ns3::ApplicationContainer, std::less<>> sink_from_sock;

namespace ddlsim::sim::ns3_binding {
namespace {

struct GuardState {
  std::set<const ns3::Application*> decoys;  // sinks the binding may close as it likes
  std::uint16_t next_port = 0;               // the last decoy's port
  long guarded = 0;
};

GuardState& guard_state() {
  static GuardState s;
  return s;
}

void close_sink(ns3::PacketSink* sink) {
  if (auto listening = sink->GetListeningSocket()) listening->Close();
  for (const auto& accepted : sink->GetAcceptedSockets()) accepted->Close();
}

/// The real receiver saw the sender's FIN: every byte is in. Close, as the binding would have.
void on_peer_close(ns3::PacketSink* sink, ns3::Ptr<ns3::Socket> /*socket*/) { close_sink(sink); }

void on_peer_error(ns3::Ptr<ns3::Socket> /*socket*/) {}

/// The first data on the real sink: its connection is accepted; take over its close callbacks (the
/// sink's own only log). Data always precedes the FIN, so this runs before the peer can close.
void on_rx(ns3::PacketSink* sink, ns3::Ptr<const ns3::Packet> /*packet*/, const ns3::Address& /*from*/) {
  for (const auto& accepted : sink->GetAcceptedSockets())
    accepted->SetCloseCallbacks(ns3::MakeBoundCallback(&on_peer_close, sink), ns3::MakeCallback(&on_peer_error));
}

}  // namespace

bool active() { return simgrid::config::get_value<std::string>("network/model") == "ns-3"; }

void platform_created() { simgrid::s4u::Engine::on_platform_created(); }

void guard_new_flows() {
  if (!active()) return;
  GuardState& s = guard_state();
  for (auto& [socket, apps] : sink_from_sock) {
    if (apps.GetN() == 0 || s.decoys.count(ns3::PeekPointer(apps.Get(0))) != 0) continue;
    auto real = ns3::DynamicCast<ns3::PacketSink>(apps.Get(0));
    if (!real) continue;
    // Raw pointers in the callbacks: a Ptr held by the sink's own trace or its sockets would be a
    // reference cycle (the node owns the sink until ns-3 is destroyed).
    real->TraceConnectWithoutContext("Rx", ns3::MakeBoundCallback(&on_rx, ns3::PeekPointer(real)));
    // The decoy listens on the loopback address: the binding binds its sinks and senders to the
    // any-address, ports 1 to 65535 in turn, and only an equal (address, port) pair conflicts.
    s.next_port = static_cast<std::uint16_t>(1 + s.next_port % 65535);
    ns3::PacketSinkHelper helper("ns3::TcpSocketFactory", ns3::InetSocketAddress(ns3::Ipv4Address::GetLoopback(), s.next_port));
    ns3::ApplicationContainer decoy = helper.Install(real->GetNode());
    decoy.Start(ns3::Seconds(0));
    s.decoys.insert(ns3::PeekPointer(decoy.Get(0)));
    apps = decoy;
    ++s.guarded;
  }
}

long guarded_flows() { return guard_state().guarded; }

}  // namespace ddlsim::sim::ns3_binding
