// ddlsim: gradient bucketing (tensor fusion) in backward order.
//
// Gradients become ready layer by layer in reverse order during backward
// (wait-free backprop). Like PyTorch DDP's bucket_cap_mb and Horovod's fusion
// buffer, consecutive gradients are fused into buckets of at most `cap_bytes`:
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

}  // namespace ddlsim::models
