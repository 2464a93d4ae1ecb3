// Recursive-doubling (butterfly) all-reduce, with MPICH's non-power-of-two step.
//
// Let p = 2^floor(log2 N) and r = N - p. Pre-step (only if r > 0): every even
// rank i < 2r sends its M bytes to i+1 and drops out; odd ranks i < 2r take
// new rank i/2, ranks i >= 2r new rank i - r. Butterfly: for mask = 1, 2, ...,
// p/2 every remaining rank exchanges the full M bytes with new rank
// (new ^ mask) (send and receive in one step). Post-step (if r > 0): every odd
// rank i < 2r sends the result to i-1.
//
// Every step of a rank holds one send and one receive with one peer, so no NIC
// direction is ever shared and every transfer takes c = alpha + M beta. A rank
// kept out of the pre-step enters the butterfly at 0 but its first partner may
// only enter at c; transfers start at rendezvous, so after the log2 p butterfly
// steps (which connect every pair) all ranks finish at max(entry) + log2(p) c:
//
//     T_rd(N, M) = (floor(log2 N) + 2 [N not a power of 2]) (alpha + M beta)
//
// (T = 0 for N = 1.) Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005
// (recursive doubling, section 4); MPICH MPIR_Allreduce_intra_recursive_doubling.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::floor_log2;
using detail::PowerOfTwoFold;
using detail::recv_from;
using detail::send_to;

class RecursiveDoubling final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = group.workers;
    if (n <= 1) return 0.0;
    const int k = floor_log2(n);
    const int extra = (n == (1 << k)) ? 0 : 2;
    return (k + extra) * ab.step_s(bytes);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    std::vector<RankStep> steps;
    const PowerOfTwoFold fold(n, rank);
    fold.pre(bytes, steps);
    if (const int core = fold.core_rank(); core >= 0)
      for (int mask = 1; mask < fold.p; mask <<= 1) {
        const int peer = fold.real_rank(core ^ mask);
        steps.push_back(RankStep{{send_to(peer, bytes), recv_from(peer, bytes)}, 1});
      }
    fold.post(bytes, steps);
    return steps;
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "recursive_doubling",
                "recursive-doubling all-reduce: log2 N exchanges of M (+2 for non-power-of-2 N), steps x (a + M b)",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::RecursiveDoubling>(); })
