// ddlsim: packet fidelity on SimGrid 3.32's ns-3 binding (network/model:ns-3; Debian's libsimgrid
// links ns-3 3.37). SimGrid keeps the actions (a communication's start, its end, the actors that wait
// on it); this file carries every communication's bytes over TCP connections of ns-3 that stay open,
// one per ordered pair of hosts, as gloo and NCCL keep theirs, and ends the action when its last byte
// has arrived.
//
// Why not the binding's own transfer (src/surf/ns3/ns3_simulator.cpp):
//  * it opens a new TCP connection per message (a handshake and slow start every time, which no
//    library does), never ends a zero-byte message, and aborts on any message that ends in slow
//    start: when the sender has *buffered* its last byte it closes the receiver's sockets, whose FIN
//    overtakes the sender's tail ("total_bytes (=1000000) is not sent_bytes(=957000)"; fixed upstream
//    in 3.34, commit a3d5d7c92a);
//  * its routes are built only when `Engine::on_platform_created` fires, which 3.32 does only after
//    an XML platform: `platform_created()` fires it.
//
// How a message is taken over. The binding creates, when the second side of a communication posts,
// an action, a sending socket bound to a port of the source, a PacketSink on the destination, a flow
// record (SgFlow) in its table `flow_from_sock`, and an event that connects the socket. SimGrid's
// kernel then fires CommImpl::on_start, on which `take_new_flows()` (1) binds that socket to the loopback device, so its connect finds no
// route and sends nothing, and retires it once the connect has failed; (2) never starts the sink;
// (3) queues the message's bytes on the pair's connection; and when the receiver has read them all,
// (4) marks the flow record finished and stops ns-3, which is how the binding ends a flow itself.
// The flow table is not exported by libsimgrid: it is found once in libsimgrid's data as the one map
// holding the same keys as the exported `sink_from_sock`, and its records' layout (SimGrid 3.32's
// SgFlow) is checked on every message; a mismatch is refused with an error, never guessed.
#pragma once

#include "scenario/packet_settings.hpp"

namespace ddlsim::sim::ns3_binding {

/// True when SimGrid's network model is ns-3 (network/model:ns-3).
bool active();

/// Once the platform's zones are sealed: builds ns-3's global routes (SimGrid's platform-created
/// signal), sets every device's MTU to the segment plus its headers and every egress port's queue,
/// and keeps `settings` for the connections. Throws std::runtime_error where ns-3 refuses one.
void platform_created(const PacketSettings& settings);

/// Takes over every communication started since the last call (a no-op when the model is not ns-3).
/// platform_created() connects it to the kernel's signal that a communication has started.
void take_new_flows();

/// Messages taken over, and TCP connections opened, so far (tests, reports).
long flows_taken();
long connections_opened();
/// Packets dropped by full queues (devices' and queue disciplines') so far.
long packets_dropped();

}  // namespace ddlsim::sim::ns3_binding
