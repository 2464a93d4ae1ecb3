// Direct all-reduce: all-to-all reduce-scatter then all-to-all all-gather.
//
// Rank r owns shard r (M/N bytes). Step 1 (reduce-scatter): r sends shard q of
// its buffer to every q != r and receives shard r from every q != r, all at
// once. Step 2 (all-gather): r sends its reduced shard to every q != r and
// receives every other reduced shard, all at once.
//
// On the reference platform every uplink and every downlink carries N-1
// concurrent flows of M/N bytes; max-min fairness gives each 1/((N-1) beta),
// so each step costs alpha + (N-1) (M/N) beta:
//
//     T_direct(N, M) = 2 alpha + 2 (N-1)/N * M * beta          (T = 0 for N = 1)
//
// Latency- and bandwidth-optimal on the ideal star (no incast or per-flow
// overhead is modelled); on real fabrics its N(N-1) concurrent flows contend.
// Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005 (pairwise/direct
// reduce-scatter and all-gather); Patarasuk & Yuan, JPDC 2009 (bandwidth
// lower bound 2 (N-1)/N M beta).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

class DirectAllreduce final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    const double n = group.workers;
    return 2 * ab.step_s(bytes / n, n - 1);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const double shard = bytes / n;
    RankStep step;
    for (int q = 0; q < n; ++q)
      if (q != rank) step.ops.push_back(send_to(q, shard));
    for (int q = 0; q < n; ++q)
      if (q != rank) step.ops.push_back(recv_from(q, shard));
    return {step, step};
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "direct",
                "direct all-to-all all-reduce: reduce-scatter + all-gather in 2 steps, 2a + 2(N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::DirectAllreduce>(); })
