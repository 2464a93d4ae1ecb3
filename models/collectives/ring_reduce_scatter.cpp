// Ring reduce-scatter: `bytes` = M is every rank's input; rank r ends with the
// reduced block r of M/N bytes.
//
// In each of the N-1 steps rank r sends one partially reduced block of M/N
// bytes to r+1 and receives one from r-1 (mod N), both at once; every NIC
// direction carries a single flow, so each step costs alpha + (M/N) beta:
//
//     T_rs(N, M) = (N-1) alpha + (N-1)/N * M * beta             (T = 0 for N = 1)
//
// Sources: Thakur, Rabenseifner & Gropp, IJHPCA 2005; Patarasuk & Yuan,
// JPDC 2009 (first half of the ring all-reduce).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

class RingReduceScatter final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "reduce_scatter"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    const double n = group.workers;
    return (n - 1) * ab.alpha_s + (n - 1) / n * bytes * ab.beta_s_per_byte;
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const double block = bytes / n;
    const RankStep step{{send_to((rank + 1) % n, block), recv_from((rank + n - 1) % n, block)}, 1};
    return std::vector<RankStep>(static_cast<std::size_t>(n - 1), step);
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "ring_reduce_scatter",
                "ring reduce-scatter of M bytes: N-1 steps of M/N, (N-1)a + (N-1)/N M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::RingReduceScatter>(); })
