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
#pragma once

#include "models/sync_model.hpp"

#include <map>
#include <optional>
#include <simgrid/s4u.hpp>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::sim::detail {

struct Context;

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
    void* payload = nullptr;  // a receive's message
    models::Message sent;     // what a send or put carried
    int iteration = 0;
    double posted_s = 0;
    const char* what = "";
    int peer = 0;
  };
  simgrid::s4u::Mailbox* box(int src, int dst, int tag);
  models::CommHandle track(Pending pending);
  /// A send or a put: posts `bytes` to `box` and counts it as this worker's traffic.
  models::CommHandle send_to(simgrid::s4u::Mailbox* box, const char* what, int peer, double bytes, int tag,
                             std::int64_t version, int iteration);
  void take_arrived_puts();

  Context& ctx_;
  int rank_;
  models::CommHandle next_ = 0;
  std::map<models::CommHandle, Pending> pending_;
  std::map<std::tuple<int, int, int>, simgrid::s4u::Mailbox*> boxes_;  // (source, destination, tag)
  std::map<std::pair<int, int>, models::Message> newest_;            // (source, tag) -> newest put arrived
  std::vector<std::pair<double, double>> done_;  // [posted, finished] of operations waited since busy_s
};

}  // namespace ddlsim::sim::detail
