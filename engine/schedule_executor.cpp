#include "engine/schedule_executor.hpp"

#include "engine/flow_bounds.hpp"
#include "engine/link_bytes.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <limits>
#include <fmt/format.h>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {
double g_units_per_byte = 1024.0;

}  // namespace

double byte_scale() { return g_units_per_byte; }
void set_byte_scale(double units_per_byte) { g_units_per_byte = units_per_byte; }

namespace {
int payload_token = 0;  // mailboxes refuse null payloads
}  // namespace

namespace schedule_detail {  // named: ScheduleExecutor::Windowed holds one (-Wsubobject-linkage)

/// A rank's receives whose data may leave only once the receiver's notice has crossed the path
/// (gloo's NOTIFY_RECV_READY, gloo/transport/tcp/pair.cc 932-960): an actor on the rank's host posts
/// each get at (post time + path latency), in order, as the rank carries on.
class NoticeAgent {
 public:
  explicit NoticeAgent(sg4::Host* host) : state_(std::make_shared<State>()) {
    state_->requests = sg4::Semaphore::create(0);
    state_->posted = sg4::Semaphore::create(0);
    sg4::Actor::create("notices", host, [state = state_] {
      while (true) {
        state->requests->acquire();
        if (state->queue.empty()) return;  // closed
        const Request r = state->queue.front();
        state->queue.pop_front();
        if (r.at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(r.at);
        state->comms.push_back(r.mailbox->get_async(&state->inbox.emplace_back(nullptr)));
        state->posted->release();
      }
    })->daemonize();  // ended by close(), or with the simulation if a run is cut short
  }
  NoticeAgent(const NoticeAgent&) = delete;
  NoticeAgent& operator=(const NoticeAgent&) = delete;
  ~NoticeAgent() = default;  // no simcall here: a destructor may run while its actor is being killed
  /// Ends the actor once every posted receive has been taken (an empty queue tells it to end).
  void close() { state_->requests->release(); }

  /// Posts a receive whose get the agent posts at `at` (not before the previous one's).
  void post(double at, sg4::Mailbox* mailbox) {
    state_->last = std::max(state_->last, at);
    state_->queue.push_back(Request{state_->last, mailbox});
    state_->requests->release();
  }
  /// The oldest receive not yet taken (receives are waited for in the order they were posted).
  sg4::CommPtr take() {
    state_->posted->acquire();
    sg4::CommPtr comm = state_->comms.front();
    state_->comms.pop_front();
    return comm;
  }

 private:
  struct Request {
    double at;
    sg4::Mailbox* mailbox;
  };
  struct State {
    sg4::SemaphorePtr requests, posted;
    std::deque<Request> queue;
    std::deque<sg4::CommPtr> comms;
    std::deque<void*> inbox;  // stable addresses for get_async
    double last = 0;
  };
  std::shared_ptr<State> state_;
};

}  // namespace schedule_detail
using schedule_detail::NoticeAgent;

sg4::Mailbox* ScheduleExecutor::mailbox(int src, int dst) {
  auto& mb = mailboxes_[key(src, dst)];
  if (mb == nullptr) mb = sg4::Mailbox::by_name(fmt::format("{}>{}", src, dst));
  return mb;
}

double ScheduleExecutor::ReadyQueue::post(double at) {
  last = std::max(last, at);  // in order, as the pair's gets are posted
  times.push_back(last);
  if (!count) count = sg4::Semaphore::create(0);
  count->release();
  return last;
}

double ScheduleExecutor::ReadyQueue::take() {
  if (!count) count = sg4::Semaphore::create(0);
  count->acquire();
  const double t = times.front();
  times.pop_front();
  return t;
}

ScheduleExecutor::ReadyQueue& ScheduleExecutor::ready(int src, int dst) { return ready_[key(src, dst)]; }

double ScheduleExecutor::latency(int src, int dst) {
  auto it = latencies_.find(key(src, dst));
  if (it != latencies_.end()) return it->second;
  std::vector<sg4::Link*> links;
  double lat = 0;
  hosts_.at(static_cast<std::size_t>(src))->route_to(hosts_.at(static_cast<std::size_t>(dst)), links, &lat);
  latencies_[key(src, dst)] = lat;
  routes_[key(src, dst)] = std::move(links);
  return lat;
}

double ScheduleExecutor::beta(int src, int dst) {
  (void)latency(src, dst);  // fills the route
  double slowest = std::numeric_limits<double>::infinity();
  for (const auto* link : routes_[key(src, dst)]) slowest = std::min(slowest, link->get_bandwidth());
  if (!std::isfinite(slowest) || slowest <= 0) return 0.0;
  return byte_scale() / (slowest * network_.bandwidth_factor);
}

struct ScheduleExecutor::Windowed {
  int rank;
  const models::SoftwareCost* software;
  double efficiency;
  const std::vector<int>* members;
  struct Op {
    bool recv;
    sg4::CommPtr comm;  // a receive's; null: one the notice agent posts
    int peer = -1;      // a send's receiver
    double posted = 0;  // when a send was posted
  };
  std::deque<std::vector<Op>> posted;  // the windowed steps in flight, oldest first
  std::deque<void*> inbox;             // stable addresses for get_async
  std::unique_ptr<NoticeAgent> notices;
};

void ScheduleExecutor::run(int rank, models::StepSource& source, TrafficCounters& counters,
                           const std::vector<int>* members, const models::SoftwareCost* call_software) {
  const models::SoftwareCost* given = call_software != nullptr ? call_software : network_.software.get();
  const models::SoftwareCost* software = given != nullptr && !given->ideal() ? given : nullptr;
  const double efficiency = software != nullptr ? software->protocol_efficiency : 1.0;
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> inbox;
  Windowed windowed{rank, software, efficiency, members, {}, {}, nullptr};
  models::RankStep step;
  while (source.next(step)) {
    if (step.window > 0) {
      run_windowed(windowed, step, counters);
      continue;
    }
    drain(windowed);
    comms.clear();
    inbox.assign(step.ops.size(), nullptr);
    const int k = step.latency_steps;
    double delay = 0;  // what the rank sleeps once the step's transfers are done
    for (std::size_t i = 0; i < step.ops.size(); ++i) {
      const auto& op = step.ops[i];
      const int peer = members != nullptr ? (*members)[static_cast<std::size_t>(op.peer)] : op.peer;
      const int src = op.kind == models::RankOp::Kind::SEND ? rank : peer;
      const int dst = op.kind == models::RankOp::Kind::SEND ? peer : rank;
      double rate_cap = -1;  // payload bytes per second; < 0: none
      if (software != nullptr || k > 1) {
        const double alpha = latency(src, dst) * network_.latency_factor;
        double extra = 0;
        if (software != nullptr && network_.rate_caps) {
          const auto m = software->message(op.bytes / k, alpha, beta(src, dst));
          extra = software->send_overhead_s + software->recv_overhead_s + m.latency_s - alpha;
          if (m.per_byte_s > m.wire_per_byte_s) rate_cap = 1.0 / m.per_byte_s;
        } else if (software != nullptr) {
          // Packet fidelity: ns-3's TCP carries and paces the data; a receiver-ready handshake is
          // one notice across the path before it (models/software_cost.hpp: `message`, `segment`
          // above the eager limit; credits are posted up front).
          extra = software->send_overhead_s + software->recv_overhead_s + (software->waits_for_receiver(op.bytes / k) ? alpha : 0);
        }
        delay = std::max(delay, k * extra + (k - 1) * alpha);
      }
      if (op.kind == models::RankOp::Kind::SEND) {
        const auto units = static_cast<std::uint64_t>(std::llround(op.bytes / efficiency * byte_scale()));
        auto comm = mailbox(rank, peer)->put_init(&payload_token, units);
        if (rate_cap > 0) comm->set_rate(rate_cap / efficiency * byte_scale());
        comms.push_back(comm->start());
        LinkBytes::add(hosts_.at(static_cast<std::size_t>(src)), hosts_.at(static_cast<std::size_t>(dst)),
                       op.bytes / efficiency);
        if (rate_cap > 0) FlowBounds::note_rate(*comm, rate_cap / efficiency * byte_scale());
        counters.bytes_sent += op.bytes;
        counters.messages_sent += k;
        ++counters.flows;
      } else {
        comms.push_back(mailbox(peer, rank)->get_async(&inbox[i]));
      }
    }
    sg4::Comm::wait_all(comms);
    if (FlowBounds::active())
      for (const auto& c : comms) FlowBounds::forget(*c);
    if (delay > 0) sg4::this_actor::sleep_for(delay);
  }
  drain(windowed);
}

void ScheduleExecutor::wait_step(Windowed& w) {
  // Receives first, then sends, as gloo waits for an iteration two back (allreduce.cc 284-299).
  for (int pass = 0; pass < 2; ++pass)
    for (auto& op : w.posted.front()) {
      if (op.recv != (pass == 0)) continue;
      if (!op.recv) {  // a send completes when its data leaves: once the receive is posted (and noticed)
        const double leaves = std::max(op.posted, ready(w.rank, op.peer).take());
        if (leaves > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(leaves);
        continue;
      }
      (op.comm ? op.comm : w.notices->take())->wait();
      if (w.software != nullptr && w.software->recv_overhead_s > 0) sg4::this_actor::sleep_for(w.software->recv_overhead_s);
    }
  w.posted.pop_front();
}

void ScheduleExecutor::drain(Windowed& w) {
  while (!w.posted.empty()) wait_step(w);
  w.inbox.clear();
  if (w.notices) w.notices->close();
  w.notices.reset();
}

void ScheduleExecutor::run_windowed(Windowed& w, const models::RankStep& step, TrafficCounters& counters) {
  while (w.posted.size() >= step.window) wait_step(w);
  const bool notices = w.software != nullptr && w.software->sends_ready_notices();
  std::vector<Windowed::Op> ops;
  for (int pass = 0; pass < 2; ++pass)  // receives are posted first (allreduce.cc 309-318)
    for (const auto& op : step.ops) {
      const bool recv = op.kind == models::RankOp::Kind::RECV;
      if (recv != (pass == 0)) continue;
      const int peer = w.members != nullptr ? (*w.members)[static_cast<std::size_t>(op.peer)] : op.peer;
      if (recv) {
        auto& queue = ready(peer, w.rank);
        if (!notices) {
          queue.post(sg4::Engine::get_clock());
          ops.push_back({true, mailbox(peer, w.rank)->get_async(&w.inbox.emplace_back(nullptr))});
          continue;
        }
        if (!w.notices) w.notices = std::make_unique<NoticeAgent>(hosts_.at(static_cast<std::size_t>(w.rank)));
        const double wait = op.bytes > w.software->eager_limit_bytes ? latency(w.rank, peer) * network_.latency_factor : 0;
        const double at = queue.post(sg4::Engine::get_clock() + wait);
        w.notices->post(at, mailbox(peer, w.rank));
        ops.push_back({true, nullptr});
        continue;
      }
      if (w.software != nullptr && w.software->send_overhead_s > 0) sg4::this_actor::sleep_for(w.software->send_overhead_s);
      const auto units = static_cast<std::uint64_t>(std::llround(op.bytes / w.efficiency * byte_scale()));
      mailbox(w.rank, peer)->put_init(&payload_token, units)->detach();  // its receiver waits for it
      ops.push_back({false, nullptr, peer, sg4::Engine::get_clock()});
      LinkBytes::add(hosts_.at(static_cast<std::size_t>(w.rank)), hosts_.at(static_cast<std::size_t>(peer)),
                     op.bytes / w.efficiency);
      counters.bytes_sent += op.bytes;
      counters.messages_sent += 1;
      ++counters.flows;
    }
  w.posted.push_back(std::move(ops));
}

}  // namespace ddlsim::sim
