// ddlsim: a worker's point-to-point and one-sided messages on SimGrid.
//
// Two-sided (isend/irecv): one mailbox per (source, destination, tag), FIFO, so
// messages between two workers with one tag match in program order; a transfer
// starts when both ends have posted (rendezvous).
// One-sided (put/latest): every worker's "put>rank" mailbox has the worker's
// compute actor as SimGrid's permanent receiver, so a put flows as soon as it is
// posted, without the receiver; latest() takes, without blocking, every put that
// has fully arrived (Mailbox::ready) and keeps the newest per (source, tag).
// SimGrid delivers a mailbox's finished puts in posting order, so a put that
// finished behind an unfinished earlier one is seen when that one is.
// Messages run as flows at every fidelity (summary.json: point_to_point_fidelity).
//
// The library's costs (network.software; models/software_cost.hpp) apply to every message:
//   * o_send: the sender's CPU, before the message is posted (isend, put); o_recv: the receiver's
//     CPU once a receive has arrived (wait). A one-sided put has no receive: the target pays none.
//   * protocol efficiency: bytes / eta on the wire (engine/link_bytes.cpp: wire_units).
//   * receiver-ready handshake (rendezvous "message" or "segment", a two-sided message above the
//     eager limit), as gloo's TCP pair does it for every send/recv (gloo/transport/tcp/pair.cc at
//     cc44198: Pair::recv sends NOTIFY_RECV_READY as soon as a receive is posted, lines 932-960;
//     Pair::send sends at once only when that notice has arrived, lines 916-923, else queues the
//     send, line 927, until handleRemotePendingRecv sends it, lines 615-640). The notice is a
//     header-only message: it arrives one path latency after the receive is posted, so the data
//     leaves at max(send posted + o_send, receive posted + alpha). Its segments are not pipelined
//     with handshakes (gloo's segments are its collectives' chunks, not a point-to-point rule).
//   * remote completion of a put (rendezvous "message" or "segment": a library over TCP, whose NIC
//     cannot tell the origin that the data has landed): the put completes at the origin one path
//     latency after its data arrived, when the target's header-only acknowledgement is in. MPI's
//     passive target makes the origin wait for it: MPI_Win_unlock returns once the RMA operations
//     are complete at the target (MPI-3.1, section 11.5.3), and MPICH's ch3 device answers an
//     operation flagged MPIDI_CH3_PKT_FLAG_RMA_UNLOCK with a packet flagged
//     MPIDI_CH3_PKT_FLAG_RMA_ACK (src/mpid/ch3, MPIDI_CH3I_Send_lock_op_ack_pkt), which the
//     origin's unlock waits for. Under the ideal library a put completes when its data arrives.
//   * credit windows (rendezvous "credit", NCCL): the message's rate is capped as the preset's
//     slots allow (SoftwareCost::message), as the executor caps a collective's flows.
// A (source, destination, tag) pairs its notices with its sends in order; a send at most the eager
// limit posts at once and takes the next notice as its own. A send whose notice has not arrived
// holds its caller until it has (gloo's device thread would post it on its own meanwhile).
#pragma once

#include "models/software_cost.hpp"
#include "models/sync_model.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <simgrid/s4u.hpp>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::sim::detail {

struct Context;

/// The library's costs (network.software), or null for the ideal library.
const models::SoftwareCost* library(const Context& ctx);
/// A message of `bytes` from rank `src` to `dst` under the library's credit window (rendezvous
/// "credit"): its rate cap in payload bytes per second (SoftwareCost::message); <= 0: none.
double credit_rate_cap(const Context& ctx, int src, int dst, double bytes);
/// Starts a message's data: `units` wire units to `box`, its rate capped at `rate` payload bytes per
/// second (<= 0: uncapped; a cap is kept across bandwidth changes, engine/flow_bounds.hpp).
simgrid::s4u::CommPtr post_data(simgrid::s4u::Mailbox* box, void* payload, std::uint64_t units, double rate,
                                double efficiency);

