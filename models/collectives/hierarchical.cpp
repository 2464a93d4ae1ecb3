// Hierarchical all-reduce: intra-node reduce to the node leader, ring
// all-reduce among the leaders, intra-node broadcast.
//
// G, the ranks per node: the platform's (CollectiveGroup::ranks_per_node, set
// by sim/ from a "hierarchical" topology's gpus_per_node), else the param
// "gpus_per_node", else 8. When both are known they must agree: the scenario
// loader refuses a contradicting param at /training/collective/params/
// gpus_per_node (this file throws that ConfigError when it first sees the group).
// Node j holds ranks jG .. min((j+1)G, N) - 1 (the last node may be partial);
// its leader is rank jG. L = ceil(N/G) nodes, g = min(G, N) ranks in the
// largest node.
//   1. reduce: every non-leader sends its M bytes to its leader in one step;
//      the leader receives all of them at once (flat, as over NVLink/PCIe).
//   2. ring all-reduce among the L leaders: 2(L-1) steps, leader j sends M/L
//      to leader j+1 and receives M/L from leader j-1 (mod L).
//   3. broadcast: every leader sends the M bytes to each of its members at once.
//
// Link classes: phases 1 and 3 stay inside a node and pay the intra-node pair
// (alpha_l, beta_l) = AlphaBeta::intra() (on a hierarchical platform: two node
// links' latency and the node link's inverse bandwidth; elsewhere the global
// pair); phase 2 crosses nodes and pays the global (alpha, beta), the worst
// host-to-host path and the slowest link (the NIC on a hierarchical platform).
//
// Closed form. Phase 1: a leader's downlink carries g_j - 1 flows of M, done
// at alpha_l + (g_j - 1) M beta_l; the largest node is last. Phase 2: every
// leader step is one send and one receive (no shared link direction), and a
// leader's step k ends at max over leaders within ring distance k of their
// entry time, + k (alpha + M beta / L); as 2(L-1) >= L/2 every leader leaves
// the ring at max(entry) + 2(L-1)(alpha + M beta / L). Phase 3 starts for all
// nodes together; the largest is last:
//
//     T_hier(N, M, G) = 2 [g >= 2] (alpha_l + (g-1) M beta_l)
//                     + 2 [L >= 2] (L-1) (alpha + M beta / L)      (T = 0 for N = 1)
//
// On the reference star (no local pair) alpha_l = alpha and beta_l = beta.
//
// Options (params), for set-ups that reduce inside a node as NCCL does and join the leaders as Gloo
// can (Goyal et al., "Accurate, large minibatch SGD", arXiv:1706.02677, section 4: NCCL reduce and
// broadcast inside a server, recursive halving/doubling between servers):
//   "node_phase": "star" (default, above) or "chain": phases 1 and 3 as NCCL's pipelined chain. The
//     node's ranks form a chain ending at the leader; the message is cut into
//     k = max(1, ceil(M / node_chunk_bytes)) chunks; in slot t the rank at distance d from the
//     chain's far end sends chunk t - d toward the leader and receives chunk t - d + 1 (the reverse
//     for the broadcast). Every link carries M once, one send and one receive per rank and slot:
//         phase 1 = phase 3 = (g - 1 + k - 1)(alpha_l + (M / k) beta_l)
//     "node_chunk_bytes": default 524288, the Simple protocol's slot (NCCL_BUFFSIZE 4 MiB /
//     NCCL_STEPS 8, as the nccl_simple preset).
//   "leaders": "ring" (default, above) or "halving_doubling": phase 2 as halving_doubling among the
//     L leaders (models/collectives/halving_doubling.cpp, L' = 2^floor(log2 L)):
//         sum over i = 1 .. log2 L' of 2 (alpha + M beta / 2^i)  [+ 2 (alpha + M beta) if L != L']
// Sources: Tyagi & Swany 2023; hierarchical all-reduce as in Horovod
// (HOROVOD_HIERARCHICAL_ALLREDUCE) and Jia et al., "Highly scalable deep
// learning training system with mixed-precision" (2018).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"
#include "models/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <string>

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

