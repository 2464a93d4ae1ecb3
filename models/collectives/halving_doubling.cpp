// Rabenseifner all-reduce: recursive-halving reduce-scatter + recursive-doubling
// all-gather, with MPICH's non-power-of-two step.
//
// Let p = 2^floor(log2 N), L = log2 p, r = N - p. Pre-step (if r > 0): every
// even rank i < 2r sends its M bytes to i+1 and drops out (new ranks as in
// recursive doubling). Reduce-scatter: for k = 0..L-1 (mask 2^k) every
// remaining rank exchanges M / 2^(k+1) bytes with new rank (new ^ mask).
// All-gather: for k = L-1..0 the same exchanges in reverse, M / 2^(k+1) bytes
// each. Post-step (if r > 0): every odd rank i < 2r sends the M-byte result
// to i-1.
//
// Each step of a rank is one send and one receive with one peer (no shared NIC
// direction); step k costs alpha + M beta / 2^(k+1) for every rank, and the
// butterfly makes every rank finish at max(entry) + the sum of its steps:
//
//     T_hd(N, M) = 2 L alpha + 2 (p-1)/p * M * beta + 2 [r > 0] (alpha + M beta)
//
// (T = 0 for N = 1; for N a power of two: 2 log2(N) alpha + 2 (N-1)/N M beta.)
// Sources: Rabenseifner, "Optimization of collective reduction operations",
// ICCS 2004; Thakur, Rabenseifner & Gropp, IJHPCA 2005 (section 4.4); MPICH
// MPIR_Allreduce_intra_reduce_scatter_allgather.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

#include <cmath>

namespace ddlsim::models {
namespace {

using detail::floor_log2;

class HalvingDoubling final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = group.workers;
    if (n <= 1) return 0.0;
    const int levels = floor_log2(n);
    // Level i (1..L) exchanges M / 2^i each way, in the reduce-scatter and again in the all-gather.
    double t = 0;
    for (int i = 1; i <= levels; ++i) t += 2 * ab.step_s(std::ldexp(bytes, -i));
    if (n != (1 << levels)) t += 2 * ab.step_s(bytes);
    return t;
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    std::vector<RankStep> steps;
    detail::halving_doubling_steps(n, rank, bytes, steps);
    return steps;
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "halving_doubling",
                "Rabenseifner all-reduce: halving reduce-scatter + doubling all-gather, 2 log2(N) a + 2(N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::HalvingDoubling>(); })
