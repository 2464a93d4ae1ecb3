// 2-D torus all-reduce: ring reduce-scatter along rows, ring all-reduce along
// columns on the row-reduced shard, ring all-gather along rows.
//
// The N ranks form an R x C grid, R = "rows" (default: the largest divisor of N
// that is <= sqrt(N)), C = N / R; rank r is at row r / C, column r mod C.
//   1. row reduce-scatter: C-1 steps, send M/C to the right neighbour (same
//      row), receive M/C from the left one;
//   2. column all-reduce of the M/C shard: 2(R-1) steps of M/(C R) = M/N bytes
//      between up and down neighbours (same column);
//   3. row all-gather: C-1 steps of M/C, as in phase 1.
// Every step of every rank is one send and one receive (no shared NIC
// direction) and all ranks run the same steps in lockstep:
//
//     T_torus(N, M, R) = 2 (C-1)(alpha + M beta / C) + 2 (R-1)(alpha + M beta / N)
//
// (T = 0 for N = 1; R = 1 is the ring.) "rows" must divide N; a group whose
// size it does not divide is rejected when the collective is used.
// Sources: Mikami et al., "Massively distributed SGD: ImageNet/ResNet-50
// training in a flash" (2D-torus all-reduce), 2018; Sack & Gropp, "Collective
// algorithms for multiported torus networks", ACM TOPC 2015.
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace ddlsim::models {
namespace {

using detail::recv_from;
using detail::send_to;

class Torus2dAllreduce final : public Collective {
 public:
  explicit Torus2dAllreduce(int rows) : rows_(rows) {}

  [[nodiscard]] std::string operation() const override { return "allreduce"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = group.workers;
    if (n <= 1) return 0.0;
    const int rows = rows_for(n);
    const double r = rows, c = n / rows, total = n;
    return 2 * (c - 1) * ab.step_s(bytes / c) + 2 * (r - 1) * ab.step_s(bytes / total);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = group.workers;
    if (n <= 1 || rank < 0 || rank >= n) return {};
    const int rows = rows_for(n);
    const int cols = n / rows;
    const int row = rank / cols, col = rank % cols;
    std::vector<RankStep> steps;
    const double row_chunk = bytes / cols;
    const RankStep row_step{{send_to(row * cols + (col + 1) % cols, row_chunk),
                             recv_from(row * cols + (col + cols - 1) % cols, row_chunk)}, 1};
    const double col_chunk = bytes / n;
    const RankStep col_step{{send_to(((row + 1) % rows) * cols + col, col_chunk),
                             recv_from(((row + rows - 1) % rows) * cols + col, col_chunk)}, 1};
    steps.insert(steps.end(), static_cast<std::size_t>(cols - 1), row_step);
    steps.insert(steps.end(), static_cast<std::size_t>(2 * (rows - 1)), col_step);
    steps.insert(steps.end(), static_cast<std::size_t>(cols - 1), row_step);
    return steps;
  }

 private:
  [[nodiscard]] int rows_for(int n) const {
    if (rows_ == 0) {
      int best = 1;
      for (int r = 1; static_cast<long long>(r) * r <= n; ++r)
        if (n % r == 0) best = r;
      return best;
    }
    if (n % rows_ != 0)
      throw std::invalid_argument(fmt::format("torus2d: rows = {} does not divide the group size {}", rows_, n));
    return rows_;
  }

  int rows_;  // 0 = default
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "torus2d",
                "2-D torus all-reduce (R x C): row ring reduce-scatter, column ring all-reduce, row ring all-gather; "
                "2(C-1)(a + M b/C) + 2(R-1)(a + M b/N)",
                [](ddlsim::ObjectReader& params) {
                  const auto rows = static_cast<int>(params.integer("rows", 0, 1, 1 << 20));
                  return std::make_unique<ddlsim::models::Torus2dAllreduce>(rows);
                })
