// Bulk-synchronous parallel (BSP) data-parallel SGD.
//
// Worker loop: trace replay of one iteration (I/O, forward, backward with
// wait-free backprop), each gradient bucket aggregated as soon as it fills,
// overlapping the rest of backward, then the optimizer step (seed 001: data-
// parallel training, aggregation and overlap; seed 002: t_step = t_compute +
// t_sync + t_IO). Without overlap:
//
//     t_iter = t_io + t_fwd + t_bwd + sum over buckets of T_aggregate(bucket) + t_opt
//
// params.aggregation:
//   "allreduce" (default): each bucket is all-reduced with the scenario's
//       collective (ring, tree, auto, ...); under training.sharding, the
//       gradients are reduce-scattered and the parameters all-gathered instead
//       (models/sharded_iteration.hpp).
//   "parameter_server": each bucket is pushed in S equal shards to the S
//       parameter servers; a server applies the update once all N workers'
//       pushes of that bucket have arrived (its share of the profile's
//       optimizer_s: optimizer_s * bucket_bytes / total_bytes / S), then every
//       worker pulls the shard back. Workers run no optimizer step of their own.
#include "models/sharded_iteration.hpp"
#include "models/sync_model.hpp"

#include <map>
#include <vector>

namespace ddlsim::models {
namespace {

class Bsp final : public SyncModel {
 public:
  explicit Bsp(bool parameter_server) : parameter_server_(parameter_server) {}

  void run_worker(Runtime& rt, const TrainingPlan& plan) const override {
    const auto kind = parameter_server_ ? CommRequest::Kind::PUSH_PULL : CommRequest::Kind::ALLREDUCE;
    for (int it = 0; it < plan.iterations; ++it) {
      rt.iteration_begin(it);
      if (plan.sharded)  // training.sharding: ZeRO or FSDP (models/sharded_iteration.hpp)
        replay_sharded_iteration(rt, plan);
      else
        replay_iteration(rt, plan, kind, !parameter_server_, it);
      rt.iteration_end(it);
    }
  }

  [[nodiscard]] SyncTraits traits() const override {
    return {.uses_servers = parameter_server_,
            .compresses_gradients = true,
            .uses_collective = !parameter_server_,
            .allreduces_in_backward = !parameter_server_,
            .rank_symmetric = true};
  }

  void run_server(ServerRuntime& srv, const TrainingPlan& plan) const override {
    const double total = plan.profile->grad_bytes();
    std::map<int, std::vector<Push>> pending;  // bucket -> pushes received
    std::int64_t version = 0;
    for (std::int64_t n = expected_pushes(srv, plan); n > 0; --n) {
      Push push = receive_gradient(srv, plan);
      auto& got = pending[push.bucket];
      got.push_back(push);
      if (static_cast<int>(got.size()) < srv.workers()) continue;
      const double share = total > 0 ? plan.buckets[static_cast<std::size_t>(push.bucket)].bytes / total : 0;
      srv.compute(plan.profile->optimizer_s * share / srv.servers(), "update");
      ++version;
      for (const auto& p : got) srv.send_pull(p.worker, p.bucket, shard_bytes(srv, plan, p.bucket), version);
      pending.erase(push.bucket);
    }
  }

 private:
  bool parameter_server_;
};

}  // namespace
}  // namespace ddlsim::models

DDLSIM_REGISTER(ddlsim::models::SyncModel, "bsp",
                "bulk-synchronous SGD: replay, bucketed all-reduce or sharded parameter server, overlapped with backward",
                [](ddlsim::ObjectReader& params) {
                  return std::make_unique<ddlsim::models::Bsp>(
                      params.choice("aggregation", {"allreduce", "parameter_server"}, "allreduce") == "parameter_server");
                })
