// ddlsim: helpers shared by the collective algorithms in models/collectives/.
//
// send_to / recv_from build RankOps; floor_log2 / ceil_log2 are the integer
// logarithms the closed forms use; append_binomial_broadcast / _reduce and
// append_ring_allreduce are the schedule builders that composite algorithms
// (AR-Topk) share with binomial_broadcast and ring; PlanCache memoises plans
// per group size.
//
// PortPlan is the single-ported tick schedule used by the double binary tree
// and MultiTree: every rank sends at most one and receives at most one message
// per tick, so on the reference platform (full-duplex NIC per host) no two
// flows ever share a NIC direction and every flow takes exactly alpha + m beta.
// The scheduler is greedy and work-conserving (ASAP): a flow is put in the
// first tick where its data is ready and both ports are free. Hence every flow
// of tick k >= 1 has an endpoint that was busy in tick k-1 (it was ready and
// free otherwise), so by induction every flow starts exactly at k (alpha + m
// beta) and the schedule takes ticks * (alpha + m beta) -- exactly, with no
// assumption on alpha/beta. (Sanders, Speck & Traeff, "Two-tree algorithms for
// full bandwidth broadcast, reduction and scan", Parallel Computing 2009, use
// the same single-ported full-duplex model.)
#pragma once

#include "models/collective.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::models::detail {

inline RankOp send_to(int peer, double bytes) { return RankOp{RankOp::Kind::SEND, peer, bytes}; }
inline RankOp recv_from(int peer, double bytes) { return RankOp{RankOp::Kind::RECV, peer, bytes}; }

/// floor(log2 n) for n >= 1.
inline int floor_log2(std::int64_t n) {
  int k = 0;
  while ((std::int64_t{1} << (k + 1)) <= n) ++k;
  return k;
}

/// ceil(log2 n) for n >= 1.
inline int ceil_log2(std::int64_t n) {
  int k = 0;
  while ((std::int64_t{1} << k) < n) ++k;
  return k;
}

/// The worker count of an AR-Topk group (artopk_ring.cpp, artopk_tree.cpp), refusing a
/// root that is not one of its workers (std::invalid_argument naming `algorithm`).
inline int artopk_group_size(const char* algorithm, const CollectiveGroup& group, int root) {
  if (root < 0 || (group.workers >= 1 && root >= group.workers))
    throw std::invalid_argument(std::string(algorithm) + ": root " + std::to_string(root) +
                                " is not a worker rank (the group has " + std::to_string(group.workers) + " workers)");
  return group.workers;
}

/// Appends rank `rank`'s steps of a binomial-tree broadcast of `bytes` from `root` among
/// n ranks (binomial_broadcast.cpp derives its cost: ceil(log2 n) (alpha + bytes beta) on the
/// reference star). Ranks are relabelled v = (rank - root) mod n, so the tree of root 0 serves
/// every root. Round k = 0..L-1: every v < 2^k with v + 2^k < n sends to v + 2^k; v > 0
/// receives once, in round floor(log2 v), from v - 2^floor(log2 v), and sends in later rounds.
inline void append_binomial_broadcast(int rank, int n, int root, double bytes, std::vector<RankStep>& steps) {
  if (n <= 1 || rank < 0 || rank >= n) return;
  const int v = (rank - root % n + n) % n;
  const auto real = [n, root](int virtual_rank) { return (virtual_rank + root) % n; };
  const int rounds = ceil_log2(n);
  int first_round = 0;
  if (v > 0) {
    const int h = floor_log2(v);
    steps.push_back(RankStep{{recv_from(real(v - (1 << h)), bytes)}, 1});
    first_round = h + 1;
  }
  for (int k = first_round; k < rounds; ++k)
    if (v + (1 << k) < n) steps.push_back(RankStep{{send_to(real(v + (1 << k)), bytes)}, 1});
}

/// Appends rank `rank`'s steps of a binomial-tree reduce of `bytes` to `root`: the broadcast
/// above run backwards in time, every send a receive and every receive a send. A rank receives
/// from its children one at a time (largest subtree first) and then sends to its parent, so
/// every NIC direction carries one flow at a time and, on the reference star, the reversed
/// round structure gives ceil(log2 n) (alpha + bytes beta): the root's L receives are a chain.
inline void append_binomial_reduce(int rank, int n, int root, double bytes, std::vector<RankStep>& steps) {
  std::vector<RankStep> forward;
  append_binomial_broadcast(rank, n, root, bytes, forward);
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    RankStep step = *it;
    for (RankOp& op : step.ops) op.kind = op.kind == RankOp::Kind::SEND ? RankOp::Kind::RECV : RankOp::Kind::SEND;
    steps.push_back(std::move(step));
  }
}

