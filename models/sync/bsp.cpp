// Bulk-synchronous parallel (BSP) data-parallel SGD with all-reduce.
//
// Every worker runs I/O, the forward pass layer by layer, the backward pass in
// reverse, then all-reduces the full gradient (sum of every layer's gradient
// bytes) with the scenario's collective, then applies the optimizer step:
//
//     t_iter = t_io + t_fwd + t_bwd + T_collective(N, M) + t_opt
//
// (seed 001, lecture on data-parallel training; seed 002: t_step = t_compute +
// t_sync + t_IO). Overlap of communication with backward (wait-free backprop,
// bucketing) belongs to the trace-replay engine and is not modelled here yet:
// this is the no-overlap baseline.
#include "models/sync_model.hpp"

namespace ddlsim::models {
namespace {

class Bsp final : public SyncModel {
 public:
  explicit Bsp(std::string aggregation) : aggregation_(std::move(aggregation)) {}

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    const Profile& p = *plan.profile;
    const double grad_bytes = p.grad_bytes();
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      if (p.io_s > 0) rt.compute(p.io_s, Phase::IO, "io");
      for (const auto& layer : p.layers) rt.compute(layer.forward_s, Phase::FORWARD, layer.name);
      for (auto layer = p.layers.rbegin(); layer != p.layers.rend(); ++layer)
        rt.compute(layer->backward_s, Phase::BACKWARD, layer->name);
      rt.allreduce(grad_bytes, "gradients");
      if (p.optimizer_s > 0) rt.compute(p.optimizer_s, Phase::OPTIMIZER, "optimizer");
      rt.iteration_end(it);
    }
  }

 private:
  std::string aggregation_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "bsp",
                "bulk-synchronous SGD: compute, all-reduce every gradient, step (no overlap yet)",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::Bsp>(params.choice("aggregation", {"allreduce"}, "allreduce"));
                })
