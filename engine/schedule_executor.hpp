// ddlsim: runs a rank's collective schedule as SimGrid messages.
//
// In a step the rank posts every send (put_async) and receive (get_async) at
// once and waits for all of them; a transfer starts when both ends have posted
// (rendezvous). Mailboxes are per (source, destination) pair and FIFO, so the
// messages between two ranks match in program order. A pipelined entry with
// latency_steps = k > 1 is one flow followed by a delay of (k - 1) path latencies.
//
// Software costs (models/software_cost.hpp): a message of m bytes puts m / eta
// wire bytes on the links, its flow's rate is capped at the library's window
// rate when that is lower than the link's, and once the step's transfers are
// done the rank sleeps the rest of the step's latency terms -- o_send + o_recv +
// the handshake's -- so that an uncontended step costs exactly
// SoftwareCost::step_s (a merged phase: k times that, less the transfers).
//
// Windowed steps (RankStep::window = w, gloo's ring) keep w steps in flight: before posting one,
// the rank waits for the step w before it (receives, then o_recv, then sends); a send pays o_send
// before it is posted; under a receiver-ready rendezvous a receive's get is posted one path
// latency after the rank posts it (the notice; a NoticeAgent actor posts it as the rank carries
// on), so the data leaves at max(send posted, receive posted + alpha), and the send completes then
// (its bytes are in the transport; the put is detached and its receiver waits for it). No window
// cap, no handshake per step. models/collectives/gloo_ring.cpp evaluates the same program as its closed form.
#pragma once

#include "models/collective.hpp"
#include "models/rank_traffic.hpp"
#include "scenario/executor_network.hpp"
#include "engine/s4u_emitter.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

namespace ddlsim::sim {

/// Payload units per byte. At flow fidelity SimGrid payloads are integers, so a transfer of b bytes
/// is sent as round(b * byte_scale()) units over links whose bandwidth is multiplied by it: 1024,
/// a timing error from rounding below 1/1024 byte. At packet fidelity ns-3 sends every unit as a
/// byte, so it is 1 (engine/engine.cpp sets it with the network model; one engine per process).
double byte_scale();
void set_byte_scale(double units_per_byte);

using models::TrafficCounters;  // models/rank_traffic.hpp
using models::rank_steps;
using models::schedule_traffic;


class ScheduleExecutor {
 public:
  /// `hosts` by rank (workers, then servers), as emitted.
  explicit ScheduleExecutor(std::vector<simgrid::s4u::Host*> hosts, ExecutorNetwork network = {})
      : hosts_(std::move(hosts)), network_(std::move(network)) {}

  /// Runs the steps of `steps` for `rank` in the calling actor, taking them one at a time (only the
  /// current one is held); counts what the rank sends. With `members` (a subgroup), the steps'
  /// peers are indices into it, mapped to the members' ranks.
  /// `software`: the call's protocol (models/protocol_choice.hpp), else the network's.
  void run(int rank, models::StepSource& steps, TrafficCounters& counters, const std::vector<int>* members = nullptr,
           const models::SoftwareCost* software = nullptr);

  /// Path latency between two ranks' hosts (cached), as the links give it (no model factor).
  double latency(int src, int dst);
  /// Seconds per payload byte of the path's slowest link now (link traces change it), model factor applied.
  double beta(int src, int dst);
  /// The links of the route between two ranks' hosts (cached).
  const std::vector<simgrid::s4u::Link*>& route(int src, int dst) {
    (void)latency(src, dst);  // fills the route
    return routes_[key(src, dst)];
  }
  /// The network model's factors and the library's software costs the executor applies.
  [[nodiscard]] const ExecutorNetwork& network() const { return network_; }

 private:
  simgrid::s4u::Mailbox* mailbox(int src, int dst);
  /// Windowed steps (models::RankStep::window): the steps in flight and the rank's notice agent.
  struct Windowed;
  /// When the receives of the windowed messages from src to dst were posted (plus their notice),
  /// in order: a send completes when its data leaves, at max(send posted, that time).
  struct ReadyQueue {
    std::deque<double> times;
    simgrid::s4u::SemaphorePtr count;
    double last = 0;
    double post(double at);  // returns the time recorded (never before the previous one)
    double take();           // the oldest, once posted (blocks until then)
  };
  ReadyQueue& ready(int src, int dst);
  std::unordered_map<std::uint64_t, ReadyQueue> ready_;
  void run_windowed(Windowed& w, const models::RankStep& step, TrafficCounters& counters);
  void wait_step(Windowed& w);
  void drain(Windowed& w);

  std::vector<simgrid::s4u::Host*> hosts_;
  ExecutorNetwork network_;
  std::unordered_map<std::uint64_t, std::vector<simgrid::s4u::Link*>> routes_;
  static std::uint64_t key(int src, int dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
  }
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  std::unordered_map<std::uint64_t, double> latencies_;
};

}  // namespace ddlsim::sim
