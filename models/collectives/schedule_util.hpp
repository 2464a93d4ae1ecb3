// ddlsim: helpers shared by the collective algorithms in models/collectives/.
//
// send_to / recv_from build RankOps; floor_log2 / ceil_log2 are the integer
// logarithms the closed forms use; append_binomial_broadcast / _reduce and
// append_ring_allreduce are the schedule builders that composite algorithms
// (AR-Topk) share with binomial_broadcast and ring. The single-ported tick
// schedules of the double binary tree and MultiTree are in port_plan.hpp.
#pragma once

#include "models/collective.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
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

/// `count` ring steps of `chunk` bytes (send to rank + 1, receive from rank - 1), generated one at
/// a time; none for a group of one or a rank outside it.
inline std::unique_ptr<StepSource> ring_steps(int rank, int n, double chunk, std::int64_t count) {
  if (n <= 1 || rank < 0 || rank >= n) return std::make_unique<RepeatedStep>(RankStep{}, 0);
  return std::make_unique<RepeatedStep>(RankStep{{send_to((rank + 1) % n, chunk), recv_from((rank + n - 1) % n, chunk)}, 1},
                                        count);
}

/// append_ring_allreduce's steps generated one at a time (they are all the same).
inline std::unique_ptr<StepSource> ring_allreduce_steps(int rank, int n, double bytes, int segments) {
  return ring_steps(rank, n, bytes / n / segments, std::int64_t{2} * (n - 1) * segments);
}

/// The steps of `first`, then those of `second`.
class ChainedSteps final : public StepSource {
 public:
  ChainedSteps(std::unique_ptr<StepSource> first, std::unique_ptr<StepSource> second)
      : first_(std::move(first)), second_(std::move(second)) {}
  bool next(RankStep& step) override {
    if (first_ && first_->next(step)) return true;
    first_.reset();
    return second_->next(step);
  }
  [[nodiscard]] std::size_t held() const override { return (first_ ? first_->held() : 0) + second_->held(); }

 private:
  std::unique_ptr<StepSource> first_;
  std::unique_ptr<StepSource> second_;
};

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

  /// The same N-1 steps, generated one at a time.
  [[nodiscard]] std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group,
                                                       double bytes) const override {
    const int n = group.workers;
    return ring_steps(rank, n, bytes / n, n - 1);
  }

  /// The N-1 steps merged, in O(1) (what the default merge of rank_schedule gives, without making
  /// the N-1 steps: analytic fidelity counts a sharded iteration's traffic per call).
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const double phase = (n - 1.0) * bytes / n;
    return {RankStep{{send_to((rank + 1) % n, phase), recv_from((rank + n - 1) % n, phase)}, n - 1}};
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

/// Rabenseifner's all-reduce over ranks 0 .. n-1 for `rank` (models/collectives/halving_doubling.cpp):
/// the fold-in, recursive halving (level k exchanges M / 2^(k+1) with core ^ 2^k), recursive
/// doubling in reverse, the fold-out. Appends its steps.
inline void halving_doubling_steps(int n, int rank, double bytes, std::vector<RankStep>& steps) {
  const int levels = floor_log2(n);
  const PowerOfTwoFold fold(n, rank);
  fold.pre(bytes, steps);
  if (const int core = fold.core_rank(); core >= 0) {
    auto exchange = [&](int k) {
      const int peer = fold.real_rank(core ^ (1 << k));
      const double chunk = bytes / static_cast<double>(std::int64_t{2} << k);
      steps.push_back(RankStep{{send_to(peer, chunk), recv_from(peer, chunk)}, 1});
    };
    for (int k = 0; k < levels; ++k) exchange(k);       // recursive halving
    for (int k = levels - 1; k >= 0; --k) exchange(k);  // recursive doubling
  }
  fold.post(bytes, steps);
}

}  // namespace ddlsim::models::detail
