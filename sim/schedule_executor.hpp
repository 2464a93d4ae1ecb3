// ddlsim: runs a rank's collective schedule as SimGrid messages.
//
// In a step the rank posts every send (put_async) and receive (get_async) at
// once and waits for all of them; a transfer starts when both ends have posted
// (rendezvous). Mailboxes are per (source, destination) pair and FIFO, so the
// messages between two ranks match in program order. A pipelined entry with
// latency_steps = k > 1 is one flow followed by a delay of (k - 1) path latencies.
#pragma once

#include "models/collective.hpp"
#include "platforms/s4u_emitter.hpp"

#include <cstdint>
#include <unordered_map>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

namespace ddlsim::sim {

/// Payload units per byte: SimGrid payloads are integers, so a transfer of b
/// bytes is sent as round(b * BYTE_SCALE) units over links whose bandwidth is
/// multiplied by BYTE_SCALE. Timing error from rounding is below 1/1024 byte.
inline constexpr double BYTE_SCALE = 1024.0;

struct TrafficCounters {
  double bytes_sent = 0;
  std::int64_t messages_sent = 0;  // algorithm messages (a pipelined phase counts as its steps)
  std::int64_t flows = 0;          // SimGrid communications actually simulated
};

class ScheduleExecutor {
 public:
  /// `hosts` by rank (workers, then servers), as emitted.
  explicit ScheduleExecutor(std::vector<simgrid::s4u::Host*> hosts) : hosts_(std::move(hosts)) {}

  /// Runs `steps` for `rank` in the calling actor; counts what the rank sends. With `members`
  /// (a subgroup), the steps' peers are indices into it, mapped to the members' ranks.
  void run(int rank, const std::vector<models::RankStep>& steps, TrafficCounters& counters,
           const std::vector<int>* members = nullptr);

  /// Path latency between two ranks' hosts (cached).
  double latency(int src, int dst);

 private:
  simgrid::s4u::Mailbox* mailbox(int src, int dst);

  std::vector<simgrid::s4u::Host*> hosts_;
  static std::uint64_t key(int src, int dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
  }
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::unordered_map<std::uint64_t, double> latencies_;
};

/// Bytes and messages a schedule sends (used by analytic fidelity, which runs no messages).
TrafficCounters schedule_traffic(const std::vector<models::RankStep>& steps);

}  // namespace ddlsim::sim
