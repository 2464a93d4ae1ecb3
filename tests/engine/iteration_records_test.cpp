// What a run's per-iteration records add up to (engine/iteration_records.hpp): quantiles exact up
// to Quantiles::EXACT_LIMIT values and within half a bin beyond, staleness histograms.
#include "engine/iteration_records.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using ddlsim::sim::Histogram;
using ddlsim::sim::Quantiles;

namespace {

/// numpy's default: linear interpolation between closest ranks.
double reference(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

TEST_CASE("quantiles are exact up to EXACT_LIMIT values, then within half a logarithmic bin") {
  Quantiles q;
  std::vector<double> all;
  CHECK(q.quantile(0.5) == 0);
  // A deterministic spread of iteration times between 0.1 and 0.3 s.
  for (std::size_t i = 0; i < Quantiles::EXACT_LIMIT; ++i) {
    const double v = 0.1 + 0.2 * std::fmod(static_cast<double>(i) * 0.618033988749895, 1.0);
    q.add(v);
    all.push_back(v);
  }
  CHECK(q.exact());
  for (double p : {0.0, 0.5, 0.95, 1.0}) CHECK(q.quantile(p) == reference(all, p));
  for (std::size_t i = 0; i < 3 * Quantiles::EXACT_LIMIT; ++i) {
    const double v = 0.1 + 0.2 * std::fmod(static_cast<double>(i) * 0.414213562373095, 1.0);
    q.add(v);
    all.push_back(v);
  }
  CHECK_FALSE(q.exact());
  CHECK(q.count() == static_cast<std::int64_t>(all.size()));
  for (double p : {0.0, 0.5, 0.95, 1.0}) {
    CAPTURE(p);
    CHECK(q.quantile(p) == doctest::Approx(reference(all, p)).epsilon(Quantiles::BIN_WIDTH));
  }
}

TEST_CASE("a histogram's quantile interpolates between ranks as numpy does") {
  Histogram h;
  for (int v : {0, 0, 1, 3, 3, 3, 7}) h.add(v);
  CHECK(h.total == 7);
  CHECK(h.counts.at(3) == 3);
  const std::vector<double> values{0, 0, 1, 3, 3, 3, 7};
  for (double p : {0.0, 0.25, 0.5, 0.95, 1.0}) CHECK(h.quantile(p) == doctest::Approx(reference(values, p)));
}
