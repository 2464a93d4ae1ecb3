// PyTorch DistributedDataParallel's gradient buckets ("policy": "ddp").
//
// Sources (PyTorch main, 2024): torch/csrc/distributed/c10d/reducer.cpp,
// compute_bucket_assignment_by_size() and Reducer::rebuild_buckets();
// torch/csrc/distributed/c10d/reducer.hpp (kDefaultFirstBucketBytes = 1024 * 1024,
// kDefaultBucketBytesCap = 25 * 1024 * 1024); torch/nn/parallel/distributed.py
// (bucket_cap_mb, default 25: bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024);
// dist._DEFAULT_FIRST_BUCKET_BYTES passed to the Reducer as first_bucket_bytes_cap).
//
// compute_bucket_assignment_by_size walks the tensors in order and, per (dtype,
// device), appends each one to the open bucket and adds its bytes; THEN, if the
// bucket's size >= its limit, the bucket closes and the limit iterator advances
// to the next entry of bucket_size_limits, staying on the last one. A bucket can
// therefore exceed its cap (by less than its last tensor), unlike "size".
// rebuild_buckets() calls it once, after the first backward, with the gradients
// in the order their autograd hooks fired (gradient-ready order, which needs no
// sorting) and limits {first_bucket_bytes_cap, bucket_bytes_cap}: the first bucket
// to become ready is small, so communication starts early in backward.
//
// What ddlsim does: every iteration runs these rebuilt buckets (DDP's steady
// state). DDP's own first iteration differs: with find_unused_parameters=False
// (the default) or static_graph, distributed.py builds ONE bucket
// (bucket_size_limits = [sys.maxsize]) in reverse registration order and
// rebuilds after it; with find_unused_parameters=True it applies the same two
// limits to the registration order. ddlsim applies the rule per profile layer
// (one tensor per layer, one dtype, one device); a layer holding a weight and a
// bias is two tensors to DDP, so a boundary could fall between them there.
// DDP_SET_LAST_BUCKET_CAP=1 (small LAST bucket) is not modelled. Layers without
// gradient bytes belong to no bucket, as in make_buckets.
#include "models/bucketing.hpp"

namespace ddlsim::models {

std::vector<Bucket> make_buckets_ddp(const Profile& profile, double first_cap_bytes, double cap_bytes) {
  std::vector<Bucket> buckets;
  double limit = first_cap_bytes;
  bool open = false;
  Bucket current;
  for (std::size_t k = profile.layers.size(); k-- > 0;) {
    if (!open) {
      current = Bucket{k, k, 0};
      open = true;
    }
    const double bytes = profile.layers[k].grad_bytes;
    if (bytes <= 0) continue;
    current.last_layer = k;
    current.bytes += bytes;
    if (current.bytes >= limit) {  // added first, then closed: the bucket may pass its cap
      buckets.push_back(current);
      open = false;
      limit = cap_bytes;
    }
  }
  if (open && current.bytes > 0) buckets.push_back(current);
  return buckets;
}

}  // namespace ddlsim::models
