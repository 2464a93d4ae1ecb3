// Crossbow: synchronous model averaging (SMA) with several learners per GPU
// (seed 001; Koliousis et al., "Crossbow: scaling deep learning with small
// batch sizes on multi-GPU servers", VLDB 2019).
//
// Each worker is one GPU running k = learners_per_gpu learners; a learner trains
// its own model replica on its own batch of b samples (workload.batch_size). Per
// iteration, on every GPU:
//   1. the k learners' I/O, forward and backward run concurrently. Concurrency
//      model: k learners of batch b take what the GPU takes for one batch of
//      k b (the GPU is shared as one batch of k b would use it): the profile at
//      k b, measured or interpolated between the measured batches of a
//      multi-batch profile (Profile::at_batch);
//   2. combine: the learners' corrections against the average model are summed
//      into one buffer on the GPU, k - 1 element-wise adds that each read two
//      model-sized buffers and write one:
//          t_combine = (k - 1) x 3 x M / device_memory_bandwidth   (0 for k = 1)
//      with M the model's bytes (the profile's gradient bytes);
//   3. the central model is all-reduced across GPUs with the scenario's
//      collective, one all-reduce per gradient bucket (the same fused buffers),
//      after the whole compute: never overlapped with backward;
//   4. update: every learner steps its replica, k x optimizer_s (the profile's
//      step at k b); the central model's own element-wise update is not charged.
// So t_iter = t_io + t_fwd + t_bwd (at k b) + t_combine + T_allreduce(M) + k t_opt
// (plus the profile's unattributed time at k b, the scenario's framework overhead and
// bucket copies, as every model), and with k = 1 it is exactly bsp with overlap off.
// Throughput counts k b samples per GPU per iteration; speedup's baseline is one GPU
// running the same k learners without communication (t_unattributed + t_io + t_fwd +
// t_bwd + t_combine + k t_opt).
//
// Without a multi-batch profile, k > 1 is refused unless the workload says
// "batch_scaling": "linear" (then the k b times scale per sample: k learners
// take k times one learner's time, no gain from sharing the GPU).
#include "models/sync_model.hpp"

#include <fmt/format.h>

namespace ddlsim::models {
namespace {

class Crossbow final : public SyncModel {
 public:
  Crossbow(int learners, double bandwidth_Bps, std::string learners_path)
      : learners_(learners), bandwidth_Bps_(bandwidth_Bps), learners_path_(std::move(learners_path)) {}

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    const Profile& p = *plan.profile;  // at k x batch (worker_workload)
    const double combine = combine_s(p);
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      replay_compute(rt, plan, false);
      if (combine > 0) rt.compute(combine, Phase::UPDATE, "combine learners' corrections");
      submit_buckets(rt, plan, CommRequest::Kind::ALLREDUCE);
      wait_buckets(rt, plan);
      if (p.optimizer_s > 0) rt.compute(learners_ * p.optimizer_s, Phase::OPTIMIZER, "optimizer");
      rt.iteration_end(it);
    }
  }

  [[nodiscard]] SyncTraits traits() const override { return {.rank_symmetric = true}; }
  [[nodiscard]] nlohmann::json settings() const override {
    return {{"learners_per_gpu", learners_}, {"device_memory_bandwidth_Bps", bandwidth_Bps_}};
  }

  [[nodiscard]] WorkerWorkload worker_workload(const Profile& profile, std::int64_t batch, bool extrapolate) const override {
    const std::int64_t gpu_batch = learners_ * batch;
    Profile gpu = profile;
    if (learners_ > 1) {
      const std::string shared =
          fmt::format("{} learners of batch {} share a GPU as one batch of {}", learners_, batch, gpu_batch);
      if (!profile.has_batches() && !extrapolate)
        throw ConfigError(learners_path_,
                          fmt::format("{}, but the profile was measured at batch {} only: give a multi-batch profile "
                                      "(\"batch_profiles\", tools/profile_torch.py --batch-sizes) that covers {}, or "
                                      "\"batch_scaling\": \"linear\" in the workload to scale its times per sample "
                                      "(then k learners take k times one learner's time)",
                                      shared, profile.batch_size, gpu_batch));
      try {
        gpu = profile.at_batch(gpu_batch, extrapolate);
      } catch (const ConfigError& e) {
        throw ConfigError(learners_path_, fmt::format("{}: {}", shared, e.what()));
      }
    }
    const double combine = combine_s(gpu);
    // Unattributed, I/O, forward and backward at k b, the combine, and k optimizer steps.
    const double alone = gpu.iteration_compute_s() - gpu.optimizer_s + combine + learners_ * gpu.optimizer_s;
    nlohmann::json extra = {{"batch_size_per_learner", batch},
                            {"samples_per_gpu_iteration", gpu_batch},
                            {"combine_s", combine},
                            {"update_s", learners_ * gpu.optimizer_s}};
    return WorkerWorkload{std::move(gpu), gpu_batch, alone, std::move(extra)};
  }

 private:
  [[nodiscard]] double combine_s(const Profile& p) const { return (learners_ - 1) * 3.0 * p.grad_bytes() / bandwidth_Bps_; }

  int learners_;
  double bandwidth_Bps_;
  std::string learners_path_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "crossbow",
                "Crossbow synchronous model averaging: learners_per_gpu learners share each GPU (as one batch of "
                "k x batch), their corrections are combined on the GPU, then the model is all-reduced, not overlapped",
                [](ddlsim::ObjectReader& params) {
                  const auto learners = params.integer("learners_per_gpu", 1, 1, 1024);
                  const double bandwidth = params.bandwidth_Bps("device_memory_bandwidth", 480e9);
                  return std::make_unique<ddlsim::models::Crossbow>(static_cast<int>(learners), bandwidth,
                                                                    params.path_of("learners_per_gpu"));
                })
