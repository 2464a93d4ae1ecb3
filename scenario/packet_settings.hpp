// ddlsim: network.packet, the TCP and queue settings of packet fidelity (network.fidelity "packet",
// ns-3 3.37 through SimGrid's binding: engine/ns3_binding.hpp). Defaults follow a Linux host on an
// Ethernet of MTU 1500 (docs/scenario.md, "Packet fidelity", justifies each).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::sim {

enum class QueueDiscipline { DROP_TAIL, FQ_CODEL };

struct PacketSettings {
  /// Congestion control, one of tcp_variants() (Linux's default: cubic).
  std::string tcp = "cubic";
  /// TCP payload per segment (MSS). 1448: Linux on MTU 1500 with timestamps (1500 - 20 - 20 - 12).
  int segment_bytes = 1448;
  /// Socket buffers (Linux's autotuning ceilings, net.ipv4.tcp_wmem / tcp_rmem: 4 MiB and 6 MiB).
  std::int64_t send_buffer_bytes = 4 << 20;
  std::int64_t receive_buffer_bytes = 6 << 20;
  /// Every egress port's queue: a drop-tail FIFO of queue_packets packets, or FQ-CoDel with that limit.
  QueueDiscipline queue = QueueDiscipline::DROP_TAIL;
  int queue_packets = 1000;
  /// ECN marking (FQ-CoDel marks instead of dropping; senders react as to a loss). fq_codel only.
  bool ecn = false;
  /// The retransmission timeout's floor (Linux's TCP_RTO_MIN, 200 ms; RFC 6298 says 1 s).
  double min_rto_s = 0.2;
};

/// The names network.packet.tcp accepts, each an ns-3 3.37 congestion control (ns3::Tcp<Name>).
const std::vector<std::string>& tcp_variants();
/// "ns3::TcpCubic" for "cubic".
std::string ns3_tcp_type(const std::string& variant);
std::string to_string(QueueDiscipline q);

}  // namespace ddlsim::sim

namespace ddlsim {
class ObjectReader;
namespace sim {
/// network.packet (absent: the defaults). Errors are ConfigErrors naming the JSON path.
PacketSettings read_packet_settings(ObjectReader reader);
}  // namespace sim
}  // namespace ddlsim