/// Appends rank `rank`'s steps of a ring all-reduce of `bytes` (ring.cpp derives its cost):
/// 2 (n-1) segments steps, each sending one chunk of bytes / (n segments) to rank + 1 and
/// receiving one from rank - 1, both at once.
inline void append_ring_allreduce(int rank, int n, double bytes, int segments, std::vector<RankStep>& steps) {
  if (n <= 1 || rank < 0 || rank >= n) return;
  const double chunk = bytes / n / segments;
  const RankStep step{{send_to((rank + 1) % n, chunk), recv_from((rank + n - 1) % n, chunk)}, 1};
  steps.insert(steps.end(), static_cast<std::size_t>(2 * (n - 1) * segments), step);
}

/// One pass around the ring (all-gather or reduce-scatter): N-1 steps in which
/// rank r sends a block of M/N to r+1 and receives one from r-1, both at once;
/// (N-1) alpha + (N-1)/N M beta on the reference platform.
class RingPass : public Collective {
 public:
  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    const double n = group.workers;
    return (n - 1) * ab.step_s(bytes / n);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const double block = bytes / n;
    const RankStep step{{send_to((rank + 1) % n, block), recv_from((rank + n - 1) % n, block)}, 1};
    return std::vector<RankStep>(static_cast<std::size_t>(n - 1), step);
  }
};

/// MPICH's handling of a group size N that is not a power of two for the
/// recursive algorithms (Thakur, Rabenseifner & Gropp 2005): with p the largest
/// power of two <= N and r = N - p, each even rank among the first 2r sends its
/// whole buffer to the odd rank above it and sits out; the p remaining ranks run
/// the power-of-two algorithm under "core" ranks 0..p-1; at the end each odd
/// rank returns the result to the even rank below. Adds 2 (alpha + M beta) when r > 0.
struct PowerOfTwoFold {
  PowerOfTwoFold(int n, int rank_) : rank(rank_), p(1 << floor_log2(n)), rem(n - p) {}
  int rank;
  int p;
  int rem;
  /// This rank's core rank, or -1 if it sits out.
  [[nodiscard]] int core_rank() const {
    if (rank >= 2 * rem) return rank - rem;
    return rank % 2 == 0 ? -1 : rank / 2;
  }
  /// The real rank of core rank `core`.
  [[nodiscard]] int real_rank(int core) const { return core < rem ? 2 * core + 1 : core + rem; }
  /// The fold-in step (before the core algorithm).
  void pre(double bytes, std::vector<RankStep>& steps) const {
    if (rank >= 2 * rem) return;
    if (rank % 2 == 0) steps.push_back(RankStep{{send_to(rank + 1, bytes)}, 1});
    else steps.push_back(RankStep{{recv_from(rank - 1, bytes)}, 1});
  }
  /// The fold-out step (after the core algorithm).
  void post(double bytes, std::vector<RankStep>& steps) const {
    if (rank >= 2 * rem) return;
    if (rank % 2 == 1) steps.push_back(RankStep{{send_to(rank - 1, bytes)}, 1});
    else steps.push_back(RankStep{{recv_from(rank + 1, bytes)}, 1});
  }
};

/// One op of a PortPlan: `bytes` is in units of one message (scaled by the caller).
struct PortOp {
  int tick = 0;
  RankOp op;
};

struct PortPlan {
  int ticks = 0;
  std::vector<std::vector<PortOp>> ops;  // per rank, in tick order

  /// Stepwise schedule of `rank`: one step per tick in which it communicates.
  [[nodiscard]] std::vector<RankStep> rank_steps(int rank, double message_bytes) const {
    std::vector<RankStep> steps;
    int last_tick = -1;
    for (const PortOp& p : ops[static_cast<std::size_t>(rank)]) {
      if (p.tick != last_tick) {
        steps.push_back(RankStep{{}, 1});
        last_tick = p.tick;
      }
      RankOp op = p.op;
      op.bytes *= message_bytes;
      steps.back().ops.push_back(op);
    }
    return steps;
  }
};

