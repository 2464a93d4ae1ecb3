// The sparsifiers' selection rules (models/convergence/selection.hpp) on hand-made vectors; the
// compressors built on them are tested in compression_test.cpp.
#include "models/convergence/selection.hpp"

#include <doctest/doctest.h>
#include <algorithm>
#include <initializer_list>
#include <vector>

using namespace ddlsim::models::convergence;

namespace {

Vector vec(std::initializer_list<double> v) {
  Vector out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out[i++] = x;
  return out;
}

std::vector<Eigen::Index> sorted(std::vector<Eigen::Index> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("top takes the k largest magnitudes in a range with ties to the lower index") {
  const Vector x = vec({1, -4, 4, 2, 9, 0});
  CHECK(sorted(top(x, 0, 6, 3)) == std::vector<Eigen::Index>{1, 2, 4});
  CHECK(sorted(top(x, 0, 4, 1)) == std::vector<Eigen::Index>{1});  // |-4| = |4|: index 1
  CHECK(sorted(top(x, 3, 6, 2)) == std::vector<Eigen::Index>{3, 4});
}

TEST_CASE("floor_count is the seed's max(1, int(n cr))") {
  CHECK(floor_count(4, 0.49) == 1);
  CHECK(floor_count(100, 0.01) == 1);
  CHECK(floor_count(1000, 0.0001) == 1);
  CHECK(floor_count(1000, 0.25) == 250);
}

TEST_CASE("mstopk_select and dgc_select on hand-computed thresholds") {
  Rng rng(1);
  // mean |x| = 4, max 10: the second bisection round's threshold 8.5 keeps exactly the two largest.
  CHECK(sorted(mstopk_select(vec({10, -9, 8, 1, 1, 1, 1, 1}), 0, 8, 0.25, rng)) == std::vector<Eigen::Index>{0, 1});
  // A tensor of n <= 2 / ratio: every element sampled, the threshold the 2nd largest |x|; ties cut to the first k.
  CHECK(dgc_select(vec({5, 1, 5, 5}), 0, 4, 0.5, rng) == std::vector<Eigen::Index>{0, 2});
  CHECK(dgc_select(vec({5, 1, 5, 5}), 0, 4, 1.0, rng) == std::vector<Eigen::Index>{0, 1, 2, 3});  // ratio 1: all
}
