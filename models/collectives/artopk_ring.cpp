// AR-Topk over a ring all-reduce (Tyagi & Swany, "Flexible Communication for
// Optimal Distributed Learning over Unpredictable Networks", IEEE BigData 2023,
// seed 002; code: github.com/sahiltyagi4/ARTopk, flexible_compression/artopk/).
//
// One worker (the root, param "root", default rank 0; STAR-Topk's round-robin
// or VAR-Topk's choice of root is the caller's) broadcasts the indices of its
// top-k gradients; every rank then all-reduces its k gradient values at those
// indices:
//   1. binomial broadcast of the indices from the root (binomial_broadcast.cpp):
//      L = ceil(log2 N) rounds of M_c bytes;
//   2. ring all-reduce of the values (ring.cpp): 2(N-1) steps of M_c/N bytes.
//
// `bytes` is M_c as the seed defines it: the size of one worker's k top-k
// gradient VALUES (k x 4 bytes in fp32; the seed's code takes m * 4 * cr). The
// seed's cost charges the index broadcast the same M_c (its code counts 4
// bytes per index too), and so does this schedule. On the reference star
// every flow is alone on its NIC directions, the root ends the broadcast last
// (at L(alpha + M_c beta)) and then runs its 2(N-1) ring steps in a chain:
//
//     t_ARTring = alpha [2(N-1) + L] + M_c beta [2(N-1)/N + L]     (t = 0 for N = 1)
//
// which is the seed's t_ARTring with log(N) = log2 N for N a power of two;
// for other N the broadcast takes ceil(log2 N) rounds, so L = ceil(log2 N).
// models/artopk_choice.hpp compares it with artopk_tree and the all-gather.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::ceil_log2;

class ArtopkRing final : public Collective {
 public:
  explicit ArtopkRing(int root) : root_(root) {}

  /// Not "allreduce": AR-Topk reduces the values at one worker's indices, never a dense gradient.
  [[nodiscard]] std::string operation() const override { return "artopk"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = detail::artopk_group_size("artopk_ring", group, root_);
    if (n <= 1) return 0.0;
    const double l = ceil_log2(n);
    return 2.0 * (n - 1) * ab.step_s(bytes / n) + l * ab.step_s(bytes);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = detail::artopk_group_size("artopk_ring", group, root_);
    std::vector<RankStep> steps;
    detail::append_binomial_broadcast(rank, n, root_, bytes, steps);  // the root's indices
    detail::append_ring_allreduce(rank, n, bytes, 1, steps);          // the values at them
    return steps;
  }

  /// The broadcast's steps built, the ring's 2(N-1) generated.
  [[nodiscard]] std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group,
                                                       double bytes) const override {
    const int n = detail::artopk_group_size("artopk_ring", group, root_);
    std::vector<RankStep> broadcast;
    detail::append_binomial_broadcast(rank, n, root_, bytes, broadcast);
    return std::make_unique<detail::ChainedSteps>(std::make_unique<ScheduleSource>(std::move(broadcast)),
                                                  detail::ring_allreduce_steps(rank, n, bytes, 1));
  }

 private:
  int root_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "artopk_ring",
                "AR-Topk (operation artopk, M = M_c top-k values): binomial broadcast of the root's indices + ring "
                "all-reduce of the values, a[2(N-1) + log2 N] + M b[2(N-1)/N + log2 N]",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::ArtopkRing>(
                      static_cast<int>(params.integer("root", 0, 0, 1 << 30)));
                })
