// ddlsim: the software cost of a communication library (network.software).
//
// Alpha-beta charges a message latency + bytes x beta. Real libraries add
// (docs/scenario.md, "Software costs", has the sources of every preset):
//
//   * per-message CPU overhead (LogGP's o): o_send when a rank posts a step's
//     sends, o_recv when a step's receives have arrived. Charged once per step
//     and side: the messages of one step are posted together and their
//     overheads overlap, as their transfers do.
//   * protocol efficiency eta = payload / wire bytes (Ethernet/IP/TCP headers,
//     NCCL's LL flags): every message puts bytes / eta on the wire.
//   * a receiver-ready handshake (rendezvous): `message` -- the sender waits one
//     path latency for the receiver's "ready" before it sends (MPI's rendezvous
//     protocol above its eager limit); `segment` -- every segment of at most
//     `segment_bytes` needs its own "ready", with `segments_in_flight` (k >= 2)
//     posted ahead (gloo: 1 MiB segments, two in flight); `credit` -- the receiver
//     posted its k slots' credits up front, so the first k segments go at once and
//     each later one waits for the credit of the segment k before it (NCCL: 8 slots;
//     src/device/prims_simple.h, waitPeer: a send proceeds while
//     connStepCache + NCCL_STEPS >= step + StepPerSlice, head being the slots the
//     receiver has consumed).
//
// A message of m payload bytes on a path of latency alpha and per-byte time beta
// (B = beta / eta; n = ceil(m / S) equal segments of s = m / n; h = 1 when the
// handshake applies, i.e. rendezvous != none and m > eager_limit_bytes):
//
//   none / eager:   latency  alpha                     per byte  B
//   message:        latency  2 alpha                   per byte  B
//   segment:        latency  2 alpha + s B - p         per byte  p / s,
//                   p = max(s B, (2 alpha + s B) / k)  (one segment every p:
//                   bandwidth-bound, or k segments per handshake round trip)
//   credit, n <= k: latency  alpha                     per byte  B
//   credit, n > k:  latency  alpha                     per byte  (s B + (n - 1) p) / m
//
// and a step in which c of a rank's messages share one NIC direction costs
//
//   step_s(m, c) = o_send + o_recv + latency(m) + m max(c B, per_byte(m))
//
// which is what both faces compute: the closed forms call AlphaBeta::step_s for
// each of their terms, and sim/'s executor sleeps o_send + (latency(m) - alpha)
// before posting a step's sends, caps each flow's rate at 1 / per_byte(m)
// (payload), sends m / eta wire bytes, and sleeps o_recv after the step's
// receives. On the reference star the two agree exactly; under contention the
// flows share links as usual (the window cap is the uncontended one).
// The `ideal` software (the default) is alpha + c m beta exactly.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddlsim::models {

enum class Rendezvous { NONE, MESSAGE, SEGMENT, CREDIT };

struct SoftwareCost {
  std::string preset = "ideal";     // the preset the values came from (reported in summary.json)
  double send_overhead_s = 0;       // o_send, per step that sends
  double recv_overhead_s = 0;       // o_recv, per step that receives
  double protocol_efficiency = 1;   // eta in (0, 1]
  Rendezvous rendezvous = Rendezvous::NONE;
  double eager_limit_bytes = 0;     // messages of at most this many bytes skip the handshake
  double segment_bytes = 0;         // S (rendezvous = segment)
  int segments_in_flight = 2;       // k >= 2 (rendezvous = segment)
  /// The preset's fixed cost of a collective call; network.collective_call_cost overrides it.
  std::optional<double> call_cost_s;
  /// A preset that picks its protocol per collective call (`nccl`): the candidates, each a whole
  /// preset with its own call cost (models/protocol_choice.hpp picks); empty for every other preset.
  /// Everything that is not a collective call (point to point, pushes and pulls) uses this object's
  /// own values.
  std::vector<std::shared_ptr<const SoftwareCost>> protocols;

  /// True when every term is alpha-beta's own (no overhead, eta = 1, no handshake).
  [[nodiscard]] bool ideal() const {
    return send_overhead_s == 0 && recv_overhead_s == 0 && protocol_efficiency == 1 && rendezvous == Rendezvous::NONE;
  }

  /// A message of `bytes` that meets the handshake: rendezvous on and above the eager limit.
  [[nodiscard]] bool handshakes(double bytes) const {
    return rendezvous != Rendezvous::NONE && bytes > eager_limit_bytes && bytes > 0;
  }
  /// A receiver that announces each receive to its sender (gloo's NOTIFY_RECV_READY): message and
  /// segment rendezvous; credits are posted up front instead.
  [[nodiscard]] bool sends_ready_notices() const {
    return rendezvous == Rendezvous::MESSAGE || rendezvous == Rendezvous::SEGMENT;
  }
  /// A message of `bytes` that leaves only once its receiver's ready notice has crossed the path.
  [[nodiscard]] bool waits_for_receiver(double bytes) const { return sends_ready_notices() && handshakes(bytes); }

  struct Message {
    double latency_s = 0;        // the message's latency term (alpha for ideal software), overheads excluded
    double per_byte_s = 0;       // time per payload byte of one uncontended flow (beta for ideal software)
    double wire_per_byte_s = 0;  // B = beta / eta: what each payload byte costs on the wire
  };
  /// One message of `bytes` payload bytes on a path (alpha, beta).
  [[nodiscard]] Message message(double bytes, double alpha_s, double beta_s_per_byte) const;

  /// A step whose messages carry `bytes` each, `concurrent` of them sharing a NIC direction.
  [[nodiscard]] double step_s(double bytes, double concurrent, double alpha_s, double beta_s_per_byte) const {
    const Message m = message(bytes, alpha_s, beta_s_per_byte);
    return send_overhead_s + recv_overhead_s + m.latency_s + bytes * std::max(concurrent * m.wire_per_byte_s, m.per_byte_s);
  }
};

/// The named presets: ideal, gloo, mpi, nccl_simple, nccl_ll, nccl_ll128, and nccl, which picks one
/// of the three NCCL protocols per collective call (docs/scenario.md cites each).
[[nodiscard]] std::optional<SoftwareCost> software_preset(const std::string& name);
[[nodiscard]] const char* software_preset_names();  // "ideal, gloo, ..." for messages

/// network.software: a preset name, or an object {"preset", and any field to override} (docs/scenario.md).
/// Errors are ConfigErrors naming the JSON path under `path`.
[[nodiscard]] SoftwareCost read_software(const nlohmann::json& value, const std::string& path);
/// Every field, in the units of its name (summary.json's `software`).
[[nodiscard]] nlohmann::json to_json(const SoftwareCost& software);
/// The network.software object that read_software reads back to the same values (times in seconds,
/// sizes in bytes, without call_cost: a scenario's collective_call_cost carries it).
[[nodiscard]] nlohmann::json to_scenario_json(const SoftwareCost& software);

}  // namespace ddlsim::models
