#include "engine/stepwise_replay.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <unordered_map>

namespace sg4 = simgrid::s4u;

namespace ddlsim::sim {
namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

/// A route as a lone CM02 flow sees it.
struct Path {
  std::vector<const sg4::Link*> links;
  double latency_s = 0;  // the route's latency x the latency factor
  double bound = INF;    // its value's cap: the slowest link, the TCP window's rate
};

/// A posted send waiting for its receive (or the other way round).
struct Post {
  double at = 0;
  double units = 0;
  double rate_units = -1;  // the send's rate cap (SimGrid units per second); < 0: none
};

struct Event {
  double at;
  std::int64_t seq;  // ties in the order they were made, as SimGrid's timers
  int rank;          // a step ends for this rank (its sleep done): it posts the next
  bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct Transfer {
  double end;
  std::int64_t seq;
  int src, dst;
  bool operator>(const Transfer& o) const { return end != o.end ? end > o.end : seq > o.seq; }
};

class Replay {
 public:
  Replay(ScheduleExecutor& executor, std::vector<ReplayRank>& ranks) : executor_(executor), ranks_(ranks) {
    latency_factor_ = executor.network().latency_factor;  // what the executor sleeps: as run()
    flow_latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");  // what CM02 applies
    bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
    tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
    state_.resize(ranks.size());
  }

  ReplayResult run() {
    ReplayResult out;
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      if (ranks_[r].steps) events_.push({ranks_[r].start_s, seq_++, static_cast<int>(r)});
      else state_[r].done = true;
    while (!events_.empty() || !transfers_.empty()) {
      // Transfers ending at or before the next step's start end first (SimGrid ends a comm before it
      // runs the actor it wakes).
      if (!transfers_.empty() && (events_.empty() || transfers_.top().end <= events_.top().at)) {
        const Transfer t = transfers_.top();
        transfers_.pop();
        op_done(t.src, t.end);
        op_done(t.dst, t.end);
        continue;
      }
      const Event e = events_.top();
      events_.pop();
      if (!post_step(e.rank, e.at)) {
        out.why = why_;
        return out;
      }
    }
    for (const auto& s : state_)
      if (!s.done) {
        out.why = "ranks wait for messages that are never sent";
        return out;
      }
    out.replayed = true;
    out.end_s = end_s_;
    out.flows = flows_;
    return out;
  }

 private:
  struct RankState {
    int pending = 0;     // the current step's operations not done
    double delay = 0;    // what the rank sleeps once they are
    bool done = false;
  };

  static std::uint64_t key(int src, int dst) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
  }

  const Path& path(int src, int dst) {
    auto [it, fresh] = paths_.try_emplace(key(src, dst));
    if (fresh) {
      Path& p = it->second;
      const double latency = executor_.latency(src, dst);
      for (const auto* link : executor_.route(src, dst)) {
        p.links.push_back(link);
        p.bound = std::min(p.bound, link->get_bandwidth());
      }
      p.latency_s = latency * flow_latency_factor_;
      if (latency > 0) p.bound = std::min(p.bound, tcp_gamma_ / (2.0 * latency));
    }
    return it->second;
  }

