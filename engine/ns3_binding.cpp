#include "engine/ns3_binding.hpp"

#include <ns3/application-container.h>
#include <ns3/application.h>
#include <ns3/boolean.h>
#include <ns3/callback.h>
#include <ns3/enum.h>
#include <ns3/inet-socket-address.h>
#include <ns3/ipv4.h>
#include <ns3/loopback-net-device.h>
#include <ns3/node-list.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>
#include <ns3/point-to-point-net-device.h>
#include <ns3/queue-size.h>
#include <ns3/queue.h>
#include <ns3/simulator.h>
#include <ns3/socket.h>
#include <ns3/tcp-l4-protocol.h>
#include <ns3/tcp-socket-state.h>
#include <ns3/traffic-control-helper.h>
#include <ns3/traffic-control-layer.h>
#include <ns3/uinteger.h>
#include <simgrid/plugins/ns3.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/config.hpp>
#include <xbt/signal.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <link.h>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// SimGrid 3.32's map from a flow's sending socket to the receiver's sink (src/surf/ns3/
// ns3_simulator.cpp; exported by libsimgrid.so.3.32, declared in a header it does not install).
extern std::map<std::string, ns3::ApplicationContainer, std::less<>> sink_from_sock;
// The kernel's signal that a communication's network action was just created (src/kernel/activity/
// CommImpl.cpp, CommImpl::start; exported, declared in a header libsimgrid does not install).
extern simgrid::xbt::signal<void(simgrid::kernel::activity::CommImpl const&)> comm_impl_on_start __asm__(
    "_ZN7simgrid6kernel8activity8CommImpl8on_startE");

