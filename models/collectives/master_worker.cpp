// Master-worker all-reduce: gather everything at rank 0, reduce, send it back.
//
// Step 1: ranks 1..N-1 each send their M bytes to rank 0, which receives all
// of them at once. Step 2: rank 0 sends the reduced M bytes to every other
// rank at once. Rank 0's downlink (then uplink) carries N-1 concurrent flows
// of M bytes, so each step costs alpha + (N-1) M beta:
//
//     T_mw(N, M) = 2 alpha + 2 (N-1) M beta                     (T = 0 for N = 1)
//
// This is the "parameter server on one NIC" line of the Tyagi & Swany 2023
// table with the server co-located on rank 0. Source: Tyagi & Swany 2023;
// Thakur, Rabenseifner & Gropp, IJHPCA 2005 (linear gather/scatter).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

class MasterWorkerAllreduce final : public Collective {
 public:
  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    if (group.workers <= 1) return 0.0;
    const double n = group.workers;
    return 2 * ab.step_s(bytes, n - 1);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    if (rank != 0) return {RankStep{{send_to(0, bytes)}, 1}, RankStep{{recv_from(0, bytes)}, 1}};
    RankStep gather, scatter;
    for (int q = 1; q < n; ++q) gather.ops.push_back(recv_from(q, bytes));
    for (int q = 1; q < n; ++q) scatter.ops.push_back(send_to(q, bytes));
    return {gather, scatter};
  }
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "master_worker",
                "master-worker all-reduce: gather M to rank 0, send back; 2a + 2(N-1) M b",
                [](ddlsim::ObjectReader&) { return std::make_unique<ddlsim::models::MasterWorkerAllreduce>(); })
