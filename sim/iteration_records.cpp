#include "sim/iteration_records.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::sim {
namespace {

/// Linear interpolation between closest ranks (numpy's default) over `n` sorted values,
/// the k-th given by `nth`.
template <class Nth>
double interpolate(std::int64_t n, double q, Nth nth) {
  if (n == 0) return 0;
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::int64_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, n - 1);
  const double a = nth(lo), b = nth(hi);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

const double LOG_BASE = std::log1p(Quantiles::BIN_WIDTH);

}  // namespace

double Histogram::quantile(double q) const {
  return interpolate(total, q, [this](std::int64_t rank) {
    for (const auto& [value, n] : counts) {
      if (rank < n) return static_cast<double>(value);
      rank -= n;
    }
    return static_cast<double>(counts.rbegin()->first);
  });
}

void Quantiles::add(double value) {
  ++count_;
  if (exact()) {
    exact_.push_back(value);
    if (exact_.size() <= EXACT_LIMIT) return;
    for (double v : exact_) bin(v);
    exact_ = {};
    return;
  }
  bin(value);
}

void Quantiles::bin(double value) {
  if (value <= 0) {
    ++zeros_;
    return;
  }
  ++bins_[static_cast<std::int64_t>(std::floor(std::log(value) / LOG_BASE))];
}

double Quantiles::nth(std::int64_t rank) const {
  if (rank < zeros_) return 0;
  rank -= zeros_;
  for (const auto& [bin, n] : bins_) {
    if (rank < n) return std::exp((static_cast<double>(bin) + 0.5) * LOG_BASE);
    rank -= n;
  }
  return std::exp((static_cast<double>(bins_.rbegin()->first) + 0.5) * LOG_BASE);
}

double Quantiles::quantile(double q) const {
  if (!exact()) return interpolate(count_, q, [this](std::int64_t rank) { return nth(rank); });
  std::vector<double> sorted = exact_;
  std::sort(sorted.begin(), sorted.end());
  return interpolate(count_, q, [&sorted](std::int64_t rank) { return sorted[static_cast<std::size_t>(rank)]; });
}

void IterationTotals::add(const std::vector<IterationRecord>& records, const IterationCompression& compression) {
  ++iterations;
  if (workers.size() < records.size()) workers.resize(records.size());
  for (std::size_t w = 0; w < records.size(); ++w) {
    const auto& r = records[w];
    auto& t = workers[w];
    const double duration = r.end_s - r.start_s;
    ++t.iterations;
    t.duration_s += duration;
    t.compute_s += r.compute_s;
    t.exposed_comm_s += r.exposed_comm_s;
    t.comm_busy_s += r.comm_busy_s;
    t.straggler_wait_s += r.straggler_wait_s;
    t.staleness_wait_s += r.staleness_wait_s;
    t.codec_s += r.codec_s;
    if (r.events_sent >= 0) {
      t.events_sent += r.events_sent;
      t.events_possible += r.events_possible;
    }
    durations.add(duration);
  }
  ++iterations_per_variant[compression.variant];
  exploring += compression.exploring ? 1 : 0;
}

}  // namespace ddlsim::sim
