// Test helper: hand-made profiles for the bucketing policies' tests (ddp_bucketing_test.cpp,
// horovod_fusion_test.cpp): layers with given gradient bytes and backward times, and the bytes of
// the buckets a policy made.
#pragma once

#include "models/bucketing.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

namespace ddlsim::test {

inline constexpr double MiB = 1024.0 * 1024.0;

/// Layers 0..n-1 with these gradient bytes and backward seconds (forward 1 ms each).
inline models::Profile layers(const std::vector<double>& grads, const std::vector<double>& backward = {}) {
  models::Profile p;
  p.model = std::string("framework-bucketing-test");
  for (std::size_t i = 0; i < grads.size(); ++i)
    p.layers.push_back(models::Layer{fmt::format("l{}", i), 1e-3, backward.empty() ? 2e-3 : backward[i], 0, grads[i]});
  return p;
}

inline std::vector<double> bytes_of(const std::vector<models::Bucket>& buckets) {
  std::vector<double> out;
  for (const auto& b : buckets) out.push_back(b.bytes);
  return out;
}

}  // namespace ddlsim::test
