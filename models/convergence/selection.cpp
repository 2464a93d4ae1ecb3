// ddlsim: the sparsifiers' selection rules on the co-simulated gradients (see selection.hpp).
#include "models/convergence/selection.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace ddlsim::models::convergence {

/// The k of largest |x| in [lo, hi) (ties: the lower index), exactly.
std::vector<Eigen::Index> top(const Vector& x, Eigen::Index lo, Eigen::Index hi, Eigen::Index k) {
  std::vector<Eigen::Index> idx(static_cast<std::size_t>(hi - lo));
  std::iota(idx.begin(), idx.end(), lo);
  const auto mid = idx.begin() + static_cast<std::ptrdiff_t>(k);
  std::nth_element(idx.begin(), mid, idx.end(), [&x](Eigen::Index a, Eigen::Index c) {
    return std::abs(x[a]) > std::abs(x[c]) || (std::abs(x[a]) == std::abs(x[c]) && a < c);
  });
  idx.resize(static_cast<std::size_t>(k));
  return idx;
}

/// Seed 002's k for its own sparsifiers: max(1, int(n cr)).
Eigen::Index floor_count(Eigen::Index n, double ratio) {
  return std::max<Eigen::Index>(1, static_cast<Eigen::Index>(static_cast<double>(n) * ratio));
}

/// Seed 002's MSTopKCompression.msampling_compress on x[lo, lo + n) (compression.hpp).
std::vector<Eigen::Index> mstopk_select(const Vector& x, Eigen::Index lo, Eigen::Index n, double ratio, Rng& rng) {
  const Eigen::Index k = std::min(n, floor_count(n, ratio));
  const auto a = x.segment(lo, n).cwiseAbs();
  const double mean = a.mean(), top = a.maxCoeff();
  double l = 0, r = 1;
  Eigen::Index k1 = 0, k2 = n;
  // thres1: the best threshold keeping <= k; none found (every round kept more: ties at the
  // maximum) keeps nothing above it rather than the seed's 0, which would keep every element.
  double thres1 = std::numeric_limits<double>::infinity(), thres2 = 0;
  for (int round = 0; round < 25; ++round) {  // the seed's N = 25 (mstopk_run.py)
    const double mid = l + (r - l) / 2, thres = mean + mid * (top - mean);
    const Eigen::Index nnz = (a.array() >= thres).count();
    if (nnz <= k) {
      r = mid;
      if (nnz > k1) { k1 = nnz; thres1 = thres; }
    } else {
      l = mid;
      if (nnz < k2) { k2 = nnz; thres2 = thres; }
    }
  }
  std::vector<Eigen::Index> out, l2;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (a[i] >= thres1) out.push_back(lo + i);
    else if (a[i] >= thres2) l2.push_back(lo + i);
  }
  const auto want = static_cast<std::size_t>(k - static_cast<Eigen::Index>(out.size()));
  if (want > 0 && !l2.empty()) {
    // random.randint(0, len(l2) - (k - k1) + 1), both ends included; the run may end early.
    const std::size_t hi = l2.size() >= want ? l2.size() - want + 1 : 0;
    const std::size_t start = std::min<std::size_t>(rng.below(hi + 1), l2.size());
    for (std::size_t i = start; i < std::min(l2.size(), start + want); ++i) out.push_back(l2[i]);
  }
  return out;
}

/// Deep Gradient Compression's _sparsify on x[lo, lo + n) (compression.hpp).
std::vector<Eigen::Index> dgc_select(const Vector& x, Eigen::Index lo, Eigen::Index n, double ratio, Rng& rng) {
  if (ratio >= 1) {  // compress() sends the tensor as it is
    std::vector<Eigen::Index> all(static_cast<std::size_t>(n));
    std::iota(all.begin(), all.end(), lo);
    return all;
  }
  const auto a = x.segment(lo, n).cwiseAbs();
  const double sample_ratio = 0.01;
  const auto pct = static_cast<Eigen::Index>(std::ceil(static_cast<double>(n) * sample_ratio));
  const auto cpr = static_cast<Eigen::Index>(std::ceil(2 / ratio));
  Eigen::Index stride = 1, samples = n;
  if (n > cpr) {
    const Eigen::Index want = std::max(pct, cpr);
    stride = static_cast<Eigen::Index>(std::ceil(static_cast<double>(n) / static_cast<double>(want) / 32)) * 32 + 1;
    samples = n / stride;
    while (samples < want) {
      stride -= 8;
      samples = n / stride;
    }
  }
  const auto top_samples = static_cast<Eigen::Index>(std::ceil(static_cast<double>(samples) * ratio));
  const auto selects = static_cast<Eigen::Index>(std::ceil(static_cast<double>(n) * ratio));
  std::vector<double> sample;
  const Eigen::Index start = n == samples ? 0 : static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(stride)));
  for (Eigen::Index i = start; i < n; i += (n == samples ? 1 : stride)) sample.push_back(a[i]);
  const auto kth = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(top_samples), sample.size()) - 1);
  std::nth_element(sample.begin(), sample.begin() + kth, sample.end(), std::greater<>());
  double threshold = sample[static_cast<std::size_t>(kth)];
  const auto above = [&](double t) {
    std::vector<Eigen::Index> idx;
    for (Eigen::Index i = 0; i < n; ++i)
      if (a[i] >= t) idx.push_back(lo + i);
    return idx;
  };
  std::vector<Eigen::Index> idx = above(threshold);
  if (n > samples) {
    for (int adapt = 0; adapt < 10; ++adapt) {  // max_adaptation_iters
      const auto count = static_cast<Eigen::Index>(idx.size());
      if (count > selects) {
        if (static_cast<double>(count) > static_cast<double>(selects) * 1.3) {  // resample: exact top-k among them
          std::nth_element(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(selects), idx.end(),
                           [&x](Eigen::Index i, Eigen::Index j) {
                             return std::abs(x[i]) > std::abs(x[j]) || (std::abs(x[i]) == std::abs(x[j]) && i < j);
                           });
          idx.resize(static_cast<std::size_t>(selects));
          std::sort(idx.begin(), idx.end());
        }
        break;
      }
      if (static_cast<double>(count) >= 0.8 * static_cast<double>(selects)) break;
      threshold *= 0.8;
      idx = above(threshold);
    }
  }
  if (static_cast<Eigen::Index>(idx.size()) > selects) idx.resize(static_cast<std::size_t>(selects));  // indices[:num_selects]
  return idx;
}

}  // namespace ddlsim::models::convergence
