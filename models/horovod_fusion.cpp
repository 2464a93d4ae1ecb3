// Horovod's tensor fusion ("policy": "horovod").
//
// Sources: Horovod docs, docs/tensor-fusion.rst ("Tensor Fusion works by attempting
// to combine all the tensors that are ready to be reduced at given moment of time
// into one reduction operation"; HOROVOD_FUSION_THRESHOLD, HOROVOD_CYCLE_TIME in
// milliseconds); horovod/common/operations.cc, BackgroundThreadLoop():
// SetTensorFusionThresholdBytes(128 * 1024 * 1024) and SetCycleTimeMs(1) before the
// environment overrides -- the defaults since Horovod 0.21.0 ("Changed default cycle
// time from 5ms to 1ms and fusion threshold from 64MB to 128MB", #2468; the docs page
// still says 64 MB); RunLoopOnce() sleeps until last_cycle_start + cycle time, then
// negotiates every tensor ready on all ranks; horovod/common/controller.cc,
// FuseResponses(): in order, a response absorbs the next ones of the same type, dtype
// and device while tensor_size + new_tensor_size <= TensorFusionThresholdBytes(), so a
// fused all-reduce never passes the threshold (a tensor larger than it goes alone;
// threshold 0 disables fusion).
//
// The coordinator's loop, as RunLoopOnce() runs it (horovod/common/operations.cc): sleep until
// last_cycle_start + cycle time (no sleep if that has passed), set last_cycle_start = now,
// negotiate the ready tensors (ComputeResponseList), then PerformOperation() on each fused
// response in turn, on the background thread, before the loop comes round again. So a cycle
// begins at max(previous cycle's start + cycle time, the end of the previous cycle's collectives):
// when communication is slow the cycles stretch and each takes more gradients, the buckets grow.
//
// The model, computed when the plan is made from the profile and the collective's cost
// (`allreduce_s`: the scenario's all-reduce of a fused bucket, its closed form and call cost on
// the platform's alpha and beta): the first cycle starts with backward; gradient i is ready at r_i,
// the end of its layer's backward (all at the end of backward without overlap), and is taken by the
// first cycle that starts at or after r_i (within 1e-9 s, against rounding in the sum of backward
// times); a cycle's gradients, in ready order, are fused greedily up to the threshold and their
// collectives run back to back from the cycle's start (or the end of the ones before); when no
// gradient is ready, the loop sleeps cycle after cycle until one is. A bucket's wait is its cycle's
// start minus the time the replay submits it. Exact when every worker replays the profile as given
// (no stragglers, no noise, no compressor's encode before the submit) and the collectives take
// their closed form (an uncontended platform); negotiation messages are not sent.
#include "models/bucketing.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace ddlsim::models {

FusionPlan make_buckets_horovod(const Profile& profile, double threshold_bytes, double cycle_s, bool overlap,
                                const std::function<double(double)>& allreduce_s) {
  struct Ready {
    std::size_t layer;
    double ready_s;
    double bytes;
  };
  std::vector<Ready> grads;  // backward order
  double t = 0;
  for (std::size_t k = profile.layers.size(); k-- > 0;) {
    t += profile.layers[k].backward_s;
    if (profile.layers[k].grad_bytes > 0) grads.push_back(Ready{k, t, profile.layers[k].grad_bytes});
  }
  if (!overlap)
    for (auto& g : grads) g.ready_s = t;
  constexpr double EPS = 1e-9;
  FusionPlan plan;
  double cycle = 0;       // this cycle's start
  double busy_until = 0;  // the end of the collectives performed so far
  std::size_t next = 0;
  while (next < grads.size()) {
    if (grads[next].ready_s > cycle + EPS) {  // nothing ready: the loop sleeps one cycle at a time
      cycle = cycle_s > 0 ? cycle + cycle_s * std::max(1.0, std::ceil((grads[next].ready_s - cycle) / cycle_s - EPS))
                          : grads[next].ready_s;
      continue;
    }
    const std::size_t first_bucket = plan.buckets.size();
    for (; next < grads.size() && grads[next].ready_s <= cycle + EPS; ++next) {
      const auto& g = grads[next];
      if (plan.buckets.size() > first_bucket && plan.buckets.back().bytes + g.bytes <= threshold_bytes) {
        plan.buckets.back().last_layer = g.layer;
        plan.buckets.back().bytes += g.bytes;
      } else {
        const std::size_t top = plan.buckets.empty() ? profile.layers.size() - 1 : plan.buckets.back().last_layer - 1;
        plan.buckets.push_back(Bucket{top, g.layer, g.bytes});
        plan.wait_s.push_back(0);
      }
      plan.wait_s.back() = std::max(0.0, cycle - g.ready_s);  // from the submit after its last gradient
    }
    for (std::size_t b = first_bucket; b < plan.buckets.size(); ++b)
      busy_until = std::max(busy_until, cycle) + allreduce_s(plan.buckets[b].bytes);
    cycle = std::max(cycle + cycle_s, busy_until);
  }
  return plan;
}

}  // namespace ddlsim::models
