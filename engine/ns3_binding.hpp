// ddlsim: what SimGrid 3.32's ns-3 binding (network/model:ns-3, Debian's libsimgrid links ns-3 3.37)
// needs from a program that builds its platform in C++, and the guard that keeps it from aborting
// (issue: packet fidelity).
//
// Two defects of the 3.32 binding stand between it and a ddlsim run:
//  1. Its ns-3 routes are built when `Engine::on_platform_created` fires, which 3.32 does only at
//     the end of an XML platform file: a platform built in C++ leaves every packet without a route
//     and the run without an end. `platform_created()` fires the signal once the zone is sealed.
//  2. A flow opens a TCP connection to a fresh PacketSink on the receiver. When the sender has
//     *buffered* its last byte, the binding closes the receiver's sockets (src/surf/ns3/
//     ns3_simulator.cpp, send_cb); the receiver's FIN then reaches the sender while the tail of the
//     data is still in its send buffer, and the sender's close callback aborts the process
//     ("total_bytes (=1000000) is not sent_bytes(=957000)"): every message that ends while its
//     window is smaller than the send buffer, e.g. 1 MB at 10 Gbps in slow start. SimGrid 3.34
//     removed the early close (commit a3d5d7c92a). The guard gives the binding a decoy sink to
//     close instead, and closes the real one itself once the sender's FIN has arrived, that is once
//     every byte has: the receiver's FIN follows, and the sender's close ends the flow as the
//     binding meant it to (the end: the last byte received plus the FIN's way back).
// Call `guard_new_flows()` after posting a communication, on both sides: a flow's ns-3 action is
// created by whichever side posts second, and ns-3 runs only once every actor has blocked.
#pragma once

namespace ddlsim::sim::ns3_binding {

/// True when SimGrid's network model is ns-3 (network/model:ns-3).
bool active();

/// Fires SimGrid's platform-created signal, which builds ns-3's global routes. Once, after the
/// platform's zones are sealed.
void platform_created();

/// Swaps in a decoy for the receiving sink of every flow started since the last call (a no-op when
/// the model is not ns-3).
void guard_new_flows();

/// Flows guarded so far (tests).
long guarded_flows();

}  // namespace ddlsim::sim::ns3_binding