class HierarchicalAllreduce final : public Collective {
 public:
  /// gpus_per_node: the param, 0 when the scenario leaves it out; param_path names it in errors.
  HierarchicalAllreduce(int gpus_per_node, std::string param_path, bool chain, double chunk_bytes,
                        bool halving_doubling)
      : gpus_per_node_(gpus_per_node), param_path_(std::move(param_path)), chain_(chain),
        chunk_bytes_(chunk_bytes), halving_doubling_(halving_doubling) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = group.workers;
    const int per_node = ranks_per_node(group);
    if (n <= 1) return 0.0;
    const double g = std::min(per_node, n);
    const double nodes = (n + per_node - 1) / per_node;
    double t = 0.0;
    if (g >= 2) {
      if (chain_) {
        const double k = chunks(bytes);
        t += 2 * (g - 1 + k - 1) * ab.local_step_s(bytes / k);
      } else {
        t += 2 * ab.local_step_s(bytes, g - 1);
      }
    }
    if (nodes >= 2) {
      if (halving_doubling_) {
        const int levels = detail::floor_log2(static_cast<std::int64_t>(nodes));
        for (int i = 1; i <= levels; ++i) t += 2 * ab.step_s(std::ldexp(bytes, -i));
        if (static_cast<int>(nodes) != (1 << levels)) t += 2 * ab.step_s(bytes);
      } else {
        t += 2 * (nodes - 1) * ab.step_s(bytes / nodes);
      }
    }
    return t;
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    const int per_node = ranks_per_node(group);
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const int node = rank / per_node;
    const int leader = node * per_node;
    const int end = std::min(leader + per_node, n);
    const int nodes = (n + per_node - 1) / per_node;
    std::vector<RankStep> steps;
    if (chain_) {
      chain_phase(rank, leader, end, bytes, true, steps);
    } else if (rank != leader) {
      return {RankStep{{send_to(leader, bytes)}, 1}, RankStep{{recv_from(leader, bytes)}, 1}};
    } else if (end - leader >= 2) {
      RankStep reduce;
      for (int q = leader + 1; q < end; ++q) reduce.ops.push_back(recv_from(q, bytes));
      steps.push_back(reduce);
    }
    if (rank == leader && nodes >= 2) {
      if (halving_doubling_) {
        leaders_halving_doubling(node, nodes, per_node, bytes, steps);
      } else {
        const double chunk = bytes / nodes;
        const int right = ((node + 1) % nodes) * per_node, left = ((node + nodes - 1) % nodes) * per_node;
        const RankStep ring{{send_to(right, chunk), recv_from(left, chunk)}, 1};
        steps.insert(steps.end(), static_cast<std::size_t>(2 * (nodes - 1)), ring);
      }
    }
    if (chain_) {
      chain_phase(rank, leader, end, bytes, false, steps);
    } else if (end - leader >= 2) {
      RankStep broadcast;
      for (int q = leader + 1; q < end; ++q) broadcast.ops.push_back(send_to(q, bytes));
      steps.push_back(broadcast);
    }
    return steps;
  }

  /// A chain's slots are not merged into phases: a middle rank's sends and receives overlap slot by
  /// slot, so merging its runs would pair them differently at its two neighbours.
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    if (chain_) return rank_schedule(rank, group, bytes);
    return Collective::rank_phases(rank, group, bytes);
  }

 private:
  /// G: the platform's, else the param, else 8; a param that contradicts the platform is refused.
  [[nodiscard]] int ranks_per_node(const CollectiveGroup& group) const {
    if (group.ranks_per_node > 0) {
      if (gpus_per_node_ > 0 && gpus_per_node_ != group.ranks_per_node)
        throw ConfigError(param_path_, fmt::format("gpus_per_node = {} contradicts the platform's {} GPUs per node "
                                                   "(the hierarchical topology's gpus_per_node); leave it out to "
                                                   "use the platform's",
                                                   gpus_per_node_, group.ranks_per_node));
      return group.ranks_per_node;
    }
    return gpus_per_node_ > 0 ? gpus_per_node_ : DEFAULT_GPUS_PER_NODE;
  }

  /// k: the chunks of a chain phase.
  [[nodiscard]] double chunks(double bytes) const { return std::max(1.0, std::ceil(bytes / chunk_bytes_)); }

  /// One chain phase of the node [leader, end) for `rank`: the reduce toward the leader, or the
  /// broadcast from it (the header's slots; a rank's empty slots are left out).
  void chain_phase(int rank, int leader, int end, double bytes, bool reduce, std::vector<RankStep>& steps) const {
    const int g = end - leader;
    if (g < 2) return;
    // 64-bit slots: a tiny node_chunk_bytes under --force must not overflow (the work estimate
    // refuses such runs otherwise).
    const auto k = static_cast<std::int64_t>(chunks(bytes));
    const double chunk = bytes / static_cast<double>(k);
    const std::int64_t i = rank - leader;            // 0: the leader
    const std::int64_t d = reduce ? g - 1 - i : i;   // distance from where the chunks start
    const int toward = reduce ? rank - 1 : rank + 1, from = reduce ? rank + 1 : rank - 1;
    for (std::int64_t t = 0; t < k + g - 2; ++t) {
      RankStep step;
      if (d <= g - 2 && t - d >= 0 && t - d < k) step.ops.push_back(send_to(toward, chunk));
      if (d >= 1 && t - d + 1 >= 0 && t - d + 1 < k) step.ops.push_back(recv_from(from, chunk));
      if (!step.ops.empty()) steps.push_back(step);
    }
  }

  /// Phase 2 as halving_doubling among the leaders (node indices mapped to leader ranks).
  static void leaders_halving_doubling(int node, int nodes, int per_node, double bytes, std::vector<RankStep>& steps) {
    const std::size_t first = steps.size();
    detail::halving_doubling_steps(nodes, node, bytes, steps);
    for (std::size_t s = first; s < steps.size(); ++s)
      for (auto& op : steps[s].ops) op.peer *= per_node;
  }

  static constexpr int DEFAULT_GPUS_PER_NODE = 8;
  int gpus_per_node_;  // 0: not given
  std::string param_path_;
  bool chain_;
  double chunk_bytes_;
  bool halving_doubling_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "hierarchical",
                "hierarchical all-reduce: node reduce, ring among L node leaders, node broadcast; G from the "
                "platform (or param gpus_per_node, default 8); 2(a_l + (G-1) M b_l) + 2(L-1)(a + M b / L); "
                "params node_phase (star, chain), node_chunk_bytes, leaders (ring, halving_doubling)",
                [](ddlsim::ObjectReader& params) {
                  const int g = params.has("gpus_per_node")
                                    ? static_cast<int>(params.integer("gpus_per_node", 8, 1, 1 << 20))
                                    : 0;
                  const bool chain = params.choice("node_phase", {"star", "chain"}, "star") == "chain";
                  const double chunk = params.bytes("node_chunk_bytes", 524288.0);
                  if (!(chunk >= 1))
                    throw ddlsim::ConfigError(params.path_of("node_chunk_bytes"),
                                              fmt::format("node_chunk_bytes must be at least 1 byte, got {:g}", chunk));
                  if (params.has("node_chunk_bytes") && !chain)
                    throw ddlsim::ConfigError(params.path_of("node_chunk_bytes"),
                                              "node_chunk_bytes applies only with \"node_phase\": \"chain\"");
                  const bool hd = params.choice("leaders", {"ring", "halving_doubling"}, "ring") == "halving_doubling";
                  return std::make_unique<ddlsim::models::HierarchicalAllreduce>(g, params.path_of("gpus_per_node"),
                                                                                 chain, chunk, hd);
                })
