// Horovod's tensor fusion from cycle times (models/horovod_fusion.cpp) on hand-made profiles.
// Every boundary and wait is derived here from the rule as its source states it.
#include "models/bucketing.hpp"
#include "tests/models/bucketing_profiles.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <functional>
#include <vector>

using namespace ddlsim::models;
using namespace ddlsim::test;

namespace {
/// Collectives that take no time: the cycles keep their grid.
const std::function<double(double)> FREE = [](double) { return 0.0; };
}  // namespace

TEST_CASE("horovod: each cycle fuses the gradients ready by then, up to the threshold") {
  // Backward visits 4, 3, 2, 1, 0 for 0.3, 0.5, 0.6, 0.9, 0.2 ms: ready at 0.3, 0.8, 1.4, 2.3,
  // 2.5 ms. With a 1 ms cycle: {4, 3} at 1 ms, {2} at 2 ms, {1, 0} at 3 ms.
  const Profile p = layers({40e6, 100e6, 10e6, 50e6, 30e6}, {0.2e-3, 0.9e-3, 0.6e-3, 0.5e-3, 0.3e-3});
  const double threshold = 128 * MiB;  // 134.2 MB: 30 + 50 = 80 MB fuse; 100 + 40 = 140 MB do not
  const auto plan = make_buckets_horovod(p, threshold, 1e-3, true, FREE);
  CHECK(bytes_of(plan.buckets) == std::vector<double>{80e6, 10e6, 100e6, 40e6});
  REQUIRE(plan.buckets.size() == 4);
  CHECK(plan.buckets[0].last_layer == 3);
  CHECK(plan.buckets[1].last_layer == 2);
  CHECK(plan.buckets[2].last_layer == 1);
  CHECK(plan.buckets[3].last_layer == 0);
  // Each waits from its last gradient to its cycle: 1 - 0.8, 2 - 1.4, 3 - 2.3, 3 - 2.5 ms.
  REQUIRE(plan.wait_s.size() == 4);
  CHECK(plan.wait_s[0] == doctest::Approx(0.2e-3).epsilon(1e-9));
  CHECK(plan.wait_s[1] == doctest::Approx(0.6e-3).epsilon(1e-9));
  CHECK(plan.wait_s[2] == doctest::Approx(0.7e-3).epsilon(1e-9));
  CHECK(plan.wait_s[3] == doctest::Approx(0.5e-3).epsilon(1e-9));

  // A 64 MiB threshold (67.1 MB) splits the first cycle too: 30 + 50 = 80 MB > 67.1.
  CHECK(bytes_of(make_buckets_horovod(p, 64 * MiB, 1e-3, true, FREE).buckets) ==
        std::vector<double>{30e6, 50e6, 10e6, 100e6, 40e6});
  // A 0.5 ms cycle: ready 0.3 -> 0.5, 0.8 -> 1.0, 1.4 -> 1.5, 2.3 -> 2.5, 2.5 -> 2.5 ms.
  const auto fast = make_buckets_horovod(p, threshold, 0.5e-3, true, FREE);
  CHECK(bytes_of(fast.buckets) == std::vector<double>{30e6, 50e6, 10e6, 100e6, 40e6});
  CHECK(fast.wait_s[3] == doctest::Approx(0.2e-3).epsilon(1e-9));
  CHECK(fast.wait_s[4] == doctest::Approx(0.0).epsilon(1e-9));
  // Cycle time 0: a gradient goes the moment it is ready, with those ready at the same instant.
  const auto now = make_buckets_horovod(layers({1, 2, 3}, {1e-3, 0, 1e-3}), threshold, 0, true, FREE);
  CHECK(bytes_of(now.buckets) == std::vector<double>{5, 1});  // layers 2 and 1 ready together at 1 ms
  CHECK(now.wait_s == std::vector<double>{0, 0});
}

TEST_CASE("horovod without overlap: one cycle after backward fuses everything up to the threshold") {
  // Backward ends at 0.3 + 0.5 + 0.6 + 0.9 + 0.2 = 2.5 ms; the cycle at 3 ms takes all five:
  // 30 + 50 + 10 = 90 MB, + 100 would pass 134.2 MB; 100 + 40 = 140 would too.
  const Profile p = layers({40e6, 100e6, 10e6, 50e6, 30e6}, {0.2e-3, 0.9e-3, 0.6e-3, 0.5e-3, 0.3e-3});
  const auto plan = make_buckets_horovod(p, 128 * MiB, 1e-3, false, FREE);
  CHECK(bytes_of(plan.buckets) == std::vector<double>{90e6, 100e6, 40e6});
  for (double w : plan.wait_s) CHECK(w == doctest::Approx(0.5e-3).epsilon(1e-9));
  // Threshold 0 disables fusion (HOROVOD_FUSION_THRESHOLD=0): one all-reduce per tensor.
  CHECK(make_buckets_horovod(p, 0, 1e-3, false, FREE).buckets.size() == 5);
}

TEST_CASE("horovod: the next cycle waits for this cycle's collectives, so slow communication fuses more") {
  // The same gradients, ready at 0.3, 0.8, 1.4, 2.3, 2.5 ms, a 1 ms cycle, and every fused
  // all-reduce taking 1.5 ms (RunLoopOnce performs a cycle's responses before it loops again).
  // Cycle at 0: nothing ready. Cycle at 1 ms: {4, 3} = 80 MB, its all-reduce until 2.5 ms. The next
  // cycle starts at max(1 + 1, 2.5) = 2.5 ms and takes layers 2, 1 and 0 (ready by 2.5 ms):
  // 10 + 100 = 110 MB fuse, + 40 would pass 134.2 MB. On the fixed grid it was {80, 10, 100, 40}.
  const Profile p = layers({40e6, 100e6, 10e6, 50e6, 30e6}, {0.2e-3, 0.9e-3, 0.6e-3, 0.5e-3, 0.3e-3});
  const auto plan = make_buckets_horovod(p, 128 * MiB, 1e-3, true, [](double) { return 1.5e-3; });
  CHECK(bytes_of(plan.buckets) == std::vector<double>{80e6, 110e6, 40e6});
  REQUIRE(plan.wait_s.size() == 3);
  CHECK(plan.wait_s[0] == doctest::Approx(0.2e-3).epsilon(1e-9));  // 1 - 0.8 ms
  CHECK(plan.wait_s[1] == doctest::Approx(0.2e-3).epsilon(1e-9));  // 2.5 - 2.3 ms
  CHECK(plan.wait_s[2] == doctest::Approx(0.0).epsilon(1e-9));     // 2.5 - 2.5 ms
  // A cost that grows with the bytes: 1 ms per 100 MB. Cycle 1 ms: 80 MB until 1.8 ms; next cycle
  // at 2 ms: layer 2 (10 MB) until 2.1 ms; next at 3 ms: layers 1 and 0 (100, then 40 alone).
  const auto linear = make_buckets_horovod(p, 128 * MiB, 1e-3, true, [](double bytes) { return bytes / 100e6 * 1e-3; });
  CHECK(bytes_of(linear.buckets) == std::vector<double>{80e6, 10e6, 100e6, 40e6});
}