namespace ddlsim::sim::ns3_binding {
namespace {

/// SimGrid 3.32's SgFlow (src/surf/ns3/ns3_simulator.hpp), which the binding reads in
/// NetworkNS3Model::update_actions_state: the action ends once `finished_` is set and
/// `sent_bytes_` has reached the total.
struct SgFlow {
  std::uint32_t buffered_bytes_;
  std::uint32_t sent_bytes_;
  std::uint32_t total_bytes_;
  std::uint32_t remaining_;
  bool finished_;
  void* action_;
};
using FlowTable = std::map<std::string, SgFlow*, std::less<>>;

/// A flow taken over: its (unused) buffered count holds this mark, which a fresh record never has
/// (the binding starts it at 0 and only its own sender, which never runs here, raises it).
constexpr std::uint32_t TAKEN = 0xFFFFFFFFU;

/// A host's NIC queue: Linux's txqueuelen. (Linux's TCP small queues keep a socket from filling
/// it; ns-3 has none, so a sender whose window outgrows its own link drops here and recovers.)
constexpr std::uint32_t HOST_QUEUE_PACKETS = 1000;

struct Pending {
  SgFlow* flow;
  std::uint64_t end;  // the connection's byte count once this message is in
};

/// One ordered pair of hosts: a TCP connection whose bytes are the pair's messages in post order.
struct Connection {
  ns3::Socket* tx = nullptr;  // held by the sender's TcpL4Protocol
  std::uint64_t queued = 0;   // bytes of every message handed to it
  std::uint64_t written = 0;  // bytes the sending socket has accepted
  std::uint64_t received = 0;
  std::deque<Pending> pending;
};

struct Transport {
  PacketSettings settings;
  ns3::TypeId tcp;
  bool configured = false;
  std::vector<std::uintptr_t> empty_maps;  // in libsimgrid's data before the first flow
  FlowTable* flows = nullptr;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::unique_ptr<Connection>> connections;
  std::unordered_map<std::uint32_t, std::uint32_t> last_port;  // per node: ports bound to its address
  /// The binding's sockets of the flows in flight, kept alive: the binding names a flow by its
  /// socket's address, which a freed socket would hand to the next flow while the old one is listed.
  std::map<std::string, ns3::Ptr<ns3::Socket>, std::less<>> held;
  long taken = 0;
  long dropped = 0;
};

Transport& transport() {
  static Transport t;
  return t;
}

// ---- finding the binding's flow table -----------------------------------------------------------

struct Segment {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

int find_simgrid_data(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  if (info->dlpi_name == nullptr || std::string_view(info->dlpi_name).find("libsimgrid.so") == std::string_view::npos)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    auto* seg = static_cast<Segment*>(data);
    seg->begin = info->dlpi_addr + ph.p_vaddr;
    seg->end = seg->begin + ph.p_memsz;
    return 1;
  }
  return 0;
}

/// Every 8-byte-aligned address in libsimgrid's writable segment that holds an empty std::map
/// (libstdc++: a null root, the header's left and right links pointing at the header, a count of 0).
std::vector<std::uintptr_t> find_empty_maps() {
  Segment seg;
  dl_iterate_phdr(&find_simgrid_data, &seg);
  std::vector<std::uintptr_t> out;
  if (seg.begin == 0) return out;
  static_assert(sizeof(FlowTable) == 48, "libstdc++'s std::map: comparator, 32-byte header, count");
  // The sink map itself is there too unless the executable holds it (a copy relocation: GCC's PIE).
  const auto sinks = reinterpret_cast<std::uintptr_t>(&sink_from_sock);
  for (std::uintptr_t a = (seg.begin + 7) & ~std::uintptr_t{7}; a + sizeof(FlowTable) <= seg.end; a += 8) {
    auto word = [a](std::size_t offset) { return *reinterpret_cast<const std::uintptr_t*>(a + offset); };
    if (a != sinks && word(16) == 0 && word(24) == a + 8 && word(32) == a + 8 && word(40) == 0) out.push_back(a);
  }
  return out;
}

[[noreturn]] void refuse(const std::string& what) {
  throw std::runtime_error(
      "packet fidelity: " + what +
      " (ddlsim drives SimGrid 3.32's ns-3 binding through its flow table: engine/ns3_binding.hpp; this libsimgrid "
      "is not the build it was written for -- use network.fidelity \"flow\")");
}

FlowTable& flow_table() {
  Transport& t = transport();
  if (t.flows != nullptr) return *t.flows;
  FlowTable* found = nullptr;
  for (const std::uintptr_t a : t.empty_maps) {
    auto* candidate = reinterpret_cast<FlowTable*>(a);
    if (candidate->size() != sink_from_sock.size()) continue;
    bool same = true;
    auto sink = sink_from_sock.begin();
    for (const auto& entry : *candidate) same = same && entry.first == (sink++)->first;
    if (!same) continue;
    if (found != nullptr) refuse("two tables in libsimgrid hold the binding's flows");
    found = candidate;
  }
  if (found == nullptr) refuse("the binding's flow table was not found in libsimgrid");
  t.flows = found;
  return *found;
}

// ---- the transport --------------------------------------------------------------------------

void configure_socket(const ns3::Ptr<ns3::Socket>& socket) {
  const PacketSettings& s = transport().settings;
  socket->SetAttribute("SegmentSize", ns3::UintegerValue(static_cast<std::uint32_t>(s.segment_bytes)));
  socket->SetAttribute("SndBufSize", ns3::UintegerValue(static_cast<std::uint32_t>(s.send_buffer_bytes)));
  socket->SetAttribute("RcvBufSize", ns3::UintegerValue(static_cast<std::uint32_t>(s.receive_buffer_bytes)));
  // Linux's choices: timestamps on (12 bytes a segment, within the MTU), a 200 ms floor on the
  // retransmission timeout, delayed ACKs every second segment or after 40 ms (TCP_DELACK_MIN).
  socket->SetAttribute("Timestamp", ns3::BooleanValue(true));
  socket->SetAttribute("MinRto", ns3::TimeValue(ns3::Seconds(s.min_rto_s)));
  socket->SetAttribute("DelAckCount", ns3::UintegerValue(2));
  socket->SetAttribute("DelAckTimeout", ns3::TimeValue(ns3::MilliSeconds(40)));
  if (s.ecn) socket->SetAttribute("UseEcn", ns3::EnumValue(ns3::TcpSocketState::On));
}

ns3::Ipv4Address address_of(const ns3::Ptr<ns3::Node>& node) {
  auto ipv4 = node->GetObject<ns3::Ipv4>();
  if (!ipv4 || ipv4->GetNInterfaces() < 2)
    throw std::logic_error(fmt::format("packet fidelity: ns-3 node {} has no network interface", node->GetId()));
  return ipv4->GetAddress(1, 0).GetLocal();
}

std::uint16_t next_port(std::uint32_t node) {
  std::uint32_t& last = transport().last_port[node];
  if (last >= 65535)
    throw std::runtime_error("packet fidelity: more than 65,535 TCP connections end at one host (one per peer)");
  return static_cast<std::uint16_t>(++last);
}

/// The messages whose last byte is in: their actions end (the binding reads the record).
void deliver(Connection& c) {
  bool any = false;
  while (!c.pending.empty() && c.pending.front().end <= c.received) {
    SgFlow* flow = c.pending.front().flow;
    c.pending.pop_front();
    flow->sent_bytes_ = flow->total_bytes_;
    flow->remaining_ = 0;
    flow->finished_ = true;
    any = true;
  }
  if (any) ns3::Simulator::Stop();  // as the binding's receive callback does: SimGrid ends the actions
}

void pump(Connection& c) {
  while (c.written < c.queued) {
    const std::uint32_t space = c.tx->GetTxAvailable();
    if (space == 0) return;
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>({space, c.queued - c.written, 1U << 22}));
    const int sent = c.tx->Send(ns3::Create<ns3::Packet>(n));
    if (sent <= 0) return;
    c.written += static_cast<std::uint64_t>(sent);
  }
}

void on_send_space(Connection* c, ns3::Ptr<ns3::Socket> /*socket*/, std::uint32_t /*space*/) { pump(*c); }

void on_receive(Connection* c, ns3::Ptr<ns3::Socket> socket) {
  while (ns3::Ptr<ns3::Packet> packet = socket->Recv()) c->received += packet->GetSize();
  deliver(*c);
}

void on_accept(Connection* c, ns3::Ptr<ns3::Socket> socket, const ns3::Address& /*from*/) {
  socket->SetRecvCallback(ns3::MakeBoundCallback(&on_receive, c));
}

bool accept_all(ns3::Ptr<ns3::Socket> /*socket*/, const ns3::Address& /*from*/) { return true; }

Connection& connection(const ns3::Ptr<ns3::Node>& src, const ns3::Ptr<ns3::Node>& dst) {
  Transport& t = transport();
  auto& slot = t.connections[{src->GetId(), dst->GetId()}];
  if (slot) return *slot;
  slot = std::make_unique<Connection>();
  Connection* c = slot.get();
  const ns3::Ipv4Address to = address_of(dst);
  const std::uint16_t port = next_port(dst->GetId());
  // Bound to an address, not the any-address the binding binds its ports to: never a conflict.
  ns3::Ptr<ns3::Socket> listener = dst->GetObject<ns3::TcpL4Protocol>()->CreateSocket(t.tcp);
  configure_socket(listener);
  if (listener->Bind(ns3::InetSocketAddress(to, port)) != 0 || listener->Listen() != 0)
    throw std::runtime_error(fmt::format("packet fidelity: ns-3 refused a listening socket on node {}", dst->GetId()));
  listener->SetAcceptCallback(ns3::MakeCallback(&accept_all), ns3::MakeBoundCallback(&on_accept, c));
  ns3::Ptr<ns3::Socket> tx = src->GetObject<ns3::TcpL4Protocol>()->CreateSocket(t.tcp);
  configure_socket(tx);
  if (tx->Bind(ns3::InetSocketAddress(address_of(src), next_port(src->GetId()))) != 0 ||
      tx->Connect(ns3::InetSocketAddress(to, port)) != 0)
    throw std::runtime_error(fmt::format("packet fidelity: ns-3 refused a connection from node {} to node {}",
                                         src->GetId(), dst->GetId()));
  tx->SetSendCallback(ns3::MakeBoundCallback(&on_send_space, c));
  c->tx = ns3::PeekPointer(tx);
  return *c;
}

/// After the binding's connect has failed (its event ran first): no callback of the binding's is
/// left on the socket, and closing it from LISTEN frees its port.
void retire(ns3::Ptr<ns3::Socket> socket) {
  socket->SetConnectCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                             ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
  socket->SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                            ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
  socket->SetSendCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, std::uint32_t>());
  socket->SetDataSentCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, std::uint32_t>());
  socket->Listen();
  socket->Close();
}

