// Ring all-reduce: reduce-scatter then all-gather around a logical ring.
//
// The buffer of M bytes is cut into N chunks of M/N. In each of the N-1
// reduce-scatter steps and N-1 all-gather steps, rank r sends one chunk to
// r+1 and receives one from r-1 (mod N), both at once. On the reference
// platform (full-duplex NIC per host, path latency alpha, beta s/byte) every
// step costs alpha + (M/N) beta, so
//
//     T_ring(N, M) = 2 (N-1) alpha + 2 (N-1)/N * M * beta      (T = 0 for N = 1)
//
// params.segments = S (default 1): every step's chunk is sent as S segments of
// M/(N S), one after the other (NCCL-style chunking, e.g. to bound buffer
// sizes). On the reference platform this adds latency and nothing else:
//
//     T_ring(N, M, S) = 2 (N-1) S alpha + 2 (N-1)/N * M * beta
//
// Sources: Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 2009; Thakur, Rabenseifner & Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA 2005;
// the table of seed 002 (Tyagi & Swany 2023).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

class RingAllreduce final : public Collective {
 public:
  explicit RingAllreduce(int segments) : segments_(segments) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const double n = group.workers;
    if (group.workers <= 1) return 0.0;
    return 2 * (n - 1) * segments_ * ab.step_s(bytes / n / segments_);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    std::vector<RankStep> steps;
    detail::append_ring_allreduce(rank, n, bytes, segments_, steps);
    return steps;
  }

  /// Every step is the same: generated, not held (2(N-1)S steps per rank).
  [[nodiscard]] std::unique_ptr<StepSource> rank_steps(int rank, const CollectiveGroup& group,
                                                       double bytes) const override {
    return detail::ring_allreduce_steps(rank, group.workers, bytes, segments_);
  }

  [[nodiscard]] std::vector<RankStep> rank_phases(int rank, const CollectiveGroup& group,
                                                  double bytes) const override {
    const int n = group.workers;
    if (n <= 1) return {};
    const double phase_bytes = 2.0 * (n - 1) * bytes / n;
    return {RankStep{{RankOp{RankOp::Kind::SEND, (rank + 1) % n, phase_bytes},
                      RankOp{RankOp::Kind::RECV, (rank + n - 1) % n, phase_bytes}},
                     2 * (n - 1) * segments_}};
  }

 private:
  int segments_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "ring",
                "ring all-reduce: reduce-scatter + all-gather, 2(N-1) steps of M/N bytes",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::RingAllreduce>(
                      static_cast<int>(params.integer("segments", 1, 1, 1 << 20)));
                })
