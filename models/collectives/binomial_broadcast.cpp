// Binomial-tree broadcast of M bytes from rank 0.
//
// Round k = 0..L-1 (L = ceil(log2 N)): every rank r < 2^k with r + 2^k < N
// sends the full M bytes to r + 2^k. Rank r > 0 receives once, in round
// floor(log2 r), from r - 2^floor(log2 r), then sends in the later rounds
// (each send its own step). Receivers post their receive at time 0 and every
// rank sends one message at a time, so no NIC direction is ever shared and
// every round costs alpha + M beta; the last round (root to 2^(L-1)) exists:
//
//     T_bcast(N, M) = ceil(log2 N) (alpha + M beta)             (T = 0 for N = 1)
//
// Source: Thakur, Rabenseifner & Gropp, IJHPCA 2005 (binomial broadcast).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::ceil_log2;

class BinomialBroadcast final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "broadcast"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    return ceil_log2(group.workers) * ab.step_s(bytes);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    std::vector<RankStep> steps;
    detail::append_binomial_broadcast(rank, group.workers, 0, bytes, steps);
    return steps;
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "binomial_broadcast",
                "binomial-tree broadcast from rank 0: ceil(log2 N) rounds of M, ceil(log2 N)(a + M b)",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::BinomialBroadcast>(); })