/// Runs right after the binding's own start event for the flow (same time, scheduled after it).
void start(ns3::Ptr<ns3::Socket> binding_socket, ns3::Ptr<ns3::Node> dst, SgFlow* flow) {
  retire(binding_socket);
  Connection& c = connection(binding_socket->GetNode(), dst);
  c.queued += flow->total_bytes_;
  c.pending.push_back({flow, c.queued});
  deliver(c);  // a zero-byte message behind nothing ends at once
  pump(c);
}

void count_drop(ns3::Ptr<const ns3::Packet> /*packet*/) { ++transport().dropped; }
void count_disc_drop(ns3::Ptr<const ns3::QueueDiscItem> /*item*/) { ++transport().dropped; }

void configure_devices() {
  const PacketSettings& s = transport().settings;
  std::unordered_set<std::uint32_t> hosts;
  for (const auto* host : simgrid::s4u::Engine::get_instance()->get_all_hosts())
    hosts.insert(simgrid::get_ns3node_from_sghost(host)->GetId());
  // Timestamps add 12 bytes to the IPv4 and TCP headers' 40.
  const auto mtu = static_cast<std::uint16_t>(s.segment_bytes + 52);
  for (auto it = ns3::NodeList::Begin(); it != ns3::NodeList::End(); ++it) {
    const ns3::Ptr<ns3::Node>& node = *it;
    auto tc = node->GetObject<ns3::TrafficControlLayer>();
    // Without a queue discipline the layer itself drops what a stopped (full) device queue refuses.
    if (tc && !tc->TraceConnectWithoutContext("TcDrop", ns3::MakeCallback(&count_drop)))
      throw std::logic_error("packet fidelity: ns-3's traffic control has no TcDrop trace");
    const bool host = hosts.count(node->GetId()) != 0;
    for (std::uint32_t d = 0; d < node->GetNDevices(); ++d) {
      auto device = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(d));
      if (!device) continue;
      if (!device->SetMtu(mtu)) throw std::runtime_error(fmt::format("packet fidelity: ns-3 refused an MTU of {} bytes", mtu));
      if (tc && tc->GetRootQueueDiscOnDevice(device)) tc->DeleteRootQueueDiscOnDevice(device);
      auto queue = device->GetQueue();
      if (!queue->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&count_drop)))
        throw std::logic_error("packet fidelity: ns-3's device queue has no Drop trace");
      if (host || s.queue == QueueDiscipline::DROP_TAIL) {
        queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, host ? HOST_QUEUE_PACKETS
                                                                           : static_cast<std::uint32_t>(s.queue_packets)));
        continue;
      }
      // FQ-CoDel holds the port's packets; the device keeps one in transmission.
      queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, 1));
      ns3::TrafficControlHelper helper;
      helper.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize",
                              ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS,
                                                                 static_cast<std::uint32_t>(s.queue_packets))),
                              "UseEcn", ns3::BooleanValue(s.ecn));
      auto discs = helper.Install(device);
      if (!discs.Get(0)->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&count_disc_drop)))
        throw std::logic_error("packet fidelity: ns-3's FQ-CoDel has no Drop trace");
    }
  }
}

}  // namespace

