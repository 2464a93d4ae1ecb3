// Bruck all-gather: `bytes` = M is the total output size, M/N per rank.
//
// Step k = 0..L-1 (L = ceil(log2 N)): rank r sends the min(2^k, N - 2^k) blocks
// of M/N it holds so far to rank r - 2^k and receives as many from r + 2^k (mod N),
// both at once (the final local rotation moves no bytes). Every step holds one
// send and one receive of the same size on every rank, so no NIC direction is
// ever shared and step k costs alpha + min(2^k, N - 2^k) (M/N) beta; the block
// counts add up to N - 1:
//
//     T_bruck(N, M) = ceil(log2 N) alpha + (N-1)/N * M * beta       (T = 0 for N = 1)
//
// for every N, not only powers of two. This is the all-gather whose cost the
// AR-Topk inequalities of seed 002 (Tyagi & Swany 2023) assume: alpha log N +
// 2 (N-1) M_c beta when each worker contributes its top-k values and indices
// (2 M_c, so M = 2 N M_c); ring_allgather pays (N-1) alpha instead.
// Sources: Bruck, Ho, Kipnis, Upfal & Weathersby, "Efficient algorithms for
// all-to-all communications in multiport message-passing systems", IEEE TPDS
// 1997; Thakur, Rabenseifner & Gropp, IJHPCA 2005 (MPICH's all-gather for
// non-power-of-two N).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

#include <algorithm>

namespace ddlsim::models {
namespace {

using detail::ceil_log2;
using detail::recv_from;
using detail::send_to;

class BruckAllgather final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allgather"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    const int n = group.workers;
    double t = 0;
    for (int distance = 1; distance < n; distance *= 2) t += ab.step_s(std::min(distance, n - distance) * (bytes / n));
    return t;
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const double block = bytes / n;
    std::vector<RankStep> steps;
    for (int distance = 1; distance < n; distance *= 2) {
      const double moved = std::min(distance, n - distance) * block;
      steps.push_back(
          RankStep{{send_to((rank - distance + n) % n, moved), recv_from((rank + distance) % n, moved)}, 1});
    }
    return steps;
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "bruck_allgather",
                "Bruck all-gather of M total bytes: ceil(log2 N) steps, ceil(log2 N) a + (N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::BruckAllgather>(); })
