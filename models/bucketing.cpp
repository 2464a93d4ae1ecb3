#include "models/bucketing.hpp"

namespace ddlsim::models {

std::vector<Bucket> make_buckets(const Profile& profile, double cap_bytes) {
  std::vector<Bucket> buckets;
  bool open = false;
  Bucket current;
  for (std::size_t k = profile.layers.size(); k-- > 0;) {
    const double bytes = profile.layers[k].grad_bytes;
    if (open && bytes > 0 && current.bytes > 0 && (cap_bytes <= 0 || current.bytes + bytes > cap_bytes)) {
      buckets.push_back(current);
      open = false;
    }
    if (!open) {
      current = Bucket{k, k, 0};
      open = true;
    }
    if (bytes > 0 || current.bytes == 0) current.last_layer = k;
    current.bytes += bytes;
  }
  if (open && current.bytes > 0) buckets.push_back(current);
  return buckets;
}

}  // namespace ddlsim::models
