// ddlsim: parameter-server pushes and pulls on the fluid links (engine/fluid_links.hpp) instead
// of SimGrid's LMM, where every flow of the run is a push or a pull and the sharing is CM02's.
//
// The sharing is SimGrid's own, flow for flow: the same routes (Host::route_to), latencies (paid
// before a flow takes bandwidth, times the latency factor), sharing penalties (the route's
// latency), rate bounds (the route's slowest link, the flow's own cap over the bandwidth factor,
// the TCP window) and rate factor (the bandwidth factor); network/model CM02 without cross
// traffic (the "ideal" and "calibrated" models). So are the mailboxes' matching rules: a push
// flows once its worker sent it and its server posted the receive for that worker (one at a
// time, in order); a pull once the server sent it and the worker posted its receives (in order);
// and a server waiting for pushes takes the first to end, then, while more have ended, the one
// whose receive it posted first (Comm::wait_any in order of the receives posted). An actor of its
// own ("ps-flows") wakes at each flow's latency end and end. Used when `eligible` says so;
// summary.json `push_pull_solver` says which ran.
#pragma once

#include "engine/fluid_links.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim::detail {

struct Context;
struct PsMessage;

class FluidPs {
 public:
  /// Empty when the fluid links give SimGrid's sharing for this run's pushes and pulls, else why not.
  static std::string ineligible(const Context& ctx, const std::vector<std::string>& engine_args);

  /// Set up once the platform is emitted (its actor on the first server's host); null, with `why`
  /// set, when a server's link lies on a route as another host's link.
  static std::unique_ptr<FluidPs> create(Context& ctx, std::string& why);
  explicit FluidPs(Context& ctx);

  /// A worker's completion count: released once when `outstanding` reaches 0.
  struct Waiter {
    int outstanding = 0;
    simgrid::s4u::SemaphorePtr done = simgrid::s4u::Semaphore::create(0);
  };

  // Worker side.
  /// Sends `msg` (`units` wire units, rate cap `rate_units` per second, <= 0: none) to `server`.
  void push(int worker, int server, PsMessage* msg, std::uint64_t units, double rate_units, Waiter* waiter);
  /// Posts the receive of the next pull from `server`, into `*slot`.
  void receive_pull(int worker, int server, PsMessage** slot, Waiter* waiter);

  // Server side.
  /// Posts the receive of `worker`'s next push.
  void post_receive(int server, int worker);
  /// Waits for a push as Comm::wait_any over the posted receives would give it.
  PsMessage* take_push(int server);
  /// Sends a pull (detached).
  void pull(int server, int worker, PsMessage* msg, std::uint64_t units, double rate_units);

  /// The sharing's costs, pushes and pulls together.
  [[nodiscard]] FluidLinks::Stats stats() const;

 private:
  struct Send {
    PsMessage* msg = nullptr;
    std::uint64_t units = 0;
    double rate_units = -1;
    Waiter* waiter = nullptr;  // pushes
  };
  struct PullReceive {
    PsMessage** slot = nullptr;
    Waiter* waiter = nullptr;
  };
  struct Route {
    int system = 0;         // 0: a push's, 1: a pull's
    FluidLinks::Flow flow;  // without units and bound
    double min_bandwidth = 0;
    double latency_s = 0;   // times the latency factor
  };
  struct Transfer {
    std::int64_t order = 0;       // when the flow began (SimGrid ends simultaneous flows in this order)
    bool push = true;
    int system = 0;
    int server = 0;
    int worker = 0;
    Send send;
    PullReceive receive;          // pulls
    std::int64_t receive_seq = 0;  // pushes: when the server posted the receive
    FluidLinks::Flow flow;
  };
  struct Channel {                // per (server, worker)
    std::deque<Send> pushes;      // sent, not yet flowing
    bool receive_posted = false;  // the server's receive for the next push
    std::int64_t receive_seq = 0;
    std::deque<Send> pulls;       // sent, not yet flowing
    std::deque<PullReceive> pull_receives;
  };
  struct Inbox {                  // per server: pushes that have arrived
    std::priority_queue<std::pair<std::int64_t, PsMessage*>, std::vector<std::pair<std::int64_t, PsMessage*>>, std::greater<>> ended;
    PsMessage* first = nullptr;   // the one that woke the waiting server
    bool waiting = false;
    std::int64_t next_seq = 0;
    simgrid::s4u::SemaphorePtr arrived = simgrid::s4u::Semaphore::create(0);
  };

  Channel& channel(int server, int worker);
  Route make_route(int src_host, int dst_host, bool push);
  const Route& route(int server, int worker, bool push) const;
  void match_push(int server, int worker);
  void match_pulls(int server, int worker);
  void begin(Transfer t);                 // its latency starts now
  void catch_up(double now);              // every activation and end up to `now`
  void deliver(const Transfer& t);
  void wake();
  void run();                             // the actor
  struct RouteConflict {};

  Context& ctx_;
  // Pushes and pulls cross disjoint link halves (worker up and server down; server up and worker
  // down): two systems, each implicit or explicit on its own.
  FluidLinks systems_[2];
  double bandwidth_factor_ = 1;
  double latency_factor_ = 1;
  double tcp_gamma_ = 0;
  std::unordered_map<const simgrid::s4u::Link*, std::pair<int, int>> link_ids_;  // (system, id)
  std::vector<Route> routes_;                          // per (server, worker): the push's, then the pull's
  std::vector<Channel> channels_;                      // server x workers + worker
  std::vector<Inbox> inboxes_;
  std::vector<Transfer> flowing_[2];                   // per system, by flow id (ids are dense: reused)
  std::int64_t next_order_ = 0;
  std::map<std::pair<double, std::int64_t>, Transfer> pending_;  // paying their latency: (when, order)
  simgrid::s4u::SemaphorePtr wake_ = simgrid::s4u::Semaphore::create(0);
  bool sleeping_ = false;
  bool woken_ = false;
};

}  // namespace ddlsim::sim::detail
