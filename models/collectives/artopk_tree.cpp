// AR-Topk over a tree all-reduce (Tyagi & Swany, IEEE BigData 2023, seed 002;
// code: github.com/sahiltyagi4/ARTopk). See artopk_ring.cpp for the method and
// for M_c (`bytes`): the size of one worker's top-k VALUES, which the seed also
// charges to the index broadcast.
//
// Schedule, all from the root (param "root", default rank 0), with binomial
// trees (schedule_util.hpp) of L = ceil(log2 N) rounds of M_c bytes each:
//   1. binomial broadcast of the root's top-k indices;
//   2. binomial reduce of the values to the root (the broadcast reversed);
//   3. binomial broadcast of the reduced values.
// Steps 2 and 3 are the tree all-reduce the seed's table charges
// 2 alpha log N + 2 log N M beta: one child per round, so no NIC direction is
// ever shared (unlike the heap tree of tree.cpp, where two children share one).
// On the reference star the root's 3L transfers form a chain and every other
// transfer fits in its round, so
//
//     t_ARTtree = 3 L alpha + 3 L M_c beta = 3 L (alpha + M_c beta)   (t = 0 for N = 1)
//
// the seed's t_ARTtree with log(N) = L = ceil(log2 N) (log2 N for N a power of two).
#include "models/collective.hpp"
#include "models/collectives/schedule_util.hpp"

namespace ddlsim::models {
namespace {

using detail::ceil_log2;

class ArtopkTree final : public Collective {
 public:
  explicit ArtopkTree(int root) : root_(root) {}

  /// Not "allreduce": AR-Topk reduces the values at one worker's indices, never a dense gradient.
  [[nodiscard]] std::string operation() const override { return "artopk"; }

  [[nodiscard]] double analytic_time_s(const CollectiveGroup& group, double bytes, const AlphaBeta& ab) const override {
    const int n = detail::artopk_group_size("artopk_tree", group, root_);
    if (n <= 1) return 0.0;
    return 3.0 * ceil_log2(n) * ab.step_s(bytes);
  }

  [[nodiscard]] std::vector<RankStep> rank_schedule(int rank, const CollectiveGroup& group,
                                                    double bytes) const override {
    const int n = detail::artopk_group_size("artopk_tree", group, root_);
    std::vector<RankStep> steps;
    detail::append_binomial_broadcast(rank, n, root_, bytes, steps);  // the root's indices
    detail::append_binomial_reduce(rank, n, root_, bytes, steps);     // the values at them, to the root
    detail::append_binomial_broadcast(rank, n, root_, bytes, steps);  // and back
    return steps;
  }

 private:
  int root_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::Collective, "artopk_tree",
                "AR-Topk (operation artopk, M = M_c top-k values): binomial broadcast of the root's indices + binomial "
                "reduce + broadcast of the values, 3 log2 N (a + M b)",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::ArtopkTree>(
                      static_cast<int>(params.integer("root", 0, 0, 1 << 30)));
                })
