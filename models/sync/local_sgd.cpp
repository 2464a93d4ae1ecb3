// Local SGD: periodic model averaging (seed 001: w_{t+1} = w_t - eta * g_t on
// every worker, and at the iterations of the sync set I_T = {H, 2H, ...} the
// workers' models are replaced by their average; Stich, "Local SGD converges fast
// and communicates little", ICLR 2019; Lin et al., "Don't use large mini-batches,
// use local SGD", ICLR 2020, for post-local SGD: BSP first, local SGD after).
//
// The first warmup_bsp_iterations (K) iterations are bsp's (gradient buckets
// all-reduced, overlapped with backward, then the optimizer). After them each
// worker replays its iteration and steps its own model with no communication;
// at the end of every period_iterations-th (H) iteration after the warm-up it
// averages its model with every worker's: one all-reduce per gradient bucket
// (the same fused buffers; parameters have the gradients' bytes in the
// profile's dtype) with the scenario's collective, after the optimizer, not
// overlapped with backward. After the warm-up a worker sends 1/H of bsp's bytes
// per iteration; with H = 1 an iteration costs what bsp without overlap costs.
#include "models/sync_model.hpp"

#include <limits>

namespace ddlsim::models {
namespace {

class LocalSgd final : public SyncModel {
 public:
  LocalSgd(int period, int warmup) : period_(period), warmup_(warmup) {}

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      if (it < warmup_) {
        replay_iteration(rt, plan, CommRequest::Kind::ALLREDUCE, true, it);
      } else {
        replay_compute(rt, plan, true);
        if ((it - warmup_ + 1) % period_ == 0) {
          submit_buckets(rt, plan, CommRequest::Kind::ALLREDUCE);
          wait_buckets(rt, plan);
        }
      }
      rt.iteration_end(it);
    }
  }

  [[nodiscard]] SyncTraits traits() const override { return {.rank_symmetric = true}; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"period_iterations", period_}, {"warmup_bsp_iterations", warmup_}};
  }

 private:
  int period_;
  int warmup_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "local_sgd",
                "local SGD: every worker steps its own model, all-reducing the models every period_iterations "
                "(after warmup_bsp_iterations of bsp)",
                [](ddlsim::ObjectReader& params) {
                  const auto period = params.integer("period_iterations", 8, 1, 1'000'000);
                  const auto warmup = params.integer("warmup_bsp_iterations", 0, 0, 1'000'000);
                  return std::make_unique<ddlsim::models::LocalSgd>(static_cast<int>(period), static_cast<int>(warmup));
                })