  /// Posts rank r's next step at `at`, or ends the rank; false when the replay cannot go on.
  bool post_step(int r, double at) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    auto& st = state_[static_cast<std::size_t>(r)];
    if (!rank.steps->next(step_)) {
      st.done = true;
      end_s_ = std::max(end_s_, at);
      return true;
    }
    if (step_.window > 0) {
      why_ = "a windowed schedule";
      return false;
    }
    // As ScheduleExecutor::run: the call's software, its efficiency, each op's rate cap and the
    // latency terms the rank sleeps after the step.
    const models::SoftwareCost* given = rank.software != nullptr ? rank.software : executor_.network().software.get();
    const models::SoftwareCost* software = given != nullptr && !given->ideal() ? given : nullptr;
    const double efficiency = software != nullptr ? software->protocol_efficiency : 1.0;
    const int k = step_.latency_steps;
    double delay = 0;
    st.pending = static_cast<int>(step_.ops.size());
    for (const auto& op : step_.ops) {
      const bool send = op.kind == models::RankOp::Kind::SEND;
      const int src = send ? r : op.peer;
      const int dst = send ? op.peer : r;
      double rate_cap = -1;
      if (software != nullptr || k > 1) {
        const double alpha = executor_.latency(src, dst) * latency_factor_;
        double extra = 0;
        if (software != nullptr) {
          const auto m = software->message(op.bytes / k, alpha, executor_.beta(src, dst));
          extra = software->send_overhead_s + software->recv_overhead_s + m.latency_s - alpha;
          if (m.per_byte_s > m.wire_per_byte_s) rate_cap = 1.0 / m.per_byte_s;
        }
        delay = std::max(delay, k * extra + (k - 1) * alpha);
      }
      if (send) {
        Post p{at, static_cast<double>(std::llround(op.bytes / efficiency * byte_scale())),
               rate_cap > 0 ? rate_cap / efficiency * byte_scale() : -1.0};
        auto& gets = gets_[key(src, dst)];
        if (gets.empty()) {
          puts_[key(src, dst)].push_back(p);
        } else {
          gets.pop_front();
          if (!start(src, dst, p, at)) return false;
        }
      } else {
        auto& puts = puts_[key(src, dst)];
        if (puts.empty()) {
          gets_[key(src, dst)].push_back(Post{at, 0, -1});
        } else {
          const Post p = puts.front();
          puts.pop_front();
          if (!start(src, dst, p, at)) return false;
        }
      }
    }
    st.delay = delay;
    if (st.pending == 0) events_.push({at + delay, seq_++, r});
    return true;
  }

  /// A transfer from src to dst starts at `at`: it ends after the route's latency and its units at
  /// its lone rate, unless a link of the route is still busy (then false).
  bool start(int src, int dst, const Post& send, double at) {
    const Path& p = path(src, dst);
    double value = p.bound;
    if (send.rate_units > 0) value = std::min(value, send.rate_units / bandwidth_factor_);
    const double end = at + p.latency_s + (send.units > 0 ? send.units / (value * bandwidth_factor_) : 0.0);
    for (const auto* link : p.links) {
      auto [it, fresh] = busy_until_.try_emplace(link, end);
      if (!fresh) {
        if (it->second > at) {
          why_ = "two transfers share a link";
          return false;
        }
        it->second = end;
      }
    }
    transfers_.push({end, seq_++, src, dst});
    ++flows_;
    return true;
  }

  /// One of rank r's operations ends at `at`; the rank sleeps its step's delay once all have.
  void op_done(int r, double at) {
    auto& st = state_[static_cast<std::size_t>(r)];
    if (--st.pending == 0) events_.push({at + st.delay, seq_++, r});
  }

  ScheduleExecutor& executor_;
  std::vector<ReplayRank>& ranks_;
  std::vector<RankState> state_;
  double latency_factor_ = 1, flow_latency_factor_ = 1, bandwidth_factor_ = 1, tcp_gamma_ = INF;
  models::RankStep step_;
  std::unordered_map<std::uint64_t, Path> paths_;
  std::unordered_map<std::uint64_t, std::deque<Post>> puts_, gets_;
  std::unordered_map<const sg4::Link*, double> busy_until_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::priority_queue<Transfer, std::vector<Transfer>, std::greater<>> transfers_;
  std::int64_t seq_ = 0;
  std::int64_t flows_ = 0;
  double end_s_ = 0;
  std::string why_;
};

}  // namespace

ReplayResult replay_stepwise(ScheduleExecutor& executor, std::vector<ReplayRank>& ranks) {
  return Replay(executor, ranks).run();
}

}  // namespace ddlsim::sim
