// ddlsim: PortPlan, the single-ported tick schedule shared by the double binary tree and
// MultiTree (models/collectives/), and PlanCache, which memoises plans per group size.
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
#include "models/collectives/schedule_util.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace ddlsim::models::detail {

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
