// Double binary tree all-reduce (two complementary trees, half the bytes each).
//
// Tree A is the heap tree on the ranks (children of v: 2v+1, 2v+2); tree B is
// the same heap on the mirrored ranks (rank r sits at heap position N-1-r), so
// the ranks that are inner nodes of A are leaves of B and vice versa (exactly
// so for N = 2^k - 1; NCCL mirrors for odd N and shifts for even N). Each tree
// reduces M/2 bytes to its root and broadcasts them back, cut into s =
// "segments" messages of m = M/(2s) bytes.
//
// Schedule (single-ported, as in Sanders, Speck & Traeff 2009): time is cut
// into ticks; in each tick a rank sends at most one message and receives at
// most one. A greedy work-conserving scheduler (schedule_util.hpp) puts every
// message in the first tick where its data is complete at the sender and both
// ports are free, reduce messages before broadcast ones, lower segments first,
// then the longer remaining path. A rank's step = its messages of one tick.
//
// Closed form on the reference platform: no NIC direction ever carries two
// flows, so every message takes exactly alpha + m beta, and (greedy ASAP) every
// message of tick k >= 1 has an endpoint busy in tick k-1, so tick k starts at
// exactly k (alpha + m beta):
//
//     T_dbt(N, M, s) = S(N, s) (alpha + M beta / (2 s))          (T = 0 for N = 1)
//
// where S(N, s) is the number of ticks of the schedule (computed by the same
// construction, O(N s S log) once per N, cached). S(N, 1) for N = 2, 3, 4, 5,
// 6, 7, 8, 16, 32, 64: 2, 4, 4, 6, 7, 8, 8, 12, 16, 20; S grows by about 4 per
// extra segment (each rank receives about 4 messages per segment: 2 children
// in its inner tree, 1 per tree in the broadcast), so for large s the
// bandwidth term tends to about 2 M beta, as for the ring.
// Sources: Sanders, Speck & Traeff, "Two-tree algorithms for full bandwidth
// broadcast, reduction and scan", Parallel Computing 35(12), 2009; NCCL 2.4
// double binary trees (Jeaugey 2019).
#include "models/collective.hpp"
#include "models/collectives/port_plan.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

class DoubleBinaryTree final : public Collective {
 public:
  explicit DoubleBinaryTree(int segments) : segments_(segments) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    return plan(group.workers)->ticks * ab.step_s(message_bytes(bytes));
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    if (group.workers <= 1 || rank < 0 || rank >= group.workers) return {};
    return plan(group.workers)->rank_steps(rank, message_bytes(bytes));
  }

  /// Pipelined = stepwise: a message is forwarded only after it arrived, so merging
  /// ticks would drop those dependencies and change the time.
  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    if (group.workers <= 1 || rank < 0 || rank >= group.workers) return {};
    return plan(group.workers)->rank_steps(rank, message_bytes(bytes));
  }

 private:
  [[nodiscard]] double message_bytes(double bytes) const { return bytes / (2.0 * segments_); }

  [[nodiscard]] std::shared_ptr<const detail::PortPlan> plan(int n) const {
    return cache_.get(n, [this](int size) {
      std::vector<std::vector<int>> parents(2, std::vector<int>(static_cast<std::size_t>(size)));
      for (int r = 0; r < size; ++r) {
        parents[0][static_cast<std::size_t>(r)] = r == 0 ? -1 : (r - 1) / 2;
        const int mirrored = size - 1 - r;  // heap position of r in tree B
        parents[1][static_cast<std::size_t>(r)] = mirrored == 0 ? -1 : size - 1 - (mirrored - 1) / 2;
      }
      return detail::schedule_allreduce_on_ports(size, parents, segments_);
    });
  }

  int segments_;
  detail::PlanCache cache_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "double_binary_tree",
                "double binary tree all-reduce (heap + mirrored heap, M/2 each, single-ported ticks); "
                "S x (a + M b / 2s)",
                [](ddlsim::ObjectReader& params) {
                  const auto segments = static_cast<int>(params.integer("segments", 1, 1, 1 << 16));
                  return std::make_unique<ddlsim::models::DoubleBinaryTree>(segments);
                })