/// Per (source, destination, tag): the receiver-ready notices on their way to the sender, shared by
/// both ends' PointToPoint (engine/point_to_point.cpp).
struct ReadyNotices {
  std::deque<double> arrive_s;          // when each posted receive's notice reaches the sender
  int owed = 0;                         // notices already taken by sends posted before their receive
  simgrid::s4u::SemaphorePtr posted;    // one per notice not yet taken
};

class PointToPoint {
 public:
  PointToPoint(Context& ctx, int rank) : ctx_(ctx), rank_(rank) {}
  PointToPoint(const PointToPoint&) = delete;
  PointToPoint& operator=(const PointToPoint&) = delete;
  ~PointToPoint();

  models::CommHandle isend(int peer, double bytes, int tag, std::int64_t version, int iteration);
  models::CommHandle irecv(int peer, int tag, int iteration);
  models::CommHandle put(int peer, double bytes, int tag, std::int64_t version, int iteration);
  /// Blocks until `handle` finished; adds its [post, finish] interval to its iteration's busy time.
  models::Message wait(models::CommHandle handle);
  std::optional<models::Message> latest(int peer, int tag);
  /// Waits for every operation still in flight.
  void wait_outstanding();
  /// Frees the puts that arrived and were never read.
  void drain();
  /// The time within [start, end] during which at least one of this worker's operations was in
  /// flight (its communication busy time in that iteration); call once per iteration, in order.
  double busy_s(double start, double end);

 private:
  struct Pending {
    simgrid::s4u::CommPtr comm;
    bool receive = false;
    bool one_sided = false;  // a put
    void* payload = nullptr;  // a receive's message
    models::Message sent;     // what a send or put carried
    int iteration = 0;
    double posted_s = 0;
    const char* what = "";
    int peer = 0;
    /// A send the library's progress thread posts once its notice arrives: released when `comm` is set.
    simgrid::s4u::SemaphorePtr posted;
  };
  simgrid::s4u::Mailbox* box(int src, int dst, int tag);
  models::CommHandle track(Pending pending);
  /// A send or a put: posts `bytes` to `box` and counts it as this worker's traffic.
  models::CommHandle send_to(simgrid::s4u::Mailbox* box, const char* what, int peer, double bytes, int tag,
                             std::int64_t version, int iteration, bool two_sided);
  void take_arrived_puts();
  void count_sent(double bytes);
  /// Sends waiting for their receive's notice, per (peer, tag), taken in order by one progress actor
  /// while any is queued.
  struct Queued {
    models::CommHandle handle;
    simgrid::s4u::Mailbox* box;
    models::Message* msg;
    std::uint64_t units;
    double rate;
    bool eager;  // within the eager limit: sent in its turn, without waiting for its notice
  };
  struct Progress {
    simgrid::s4u::SemaphorePtr jobs;     // one release per queued send, and one to stop (null: no actor)
    simgrid::s4u::SemaphorePtr stopped;  // released by the actor as it ends
    std::deque<Queued> queue;
  };
  void stop_progress();
  std::map<std::pair<int, int>, Progress> progress_;
  /// Posts the data of a two-sided send of `units` wire units once its receiver-ready notice has
  /// arrived: at once when it has, else from a progress actor on this worker's host while the
  /// caller carries on (gloo's device thread).
  void post_after_notice(models::CommHandle handle, simgrid::s4u::Mailbox* box, models::Message* msg,
                         std::uint64_t units, double rate, int tag, bool eager = false);

  Context& ctx_;
  int rank_;
  models::CommHandle next_ = 0;
  std::map<models::CommHandle, Pending> pending_;
  std::map<std::tuple<int, int, int>, simgrid::s4u::Mailbox*> boxes_;  // (source, destination, tag)
  std::map<std::pair<int, int>, models::Message> newest_;            // (source, tag) -> newest put arrived
  std::vector<std::pair<double, double>> done_;  // [posted, finished] of operations waited since busy_s
};

}  // namespace ddlsim::sim::detail
