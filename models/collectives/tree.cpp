// Binary-tree all-reduce: pipelined reduce to rank 0, then pipelined broadcast.
//
// Tree: heap order, the children of rank v are 2v+1 and 2v+2 (when < N), its
// parent (v-1)/2. D = floor(log2 N) is the depth of rank N-1. The M bytes are
// cut into s = "segments" segments of m = M/s bytes.
//
// Steps of rank v (a step posts all its ops at once and waits for all):
//   reduce:    inner node: s + [v != 0] steps; step t receives segment t from
//              every child (t < s) and sends segment t-1 to the parent (t >= 1).
//              leaf: s steps, step t sends segment t to the parent.
//   broadcast: non-root: s + [v has children] steps; step t receives segment t
//              from the parent (t < s) and sends segment t-1 to every child
//              (t >= 1). root: s steps, step t sends segment t to every child.
// A node receiving from two children shares its downlink between them, and a
// node sending to two children shares its uplink.
//
// Closed form on the reference platform; c = alpha + m beta, tau = alpha + 2 m beta.
//  * Reduce, one segment: F(leaf) = 0. Two children finishing at x <= y send
//    into one downlink, which works without pause, so the later transfer ends
//    at max(x + tau, y + c) (the rank's step ends then); one child: y + c. A
//    perfect subtree of height h gives h tau. In a heap at most one child of a
//    node is not perfect, so F(0) is an O(log N) recursion down to rank N-1.
//  * Broadcast, one segment: every receiver is posted before its parent sends,
//    so each level costs alpha + k m beta (k children share the uplink). All
//    inner nodes have two children except rank (N-2)/2 for even N (one child,
//    N-1), so B = D tau if the deepest level holds >= 2 ranks, else
//    (D-1) tau + c (N = 2^D).
//  * Segments: every node with two children moves 2m bytes per segment through
//    one NIC direction, and each further segment adds one period tau to each
//    phase:
//
//     T_tree(N, M, s) = F(0) + B + 2 (s-1) (alpha + 2 M beta / s)      (N >= 3)
//     T_tree(2, M, s) = 2 s (alpha + M beta / s)   (one edge, nothing shared)
//     T_tree(1, M, s) = 0
//
//   For a perfect tree (N = 2^(D+1) - 1): T = 2 (D + s - 1)(alpha + 2 M beta / s).
//   The one-segment terms are derived above; the 2(s-1) tau law was derived on
//   perfect trees and checked exact against the max-min flow evaluator of
//   tests/models/collective_test.cpp and a prototype for every N <= 100,
//   s <= 5 and alpha/(m beta) from 0.01 to 100.
//
// The commonly stated 2 alpha log2 N + 2 M beta log2 N (Tyagi & Swany 2023)
// counts one child per level; here two children share a NIC, hence 2 m beta
// per level. Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005 (tree
// reduce/broadcast); Patarasuk & Yuan, JPDC 2009 (pipelined trees); Tyagi &
// Swany 2023.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

#include <algorithm>
#include <cstdint>

namespace ddlsim::models {
namespace {

using detail::floor_log2;
using detail::recv_from;
using detail::send_to;

/// Height of v's subtree in a heap of n nodes.
int subtree_height(std::int64_t v, std::int64_t n) {
  int h = 0;
  while ((v + 1) * (std::int64_t{2} << h) - 1 <= n - 1) ++h;
  return h;
}

/// Time at which heap node v has received the (one-segment) reduction of its subtree.
double reduce_finish(std::int64_t v, std::int64_t n, double c, double tau) {
  const int h = subtree_height(v, n);
  if (h == 0) return 0.0;
  if ((v + 2) * (std::int64_t{1} << h) - 2 <= n - 1) return h * tau;  // perfect subtree
  const std::int64_t left = 2 * v + 1, right = 2 * v + 2;
  if (right >= n) return reduce_finish(left, n, c, tau) + c;
  const double a = reduce_finish(left, n, c, tau);
  const double b = reduce_finish(right, n, c, tau);
  return std::max(std::min(a, b) + tau, std::max(a, b) + c);
}

class TreeAllreduce final : public Collective {
 public:
  explicit TreeAllreduce(int segments) : segments_(segments) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const std::int64_t n = group.workers;
    if (n <= 1) return 0.0;
    const double s = segments_;
    const double c = ab.step_s(bytes / s);        // one segment over a free link
    const double tau = ab.step_s(bytes / s, 2);   // two children's segments into one NIC
    if (n == 2) return 2 * s * c;
    const int depth = floor_log2(n);
    const std::int64_t deepest_level = n - (std::int64_t{1} << depth) + 1;
    const double broadcast = deepest_level >= 2 ? depth * tau : (depth - 1) * tau + c;
    return reduce_finish(0, n, c, tau) + broadcast + 2 * (s - 1) * tau;
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    return steps(rank, group, bytes);
  }

  /// Pipelined = stepwise: every step forwards data received in the step before,
  /// so merging steps would drop those dependencies and change the time.
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    return steps(rank, group, bytes);
  }

 private:
  std::vector<RankStep> steps(int rank, const CollectiveGroup& group, double bytes) const {
    const int n = group.workers;
    std::vector<RankStep> out;
    if (n <= 1 || rank < 0 || rank >= n) return out;
    const int s = segments_;
    const double m = bytes / s;
    std::vector<int> children;
    for (std::int64_t c : {2 * std::int64_t{rank} + 1, 2 * std::int64_t{rank} + 2})
      if (c < n) children.push_back(static_cast<int>(c));
    const bool has_parent = rank > 0;
    const int parent = (rank - 1) / 2;
    // Reduce.
    const int reduce_steps = children.empty() ? s : s + (has_parent ? 1 : 0);
    for (int t = 0; t < reduce_steps; ++t) {
      RankStep step;
      if (children.empty()) {
        step.ops.push_back(send_to(parent, m));
      } else {
        if (t < s)
          for (int c : children) step.ops.push_back(recv_from(c, m));
        if (has_parent && t >= 1) step.ops.push_back(send_to(parent, m));
      }
      out.push_back(step);
    }
    // Broadcast.
    const int broadcast_steps = has_parent ? s + (children.empty() ? 0 : 1) : s;
    for (int t = 0; t < broadcast_steps; ++t) {
      RankStep step;
      if (!has_parent) {
        for (int c : children) step.ops.push_back(send_to(c, m));
      } else {
        if (t < s) step.ops.push_back(recv_from(parent, m));
        if (t >= 1)
          for (int c : children) step.ops.push_back(send_to(c, m));
      }
      out.push_back(step);
    }
    return out;
  }

  int segments_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "tree",
                "binary-tree all-reduce (heap tree, s segments): reduce + broadcast, ~2(log2 N + s - 1)(a + 2 M b / s)",
                [](ddlsim::ObjectReader& params) {
                  const auto segments = static_cast<int>(params.integer("segments", 1, 1, 1 << 20));
                  return std::make_unique<ddlsim::models::TreeAllreduce>(segments);
                })
