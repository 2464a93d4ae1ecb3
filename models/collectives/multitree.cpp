// MultiTree all-reduce (Huang et al., ISCA 2021): K trees rooted at different
// ranks, M/K bytes each, every tree reduces its share to its root and
// broadcasts it back.
//
// Trees: K = min("trees", N), roots floor(i N / K). They are grown together,
// as in MultiTree's top-down construction, one time step at a time: in each
// step, trees in rotating order (tree (step + j) mod K), every rank already in
// a tree (in joining order) whose send port is still free adopts the first
// rank not yet in that tree -- ranks ordered by distance (v - root) mod N --
// whose receive port is free; a rank sends at most one and receives at most
// one message per step. Topology-aware: when the group carries the platform's
// neighbourhood (ranks joined by a direct link or by one switch; sim/ derives
// it from the topology graph), a member adopts only its neighbours, so on a
// torus or ring every tree edge is one physical link and, single-ported, no
// two messages ever share a link direction. Without one (the reference star,
// where every host is one switch away from every other) the trees grow over
// the complete graph.
//
// Schedule: the all-reduce on those trees is then scheduled by the greedy
// single-ported tick scheduler of schedule_util.hpp (reduce messages towards
// the roots, then broadcast, each as soon as its data is complete and both
// ports are free). A rank's step = its messages of one tick.
//
// Closed form on the reference platform: single-ported ticks share no NIC
// direction and the greedy schedule is work-conserving, so tick k starts at
// exactly k (alpha + (M/K) beta):
//
//     T_multitree(N, M, K) = S(N, K) (alpha + M beta / K)          (T = 0 for N = 1)
//
// with S(N, K) the number of ticks of the schedule (computed by the same
// construction, cached per N). Single-ported, the contributions a rank holds
// at most double per tick (reduce) and so do the ranks holding a tree's
// result (broadcast), so S >= 2 ceil(log2 N). Measured: S(N, 4)
// for N = 2, 3, 4, 7, 8, 16, 64, 256: 2, 6, 7, 10, 9, 11, 15, 19; K = 1 grows a
// binomial tree, S(2^k, 1) = 2k; S(8, 8) = 16 (S (alpha + M beta / K): more
// trees trade latency for bandwidth).
// Sources: Huang, Xu, Chen, Yang, Ren & Li, "Communication algorithm-
// architecture co-design for distributed deep learning", ISCA 2021.
#include "models/collective.hpp"
#include "models/collectives/port_plan.hpp"
#include "models/collectives/schedule_util.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>

namespace ddlsim::models {
namespace {

/// Parent arrays (parent[i][v], -1 at root i) of K trees grown together, single-ported per step.
std::vector<std::vector<int>> grow_trees(int n, int k, const std::vector<std::vector<int>>* neighbours) {
  std::vector<std::vector<int>> parent(static_cast<std::size_t>(k), std::vector<int>(static_cast<std::size_t>(n), -2));
  std::vector<int> roots(static_cast<std::size_t>(k));
  std::vector<std::vector<int>> members(static_cast<std::size_t>(k));
  std::vector<std::set<int>> missing(static_cast<std::size_t>(k));  // distances (v - root) mod n not yet in the tree
  for (int i = 0; i < k; ++i) {
    const int root = static_cast<int>(std::int64_t{i} * n / k);
    roots[static_cast<std::size_t>(i)] = root;
    parent[static_cast<std::size_t>(i)][static_cast<std::size_t>(root)] = -1;
    members[static_cast<std::size_t>(i)].push_back(root);
    for (int d = 1; d < n; ++d) missing[static_cast<std::size_t>(i)].insert(d);
  }
  std::vector<char> send_busy(static_cast<std::size_t>(n)), recv_busy(static_cast<std::size_t>(n));
  std::int64_t left = std::int64_t{k} * (n - 1);
  for (int step = 0; left > 0; ++step) {
    std::fill(send_busy.begin(), send_busy.end(), 0);
    std::fill(recv_busy.begin(), recv_busy.end(), 0);
    std::vector<std::pair<int, int>> joined;  // (tree, rank), members from the next step on
    for (int j = 0; j < k; ++j) {
      const auto i = static_cast<std::size_t>((step + j) % k);
      auto next = missing[i].begin();
      for (int x : members[i]) {
        if (send_busy[static_cast<std::size_t>(x)]) continue;
        if (neighbours != nullptr) {  // adopt the closest free neighbour not yet in tree i
          int best = -1;
          for (int v : (*neighbours)[static_cast<std::size_t>(x)]) {
            if (parent[i][static_cast<std::size_t>(v)] != -2 || recv_busy[static_cast<std::size_t>(v)]) continue;
            if (best < 0 || (v - roots[i] + n) % n < (best - roots[i] + n) % n) best = v;
          }
          if (best < 0) continue;
          send_busy[static_cast<std::size_t>(x)] = 1;
          recv_busy[static_cast<std::size_t>(best)] = 1;
          parent[i][static_cast<std::size_t>(best)] = x;
          joined.emplace_back(static_cast<int>(i), best);
          missing[i].erase((best - roots[i] + n) % n);
          --left;
          continue;
        }
        while (next != missing[i].end() && recv_busy[static_cast<std::size_t>((roots[i] + *next) % n)]) ++next;
        if (next == missing[i].end()) break;
        const int v = (roots[i] + *next) % n;
        send_busy[static_cast<std::size_t>(x)] = 1;
        recv_busy[static_cast<std::size_t>(v)] = 1;
        parent[i][static_cast<std::size_t>(v)] = x;
        joined.emplace_back(static_cast<int>(i), v);
        next = missing[i].erase(next);
        --left;
      }
    }
    if (joined.empty()) throw std::logic_error("multitree: the neighbourhood graph is disconnected");
    for (auto [i, v] : joined) members[static_cast<std::size_t>(i)].push_back(v);
  }
  return parent;
}

class MultiTree final : public Collective {
 public:
  explicit MultiTree(int trees) : trees_(trees) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    return plan(group)->ticks * ab.step_s(message_bytes(group, bytes));
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    if (group.workers <= 1 || rank < 0 || rank >= group.workers) return {};
    return plan(group)->rank_steps(rank, message_bytes(group, bytes));
  }

  /// Pipelined = stepwise: a message is forwarded only after it arrived, so merging
  /// ticks would drop those dependencies and change the time.
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    if (group.workers <= 1 || rank < 0 || rank >= group.workers) return {};
    return plan(group)->rank_steps(rank, message_bytes(group, bytes));
  }

 private:
  [[nodiscard]] int tree_count(int n) const { return std::min(trees_, n); }
  [[nodiscard]] double message_bytes(const CollectiveGroup& group, double bytes) const {
    return bytes / tree_count(group.workers);
  }

  [[nodiscard]] std::shared_ptr<const detail::PortPlan> plan(const CollectiveGroup& group) const {
    const auto* nb = group.neighbours.get();
    return cache_.get(
        group.workers,
        [this, nb](int size) {
          return detail::schedule_allreduce_on_ports(size, grow_trees(size, tree_count(size), nb), 1);
        },
        nb);
  }

  int trees_;
  detail::PlanCache cache_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "multitree",
                "MultiTree all-reduce: K trees rooted at different ranks, M/K each, single-ported ticks; "
                "S x (a + M b / K)",
                [](ddlsim::ObjectReader& params) {
                  const auto trees = static_cast<int>(params.integer("trees", 4, 1, 1 << 16));
                  return std::make_unique<ddlsim::models::MultiTree>(trees);
                })