/// Greedy single-ported all-reduce on fixed trees: `parents[i][v]` is v's parent in
/// tree i (-1 at its root). Every tree reduces `segments` messages to its root and
/// broadcasts them back; a message moves along an edge once its data is complete
/// there. Per tick, ready flows are taken in priority order -- reduce before
/// broadcast, lower segment first, then the longer remaining path (depth of the
/// sender when reducing, height of the receiver when broadcasting), then tree,
/// sender and receiver index -- and fire if the sender's send port and the
/// receiver's receive port are still free in that tick.
inline PortPlan schedule_allreduce_on_ports(int n, const std::vector<std::vector<int>>& parents, int segments) {
  PortPlan plan;
  plan.ops.assign(static_cast<std::size_t>(n), {});
  if (n <= 1) return plan;
  const int trees = static_cast<int>(parents.size());
  const auto idx = [n](int tree, int v) {
    return static_cast<std::size_t>(tree) * static_cast<std::size_t>(n) + static_cast<std::size_t>(v);
  };

  std::vector<std::vector<int>> children(static_cast<std::size_t>(trees) * static_cast<std::size_t>(n));
  std::vector<int> roots(static_cast<std::size_t>(trees), -1);
  std::vector<int> depth(children.size(), 0), height(children.size(), 0);
  for (int t = 0; t < trees; ++t) {
    for (int v = 0; v < n; ++v) {
      const int p = parents[static_cast<std::size_t>(t)][static_cast<std::size_t>(v)];
      if (p < 0) roots[static_cast<std::size_t>(t)] = v;
      else children[idx(t, p)].push_back(v);
    }
    // Breadth-first order from the root gives depths; reverse order gives heights.
    std::vector<int> order{roots[static_cast<std::size_t>(t)]};
    for (std::size_t k = 0; k < order.size(); ++k)
      for (int c : children[idx(t, order[k])]) {
        depth[idx(t, c)] = depth[idx(t, order[k])] + 1;
        order.push_back(c);
      }
    if (static_cast<int>(order.size()) != n) throw std::logic_error("schedule_allreduce_on_ports: not a spanning tree");
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (int c : children[idx(t, *it)]) height[idx(t, *it)] = std::max(height[idx(t, *it)], height[idx(t, c)] + 1);
  }

  struct Flow {
    int phase, segment, urgency, tree, from, to;
    [[nodiscard]] auto key() const { return std::make_tuple(phase, segment, -urgency, tree, from, to); }
  };
  std::vector<Flow> ready;
  // missing[(segment * trees + tree) * n + v]: reduce inputs v still waits for.
  std::vector<int> missing(static_cast<std::size_t>(segments) * children.size());
  const auto midx = [&](int seg, int tree, int v) {
    return (static_cast<std::size_t>(seg) * static_cast<std::size_t>(trees) + static_cast<std::size_t>(tree)) *
               static_cast<std::size_t>(n) + static_cast<std::size_t>(v);
  };
  const auto complete = [&](int seg, int tree, int v) {  // v holds the reduced segment of its subtree
    const int p = parents[static_cast<std::size_t>(tree)][static_cast<std::size_t>(v)];
    if (p >= 0) ready.push_back(Flow{0, seg, depth[idx(tree, v)], tree, v, p});
    else
      for (int c : children[idx(tree, v)]) ready.push_back(Flow{1, seg, height[idx(tree, c)], tree, v, c});
  };
  for (int s = 0; s < segments; ++s)
    for (int t = 0; t < trees; ++t)
      for (int v = 0; v < n; ++v) {
        missing[midx(s, t, v)] = static_cast<int>(children[idx(t, v)].size());
        if (missing[midx(s, t, v)] == 0) complete(s, t, v);
      }

  const std::int64_t total = std::int64_t{2} * trees * segments * (n - 1);
  std::int64_t done = 0;
  std::vector<char> send_busy(static_cast<std::size_t>(n), 0), recv_busy(static_cast<std::size_t>(n), 0);
  while (done < total) {
    if (ready.empty()) throw std::logic_error("schedule_allreduce_on_ports: stuck");
    std::sort(ready.begin(), ready.end(), [](const Flow& a, const Flow& b) { return a.key() < b.key(); });
    std::vector<Flow> fired, waiting;
    for (const Flow& f : ready) {
      if (send_busy[static_cast<std::size_t>(f.from)] || recv_busy[static_cast<std::size_t>(f.to)]) {
        waiting.push_back(f);
        continue;
      }
      send_busy[static_cast<std::size_t>(f.from)] = 1;
      recv_busy[static_cast<std::size_t>(f.to)] = 1;
      fired.push_back(f);
    }
    ready = std::move(waiting);
    for (const Flow& f : fired) {
      send_busy[static_cast<std::size_t>(f.from)] = 0;
      recv_busy[static_cast<std::size_t>(f.to)] = 0;
      plan.ops[static_cast<std::size_t>(f.from)].push_back(PortOp{plan.ticks, send_to(f.to, 1.0)});
      plan.ops[static_cast<std::size_t>(f.to)].push_back(PortOp{plan.ticks, recv_from(f.from, 1.0)});
      ++done;
      if (f.phase == 0) {
        if (--missing[midx(f.segment, f.tree, f.to)] == 0) complete(f.segment, f.tree, f.to);
      } else {
        for (int c : children[idx(f.tree, f.to)])
          ready.push_back(Flow{1, f.segment, height[idx(f.tree, c)], f.tree, f.to, c});
      }
    }
    ++plan.ticks;
  }
  return plan;
}

/// Thread-safe memo of PortPlans by group size (rank_schedule is called once per rank).
class PlanCache {
 public:
  /// The plan for group size `n` (and `variant`, e.g. a neighbourhood the plan depends on).
  std::shared_ptr<const PortPlan> get(int n, const std::function<PortPlan(int)>& build,
                                      const void* variant = nullptr) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(n, variant);
    auto it = plans_.find(key);
    if (it == plans_.end()) it = plans_.emplace(key, std::make_shared<const PortPlan>(build(n))).first;
    return it->second;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int, const void*>, std::shared_ptr<const PortPlan>> plans_;
};

}  // namespace ddlsim::models::detail
