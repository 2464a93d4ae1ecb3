// ddlsim: one iteration of sharded data parallelism -- which collectives it runs, in which order,
// overlapping which compute -- as ZeRO (DeepSpeed) and FSDP (PyTorch) issue them.
//
// Every collective runs on the worker's one communication stream, in the order it is issued: NCCL
// runs a process group's collectives on one stream, so FSDP's all-gathers and reduce-scatters, issued
// from its unshard and post-backward streams onto the same group, queue behind each other (PyTorch
// ProcessGroupNCCL; the FSDP notes, "FSDP Prefetch Nuances"). Per unit u = 0 .. U-1 in forward order:
//
//   forward   all-gather(0); then for each u: wait for all-gather(u), issue all-gather(u+1) (the
//             implicit prefetch of a rank whose CPU runs ahead of its device: it overlaps forward(u)),
//             forward(u).
//   backward  (stage 3 only: the units were freed after their forward) all-gather(U-1); then for u
//             from U-1 down: wait for all-gather(u); under BACKWARD_PRE issue all-gather(u-1) now,
//             overlapping backward(u); backward(u); under BACKWARD_POST issue all-gather(u-1) now;
//             reduce-scatter(u); under NONE, all-gather(u-1) only now, queued behind reduce-scatter(u)
//             (torch/distributed/fsdp/_runtime_utils.py: _pre_backward_hook and _post_backward_hook
//             call _prefetch_handle, which _get_handle_to_prefetch gates on backward_prefetch).
//   step      wait for every reduce-scatter; the optimizer on this rank's shard (optimizer_s / S).
//
// HYBRID_SHARD: the all-gathers and reduce-scatters run inside each shard group of S consecutive
// ranks (a node), and right after reduce-scatter(u) each rank all-reduces its shard of unit u (M / S
// bytes) with the ranks that hold the same shard in the other groups, with the scenario's collective
// (torch/distributed/fsdp/_runtime_utils.py, _reduce_grad: reduce_scatter on the process group,
// then all_reduce on _inter_node_pg). FSDP issues the two on different process groups, so NCCL may
// run them on two streams; here they share the worker's one stream, in that order.
//
// SHARD_GRAD_OP keeps the gathered parameters from forward to backward, so its backward gathers
// nothing. ZeRO-1 and ZeRO-2 (deepspeed/runtime/zero/stage_1_and_2.py) keep every parameter: the
// forward pass gathers nothing; each gradient bucket is reduce-scattered as backward makes it ready
// (training.bucketing, overlap as DeepSpeed's overlap_comm); after the step on its shard every rank
// all-gathers the updated parameters, bucket by bucket, before the iteration ends.
#pragma once

#include "models/bucketing.hpp"
#include "models/sharding.hpp"
#include "models/sync_model.hpp"

#include <memory>
#include <vector>

namespace ddlsim::models {

/// A sharded iteration's plan: the ShardedPlan and the buckets it indexes (one per collective).
struct ShardedIteration {
  std::shared_ptr<const ShardedPlan> plan;
  std::vector<Bucket> buckets;
};

/// The collectives of one iteration under `strategy` (not NONE): per-unit strategies cut the
/// profile's layers into `units` (make_units); ZeRO-1 and ZeRO-2 use `gradient_buckets` (backward
/// order). Throws std::invalid_argument for a unit count outside [1, layers with gradients].
[[nodiscard]] ShardedIteration plan_sharded_iteration(ShardingStrategy strategy, const Sharding& sharding,
                                                      BackwardPrefetch prefetch, const Profile& profile, int units,
                                                      const std::vector<Bucket>& gradient_buckets);

/// One iteration of `plan.sharded` on `rt` (the schedule at the top of this file), iteration
/// record included (iteration_begin and iteration_end are the caller's).
void replay_sharded_iteration(Runtime& rt, const TrainingPlan& plan);

}  // namespace ddlsim::models
