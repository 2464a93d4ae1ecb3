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
// The model, computed when the plan is made from the profile: the background thread
// wakes at t = k x cycle (k = 0, 1, ...) after the start of backward; gradient i is
// ready at r_i, the end of its layer's backward (all at the end of backward without
// overlap), and is taken by the first cycle at or after r_i (within 1e-9 of a cycle,
// against rounding in the sum of backward times); cycle 0 fuses what is ready at the
// same instant. Each cycle's gradients, in ready order, are fused greedily up to the
// threshold. A bucket's wait is its cycle time minus the time the replay submits it.
// Exact when every worker replays the profile as given (no stragglers, no noise, no
// compressor's encode before the submit). The cycle's phase with respect to backward
// is the one choice the framework does not fix; negotiation messages are not sent.
#include "models/bucketing.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ddlsim::models {

FusionPlan make_buckets_horovod(const Profile& profile, double threshold_bytes, double cycle_s, bool overlap) {
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
  // The cycle that takes a gradient: its index, and the time it wakes.
  auto cycle = [cycle_s](double ready) -> std::pair<double, double> {
    if (cycle_s <= 0) return {ready, ready};
    const double k = std::ceil(ready / cycle_s - 1e-9);
    return {k, k * cycle_s};
  };
  FusionPlan plan;
  double open_cycle = -1;
  for (const auto& g : grads) {
    const auto [index, wakes] = cycle(g.ready_s);
    const bool same_cycle = !plan.buckets.empty() && index == open_cycle;
    if (same_cycle && plan.buckets.back().bytes + g.bytes <= threshold_bytes) {
      plan.buckets.back().last_layer = g.layer;
      plan.buckets.back().bytes += g.bytes;
    } else {
      const std::size_t top = plan.buckets.empty() ? profile.layers.size() - 1 : plan.buckets.back().last_layer - 1;
      plan.buckets.push_back(Bucket{top, g.layer, g.bytes});
      plan.wait_s.push_back(0);
      open_cycle = index;
    }
    plan.wait_s.back() = std::max(0.0, wakes - g.ready_s);  // from the submit after its last gradient
  }
  return plan;
}

}  // namespace ddlsim::models
