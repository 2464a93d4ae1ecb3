// ddlsim: gradient bucketing (tensor fusion) in backward order.
//
// Gradients become ready layer by layer in reverse order during backward
// (wait-free backprop). The size-cap policy (make_buckets, "size") fuses
// consecutive gradients into buckets of at most `cap_bytes`:
// a layer joins the open bucket unless that would push it past the cap, in
// which case the open bucket closes and the layer starts the next one (a
// single layer larger than the cap is a bucket of its own). A bucket is ready
// to communicate when the backward of its last (lowest-index) layer finishes.
// cap_bytes = 0 means one bucket per layer. Layers without gradient bytes
// belong to no bucket: a bucket is ready after the backward of its lowest layer
// that has gradient bytes, and a model without gradient bytes has no bucket.
#pragma once

#include "models/profile.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace ddlsim::models {

struct Bucket {
  std::size_t first_layer = 0;  // highest layer index in the bucket (its backward runs first)
  std::size_t last_layer = 0;   // lowest layer index: the bucket is ready after its backward
  double bytes = 0;
};

/// Buckets in the order they become ready (backward order).
std::vector<Bucket> make_buckets(const Profile& profile, double cap_bytes);

/// MG-WFBP buckets (models/mgwfbp.cpp): gradients merged by the startup-cost
/// rule of Shi, Wang & Chu (INFOCOM 2019). `comm_time_s(bytes)` is the time of
/// one aggregation call of `bytes` (fixed call cost included); its value at 0
/// bytes is the startup cost a merge saves.
std::vector<Bucket> make_buckets_mgwfbp(const Profile& profile, const std::function<double(double)>& comm_time_s);

/// PyTorch DDP's buckets (models/ddp_bucketing.cpp): backward order, the first bucket capped at
/// `first_cap_bytes`, the others at `cap_bytes`; a bucket closes once it reaches its cap.
std::vector<Bucket> make_buckets_ddp(const Profile& profile, double first_cap_bytes, double cap_bytes);

/// Horovod's tensor fusion (models/horovod_fusion.cpp): the buckets, and per bucket the wait from
/// when the trace replay submits it (its last gradient ready; the end of backward without overlap)
/// to the background thread's cycle that launches it.
struct FusionPlan {
  std::vector<Bucket> buckets;
  std::vector<double> wait_s;
};
/// Horovod's tensor fusion (models/horovod_fusion.cpp): `allreduce_s` is one fused bucket's
/// all-reduce (call cost included), which holds the coordinator's next cycle back.
FusionPlan make_buckets_horovod(const Profile& profile, double threshold_bytes, double cycle_s, bool overlap,
                                const std::function<double(double)>& allreduce_s);

}  // namespace ddlsim::models