bool active() { return simgrid::config::get_value<std::string>("network/model") == "ns-3"; }

void platform_created(const PacketSettings& settings) {
  Transport& t = transport();
  t.settings = settings;
  const std::string type = ns3_tcp_type(settings.tcp);
  if (!ns3::TypeId::LookupByNameFailSafe(type, &t.tcp))
    throw std::runtime_error(fmt::format("packet fidelity: ns-3 has no congestion control \"{}\"", type));
  simgrid::s4u::Engine::on_platform_created();
  configure_devices();
  t.empty_maps = find_empty_maps();
  t.configured = true;
  // Every communication is taken over in the kernel, as soon as its action exists.
  static const bool connected = [] {
    comm_impl_on_start.connect([](simgrid::kernel::activity::CommImpl const& /*comm*/) { take_new_flows(); });
    return true;
  }();
  (void)connected;
}

void take_new_flows() {
  if (!active() || sink_from_sock.empty()) return;
  Transport& t = transport();
  if (!t.configured) throw std::logic_error("ns3_binding::take_new_flows before platform_created");
  FlowTable& flows = flow_table();
  for (auto it = t.held.begin(); it != t.held.end();)  // flows the binding has ended and forgotten
    it = flows.count(it->first) == 0 ? t.held.erase(it) : std::next(it);
  for (auto& [key, flow] : flows) {
    if (flow->buffered_bytes_ == TAKEN) continue;
    if (flow->buffered_bytes_ != 0 || flow->sent_bytes_ != 0 || flow->remaining_ != flow->total_bytes_ || flow->finished_)
      refuse("a flow record of the binding is not laid out as SimGrid 3.32's");
    const auto sink = sink_from_sock.find(key);
    if (sink == sink_from_sock.end() || sink->second.GetN() != 1) refuse("a flow of the binding has no sink");
    // The key is the sending socket's address, as the binding prints it (transform_socket_ptr).
    ns3::Ptr<ns3::Socket> socket(reinterpret_cast<ns3::Socket*>(std::stoull(key, nullptr, 16)));
    ns3::Ptr<ns3::Application> app = sink->second.Get(0);
    app->SetStartTime(ns3::Seconds(1e9));  // never listens: its port stays free
    ns3::Ptr<ns3::Node> loopback_node = socket->GetNode();
    for (std::uint32_t d = 0; d < loopback_node->GetNDevices(); ++d)
      if (ns3::DynamicCast<ns3::LoopbackNetDevice>(loopback_node->GetDevice(d))) socket->BindToNetDevice(loopback_node->GetDevice(d));
    flow->buffered_bytes_ = TAKEN;
    t.held.emplace(key, socket);
    ns3::Simulator::ScheduleNow(&start, socket, app->GetNode(), flow);
    ++t.taken;
  }
}

long flows_taken() { return transport().taken; }
long connections_opened() { return static_cast<long>(transport().connections.size()); }
long packets_dropped() { return transport().dropped; }

}  // namespace ddlsim::sim::ns3_binding
